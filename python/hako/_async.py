"""AsyncSandbox: the SDK on one asyncio event loop for hundreds of sandboxes (its processes: _proc.py)."""

from __future__ import annotations

import asyncio
import codecs
import io
import json
import os
import re
import secrets
import tarfile
from datetime import datetime, timezone
from typing import (IO, Any, Callable, Dict, List, Mapping, Optional,
                    Sequence, Tuple, Union, cast)

from hako._errors import (CommandExitException, InvalidArgumentException, NotFoundException,
                          NotRunningException, SandboxException, TimeoutException, UnsupportedException,
                          from_kind)
from hako._download import Unpacked
from hako._either import either
from hako._files import AsyncWatchHandle, TarStream, Watch, entry_fields, open_stream, tar_name, timed
from hako._metrics import MetricsHistory, SandboxMetrics
from hako._proc import CHUNK, DEVNULL, PIPE, Process, Reader, Writer, despite_cancel
from hako._procs import AsyncCommandHandle, AsyncPty, KeptCommands
from hako._procs import start as start_kept
from hako._transport import SSH, SSH_STATUS_SCRIPT, Local, Transport
from hako._types import (CommandResult, EntryInfo, FilesystemEvent, FileType, SandboxInfo, SandboxList, SandboxQuery,
                         Secret, WriteEntry, WriteInfo, list_filters, query_keeps)

OutputCallback = Callable[[str], Any]
Command = Union[str, Sequence[str]]
WriteData = Union[str, bytes, "os.PathLike[str]", IO[bytes], IO[str]]

# What an image sandbox made by create() runs as its own process: it only
# keeps the sandbox alive for exec; commands are what the caller runs.
IDLE = ["sleep", "2147483647"]

# How long create()'s sandbox lives unless told (seconds; e2b's default):
# one whose orchestrator crashed is deleted by its own deadline.
DEFAULT_LIFETIME = 300.0


def _new_id() -> str:
    return "sb-" + secrets.token_hex(6)


def _duration(seconds: float) -> str:
    ms = int(round(seconds * 1000))
    if ms <= 0:
        raise InvalidArgumentException(f"timeout {seconds!r}: must be positive")
    return f"{ms}ms"


def _seconds(us: Any) -> Optional[float]:
    return int(us) / 1e6 if isinstance(us, int) else None


def _argv(cmd: Command) -> List[str]:
    if isinstance(cmd, str):
        return ["/bin/sh", "-c", cmd]
    argv = list(cmd)
    if not argv:
        raise InvalidArgumentException("empty command")
    return argv


def _error(rc: int, stderr: bytes, sandbox_id: Optional[str], what: str) -> SandboxException:
    """The exception for a failed hako call: its last JSON error line on stderr."""
    text = stderr.decode("utf-8", "replace")
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("level") == "error" and "kind" in obj:
            return from_kind(str(obj["kind"]), str(obj.get("msg", "")), verb=obj.get("verb"),
                             sandbox_id=obj.get("id", sandbox_id))
    if rc == 255 and "ssh" in what:
        return SandboxException(f"{what}: ssh failed: {text.strip()}", sandbox_id=sandbox_id)
    return SandboxException(f"{what}: exit status {rc}: {text.strip()}", sandbox_id=sandbox_id)


def _make_transport(transport: Optional[Transport], hako: Optional[str], root: Optional[str],
                    data_root: Optional[str]) -> Transport:
    if transport is not None:
        if root is not None:
            transport.root = root
        if data_root is not None:
            transport.data_root = data_root
        return transport
    return Local(hako, root, data_root)


