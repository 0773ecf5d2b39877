"""The parts of ``sb.files`` that outlive one call: a file read as a stream
(``hako get``'s stdout, a chunk at a time), a directory watched (``hako fs
watch --sync``'s JSON lines), and many files written in one call (a tar
stream for ``hako put --tar``, made as it is sent)."""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import os
import tarfile
import tempfile
import time
from typing import IO, Any, Awaitable, Callable, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from hako._errors import InvalidArgumentException, SandboxException, TimeoutException
from hako._proc import CHUNK, PIPE, Process, despite_cancel
from hako._types import FilesystemEvent, FilesystemEventType

EventCallback = Callable[[FilesystemEvent], Any]
ExitCallback = Callable[[Optional[Exception]], Any]

_EVENT_TYPES = {t.value: t for t in FilesystemEventType}
T = TypeVar("T")


async def _call_back(fn: Optional[Callable[..., Any]], *args: Any) -> None:
    if fn is not None:
        r = fn(*args)
        if inspect.isawaitable(r):
            await r


class AsyncFileStreamReader:
    """``await files.read(path, format="stream")``: the file's bytes in chunks
    of at most 64 KiB, read from ``hako get`` as they are iterated (the pipe
    between them holds the rest: memory stays bounded whatever the size).
    ``async for chunk in reader``, ``async with``, ``aclose()``: closed early,
    hako is killed and waited for."""

    def __init__(self, proc: Process, first: bytes, error: Callable[[int, bytes], SandboxException]) -> None:
        self._proc = proc
        self._first = first
        self._error = error
        assert proc.stderr is not None
        self._stderr = proc.stderr.collect()
        self._done = False

    def __aiter__(self) -> "AsyncFileStreamReader":
        return self

    async def __anext__(self) -> bytes:
        data = await self._next()
        if data is None:
            raise StopAsyncIteration
        return data

    async def _next(self) -> Optional[bytes]:
        """The next chunk, or None at the end (hako's error raised there)."""
        if self._first:
            data, self._first = self._first, b""
            return data
        if self._done:
            return None
        assert self._proc.stdout is not None
        try:
            data = await self._proc.stdout.read(CHUNK)
            if data:
                return data
            self._done = True
            rc = await self._proc.wait()
            err = await asyncio.shield(self._stderr)
        except asyncio.CancelledError:
            await self.aclose()
            raise
        if rc != 0:
            raise self._error(rc, err)
        return None

    async def aclose(self) -> None:
        self._done = True
        self._first = b""
        self._proc.kill()
        await despite_cancel(asyncio.ensure_future(self._proc.wait()))
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    async def __aenter__(self) -> "AsyncFileStreamReader":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def open_stream(argv: Sequence[str], error: Callable[[int, bytes], SandboxException]) -> AsyncFileStreamReader:
    """Start ``hako get`` and wait for its first bytes or its end, so that
    a file that cannot be read raises here, as e2b's read does."""
    proc = Process(argv)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = await proc.stdout.read(CHUNK)
    except asyncio.CancelledError:
        proc.kill()
        await despite_cancel(asyncio.ensure_future(proc.wait()))
        raise
    reader = AsyncFileStreamReader(proc, first, error)
    if not first:
        await reader._next()  # the end: raises hako's error if it failed
        reader._done = True
    return reader


