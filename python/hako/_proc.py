"""The SDK's child processes (hako, or ssh running hako), driven by the event
loop's file descriptor callbacks instead of asyncio.subprocess.

Why not asyncio.subprocess: Python 3.11's create_subprocess_exec waits for
ever when it is cancelled while it connects the pipes (its transport then
waits for pipes that never connect).  asyncio.run cancels every task when
the main coroutine fails, so one failing task of a pool hung the whole
program at its end whenever another task was starting a hako call (seen in
CI).  Here nothing a task is cancelled in the middle of can stall:

- the process starts synchronously (subprocess.Popen, as asyncio does too);
- its end comes from a pidfd the loop watches (no watcher thread per child);
- reading and writing are non-blocking os.read/os.write when the loop says
  the pipe is ready, and ``collect``/``feed`` progress in callbacks alone, so
  a call can wait for its process to end even while asyncio is cancelling
  every task at shutdown.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
from typing import IO, Any, List, Mapping, Optional, Sequence, Tuple, Union

CHUNK = 65536
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL

Redirect = Union[int, IO[Any], None]


def _ready(fd: int, write: bool = False) -> "asyncio.Future[None]":
    """A future done once FD can be read (written) without blocking."""
    loop = asyncio.get_running_loop()
    fut: "asyncio.Future[None]" = loop.create_future()
    add, remove = (loop.add_writer, loop.remove_writer) if write else (loop.add_reader, loop.remove_reader)

    def wake() -> None:
        if not fut.done():  # the fd may fire again before the callback below runs
            fut.set_result(None)

    add(fd, wake)
    fut.add_done_callback(lambda _: remove(fd))  # woken or cancelled alike
    return fut


class Reader:
    """One pipe from the child: ``read``, ``readline``, or ``collect`` it all."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._fd = f.fileno()
        os.set_blocking(self._fd, False)
        self._buf = b""
        self._eof = False

    def _read_now(self, n: int) -> Optional[bytes]:
        """What is there (b"" at end of file), or None if nothing is yet."""
        if self._buf:
            data, self._buf = self._buf[:n], self._buf[n:]
            return data
        if self._eof:
            return b""
        try:
            data = os.read(self._fd, n)
        except BlockingIOError:
            return None
        if not data:
            self._eof = True
            self.close()
        return data

    async def read(self, n: int = -1) -> bytes:
        """Up to N bytes as soon as there are any (all of it to the end if N < 0); b"" at the end."""
        if n < 0:
            parts: List[bytes] = []
            while True:
                chunk = await self.read(CHUNK)
                if not chunk:
                    return b"".join(parts)
                parts.append(chunk)
        while True:
            data = self._read_now(n)
            if data is not None:
                return data
            await _ready(self._fd)

    async def readline(self) -> bytes:
        while b"\n" not in self._buf and not self._eof:
            data = await self.read(CHUNK)
            if not data:
                break
            self._buf = self._buf + data
        i = self._buf.find(b"\n")
        end = len(self._buf) if i < 0 else i + 1
        line, self._buf = self._buf[:end], self._buf[end:]
        return line

    def collect(self) -> "asyncio.Future[bytes]":
        """Everything up to the end, read in the loop's callbacks (no task)."""
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[bytes]" = loop.create_future()
        parts: List[bytes] = []

        def on_readable() -> None:
            while True:
                data = self._read_now(CHUNK)
                if data is None:
                    return
                if not data:
                    if not fut.done():
                        fut.set_result(b"".join(parts))
                    return
                parts.append(data)

        loop.add_reader(self._fd, on_readable)
        return fut

    def close(self) -> None:
        """Closed once at its end (or when the caller is done with it); never
        with a callback still on the fd, which a new file could reuse."""
        if not self._f.closed:
            asyncio.get_running_loop().remove_reader(self._fd)
            self._f.close()


