"""Sandbox: the same API as AsyncSandbox, blocking.  Each thread drives its
calls on one private event loop of its own (not one per call or sandbox)."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime
from typing import Any, AsyncIterator, Coroutine, Dict, Iterator, List, Mapping, Optional, Sequence, TypeVar, Union

from hako._async import DEFAULT_LIFETIME, AsyncSandbox, Command, OutputCallback, WriteData
from hako._either import either
from hako._errors import SandboxException
from hako._files import AsyncFileStreamReader, Watch, timed
from hako._metrics import SandboxMetrics
from hako._procs import AsyncCommandHandle, Chunk, ProcessInfo, PtyCallback, PtySize
from hako._transport import Transport
from hako._types import (CommandResult, EntryInfo, FilesystemEvent, SandboxInfo, SandboxList, SandboxQuery, Secret,
                         WriteEntry, WriteInfo)

T = TypeVar("T")
_local = threading.local()


def _run(coro: Coroutine[Any, Any, T]) -> T:
    loop: Optional[asyncio.AbstractEventLoop] = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except BaseException:
        # Interrupted (KeyboardInterrupt, say): the call is cancelled as an
        # asyncio caller's would be, so its hako is killed or ended (see
        # _async._call) instead of left running with nobody to reap it.
        if not task.done():
            task.cancel()
            try:
                loop.run_until_complete(task)
            except BaseException:
                pass
        raise


class CommandHandle:
    """A background command or PTY session (a kept process): ``pid``; iterate
    it (``for stdout, stderr, pty in h``) for its output from the start;
    ``wait()``, ``kill()``, ``send_stdin()``, ``close_stdin()``,
    ``disconnect()``.  Its output is read while this thread is in a call of
    the SDK (iterating, ``wait()``)."""

    def __init__(self, h: AsyncCommandHandle) -> None:
        self._h = h

    @property
    def pid(self) -> Optional[int]:
        return self._h.pid

    @property
    def stdout(self) -> str:
        return self._h.stdout

    @property
    def stderr(self) -> str:
        return self._h.stderr

    @property
    def exit_code(self) -> Optional[int]:
        return self._h.exit_code

    @property
    def error(self) -> Optional[str]:
        return self._h.error

    def __iter__(self) -> Iterator[Chunk]:
        it: AsyncIterator[Chunk] = self._h.__aiter__()

        async def step() -> Chunk:
            return await it.__anext__()

        while True:
            try:
                yield _run(step())
            except StopAsyncIteration:
                return

    def wait(self, on_pty: Optional[PtyCallback] = None, on_stdout: Optional[OutputCallback] = None,
             on_stderr: Optional[OutputCallback] = None, check: bool = True) -> CommandResult:
        return _run(self._h.wait(on_stdout=on_stdout, on_stderr=on_stderr, on_pty=on_pty, check=check))

    def kill(self) -> bool:
        return _run(self._h.kill())

    def send_stdin(self, data: Union[str, bytes], request_timeout: Optional[float] = None) -> None:
        _run(self._h.send_stdin(data, request_timeout))

    def close_stdin(self, request_timeout: Optional[float] = None) -> None:
        _run(self._h.close_stdin(request_timeout))

    def disconnect(self) -> None:
        _run(self._h.disconnect())


class Commands:
    def __init__(self, sb: AsyncSandbox) -> None:
        self._c = sb.commands

    def run(self, cmd: Command, background: Optional[bool] = False, envs: Optional[Mapping[str, str]] = None,
            user: Optional[str] = None, cwd: Optional[str] = None, on_stdout: Optional[OutputCallback] = None,
            on_stderr: Optional[OutputCallback] = None, stdin: Optional[Union[bool, str, bytes]] = None,
            timeout: Optional[float] = 60, request_timeout: Optional[float] = None, *,
            max_output: Optional[int] = None, check: bool = True) -> Any:
        """Run ``cmd``; a CommandResult, or a CommandHandle with ``background=True``."""
        r = _run(self._c.run(cmd, timeout=timeout, envs=envs, cwd=cwd, user=user, stdin=stdin,
                             on_stdout=on_stdout, on_stderr=on_stderr, background=background,
                             max_output=max_output, check=check))
        return CommandHandle(r) if background else r

    def list(self, request_timeout: Optional[float] = None) -> List[ProcessInfo]:
        return _run(self._c.list())

    def connect(self, pid: int, timeout: Optional[float] = None, request_timeout: Optional[float] = None, *,
                on_stdout: Optional[OutputCallback] = None,
                on_stderr: Optional[OutputCallback] = None) -> CommandHandle:
        return CommandHandle(_run(self._c.connect(pid, on_stdout=on_stdout, on_stderr=on_stderr)))

    def kill(self, pid: int, request_timeout: Optional[float] = None) -> bool:
        return _run(self._c.kill(pid))

    def send_stdin(self, pid: int, data: Union[str, bytes], request_timeout: Optional[float] = None) -> None:
        _run(self._c.send_stdin(pid, data))

    def close_stdin(self, pid: int, request_timeout: Optional[float] = None) -> None:
        _run(self._c.close_stdin(pid))


class Pty:
    """``sb.pty``: terminal sessions, as e2b's."""

    def __init__(self, sb: AsyncSandbox) -> None:
        self._p = sb.pty

    def create(self, size: PtySize = PtySize(), user: Optional[str] = None, cwd: Optional[str] = None,
               envs: Optional[Dict[str, str]] = None, timeout: Optional[float] = 60,
               request_timeout: Optional[float] = None, *, on_data: Optional[PtyCallback] = None,
               cmd: Optional[Sequence[str]] = None) -> CommandHandle:
        """As e2b's (its parameters in e2b's order); ``on_data`` and ``cmd`` are
        hako's (``on_data``: the output as it comes, as e2b's async one)."""
        return CommandHandle(_run(self._p.create(size, on_data=on_data, cwd=cwd, envs=envs, user=user,
                                                 timeout=timeout, cmd=cmd)))

    def connect(self, pid: int, timeout: Optional[float] = None, request_timeout: Optional[float] = None, *,
                on_data: Optional[PtyCallback] = None) -> CommandHandle:
        return CommandHandle(_run(self._p.connect(pid, on_data=on_data)))

    def send_stdin(self, pid: int, data: Union[str, bytes], request_timeout: Optional[float] = None) -> None:
        _run(self._p.send_stdin(pid, data))

    def resize(self, pid: int, size: PtySize, request_timeout: Optional[float] = None) -> None:
        _run(self._p.resize(pid, size))

    def kill(self, pid: int, request_timeout: Optional[float] = None) -> bool:
        return _run(self._p.kill(pid))


