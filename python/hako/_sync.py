"""Sandbox: the same API as AsyncSandbox, blocking.  Each thread drives its
calls on one private event loop of its own (not one per call or sandbox)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, Dict, List, Mapping, Optional, Sequence, TypeVar, Union

from hako._async import (DEFAULT_LIFETIME, AsyncCommandHandle, AsyncSandbox, Command, OutputCallback, WriteData)
from hako._transport import Transport
from hako._types import CommandResult, EntryInfo, SandboxInfo, SandboxQuery, Secret

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
    """A background command: ``pid``, ``wait()``, ``kill()``, ``stdout``, ``stderr``.
    Its output is read while this thread is in a call of the SDK (``wait()``
    reads the rest)."""

    def __init__(self, h: AsyncCommandHandle) -> None:
        self._h = h

    @property
    def pid(self) -> Optional[int]:
        if self._h.pid is None:
            return _run(self._h.get_pid())
        return self._h.pid

    @property
    def stdout(self) -> str:
        return self._h.stdout

    @property
    def stderr(self) -> str:
        return self._h.stderr

    def wait(self, check: bool = True) -> CommandResult:
        return _run(self._h.wait(check=check))

    def kill(self) -> bool:
        return _run(self._h.kill())


class Commands:
    def __init__(self, sb: AsyncSandbox) -> None:
        self._c = sb.commands

    def run(self, cmd: Command, *, timeout: Optional[float] = 60, envs: Optional[Mapping[str, str]] = None,
            cwd: Optional[str] = None, user: Optional[str] = None, stdin: Optional[Union[str, bytes]] = None,
            on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
            background: bool = False, max_output: Optional[int] = None, check: bool = True) -> Any:
        """Run ``cmd``; a CommandResult, or a CommandHandle with ``background=True``."""
        r = _run(self._c.run(cmd, timeout=timeout, envs=envs, cwd=cwd, user=user, stdin=stdin,
                             on_stdout=on_stdout, on_stderr=on_stderr, background=background,
                             max_output=max_output, check=check))
        return CommandHandle(r) if background else r


class Files:
    def __init__(self, sb: AsyncSandbox) -> None:
        self._f = sb.files

    def read(self, path: str, format: str = "text", user: Optional[str] = None) -> Any:
        return _run(self._f.read(path, format=format, user=user))

    def write(self, path: str, data: WriteData, user: Optional[str] = None, mode: Optional[int] = None,
              make_dirs: bool = True) -> EntryInfo:
        return _run(self._f.write(path, data, user=user, mode=mode, make_dirs=make_dirs))

    def list(self, path: str, user: Optional[str] = None) -> List[EntryInfo]:
        return _run(self._f.list(path, user=user))

    def exists(self, path: str, user: Optional[str] = None) -> bool:
        return _run(self._f.exists(path, user=user))

    def remove(self, path: str, user: Optional[str] = None) -> None:
        _run(self._f.remove(path, user=user))

    def make_dir(self, path: str, user: Optional[str] = None) -> bool:
        return _run(self._f.make_dir(path, user=user))

    def rename(self, old_path: str, new_path: str, user: Optional[str] = None) -> EntryInfo:
        return _run(self._f.rename(old_path, new_path, user=user))

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
               hako: Optional[str] = None, root: Optional[str] = None,
               data_root: Optional[str] = None, transport: Optional[Transport] = None) -> "Sandbox":
        """As ``AsyncSandbox.create``: a lifetime of ``timeout`` seconds
        (DEFAULT_LIFETIME, 300; None: none), ``metadata`` as its labels."""
        return cls._wrap(_run(AsyncSandbox.create(
            image=image, profile=profile, bundle=bundle, network=network, allow=allow, memory=memory, cpus=cpus,
            pids=pids, disk=disk, timeout=timeout, envs=envs, cwd=cwd, user=user, mounts=mounts,
            sandbox_id=sandbox_id, from_snapshot=from_snapshot, devices=devices, metadata=metadata, deny=deny,
            secrets=secrets, hako=hako, root=root, data_root=data_root, transport=transport)))

    @classmethod
    def connect(cls, sandbox_id: str, *, hako: Optional[str] = None, root: Optional[str] = None,
                data_root: Optional[str] = None, transport: Optional[Transport] = None,
                envs: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                user: Optional[str] = None) -> "Sandbox":
        return cls._wrap(_run(AsyncSandbox.connect(sandbox_id, hako=hako, root=root, data_root=data_root,
                                             transport=transport, envs=envs, cwd=cwd, user=user)))

    @classmethod
    def list(cls, query: Union[SandboxQuery, Mapping[str, Any], None] = None, *, hako: Optional[str] = None,
             root: Optional[str] = None, data_root: Optional[str] = None,
             transport: Optional[Transport] = None) -> List[SandboxInfo]:
        return _run(AsyncSandbox.list(query, hako=hako, root=root, data_root=data_root, transport=transport))

    def get_info(self) -> SandboxInfo:
        return _run(self._a.get_info())

    def is_running(self) -> bool:
        return _run(self._a.is_running())

    def set_timeout(self, seconds: float) -> None:
        _run(self._a.set_timeout(seconds))

    def kill(self) -> bool:
        return _run(self._a.kill())

    def pause(self) -> None:
        _run(self._a.pause())

    def resume(self) -> None:
        _run(self._a.resume())

    def stop(self, timeout: Optional[float] = None) -> None:
        _run(self._a.stop(timeout))

    def start(self) -> None:
        _run(self._a.start())

    def snapshot(self, dest: str) -> str:
        return _run(self._a.snapshot(dest))

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