class _Stream:
    """One output stream, decoded as it comes and handed to a callback."""

    def __init__(self, callback: Optional[OutputCallback]) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.parts: List[str] = []
        self.callback = callback

    async def feed(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        if not text:
            return
        self.parts.append(text)
        if self.callback is not None:
            r = self.callback(text)
            if asyncio.iscoroutine(r):
                await r

    def text(self) -> str:
        return "".join(self.parts)


class _AttachedCommand:
    """A command that ``commands.run`` waits for: ``hako exec --status-fd``,
    its output streamed, its end read from the status fd."""

    def __init__(self, sandbox: "AsyncSandbox", argv: List[str], stdin: Optional[Union[str, bytes]],
                 on_stdout: Optional[OutputCallback], on_stderr: Optional[OutputCallback]) -> None:
        self._sandbox = sandbox
        self._argv = argv
        self._stdin = stdin.encode() if isinstance(stdin, str) else stdin
        self._out = _Stream(on_stdout)
        self._err = _Stream(on_stderr)
        self._status = bytearray()
        self._pid: "asyncio.Future[Optional[int]]" = asyncio.get_running_loop().create_future()
        # SSH: the remote shell's process group, from its first stderr line
        self._pgid: "asyncio.Future[Optional[int]]" = asyncio.get_running_loop().create_future()
        self._killed = False
        self._result: Optional[CommandResult] = None
        self._proc: Optional[Process] = None
        self._tasks: List["asyncio.Future[None]"] = []
        self._done: "asyncio.Future[CommandResult]"
        self._nonce = secrets.token_hex(16).encode()

    @property
    def sandbox_id(self) -> str:
        return self._sandbox.sandbox_id

    async def _start(self) -> None:
        """Start hako exec: at once, nothing to await (_proc.py says why)."""
        t = self._sandbox._transport
        stdin = PIPE if self._stdin is not None else DEVNULL
        args = ["exec", "--status-fd"]
        if isinstance(t, SSH):
            args.append("3")
            argv = t.ssh_argv(["sh", "-c", SSH_STATUS_SCRIPT, self._nonce.decode()]
                              + t.hako_argv(args + self._argv))
            self._proc = Process(argv, stdin=stdin)
            assert self._proc.stderr is not None
            self._tasks.append(asyncio.ensure_future(self._pump_ssh_stderr(self._proc.stderr)))
        else:
            r, w = os.pipe()
            try:
                self._proc = Process(t.argv(args + [str(w)] + self._argv), stdin=stdin, pass_fds=(w,))
            except BaseException:
                os.close(r)
                raise
            finally:
                os.close(w)
            assert self._proc.stderr is not None
            self._tasks.append(asyncio.ensure_future(self._pump(self._proc.stderr, self._err)))
            self._tasks.append(asyncio.ensure_future(self._read_status(Reader(os.fdopen(r, "rb", buffering=0)))))
        assert self._proc.stdout is not None
        self._tasks.append(asyncio.ensure_future(self._pump(self._proc.stdout, self._out)))
        if self._stdin is not None:
            assert self._proc.stdin is not None
            self._tasks.append(self._proc.stdin.feed(self._stdin))
        self._done = asyncio.ensure_future(self._collect())

    async def _stop(self) -> None:
        """Kill hako exec (its command with it: hako's subreaper in the
        sandbox sees to that), and wait until all of it has ended."""
        if self._proc is None:
            return
        self._killed = True
        self._proc.kill()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._proc.wait()

    async def _pump(self, reader: Reader, stream: _Stream) -> None:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            await stream.feed(data)
        await stream.feed(b"", final=True)

    def _status_line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            obj = json.loads(line)
        except ValueError:
            return
        if isinstance(obj, dict) and "pid" in obj and not self._pid.done():
            self._pid.set_result(int(obj["pid"]))
        self._status += line + b"\n"

    async def _read_status(self, reader: Reader) -> None:
        while True:
            line = await reader.readline()
            if not line:
                break
            self._status_line(line)
        self._no_pid()

    def _no_pid(self) -> None:
        if not self._pid.done():
            self._pid.set_result(None)

    async def _pump_ssh_stderr(self, reader: Reader) -> None:
        header = await reader.readline()
        parts = header.split()
        if len(parts) == 2 and parts[0] == self._nonce:
            self._pgid.set_result(int(parts[1]))
        else:  # ssh itself failed: what it said is the error
            self._pgid.set_result(None)
            await self._err.feed(header)
        marker = b"\n" + self._nonce + b"\n"
        buf = b""
        while True:
            data = await reader.read(CHUNK)
            if not data:
                await self._err.feed(buf, final=True)
                self._no_pid()
                return
            buf += data
            i = buf.find(marker)
            if i >= 0:
                await self._err.feed(buf[:i], final=True)
                rest = buf[i + len(marker):] + await reader.read()
                for line in rest.splitlines():
                    self._status_line(line)
                self._no_pid()
                return
            keep = len(marker) - 1
            if len(buf) > keep:
                await self._err.feed(buf[:-keep])
                buf = buf[-keep:]

    @property
    def stdout(self) -> str:
        """What the command wrote on stdout so far."""
        return self._out.text()

    @property
    def stderr(self) -> str:
        return self._err.text()

    async def get_pid(self) -> Optional[int]:
        """The command's host pid, once it runs (None if it never did; over SSH, known at its end)."""
        return await asyncio.shield(self._pid)

    @property
    def pid(self) -> Optional[int]:
        return self._pid.result() if self._pid.done() else None

    async def _finish(self) -> CommandResult:
        # Shielded: a wait() cancelled (by asyncio.wait_for, say) leaves the
        # output being read, for the next wait().
        return await asyncio.shield(self._done)

    async def _collect(self) -> CommandResult:
        assert self._proc is not None
        await asyncio.gather(*self._tasks)
        rc = await self._proc.wait()
        self._no_pid()
        result: Optional[Dict[str, Any]] = None
        err: Optional[Dict[str, Any]] = None
        for line in self._status.splitlines():
            obj = json.loads(line)
            if "exit_code" in obj:
                result = obj
            elif isinstance(obj.get("error"), dict):
                err = obj["error"]
        if err is not None:
            raise from_kind(str(err.get("kind", "internal")), str(err.get("msg", "")), verb="exec",
                            sandbox_id=self.sandbox_id)
        if result is None:
            if self._killed:
                self._result = CommandResult(137, self._out.text(), self._err.text(), signal=9,
                                             reason="killed", pid=self.pid)
                return self._result
            raise _error(rc, self._err.text().encode(), self.sandbox_id, "exec")
        stderr = self._err.text()
        error = None
        if isinstance(result.get("error"), dict):  # hako could not execute it
            error = str(result["error"].get("message", ""))
        elif result["exit_code"] in (126, 127) and result["reason"] == "exited" and stderr:
            error = stderr.strip().splitlines()[-1]  # a shell's own "not found"
        self._result = CommandResult(
            exit_code=int(result["exit_code"]), stdout=self._out.text(), stderr=stderr,
            stdout_truncated=bool(result["stdout_truncated"]),
            stderr_truncated=bool(result["stderr_truncated"]), timed_out=bool(result["timed_out"]),
            reason=str(result["reason"]), duration=int(result["duration_ms"]) / 1000.0,
            signal=result.get("signal"), pid=self.pid, error=error,
            oom_kills=result.get("oom_kills"), warning=result.get("warning"),
            user_cpu=_seconds(result.get("user_cpu_us")), system_cpu=_seconds(result.get("system_cpu_us")),
            peak_memory=result.get("peak_rss_bytes"),
            error_kind=(result.get("error") or {}).get("kind"))
        return self._result

    async def wait(self, check: bool = True) -> CommandResult:
        """Wait for the command's end.  Raises CommandExitException on a
        non-zero exit and TimeoutException when its timeout killed it, unless
        ``check=False``."""
        res = await self._finish()
        if check and res.timed_out:
            raise TimeoutException("command timed out", result=res, sandbox_id=self.sandbox_id)
        if check and res.exit_code != 0 and not self._killed:
            raise CommandExitException(res)
        return res


def _exec_options(sb: "AsyncSandbox", timeout: Optional[float], max_output: Optional[int],
                  envs: Optional[Mapping[str, str]], cwd: Optional[str], user: Optional[str]) -> List[str]:
    """exec's options for a command of sb: its own, over the sandbox's envs, cwd, user."""
    args: List[str] = []
    if timeout:
        args += ["--timeout", _duration(timeout)]
    if max_output is not None:
        args += ["--max-output", str(int(max_output))]
    env = dict(sb._envs)
    env.update(envs or {})
    for k, v in env.items():
        if not k or "=" in k:
            raise InvalidArgumentException(f"environment variable name {k!r}")
        args += ["-e", f"{k}={v}"]
    cwd = cwd or sb._cwd
    if cwd:
        args += ["--cwd", cwd]
    user = user or sb._user
    if user:
        args += ["-u", str(user)]
    return args


class AsyncCommands(KeptCommands):
    """``sb.commands``: run commands in the sandbox; background ones are kept
    processes (_procs.py), reached again by pid."""

    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._sandbox = sandbox

    async def run(self, cmd: Command, background: Optional[bool] = False, envs: Optional[Mapping[str, str]] = None,
                  user: Optional[str] = None, cwd: Optional[str] = None,
                  on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                  stdin: Optional[Union[bool, str, bytes]] = None, timeout: Optional[float] = 60,
                  request_timeout: Optional[float] = None, *, max_output: Optional[int] = None,
                  check: bool = True) -> Any:
        """Run ``cmd`` (a shell string or an argv list).  Returns a CommandResult,
        or with ``background=True`` an AsyncCommandHandle (a kept process:
        ``hako exec --detach``).  ``stdin``: data for its stdin; with
        ``background=True``, ``True`` keeps its stdin open for ``send_stdin``.
        The parameters come in e2b's order; ``request_timeout`` is accepted
        and ignored (nothing but hako to wait for)."""
        sb = self._sandbox
        args = _exec_options(sb, timeout, max_output, envs, cwd, user)
        if background:
            return await start_kept(sb, args, _argv(cmd), stdin, on_stdout, on_stderr)
        data = stdin if isinstance(stdin, (str, bytes)) else None  # True/False: e2b's flag, nothing to send
        h = _AttachedCommand(sb, args + [sb.sandbox_id, "--"] + _argv(cmd), data, on_stdout, on_stderr)
        await h._start()
        try:
            return await h.wait(check=check)
        except asyncio.CancelledError:
            # Nobody waits for it any more: it must not run on unwatched.
            await despite_cancel(asyncio.ensure_future(h._stop()))
            raise


class AsyncFiles:
    """``sb.files``: files inside the sandbox, read and written by hako's own
    code acting as the sandbox's process (``user=``: as that user; default
    its root), paths resolved inside its root: no shell or tool is needed in
    the sandbox (hako-fs(8), hako-put(8), hako-get(8)).  Paths are absolute."""

    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._sandbox = sandbox

    def _who(self, user: Optional[str]) -> List[str]:
        return ["-u", str(user)] if user else []

    async def _fs(self, sub: str, opts: Sequence[str], *paths: str, user: Optional[str] = None,
                  request_timeout: Optional[float] = None) -> bytes:
        """``hako fs SUB --format json [-u] OPTS ID PATHS``: its stdout."""
        sb = self._sandbox
        args = ["fs", sub] + list(opts) + self._who(user) + [sb.sandbox_id] + list(paths)
        _, out, _ = await timed(sb._call(args), request_timeout)
        return bytes(out)

    def _error_of(self, what: str) -> Callable[[int, bytes], SandboxException]:
        sb = self._sandbox
        return lambda rc, err: _error(rc, err, sb.sandbox_id, "ssh " + what if sb._transport.remote else what)

    async def read(self, path: str, format: str = "text", user: Optional[str] = None,
                   request_timeout: Optional[float] = None) -> Any:
        """The file's content: ``format="text"`` (str), ``"bytes"``, or
        ``"stream"``: an AsyncFileStreamReader of 64 KiB chunks, read from
        hako as they are iterated (a file of any size in bounded memory)."""
        if format not in ("text", "bytes", "stream"):
            raise InvalidArgumentException(f"format {format!r}: expected text, bytes or stream")
        a = ["get"] + self._who(user) + [self._sandbox.sandbox_id, path]
        if format == "stream":
            return await timed(open_stream(self._sandbox._transport.argv(a), self._error_of("get")),
                               request_timeout)
        _, out, _ = await timed(self._sandbox._call(a), request_timeout)
        return out if format == "bytes" else out.decode("utf-8", "replace")

    async def write(self, path: Union[str, Sequence[WriteEntry]], data: Optional[WriteData] = None,
                    user: Optional[str] = None, request_timeout: Optional[float] = None, *,
                    mode: Optional[int] = None, make_dirs: bool = True) -> Any:
        """Write ``data`` (str, bytes, a local path, or a file object) to
        ``path``, streamed (a path or a binary file with a descriptor is hako's
        stdin as it is), whole or not at all: a WriteInfo.  A list of
        WriteEntry instead of a path writes them all in one call
        (``write_files``): a list of WriteInfo."""
        if not isinstance(path, str):
            return await self.write_files(path, user=user, mode=mode, make_dirs=make_dirs,
                                          request_timeout=request_timeout)
        if data is None:
            raise InvalidArgumentException("files.write: no data")
        a = ["put"] + (["-p"] if make_dirs else []) + self._who(user)
        if mode is not None:
            a += ["--mode", format(mode, "o")]
        a += [self._sandbox.sandbox_id, path]
        await timed(self._put(a, data), request_timeout)
        return WriteInfo(name=os.path.basename(path.rstrip("/")), type=FileType.FILE, path=path)

    async def _put(self, a: List[str], data: WriteData) -> None:
        sb = self._sandbox
        if isinstance(data, str):
            await sb._call(a, stdin_data=data.encode())
        elif isinstance(data, (bytes, bytearray, memoryview)):
            await sb._call(a, stdin_data=bytes(data))
        elif isinstance(data, os.PathLike):
            with open(data, "rb") as f:
                await sb._call(a, stdin_file=f)
        else:
            fileno: Optional[int] = None
            try:
                fileno = data.fileno()
            except (AttributeError, OSError, ValueError):
                fileno = None
            if fileno is not None and "b" in getattr(data, "mode", "b"):
                await sb._call(a, stdin_file=data)
            else:
                await sb._call(a, stdin_chunks=data)

    async def write_files(self, files: Sequence[WriteEntry], user: Optional[str] = None,
                          request_timeout: Optional[float] = None, *, mode: Optional[int] = None,
                          make_dirs: bool = True) -> List[WriteInfo]:
        """Write every WriteEntry(path, data) in one hako call (``put --tar``),
        in order, each file whole; one tar member in memory at a time."""
        entries = [entry_fields(e) for e in files]
        if not entries:
            return []
        members = [(tar_name(p), d) for p, d in entries]
        a = ["put", "--tar"] + (["-p"] if make_dirs else []) + self._who(user)
        if mode is not None:
            a += ["--mode", format(mode, "o")]
        a += [self._sandbox.sandbox_id, "/"]
        stream = TarStream(members)
        try:
            await timed(self._sandbox._call(a, stdin_chunks=cast(IO[Any], stream)), request_timeout)
        finally:
            stream.close()
        return [WriteInfo(name=os.path.basename(p.rstrip("/")), type=FileType.FILE, path=p) for p, _ in entries]

    async def get_info(self, path: str, user: Optional[str] = None,
                       request_timeout: Optional[float] = None) -> EntryInfo:
        """The entry at ``path`` (``fs stat``): NotFoundException if there is none."""
        out = await self._fs("stat", ["--format", "json"], path, user=user, request_timeout=request_timeout)
        return EntryInfo.from_json(json.loads(out))

    async def list(self, path: str, depth: Optional[int] = 1, user: Optional[str] = None,
                   request_timeout: Optional[float] = None) -> List[EntryInfo]:
        """The entries of the directory ``path`` (a symlink to one followed),
        and theirs down to ``depth``, never through a symlink; sorted, each
        directory before its entries.  Fifos, sockets and devices are left
        out, as e2b's list does."""
        if depth is not None and depth < 1:
            raise InvalidArgumentException("depth should be at least 1")
        out = await self._fs("ls", ["--format", "json", "-d", str(depth or 1)], path, user=user,
                             request_timeout=request_timeout)
        entries = [EntryInfo.from_json(json.loads(line)) for line in out.splitlines() if line.strip()]
        return [e for e in entries if e.type is not None]

    async def exists(self, path: str, user: Optional[str] = None,
                     request_timeout: Optional[float] = None) -> bool:
        try:
            await self.get_info(path, user=user, request_timeout=request_timeout)
        except NotFoundException:
            return False
        return True

    async def remove(self, path: str, user: Optional[str] = None,
                     request_timeout: Optional[float] = None) -> None:
        """Remove a file, a link or a directory with everything in it (on its
        own mount: a mount point below is left, BusyException).  Nothing
        there is no error, as e2b's remove."""
        await self._fs("rm", ["-r", "-f"], path, user=user, request_timeout=request_timeout)

    async def make_dir(self, path: str, user: Optional[str] = None,
                       request_timeout: Optional[float] = None) -> bool:
        """Make ``path`` and its parents; False if it was already a directory."""
        out = await self._fs("mkdir", ["-p", "--format", "json"], path, user=user, request_timeout=request_timeout)
        return bool(json.loads(out).get("created"))

    async def rename(self, old_path: str, new_path: str, user: Optional[str] = None,
                     request_timeout: Optional[float] = None) -> EntryInfo:
        """rename(2): replaces a file at ``new_path``; never across mounts."""
        out = await self._fs("mv", ["--format", "json"], old_path, new_path, user=user,
                             request_timeout=request_timeout)
        return EntryInfo.from_json(json.loads(out))

    async def _watch(self, path: str, user: Optional[str], request_timeout: Optional[float],
                     timeout: Optional[float], recursive: bool) -> Watch:
        sb = self._sandbox
        a = ["fs", "watch", "--sync", "--format", "json"] + (["-r"] if recursive else []) + self._who(user)
        if timeout:
            a += ["--timeout", _duration(timeout)]
        a += [sb.sandbox_id, path]
        return await Watch.start(sb._transport.argv(a), self._error_of("fs watch"), request_timeout)

    async def watch_dir(self, path: str, on_event: Callable[[FilesystemEvent], Any],
                        on_exit: Optional[Callable[[Optional[Exception]], Any]] = None,
                        user: Optional[str] = None, request_timeout: Optional[float] = None,
                        timeout: Optional[float] = 60, recursive: bool = False) -> AsyncWatchHandle:
        """Call ``on_event`` with each change in the directory ``path`` (and
        below it with ``recursive``) for ``timeout`` seconds (0 or None: until
        ``stop()``), as e2b's; returns once the watch is in place.  Events:
        create, write, chmod, rename (the old name), remove; put's writes
        show as create+write (new) or write (replaced)."""
        w = await self._watch(path, user, request_timeout, timeout, recursive)
        return AsyncWatchHandle(w, on_event, on_exit)

    async def upload(self, local_dir: str, path: str) -> None:
        """Copy the local tree ``local_dir`` to ``path`` in the sandbox (``hako cp``)."""
        sb = self._sandbox
        if sb._transport.remote:  # a tar stream over the channel (cp's "-")
            await sb._call(["cp", "-", f"{sb.sandbox_id}:{path}"], stdin_tar=local_dir)
        else:
            await sb._call(["cp", local_dir, f"{sb.sandbox_id}:{path}"])

    async def download(self, path: str, local_dir: str) -> None:
        """Copy ``path`` in the sandbox into the local directory ``local_dir``
        (made if missing) under its own name, on either transport: hako sends
        it as a tar stream (``cp ID:PATH -``) and the SDK unpacks it beneath
        ``local_dir`` without following a symlink there (_download.py)."""
        sb = self._sandbox
        tree = Unpacked(local_dir)
        try:
            await self._download(path, tree)
        except BaseException:
            tree.discard()
            raise
        # Only now that hako has said the stream is whole does it take its
        # names; a cancellation waits for that to end (no half-moved tree).
        commit = asyncio.get_running_loop().run_in_executor(None, tree.commit)
        try:
            await asyncio.shield(commit)
        except asyncio.CancelledError:
            await despite_cancel(commit)
            raise

    async def _download(self, path: str, tree: Unpacked) -> None:
        sb = self._sandbox
        r, w = os.pipe()
        try:
            proc = Process(sb._transport.argv(["cp", f"{sb.sandbox_id}:{path}", "-"]), stdout=w)
        except FileNotFoundError as e:
            os.close(r)
            raise NotFoundException(f"cannot run {sb._transport.argv([])[0]!r}: {e}") from None
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)
        with os.fdopen(r, "rb") as rf:
            read = asyncio.get_running_loop().run_in_executor(None, tree.read, rf)
            assert proc.stderr is not None
            err = proc.stderr.collect()
            try:
                await asyncio.shield(err)
                rc = await proc.wait()
                await asyncio.wait([read])
            except asyncio.CancelledError:
                # hako ends, which ends the stream and the reading; the caller
                # discards what was read, then the cancellation goes on.
                proc.kill()
                await despite_cancel(read)
                raise
        failed = read.exception()
        if rc != 0:  # hako's error first: the stream it cut is only its consequence
            raise _error(rc, err.result(), sb.sandbox_id, "ssh cp" if sb._transport.remote else "cp")
        if failed is not None:
            raise failed


