"""Warm pools: sandboxes created and started ahead, handed out at once.

``AsyncSandboxPool(size=N, **create_args)`` keeps N sandboxes made by
``AsyncSandbox.create(**create_args)`` ready; ``acquire()`` hands one out
(no hako call: a queue's pop) and starts a replacement in the background;
``release(sb)`` deletes it, ``release(sb, reset=True)`` resets it (``hako
reset``: every process killed, its writable state new and empty, started
again) and puts it back.  A sandbox handed out has run nobody's code before,
or only its releaser's before a reset.  ``SandboxPool`` is the same for
blocking code: the pool's work runs on an event loop of its own, in a
thread."""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Set

from hako._async import AsyncSandbox
from hako._errors import InvalidArgumentException, SandboxException, TimeoutException
from hako._sync import Sandbox

log = logging.getLogger("hako.pool")

ErrorCallback = Callable[[BaseException], Any]


def _log_error(e: BaseException) -> None:
    log.warning("hako pool: a sandbox could not be made: %s", e)


class AsyncSandboxPool:
    """N sandboxes created and started ahead (``async with`` closes it)."""

    def __init__(self, size: int, *, on_error: Optional[ErrorCallback] = None, **create_args: Any) -> None:
        """Nothing is made until the first ``await pool.start()``, ``acquire()``
        or ``async with``.  ``create_args`` are ``AsyncSandbox.create``'s
        (but ``sandbox_id``: each sandbox gets its own; ``timeout`` defaults
        to None, no lifetime, here).  A create that fails
        in the background is passed to ``on_error`` (default: a warning on
        the ``hako.pool`` logger), kept in ``errors``, and tried again after
        a pause that grows with each failure in a row (0.1 s to 5 s): the
        pool goes on making the rest."""
        if size < 1:
            raise InvalidArgumentException(f"pool size {size}: at least 1")
        if "sandbox_id" in create_args:
            raise InvalidArgumentException("a pool's sandboxes get ids of their own: no sandbox_id")
        # No lifetime unless asked: create's default (DEFAULT_LIFETIME) would
        # let a sandbox that waited long enough in the pool be handed out
        # dead.  close() deletes what the pool made; a given timeout counts
        # from the sandbox's creation, not from its hand-out.
        create_args.setdefault("timeout", None)
        self.size = size
        self.errors: List[BaseException] = []
        self._args = create_args
        self._on_error = on_error or _log_error
        self._ready: Deque[AsyncSandbox] = collections.deque()
        self._making: Set["asyncio.Task[None]"] = set()
        self._out: Dict[str, AsyncSandbox] = {}
        self._waiters: Deque["asyncio.Future[None]"] = collections.deque()
        self._failures = 0
        self._started = False
        self._closed = False

    # ---- the pool's own work ----

    def _fill(self) -> None:
        """Start creates until ready and in the making add up to size."""
        while not self._closed and len(self._ready) + len(self._making) < self.size:
            task = asyncio.ensure_future(self._make())
            self._making.add(task)
            task.add_done_callback(self._made)

    def _made(self, task: "asyncio.Task[None]") -> None:
        self._making.discard(task)
        self._fill()  # after a failure's pause: try again

    def _wake(self) -> None:
        while self._waiters:
            w = self._waiters.popleft()
            if not w.done():
                w.set_result(None)
                return

    async def _make(self) -> None:
        try:
            sb = await AsyncSandbox.create(**self._args)
        except Exception as e:  # reported, never raised into the loop
            self._failures += 1
            self.errors.append(e)
            try:
                self._on_error(e)
            except Exception:
                log.exception("hako pool: on_error raised")
            # Tried again later, not at once: a host that refuses every
            # create is not hammered.
            await asyncio.sleep(min(0.1 * 2 ** min(self._failures - 1, 6), 5.0))
            return
        self._failures = 0
        if self._closed or len(self._ready) >= self.size:
            # Closed meanwhile, or full of sandboxes a reset brought back.
            await _kill_quietly(sb)
            return
        self._ready.append(sb)
        self._wake()

    async def start(self) -> None:
        """Begin making the sandboxes (acquire and ``async with`` do it too)."""
        self._started = True
        self._fill()

    async def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Until ``size`` sandboxes are ready (TimeoutException after ``timeout`` s)."""
        await self.start()
        end = None if timeout is None else time.monotonic() + timeout
        while len(self._ready) < self.size:
            if self._closed:
                raise SandboxException("the pool is closed")
            if end is not None and time.monotonic() >= end:
                raise TimeoutException(f"{len(self._ready)} of {self.size} sandboxes ready after {timeout} s"
                                       + (f"; the last create failed: {self.errors[-1]}" if self.errors else ""))
            await asyncio.sleep(0.01)

    # ---- the caller's side ----

    @property
    def ready(self) -> int:
        """How many sandboxes wait to be handed out."""
        return len(self._ready)

    async def acquire(self, timeout: Optional[float] = None) -> AsyncSandbox:
        """A ready sandbox, at once when one is (a replacement is started in
        the background); otherwise the next one made, within ``timeout``
        seconds (None: no limit), else TimeoutException naming the last
        create's error, if any."""
        if self._closed:
            raise SandboxException("the pool is closed")
        if not self._started:
            await self.start()
        end = None if timeout is None else time.monotonic() + timeout
        while not self._ready:
            if self._closed:
                raise SandboxException("the pool is closed")
            w: "asyncio.Future[None]" = asyncio.get_running_loop().create_future()
            self._waiters.append(w)
            left = None if end is None else max(0.0, end - time.monotonic())
            try:
                await asyncio.wait_for(asyncio.shield(w), left)
            except asyncio.TimeoutError:
                raise TimeoutException(f"no sandbox ready within {timeout} s"
                                       + (f"; the last create failed: {self.errors[-1]}" if self.errors
                                          else "")) from None
            finally:
                if not w.done():
                    w.cancel()
        sb = self._ready.popleft()
        self._out[sb.sandbox_id] = sb
        self._fill()
        if self._ready:
            self._wake()  # another waiter may take the next one
        return sb

    async def release(self, sb: AsyncSandbox, reset: bool = False) -> None:
        """Done with ``sb``: deleted; or with ``reset``, made as new (``hako
        reset``: its processes killed, its writable state new and empty) and
        put back, to be handed out next (a fresh one beyond ``size`` is
        deleted instead).  A reset that fails deletes it and reports the
        error to ``on_error``."""
        self._out.pop(sb.sandbox_id, None)
        if reset and not self._closed:
            try:
                await sb.reset()
            except SandboxException as e:
                self.errors.append(e)
                self._on_error(e)
                await _kill_quietly(sb)
                self._fill()
                return
            if not self._closed:
                self._ready.appendleft(sb)
                surplus = [self._ready.pop() for _ in range(len(self._ready) - self.size)]
                self._wake()
                await asyncio.gather(*(_kill_quietly(x) for x in surplus))
                return
        await _kill_quietly(sb)

    async def close(self) -> None:
        """Delete every sandbox the pool made: ready, in the making (each
        deleted as its create ends) and handed out but not released."""
        self._closed = True
        for w in self._waiters:
            if not w.done():
                w.set_result(None)
        # A create cancelled halfway still ends, and the sandbox it made is
        # deleted (AsyncSandbox.create): nothing is left running.
        making = list(self._making)
        for t in making:
            t.cancel()
        if making:
            await asyncio.gather(*making, return_exceptions=True)
        doomed = list(self._ready) + list(self._out.values())
        self._ready.clear()
        self._out.clear()
        await asyncio.gather(*(_kill_quietly(sb) for sb in doomed))

    async def __aenter__(self) -> "AsyncSandboxPool":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _kill_quietly(sb: AsyncSandbox) -> None:
    try:
        await sb.kill()
    except SandboxException as e:
        log.warning("hako pool: delete %s: %s", sb.sandbox_id, e)