class Writer:
    """The child's stdin: ``write`` (raises BrokenPipeError once it is gone), ``feed``, ``close``."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._fd = f.fileno()
        os.set_blocking(self._fd, False)

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                await _ready(self._fd, write=True)

    def feed(self, data: bytes) -> "asyncio.Future[None]":
        """Write DATA then close, in the loop's callbacks (no task); a child
        that stops reading ends it early."""
        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[None]" = loop.create_future()
        view = [memoryview(data)]

        def on_writable() -> None:
            try:
                while view[0]:
                    view[0] = view[0][os.write(self._fd, view[0]):]
            except BlockingIOError:
                return
            except OSError:  # EPIPE: it will not read the rest
                pass
            self.close()
            if not fut.done():
                fut.set_result(None)

        loop.add_writer(self._fd, on_writable)
        return fut

    def close(self) -> None:
        if not self._f.closed:
            asyncio.get_running_loop().remove_writer(self._fd)
            try:
                self._f.close()
            except OSError:
                pass


class Process:
    """A child process of the SDK.  Starts at once (no await): ``stdin``,
    ``stdout``, ``stderr`` are a Writer and Readers for PIPE, else None."""

    def __init__(self, argv: Sequence[str], *, stdin: Redirect = DEVNULL, stdout: Redirect = PIPE,
                 stderr: Redirect = PIPE, pass_fds: Sequence[int] = (),
                 env: Optional[Mapping[str, str]] = None) -> None:
        loop = asyncio.get_running_loop()
        full = None if env is None else {**os.environ, **env}
        self._popen = subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr,
                                       pass_fds=tuple(pass_fds), bufsize=0, env=full)
        self.pid = self._popen.pid
        self.stdin = Writer(self._popen.stdin) if self._popen.stdin is not None else None
        self.stdout = Reader(self._popen.stdout) if self._popen.stdout is not None else None
        self.stderr = Reader(self._popen.stderr) if self._popen.stderr is not None else None
        self._exited: "asyncio.Future[int]" = loop.create_future()
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux 5.3+ (an SSH client's machine): a thread waits
            threading.Thread(target=self._wait_thread, args=(loop,), daemon=True).start()
        else:
            loop.add_reader(self._pidfd, self._on_exit, loop)

    def _on_exit(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._set_exit(self._popen.wait())  # it has ended: reaps at once

    def _wait_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        rc = self._popen.wait()
        try:
            loop.call_soon_threadsafe(self._set_exit, rc)
        except RuntimeError:  # the loop is closed: nobody waits
            pass

    def _set_exit(self, rc: int) -> None:
        if not self._exited.done():
            self._exited.set_result(rc)

    @property
    def returncode(self) -> Optional[int]:
        return self._exited.result() if self._exited.done() else None

    async def wait(self) -> int:
        # Shielded: a waiter cancelled leaves the exit to be seen by others.
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        if not self._exited.done():
            try:
                self._popen.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass

    def communicate(self, data: Optional[bytes] = None) -> "asyncio.Future[Tuple[bytes, bytes]]":
        """stdout and stderr in full once the process has ended, DATA fed to
        its stdin meanwhile: all of it in callbacks, so the future completes
        whatever happens to the tasks that wait for it."""
        loop = asyncio.get_running_loop()
        out = self.stdout.collect() if self.stdout is not None else _done(loop)
        err = self.stderr.collect() if self.stderr is not None else _done(loop)
        waits: List["asyncio.Future[Any]"] = [self._exited, out, err]
        if data is not None and self.stdin is not None:
            waits.append(self.stdin.feed(data))
        fut: "asyncio.Future[Tuple[bytes, bytes]]" = loop.create_future()

        def check(_: "asyncio.Future[Any]") -> None:
            if not fut.done() and all(w.done() for w in waits):
                fut.set_result((out.result(), err.result()))

        for w in waits:
            w.add_done_callback(check)
        return fut


def _done(loop: asyncio.AbstractEventLoop) -> "asyncio.Future[bytes]":
    fut: "asyncio.Future[bytes]" = loop.create_future()
    fut.set_result(b"")
    return fut


async def despite_cancel(fut: "asyncio.Future[Any]") -> None:
    """Wait for FUT to be done even through cancellations of the waiting task;
    the caller raises its own cancellation after.  FUT must complete by
    itself (a process's end, callbacks), never need this task."""
    while not fut.done():
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            continue
        except BaseException:
            break
    if not fut.cancelled():
        fut.exception()  # retrieved: no "exception was never retrieved" later