class AsyncSandbox:
    """A hako sandbox driven from asyncio (``await AsyncSandbox.create(...)``)."""

    def __init__(self, sandbox_id: str, transport: Transport, envs: Optional[Mapping[str, str]] = None,
                 cwd: Optional[str] = None, user: Optional[str] = None) -> None:
        check_id(sandbox_id)
        self.sandbox_id = sandbox_id
        self._transport = transport
        self._envs: Dict[str, str] = dict(envs or {})
        self._cwd = cwd
        self._user = user
        self.commands = AsyncCommands(self)
        self.files = AsyncFiles(self)
        self._metrics = MetricsHistory()
        self.pty = AsyncPty(self)

    # ---- the CLI ----

    async def _call(self, args: Sequence[str], *, ok: Sequence[int] = (0,), stdin_data: Optional[bytes] = None,
                    stdin_file: Optional[IO[Any]] = None, stdin_chunks: Optional[IO[Any]] = None,
                    stdin_tar: Optional[str] = None, stdout_file: Optional[IO[Any]] = None,
                    undo: Union[Sequence[str], Callable[[bytes], Sequence[str]], None] = None
                    ) -> Tuple[int, bytes, bytes]:
        return await _call(self._transport, args, ok=ok, sandbox_id=self.sandbox_id, stdin_data=stdin_data,
                           stdin_file=stdin_file, stdin_chunks=stdin_chunks, stdin_tar=stdin_tar,
                           stdout_file=stdout_file, undo=undo)

    @classmethod
    async def create(cls, image: Optional[str] = None, profile: str = "host", bundle: Optional[str] = None,
                     network: Optional[str] = None, allow: Sequence[str] = (),
                     memory: Optional[Union[int, str]] = None,
                     cpus: Optional[float] = None, pids: Optional[int] = None, disk: Optional[Union[int, str]] = None,
                     timeout: Optional[float] = DEFAULT_LIFETIME, envs: Optional[Mapping[str, str]] = None,
                     cwd: Optional[str] = None, user: Optional[str] = None, mounts: Sequence[str] = (),
                     sandbox_id: Optional[str] = None, from_snapshot: Optional[str] = None, *,
                     devices: Sequence[str] = (), metadata: Optional[Mapping[str, str]] = None,
                     deny: Sequence[str] = (), secrets: Optional[Mapping[str, Union[Secret, str]]] = None,
                     template: Optional[str] = None, hako: Optional[str] = None, root: Optional[str] = None,
                     data_root: Optional[str] = None, transport: Optional[Transport] = None) -> "AsyncSandbox":
        """Create and start a sandbox; its own process only keeps it alive.

        It lives ``timeout`` seconds (DEFAULT_LIFETIME, 300, as e2b's; None:
        until deleted), so a crashed orchestrator leaves nothing running;
        ``set_timeout`` moves the deadline.  ``metadata`` becomes its labels
        (``--label``), which ``list(query=...)`` filters by.

        The network: ``network`` is none, host, allowlist or denylist
        (default none, or allowlist with ``allow``, denylist with ``deny``
        alone); ``allow`` and ``deny`` are rules (hako-spec(5), NETWORK
        RULES: "pypi.org", "GET,HEAD https://api.github.com/repos/**");
        ``secrets`` maps a name to a ``Secret`` (or the CLI's
        "env:VAR@HOST" form), which the sandbox sees only as a placeholder.
        ``template`` is e2b's name for ``image``."""
        if template is not None:
            if image is not None:
                raise InvalidArgumentException("give image= or template= (e2b's name for it), not both")
            image = template
        t = _make_transport(transport, hako, root, data_root)
        sid = sandbox_id or _new_id()
        args = ["run", "-d"]
        if from_snapshot:
            args += ["--from-snapshot", from_snapshot]
        elif bundle:
            args += ["--bundle", bundle]
        elif image:
            args += ["--image", image]
        else:
            args += ["--profile", profile]
        env: Dict[str, str] = {}
        if not from_snapshot:  # a snapshot's network is its config's
            if network is not None or not (allow or deny or secrets):
                args += ["--network", network or "none"]
            for a in allow:
                args += ["--allow", a]
            for a in deny:
                args += ["--deny", a]
            for i, (name, sec) in enumerate((secrets or {}).items()):
                args += ["--secret", _secret_arg(t, name, sec, i, env)]
        if disk is not None:
            args += ["--disk", str(disk)]
        if timeout:
            args += ["--timeout", _duration(timeout)]
        if memory is not None:
            args += ["--memory", str(memory)]
        if cpus is not None:
            args += ["--cpus", str(cpus)]
        if pids is not None:
            args += ["--pids-limit", str(pids)]
        for k, v in (envs or {}).items():
            if not k or "=" in k:
                raise InvalidArgumentException(f"environment variable name {k!r}")
            args += ["-e", f"{k}={v}"]
        if cwd:
            args += ["-w", cwd]
        if user:
            args += ["-u", str(user)]
        for m in mounts:
            args += ["-v", m]
        for d in devices:  # a CDI name (vendor.com/class=name) or a host node
            args += ["--device", d]
        for k, v in (metadata or {}).items():
            args += ["--label", f"{k}={v}"]
        args.append(sid)
        if image and not (from_snapshot or bundle):
            # The host profile without a command runs hako's own init, which
            # waits; an image's would run its entrypoint instead.
            args += ["--"] + IDLE
        # Cancelled meanwhile, hako still ends its work (killed halfway it
        # would leave half a sandbox), and the sandbox nobody holds then goes.
        await _call(t, args, sandbox_id=sid, undo=["delete", "--force", sid], env=env or None)
        return cls(sid, t)

    @classmethod
    def _by_id(cls, sandbox_id: str, hako: Optional[str] = None, root: Optional[str] = None,
               data_root: Optional[str] = None, transport: Optional[Transport] = None) -> "AsyncSandbox":
        """A handle on the sandbox ``sandbox_id`` (nothing asked of hako yet):
        what e2b's calls by id (``AsyncSandbox.kill(sandbox_id)``) act on."""
        return cls(sandbox_id, _make_transport(transport, hako, root, data_root))

    async def _connect(self, timeout: Optional[float] = None,
                       request_timeout: Optional[float] = None) -> "AsyncSandbox":
        """e2b's ``await sb.connect(timeout=)``: this sandbox, resumed if it
        was paused (NotFoundException if it is gone); a ``timeout`` that ends
        later than its deadline moves the deadline there (a shorter one, or a
        sandbox without a deadline, is left as it is, as e2b's)."""
        info = await timed(self.get_info(), request_timeout)
        if info.status == "paused":
            await self.resume()
        if timeout is not None and info.end_at is not None:
            if datetime.now(timezone.utc).timestamp() + timeout > info.end_at.timestamp():
                await self.set_timeout(timeout)
        return self

    @classmethod
    async def _connect_id(cls, sandbox_id: str, timeout: Optional[float] = None,
                          request_timeout: Optional[float] = None, *, hako: Optional[str] = None,
                          root: Optional[str] = None, data_root: Optional[str] = None,
                          transport: Optional[Transport] = None, envs: Optional[Mapping[str, str]] = None,
                          cwd: Optional[str] = None, user: Optional[str] = None) -> "AsyncSandbox":
        """``await AsyncSandbox.connect(sandbox_id)``: an existing sandbox
        (NotFoundException if there is none), resumed if paused, its deadline
        moved to ``timeout`` seconds from now if that is later; ``envs``,
        ``cwd``, ``user``: for the commands run through this handle."""
        sb = cls(sandbox_id, _make_transport(transport, hako, root, data_root), envs, cwd, user)
        return await sb._connect(timeout, request_timeout)

    connect = either(_connect, "_connect_id")

    @classmethod
    async def list(cls, query: Union[SandboxQuery, Mapping[str, Any], None] = None, limit: Optional[int] = None,
                   next_token: Optional[str] = None, order: Optional[str] = None,
                   request_timeout: Optional[float] = None, *, hako: Optional[str] = None,
                   root: Optional[str] = None, data_root: Optional[str] = None,
                   transport: Optional[Transport] = None) -> SandboxList:
        """The sandboxes, those whose metadata has every key and value of
        ``query``'s and whose status is one of its ``state`` (when given): a
        list, which is also e2b's paginator (``next_items()``, ``has_next``;
        pages of ``limit``, ``next_token`` where the next one starts).
        ``order``: ``"asc"`` oldest first, ``"desc"`` newest first (by start)."""
        if order not in (None, "asc", "desc"):
            raise InvalidArgumentException(f"order {order!r}: expected 'asc' or 'desc'")
        t = _make_transport(transport, hako, root, data_root)
        _, out, _ = await timed(_call(t, ["list", "--format", "json"] + list_filters(query), sandbox_id=None),
                                request_timeout)
        infos = [i for i in (SandboxInfo.from_state(o) for o in json.loads(out or b"[]")) if query_keeps(query, i)]
        if order is not None:
            never = datetime.max.replace(tzinfo=timezone.utc)  # not started: after every start
            infos.sort(key=lambda i: i.started_at or never, reverse=order == "desc")
        return SandboxList(infos, limit=limit, next_token=next_token)

    async def _get_info(self, request_timeout: Optional[float] = None) -> SandboxInfo:
        _, out, _ = await timed(self._call(["state", self.sandbox_id]), request_timeout)
        return SandboxInfo.from_state(json.loads(out))

    @classmethod
    async def _get_info_id(cls, sandbox_id: str, request_timeout: Optional[float] = None,
                           **conn: Any) -> SandboxInfo:
        return await cls._by_id(sandbox_id, **conn)._get_info(request_timeout)

    get_info = either(_get_info, "_get_info_id")

    async def is_running(self, request_timeout: Optional[float] = None) -> bool:
        return (await self.get_info(request_timeout)).status == "running"

    async def _set_timeout(self, timeout: float, request_timeout: Optional[float] = None) -> None:
        """Move the sandbox's deadline to ``timeout`` seconds from now, earlier
        or later (``hako update --timeout``)."""
        await timed(self._call(["update", "--timeout", _duration(timeout), self.sandbox_id]), request_timeout)

    @classmethod
    async def _set_timeout_id(cls, sandbox_id: str, timeout: float, request_timeout: Optional[float] = None,
                              **conn: Any) -> None:
        await cls._by_id(sandbox_id, **conn)._set_timeout(timeout, request_timeout)

    set_timeout = either(_set_timeout, "_set_timeout_id")

    async def _get_metrics(self, start: Optional[datetime] = None, end: Optional[datetime] = None,
                           request_timeout: Optional[float] = None) -> List[SandboxMetrics]:
        """e2b's usage samples, oldest first: one taken now (``hako events
        --stats``) after those this object took before, within ``start`` and
        ``end`` (naive: local time).  hako keeps no history (no daemon): a
        sample's CPU percentage is over the time since the one before, the
        first one's since the sandbox started.  A sandbox that is not
        running gives the samples taken while it ran."""
        return await timed(self._sample(start, end), request_timeout)

    async def _sample(self, start: Optional[datetime], end: Optional[datetime]) -> List[SandboxMetrics]:
        if not self._metrics.samples:
            started = (await self.get_info()).started_at
        else:
            started = None
        try:
            _, out, _ = await self._call(["events", "--stats", self.sandbox_id])
        except NotRunningException:
            return self._metrics.between(start, end)
        self._metrics.add(json.loads(out), datetime.now(timezone.utc), started)
        return self._metrics.between(start, end)

    @classmethod
    async def _get_metrics_id(cls, sandbox_id: str, start: Optional[datetime] = None,
                              end: Optional[datetime] = None, request_timeout: Optional[float] = None,
                              **conn: Any) -> List[SandboxMetrics]:
        """By id: a new handle's one sample (it has taken none before)."""
        return await cls._by_id(sandbox_id, **conn)._get_metrics(start, end, request_timeout)

    get_metrics = either(_get_metrics, "_get_metrics_id")

    async def get_host(self, port: int, *, host_ip: Optional[str] = None) -> str:
        """``"HOST:PORT"`` where this machine reaches the sandbox's TCP ``port``
        (e2b's ``get_host``; add ``http://`` for a URL): published on first use
        (``hako port --add``), again the same on the next call.  It is on the
        hako machine's 127.0.0.1 unless ``host_ip`` names another of its
        addresses (``"0.0.0.0"``: every interface, so the network reaches the
        sandbox's server).  Over SSH the port is on the remote machine: give
        ``host_ip`` (say ``"0.0.0.0"``), and the answer names the SSH host."""
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise InvalidArgumentException(f"port {port!r}: expected a TCP port number from 1 to 65535")
        t = self._transport
        if isinstance(t, SSH) and host_ip is None:
            raise UnsupportedException(
                f"get_host({port}) over SSH: the port would be on {t.host}'s own 127.0.0.1; give host_ip= "
                "(\"0.0.0.0\": every interface of that machine), or tunnel it with ssh -L", sandbox_id=self.sandbox_id)
        spec = str(port) if host_ip is None else f"[{host_ip}]::{port}" if ":" in host_ip else f"{host_ip}::{port}"
        _, out, _ = await self._call(["port", "--add", spec, "--format", "json", self.sandbox_id])
        published = json.loads(out)[0]
        ip, host_port = str(published["host_ip"]), int(published["host_port"])
        if isinstance(t, SSH):
            ip = t.host
        elif ip in ("0.0.0.0", "::"):
            ip = "127.0.0.1" if ip == "0.0.0.0" else "::1"
        return f"[{ip}]:{host_port}" if ":" in ip else f"{ip}:{host_port}"

    async def _kill(self, request_timeout: Optional[float] = None) -> bool:
        """Delete the sandbox and everything in it.  False if it was already gone."""
        return await timed(self._delete(), request_timeout)

    async def _delete(self) -> bool:
        # delete --force of no sandbox succeeds (runc's contract): ask first.
        try:
            await self._call(["state", self.sandbox_id])
        except NotFoundException:
            return False
        await self._call(["delete", "--force", self.sandbox_id])
        return True

    @classmethod
    async def _kill_id(cls, sandbox_id: str, request_timeout: Optional[float] = None, **conn: Any) -> bool:
        return await cls._by_id(sandbox_id, **conn)._kill(request_timeout)

    kill = either(_kill, "_kill_id")

    async def _pause(self, request_timeout: Optional[float] = None) -> bool:
        """Freeze every process of the sandbox (``hako pause``; memory stays
        where it is); ``resume()`` or ``connect()`` thaws it.  False if it
        was paused already (e2b's answer)."""
        if (await self.get_info(request_timeout)).status == "paused":
            return False
        await timed(self._call(["pause", self.sandbox_id]), request_timeout)
        return True

    @classmethod
    async def _pause_id(cls, sandbox_id: str, request_timeout: Optional[float] = None, **conn: Any) -> bool:
        return await cls._by_id(sandbox_id, **conn)._pause(request_timeout)

    pause = either(_pause, "_pause_id")
    beta_pause = either(_pause, "_pause_id")  # e2b's older name

    async def resume(self) -> None:
        await self._call(["resume", self.sandbox_id])

    async def stop(self, timeout: Optional[float] = None) -> None:
        """End every process, keep the files (``start()`` runs it again)."""
        await self._call(["stop"] + (["--time", _duration(timeout)] if timeout else []) + [self.sandbox_id])

    async def start(self) -> None:
        await self._call(["start", self.sandbox_id])

    async def reset(self, timeout: Optional[float] = None) -> None:
        """As create left it (``hako reset``): every process killed (SIGTERM
        first when ``timeout`` seconds are given), its writable state (/work,
        an image's writable layer) new and empty, its own process started
        again."""
        await self._call(["reset"] + (["--time", _duration(timeout)] if timeout else []) + [self.sandbox_id])

    async def snapshot(self, dest: str) -> str:
        """Copy the writable state into the new directory ``dest``
        (``create(from_snapshot=dest)`` branches from it)."""
        await self._call(["snapshot", self.sandbox_id, dest])
        return dest

    async def _fork(self, count: Optional[int] = 1, *, timeout: Optional[float] = None,
                    sandbox_ids: Optional[Sequence[str]] = None) -> List["AsyncSandbox"]:
        """``count`` new running sandboxes whose files (/work, an image's
        writable layer) are this one's at one instant (``hako fork``); this
        one is frozen only for that instant and runs on unchanged, and what
        any of them writes later is its own.  The children's processes start
        afresh from this sandbox's config (memory is not copied); they keep
        this handle's envs, cwd and user for commands.  Their lifetime is
        the config's, counted from the fork, or ``timeout`` seconds (e2b's
        spelling).  ``sandbox_ids`` names them (default: new ids).  On a
        btrfs disk (``hako doctor``: fork) each child is a snapshot, whatever
        the size; elsewhere the files are copied.  All or none: on failure
        no child is left, and the exception says why.  ``count=None``: one."""
        if count is None:
            count = 1
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InvalidArgumentException(f"fork: count={count!r}: must be a positive number")
        ids = list(sandbox_ids) if sandbox_ids is not None else [_new_id() for _ in range(count)]
        if not ids or (sandbox_ids is not None and count not in (1, len(ids))):
            raise InvalidArgumentException(f"fork: count={count} and {len(ids)} sandbox_ids")
        lifetime = _duration(timeout) if timeout is not None else None
        # Cancelled meanwhile, hako ends the fork and the children then go.
        await _call(self._transport, ["fork", self.sandbox_id, *ids], sandbox_id=self.sandbox_id,
                    undo=["delete", "--force", *ids])
        kids = [AsyncSandbox(i, self._transport, self._envs, self._cwd, self._user) for i in ids]
        try:
            if lifetime is not None:
                for k in kids:
                    await k._call(["update", "--timeout", lifetime, k.sandbox_id])
        except BaseException:
            await despite_cancel(asyncio.ensure_future(
                _call(self._transport, ["delete", "--force", *ids], sandbox_id=self.sandbox_id)))
            raise
        return kids

    @classmethod
    async def _fork_id(cls, sandbox_id: str, *, count: Optional[int] = 1, timeout: Optional[float] = None,
                       sandbox_ids: Optional[Sequence[str]] = None, **conn: Any) -> List["AsyncSandbox"]:
        """``AsyncSandbox.fork(sandbox_id, count=, timeout=)``: e2b's fork by id."""
        return await cls._by_id(sandbox_id, **conn)._fork(count, timeout=timeout, sandbox_ids=sandbox_ids)

    fork = either(_fork, "_fork_id")

    async def snapshot_image(self, name: str) -> Dict[str, Any]:
        """Commit an image sandbox's writable layer as the image ``name``."""
        _, out, _ = await self._call(["snapshot", "--image", name, "--format", "json", self.sandbox_id])
        obj: Dict[str, Any] = json.loads(out)
        return obj

    async def hibernate(self, cmd: Command) -> None:
        """Run the checkpoint command ``cmd``; if it exits 0, stop the sandbox."""
        rc, _, err = await self._call(["hibernate", self.sandbox_id, "--"] + _argv(cmd), ok=range(0, 125))
        if rc != 0:
            raise CommandExitException(CommandResult(rc, "", err.decode("utf-8", "replace")))

    async def wake(self, cmd: Command) -> None:
        """Start the stopped sandbox and run the restore command ``cmd``."""
        rc, _, err = await self._call(["wake", self.sandbox_id, "--"] + _argv(cmd), ok=range(0, 125))
        if rc != 0:
            raise CommandExitException(CommandResult(rc, "", err.decode("utf-8", "replace")))

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()