class SandboxPool:
    """``AsyncSandboxPool`` for blocking code (``with`` closes it).  The
    sandboxes are made on the pool's own event loop, in a thread of its own;
    those handed out are ``Sandbox`` objects, used from the caller's thread."""

    def __init__(self, size: int, *, on_error: Optional[ErrorCallback] = None, **create_args: Any) -> None:
        """Starts making ``size`` sandboxes at once (see AsyncSandboxPool)."""
        self._pool = AsyncSandboxPool(size, on_error=on_error, **create_args)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hako-pool", daemon=True)
        self._thread.start()
        self._closed = False
        self._do(self._pool.start())

    def _do(self, coro: Any, timeout: Optional[float] = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    @property
    def size(self) -> int:
        return self._pool.size

    @property
    def errors(self) -> List[BaseException]:
        return self._pool.errors

    @property
    def ready(self) -> int:
        return self._pool.ready

    def wait_ready(self, timeout: Optional[float] = None) -> None:
        self._check()
        self._do(self._pool.wait_ready(timeout))

    def _check(self) -> None:
        if self._closed:
            raise SandboxException("the pool is closed")

    def acquire(self, timeout: Optional[float] = None) -> Sandbox:
        self._check()
        return Sandbox._wrap(self._do(self._pool.acquire(timeout)))

    def release(self, sb: Sandbox, reset: bool = False) -> None:
        """Deleted, or with ``reset`` made as new and put back; once the pool
        is closed, deleted."""
        if self._closed:
            _ = sb.kill()
            return
        self._do(self._pool.release(sb._a, reset))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._do(self._pool.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