class FileStreamReader:
    """``files.read(path, format="stream")``: an iterator of the file's bytes in
    64 KiB chunks, read from hako as it is iterated; ``with`` or ``close()``
    ends it early (hako killed)."""

    def __init__(self, r: AsyncFileStreamReader) -> None:
        self._r = r

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        data = _run(self._r._next())
        if data is None:
            raise StopIteration
        return data

    def close(self) -> None:
        _run(self._r.aclose())

    def __enter__(self) -> "FileStreamReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WatchHandle:
    """``files.watch_dir(path)``: ``get_new_events()`` returns the changes
    made since the last call (every one made before the call: hako answers
    once it has reported them), ``stop()`` ends the watch."""

    def __init__(self, w: Watch) -> None:
        self._w = w

    def get_new_events(self, request_timeout: Optional[float] = None) -> List[FilesystemEvent]:
        if self._w.ended:
            raise SandboxException("the watch has ended (stopped, its timeout, or its directory removed)")
        events: List[FilesystemEvent] = _run(timed(self._w.events_until_now(), request_timeout))
        return events

    def stop(self, request_timeout: Optional[float] = None) -> None:
        _run(self._w.stop())


class Files:
    def __init__(self, sb: AsyncSandbox) -> None:
        self._f = sb.files

    def read(self, path: str, format: str = "text", user: Optional[str] = None,
             request_timeout: Optional[float] = None) -> Any:
        r = _run(self._f.read(path, format=format, user=user, request_timeout=request_timeout))
        return FileStreamReader(r) if format == "stream" else r

    def write(self, path: Union[str, Sequence[WriteEntry]], data: Optional[WriteData] = None,
              user: Optional[str] = None, request_timeout: Optional[float] = None, *,
              mode: Optional[int] = None, make_dirs: bool = True) -> Any:
        return _run(self._f.write(path, data, user=user, mode=mode, make_dirs=make_dirs,
                                  request_timeout=request_timeout))

    def write_files(self, files: Sequence[WriteEntry], user: Optional[str] = None,
                    request_timeout: Optional[float] = None, *, mode: Optional[int] = None,
                    make_dirs: bool = True) -> List[WriteInfo]:
        return _run(self._f.write_files(files, user=user, mode=mode, make_dirs=make_dirs,
                                        request_timeout=request_timeout))

    def get_info(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> EntryInfo:
        return _run(self._f.get_info(path, user=user, request_timeout=request_timeout))

    def list(self, path: str, depth: Optional[int] = 1, user: Optional[str] = None,
             request_timeout: Optional[float] = None) -> List[EntryInfo]:
        return _run(self._f.list(path, depth=depth, user=user, request_timeout=request_timeout))

    def exists(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> bool:
        return _run(self._f.exists(path, user=user, request_timeout=request_timeout))

    def remove(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> None:
        _run(self._f.remove(path, user=user, request_timeout=request_timeout))

    def make_dir(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None) -> bool:
        return _run(self._f.make_dir(path, user=user, request_timeout=request_timeout))

    def rename(self, old_path: str, new_path: str, user: Optional[str] = None,
               request_timeout: Optional[float] = None) -> EntryInfo:
        return _run(self._f.rename(old_path, new_path, user=user, request_timeout=request_timeout))

    def watch_dir(self, path: str, user: Optional[str] = None, request_timeout: Optional[float] = None,
                  recursive: bool = False, timeout: Optional[float] = None) -> WatchHandle:
        """Watch the directory ``path`` until ``stop()`` (or ``timeout``
        seconds); changes are collected by hako and returned by
        ``get_new_events()``."""
        return WatchHandle(_run(self._f._watch(path, user, request_timeout, timeout, recursive)))

    def upload(self, local_dir: str, path: str) -> None:
        _run(self._f.upload(local_dir, path))

    def download(self, path: str, local_dir: str) -> None:
        _run(self._f.download(path, local_dir))


class Sandbox:
    """A hako sandbox (``Sandbox.create(...)``; ``with`` kills it on exit)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """``Sandbox(...)`` creates and starts one, as e2b's constructor does:
        the arguments are ``create``'s."""
        self._bind(_run(AsyncSandbox.create(*args, **kwargs)))

    def _bind(self, a: AsyncSandbox) -> None:
        self._a = a
        self.sandbox_id = a.sandbox_id
        self.commands = Commands(a)
        self.files = Files(a)
        self.pty = Pty(a)

    @classmethod
    def _wrap(cls, a: AsyncSandbox) -> "Sandbox":
        """The sync face of an async sandbox, without creating one."""
        s = cls.__new__(cls)
        s._bind(a)
        return s

    @classmethod
    def create(cls, image: Optional[str] = None, profile: str = "host", bundle: Optional[str] = None,
               network: Optional[str] = None, allow: Sequence[str] = (), memory: Optional[Union[int, str]] = None,
               cpus: Optional[float] = None, pids: Optional[int] = None, disk: Optional[Union[int, str]] = None,
               timeout: Optional[float] = DEFAULT_LIFETIME, envs: Optional[Mapping[str, str]] = None,
               cwd: Optional[str] = None, user: Optional[str] = None, mounts: Sequence[str] = (),
               sandbox_id: Optional[str] = None, from_snapshot: Optional[str] = None, *,
               devices: Sequence[str] = (), metadata: Optional[Mapping[str, str]] = None,
               deny: Sequence[str] = (), secrets: Optional[Mapping[str, Union[Secret, str]]] = None,
               template: Optional[str] = None, hako: Optional[str] = None, root: Optional[str] = None,
               data_root: Optional[str] = None, transport: Optional[Transport] = None) -> "Sandbox":
        """As ``AsyncSandbox.create``: a lifetime of ``timeout`` seconds
        (DEFAULT_LIFETIME, 300; None: none), ``metadata`` as its labels."""
        return cls._wrap(_run(AsyncSandbox.create(
            image=image, profile=profile, bundle=bundle, network=network, allow=allow, memory=memory, cpus=cpus,
            pids=pids, disk=disk, timeout=timeout, envs=envs, cwd=cwd, user=user, mounts=mounts,
            sandbox_id=sandbox_id, from_snapshot=from_snapshot, devices=devices, metadata=metadata,
            deny=deny, secrets=secrets, template=template, hako=hako, root=root, data_root=data_root, transport=transport)))

    def _connect(self, timeout: Optional[float] = None, request_timeout: Optional[float] = None) -> "Sandbox":
        """e2b's ``sb.connect(timeout=)``: this sandbox, resumed if paused, its
        deadline moved to ``timeout`` seconds from now if that is later."""
        _run(self._a.connect(timeout, request_timeout))
        return self

    @classmethod
    def _connect_id(cls, sandbox_id: str, timeout: Optional[float] = None, request_timeout: Optional[float] = None,
                    *, hako: Optional[str] = None, root: Optional[str] = None, data_root: Optional[str] = None,
                    transport: Optional[Transport] = None, envs: Optional[Mapping[str, str]] = None,
                    cwd: Optional[str] = None, user: Optional[str] = None) -> "Sandbox":
        """``Sandbox.connect(sandbox_id)``: as ``AsyncSandbox.connect``."""
        return cls._wrap(_run(AsyncSandbox.connect(sandbox_id, timeout, request_timeout, hako=hako, root=root,
                                                   data_root=data_root, transport=transport, envs=envs, cwd=cwd,
                                                   user=user)))

    connect = either(_connect, "_connect_id")

    @classmethod
    def list(cls, query: Union[SandboxQuery, Mapping[str, Any], None] = None, limit: Optional[int] = None,
             next_token: Optional[str] = None, order: Optional[str] = None, request_timeout: Optional[float] = None,
             *, hako: Optional[str] = None, root: Optional[str] = None, data_root: Optional[str] = None,
             transport: Optional[Transport] = None) -> SandboxList:
        return _run(AsyncSandbox.list(query, limit, next_token, order, request_timeout, hako=hako, root=root,
                                      data_root=data_root, transport=transport))

    def _get_info(self, request_timeout: Optional[float] = None) -> SandboxInfo:
        return _run(self._a.get_info(request_timeout))

    @classmethod
    def _get_info_id(cls, sandbox_id: str, request_timeout: Optional[float] = None, **conn: Any) -> SandboxInfo:
        return _run(AsyncSandbox.get_info(sandbox_id, request_timeout, **conn))

    get_info = either(_get_info, "_get_info_id")

    def is_running(self, request_timeout: Optional[float] = None) -> bool:
        return _run(self._a.is_running(request_timeout))

    def _set_timeout(self, timeout: float, request_timeout: Optional[float] = None) -> None:
        _run(self._a.set_timeout(timeout, request_timeout))

    @classmethod
    def _set_timeout_id(cls, sandbox_id: str, timeout: float, request_timeout: Optional[float] = None,
                        **conn: Any) -> None:
        _run(AsyncSandbox.set_timeout(sandbox_id, timeout, request_timeout, **conn))

    set_timeout = either(_set_timeout, "_set_timeout_id")

    def _get_metrics(self, start: Optional[datetime] = None, end: Optional[datetime] = None,
                     request_timeout: Optional[float] = None) -> List[SandboxMetrics]:
        """As ``AsyncSandbox.get_metrics``: usage samples, the last one now."""
        return _run(self._a.get_metrics(start, end, request_timeout))

    @classmethod
    def _get_metrics_id(cls, sandbox_id: str, start: Optional[datetime] = None, end: Optional[datetime] = None,
                        request_timeout: Optional[float] = None, **conn: Any) -> List[SandboxMetrics]:
        return _run(AsyncSandbox.get_metrics(sandbox_id, start, end, request_timeout, **conn))

    get_metrics = either(_get_metrics, "_get_metrics_id")

    def get_host(self, port: int, *, host_ip: Optional[str] = None) -> str:
        """As ``AsyncSandbox.get_host``: ``"HOST:PORT"`` of the sandbox's ``port``."""
        return _run(self._a.get_host(port, host_ip=host_ip))

    def _kill(self, request_timeout: Optional[float] = None) -> bool:
        return _run(self._a.kill(request_timeout))

    @classmethod
    def _kill_id(cls, sandbox_id: str, request_timeout: Optional[float] = None, **conn: Any) -> bool:
        return _run(AsyncSandbox.kill(sandbox_id, request_timeout, **conn))

    kill = either(_kill, "_kill_id")

    def _pause(self, request_timeout: Optional[float] = None) -> bool:
        return _run(self._a.pause(request_timeout))

    @classmethod
    def _pause_id(cls, sandbox_id: str, request_timeout: Optional[float] = None, **conn: Any) -> bool:
        return _run(AsyncSandbox.pause(sandbox_id, request_timeout, **conn))

    pause = either(_pause, "_pause_id")
    beta_pause = either(_pause, "_pause_id")  # e2b's older name

    def resume(self) -> None:
        _run(self._a.resume())

    def stop(self, timeout: Optional[float] = None) -> None:
        _run(self._a.stop(timeout))

    def start(self) -> None:
        _run(self._a.start())

    def reset(self, timeout: Optional[float] = None) -> None:
        """As ``AsyncSandbox.reset``: a used sandbox made as new."""
        _run(self._a.reset(timeout))

    def snapshot(self, dest: str) -> str:
        return _run(self._a.snapshot(dest))

    def _fork(self, count: Optional[int] = 1, *, timeout: Optional[float] = None,
              sandbox_ids: Optional[Sequence[str]] = None) -> List["Sandbox"]:
        """As ``AsyncSandbox.fork``: ``count`` running children with this
        one's files as they were at one instant."""
        return [Sandbox._wrap(a) for a in _run(self._a.fork(count, timeout=timeout, sandbox_ids=sandbox_ids))]

    @classmethod
    def _fork_id(cls, sandbox_id: str, *, count: Optional[int] = 1, timeout: Optional[float] = None,
                 sandbox_ids: Optional[Sequence[str]] = None, **conn: Any) -> List["Sandbox"]:
        kids = _run(AsyncSandbox.fork(sandbox_id, count=count, timeout=timeout, sandbox_ids=sandbox_ids, **conn))
        return [cls._wrap(a) for a in kids]

    fork = either(_fork, "_fork_id")

    def snapshot_image(self, name: str) -> Dict[str, Any]:
        return _run(self._a.snapshot_image(name))

    def hibernate(self, cmd: Command) -> None:
        _run(self._a.hibernate(cmd))

    def wake(self, cmd: Command) -> None:
        _run(self._a.wake(cmd))

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