def _secret_arg(t: Transport, name: str, sec: Union[Secret, str], i: int, env: Dict[str, str]) -> str:
    """``--secret``'s argument for one secret; a value given as such goes
    in hako's environment (never its command line, which ``ps`` shows)."""
    if isinstance(sec, str):
        return f"{name}={sec}"
    given = [x for x in (sec.value, sec.env, sec.file) if x is not None]
    if len(given) != 1:
        raise InvalidArgumentException(f"secret {name}: give exactly one of value, env and file")
    query = ",query" if sec.query else ""
    if sec.env is not None:
        return f"{name}=env:{sec.env}@{sec.host}{query}"
    if sec.file is not None:
        return f"{name}=file:{sec.file}@{sec.host}{query}"
    if t.remote:
        raise InvalidArgumentException(
            f"secret {name}: a value is passed in hako's environment, which ssh does not carry: "
            "give env= or file= on the remote machine")
    var = f"HAKO_SDK_SECRET_{i}"
    env[var] = sec.value or ""
    return f"{name}=env:{var}@{sec.host}{query}"


_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_id(sandbox_id: str) -> None:
    """hako's own grammar for an id, checked before it goes into an argv,
    where anything else could be read as one of the verb's options ("-a",
    "--force") or, over SSH, be a remote shell's word."""
    if not isinstance(sandbox_id, str) or not _ID.fullmatch(sandbox_id):
        raise InvalidArgumentException(f"invalid sandbox id {sandbox_id!r}: must match "
                                       "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


async def _call(t: Transport, args: Sequence[str], *, ok: Sequence[int] = (0,), sandbox_id: Optional[str],
                stdin_data: Optional[bytes] = None, stdin_file: Optional[IO[Any]] = None,
                stdin_chunks: Optional[IO[Any]] = None, stdin_tar: Optional[str] = None,
                stdout_file: Optional[IO[Any]] = None,
                undo: Union[Sequence[str], Callable[[bytes], Sequence[str]], None] = None,
                env: Optional[Mapping[str, str]] = None) -> Tuple[int, bytes, bytes]:
    """Run hako ARGS; its exit status, stdout, stderr.  A status outside ``ok``
    raises the exception of the error kind hako printed.

    Cancelled, the call ends before the cancellation is raised: hako is
    killed if ARGS's verb runs as long as a command or its data does, else
    let finish (nothing half made or half deleted), and when it succeeded
    all the same, hako UNDO is run (UNDO: an argv, or a function of what
    hako wrote on stdout that returns one)."""
    if sandbox_id is not None:
        check_id(sandbox_id)
    argv = t.argv(args)
    stdin: Any = DEVNULL
    if stdin_file is not None:
        stdin = stdin_file
    elif stdin_data is not None or stdin_chunks is not None or stdin_tar is not None:
        stdin = PIPE
    try:
        proc = Process(argv, stdin=stdin, stdout=stdout_file if stdout_file is not None else PIPE, env=env)
    except FileNotFoundError as e:
        raise NotFoundException(f"cannot run {argv[0]!r}: {e}") from None
    feeder: "Optional[asyncio.Future[None]]" = None
    if stdin_chunks is not None or stdin_tar is not None:
        assert proc.stdin is not None
        feeder = asyncio.ensure_future(_feed(proc.stdin, stdin_chunks, stdin_tar))
    done = proc.communicate(stdin_data)
    try:
        out, err = await asyncio.shield(done)
        if feeder is not None:
            await feeder
    except asyncio.CancelledError:
        # A kept process's start (exec --detach) is let finish: killed, its
        # holder would go on with a process nobody knows of; it is undone.
        if args[0] in _KILLED_ON_CANCEL and not _kept_start(args):
            proc.kill()
        await despite_cancel(done)
        if feeder is not None:
            await despite_cancel(feeder)
        if undo and proc.returncode in ok:
            u = undo(done.result()[0] or b"") if callable(undo) else undo
            await despite_cancel(asyncio.ensure_future(_call(t, u, sandbox_id=sandbox_id, ok=range(256))))
        raise
    rc = proc.returncode
    assert rc is not None
    if rc not in ok:
        raise _error(rc, err, sandbox_id, "ssh " + args[0] if t.remote else args[0])
    return rc, out or b"", err


# The verbs a cancelled call kills rather than lets end (_call).
_KILLED_ON_CANCEL = frozenset({"exec", "get", "put", "cp", "fs", "hibernate", "wake", "logs", "wait"})


def _kept_start(args: Sequence[str]) -> bool:
    """exec --detach, among hako's options (not the command's, after --)."""
    opts = list(args[:list(args).index("--")]) if "--" in args else list(args)
    return args[0] == "exec" and "--detach" in opts


async def _feed(w: Writer, chunks: Optional[IO[Any]], tar: Optional[str]) -> None:
    """A file object's chunks, or a local tree as tar, to hako's stdin."""
    try:
        if tar is not None:
            await _send_tar(w, tar)
        else:
            assert chunks is not None
            while True:
                chunk = chunks.read(CHUNK)
                if not chunk:
                    break
                await w.write(chunk.encode() if isinstance(chunk, str) else chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        w.close()


async def _send_tar(w: Writer, local_dir: str) -> None:
    """local_dir as a tar stream whose top entry is its own name (as
    ``hako cp DIR ID:PATH`` copies it), one entry in memory at a time."""
    sink = io.BytesIO()
    top = os.path.basename(os.path.normpath(local_dir))
    with tarfile.open(fileobj=sink, mode="w|") as tf:
        for d, dirs, files in os.walk(local_dir):
            dirs.sort()
            rel = os.path.relpath(d, local_dir)
            base = top if rel == "." else os.path.join(top, rel)
            tf.add(d, arcname=base, recursive=False)
            for name in sorted(files) + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
                tf.add(os.path.join(d, name), arcname=os.path.join(base, name), recursive=False)
                await w.write(sink.getvalue())
                sink.seek(0)
                sink.truncate()
    await w.write(sink.getvalue())