class Watch:
    """``hako fs watch --sync --format json``: its events as they come, and
    on demand those up to now (a line on its stdin is answered with a "sync"
    event once every change made before is reported).  Closing its stdin
    ends it; a killed client ends it too (its helper dies with hako)."""

    def __init__(self, proc: Process, error: Callable[[int, bytes], SandboxException]) -> None:
        self._proc = proc
        self._error = error
        assert proc.stderr is not None
        self._stderr = proc.stderr.collect()
        self.ended = False

    @classmethod
    async def start(cls, argv: Sequence[str], error: Callable[[int, bytes], SandboxException],
                    request_timeout: Optional[float]) -> "Watch":
        """Once the watch is in place ("ready"); its error (not_found...) raised here."""
        w = cls(Process(argv, stdin=PIPE), error)
        try:
            line = await asyncio.wait_for(w._line(), request_timeout) if request_timeout else await w._line()
        except BaseException:
            await w.stop()
            raise
        if line is None or line.get("type") != "ready":
            await w.stop()
            raise w._failure() or SandboxException(f"hako fs watch did not start: {line}")
        return w

    async def _line(self) -> Optional[Mapping[str, Any]]:
        assert self._proc.stdout is not None
        raw = await self._proc.stdout.readline()
        if not raw:
            self.ended = True
            await self._proc.wait()
            await asyncio.shield(self._stderr)
            return None
        obj: Mapping[str, Any] = json.loads(raw)
        return obj

    def _failure(self) -> Optional[SandboxException]:
        rc = self._proc.returncode
        if rc is None or rc == 0 or not self._stderr.done():
            return None
        return self._error(rc, self._stderr.result())

    @staticmethod
    def _event(obj: Mapping[str, Any]) -> Optional[FilesystemEvent]:
        t = _EVENT_TYPES.get(str(obj.get("type")))
        return FilesystemEvent(name=str(obj.get("name", "")), type=t) if t is not None else None

    async def next_event(self) -> Optional[FilesystemEvent]:
        """The next change (None once the watch has ended)."""
        while True:
            obj = await self._line()
            if obj is None:
                failed = self._failure()
                if failed is not None:
                    raise failed
                return None
            ev = self._event(obj)
            if ev is not None:
                return ev

    async def events_until_now(self) -> List[FilesystemEvent]:
        """Every change made before this call, not returned before."""
        out: List[FilesystemEvent] = []
        if self.ended:
            return out
        assert self._proc.stdin is not None
        try:
            await self._proc.stdin.write(b"\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            obj = await self._line()
            if obj is None or obj.get("type") == "sync":
                return out
            ev = self._event(obj)
            if ev is not None:
                out.append(ev)

    async def stop(self) -> None:
        """End it: its stdin closed (the watch's own end), killed if it lingers."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._proc.wait()), 5)
        except asyncio.TimeoutError:
            self._proc.kill()
        except asyncio.CancelledError:
            self._proc.kill()
            await despite_cancel(asyncio.ensure_future(self._proc.wait()))
            raise
        await self._proc.wait()
        self.ended = True
        if self._proc.stdout is not None:
            self._proc.stdout.close()


class AsyncWatchHandle:
    """``await files.watch_dir(path, on_event)``: ``on_event`` is called with
    each FilesystemEvent, ``on_exit`` once at the end (None, or the error
    that ended it); ``await stop()`` ends it."""

    def __init__(self, watch: Watch, on_event: EventCallback, on_exit: Optional[ExitCallback]) -> None:
        self._watch = watch
        self._on_event = on_event
        self._on_exit = on_exit
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        error: Optional[Exception] = None
        try:
            while True:
                ev = await self._watch.next_event()
                if ev is None:
                    break
                await _call_back(self._on_event, ev)
        except asyncio.CancelledError:
            await _call_back(self._on_exit, None)
            raise
        except Exception as e:  # the callback's, or hako's
            error = e
        await self._watch.stop()
        await _call_back(self._on_exit, error)

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.wait([self._task])
        await self._watch.stop()


# ---- many files: a tar stream for put --tar, made as it is read ----------------

WriteData = Union[str, bytes, "os.PathLike[str]", IO[bytes], IO[str]]


def entry_fields(e: Any) -> Tuple[str, Any]:
    """(path, data) of a WriteEntry, a mapping or an object with those attributes."""
    if isinstance(e, Mapping):
        return str(e["path"]), e["data"]
    return str(e.path), e.data


def tar_name(path: str) -> str:
    """The tar name of an absolute path in the sandbox (put --tar ID /)."""
    if not path.startswith("/"):
        raise InvalidArgumentException(f"path {path!r}: must be absolute (inside the sandbox)")
    name = os.path.normpath(path).lstrip("/")
    if not name or name == ".":
        raise InvalidArgumentException(f"path {path!r}: is the root directory")
    return name


def _sized(data: Any) -> Tuple[int, IO[bytes], bool]:
    """The data as (size, binary file at its start, whether to close it).
    A file object without a size (a pipe, text, an in-memory stream) is
    spooled first: a tar header says how many bytes follow."""
    if isinstance(data, str):
        data = data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        return len(raw), io.BytesIO(raw), True
    if isinstance(data, os.PathLike):
        f = open(data, "rb")
        return os.fstat(f.fileno()).st_size, f, True
    try:
        st = os.fstat(data.fileno())
        if "b" in getattr(data, "mode", "b") and (st.st_mode & 0o170000) == 0o100000:
            return st.st_size - data.tell(), data, False
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1 << 20)
    while True:
        chunk = data.read(CHUNK)
        if not chunk:
            break
        spool.write(chunk.encode() if isinstance(chunk, str) else chunk)
    size = spool.tell()
    spool.seek(0)
    return size, spool, True


class TarStream(io.RawIOBase):
    """The entries as one tar stream, produced as it is read (``read(n)``):
    one header and one chunk of one file in memory at a time."""

    def __init__(self, entries: Sequence[Tuple[str, Any]]) -> None:
        super().__init__()
        self._entries = list(entries)
        self._buf = b""
        self._file: Optional[IO[bytes]] = None
        self._close_file = False
        self._left = 0
        self._pad = 0
        self._ended = False

    def readable(self) -> bool:
        return True

    def _next_header(self) -> None:
        if not self._entries:
            self._buf += b"\0" * (2 * tarfile.BLOCKSIZE)
            self._ended = True
            return
        name, data = self._entries.pop(0)
        size, f, close = _sized(data)
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = size, 0o644, int(time.time())
        self._buf += info.tobuf(format=tarfile.PAX_FORMAT)
        self._file, self._close_file, self._left = f, close, size
        self._pad = (-size) % tarfile.BLOCKSIZE

    def _done_file(self) -> None:
        if self._file is not None and self._close_file:
            self._file.close()
        self._file = None
        self._buf += b"\0" * self._pad
        self._pad = 0

    def read(self, n: int = -1) -> bytes:
        n = CHUNK if n is None or n < 0 else n
        while len(self._buf) < n and not (self._ended and self._file is None):
            if self._file is None:
                self._next_header()
                continue
            chunk = self._file.read(min(CHUNK, self._left)) if self._left else b""
            if self._left and not chunk:
                raise InvalidArgumentException(f"a file of files.write ended {self._left} bytes early")
            if isinstance(chunk, str):
                chunk = chunk.encode()
            self._buf += chunk
            self._left -= len(chunk)
            if self._left == 0:
                self._done_file()
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def close(self) -> None:
        if self._file is not None and self._close_file:
            self._file.close()
        self._file = None
        super().close()


async def timed(aw: Awaitable[T], request_timeout: Optional[float]) -> T:
    """The call bounded by request_timeout seconds (e2b's): TimeoutException
    after, the call cancelled (its hako killed: _async._call)."""
    if not request_timeout:
        return await aw
    try:
        return await asyncio.wait_for(aw, request_timeout)
    except asyncio.TimeoutError:
        raise TimeoutException(f"the call took more than request_timeout={request_timeout} s") from None
