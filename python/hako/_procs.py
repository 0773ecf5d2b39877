"""Kept processes and PTY sessions: e2b's background command handles
(``commands.run(background=True)``, ``commands.list/connect/kill/send_stdin/
close_stdin``) and ``sandbox.pty``, over ``hako exec --detach`` (hako-exec(8),
Kept processes).  e2b's ``request_timeout`` is accepted and ignored: each
call is one hako process of its own, with nothing to time out but hako.

A kept process outlives the SDK: its holder, a process of hako's outside the
sandbox, logs its output and records how it ended.  A handle follows that
log with ``hako logs -f --process P`` (from the start: a handle made by
``connect`` sees what was written while nobody followed), and reads the end
with ``hako wait --json --process P``.
"""

from __future__ import annotations

import asyncio
import codecs
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import (TYPE_CHECKING, Any, AsyncIterator, Callable, Dict, List, Optional, Sequence, Tuple,
                    Union)

from hako._errors import (CommandExitException, InvalidArgumentException, NotFoundException,
                          NotRunningException, SandboxException, TimeoutException, from_kind)
from hako._proc import CHUNK, DEVNULL, PIPE, Process, Reader, despite_cancel
from hako._types import CommandResult

if TYPE_CHECKING:  # pragma: no cover
    from hako._async import AsyncSandbox

OutputCallback = Callable[[str], Any]
PtyCallback = Callable[[bytes], Any]
# One piece of output: (stdout, None, None), (None, stderr, None) or, from a
# terminal, (None, None, bytes): e2b's shape.
Chunk = Tuple[Optional[str], Optional[str], Optional[bytes]]


@dataclass
class PtySize:
    """A terminal's size, as e2b's."""

    rows: int = 24
    cols: int = 80


@dataclass
class ProcessInfo:
    """A running kept process (``commands.list()``): e2b's fields, then hako's."""

    pid: int
    tag: Optional[str]
    cmd: str
    args: List[str]
    envs: Dict[str, str] = field(default_factory=dict)  # not recorded: always {}
    cwd: Optional[str] = None  # not recorded: always None
    tty: bool = False  # a PTY session (sandbox.pty.create)
    ns_pid: Optional[int] = None  # its pid inside the sandbox
    raw: Dict[str, Any] = field(default_factory=dict)  # `hako ps --detached --format json`'s object


def _ms(stamp: Any) -> Optional[float]:
    """An RFC 3339 time of a record, in seconds since the epoch."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class AsyncCommandHandle:
    """A kept process: ``pid``; iterate it (``async for stdout, stderr, pty in h``)
    for its output as it comes, from the start; ``wait()``, ``kill()``,
    ``send_stdin()``, ``close_stdin()``, ``disconnect()`` (it runs on;
    ``commands.connect(pid)`` follows it again)."""

    def __init__(self, sandbox: "AsyncSandbox", pid: Optional[int], *, pty: bool = False,
                 on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                 on_pty: Optional[PtyCallback] = None) -> None:
        self._sandbox = sandbox
        self._pid = pid
        self._pty = pty
        self._callbacks: Tuple[Any, Any, Any] = (on_stdout, on_stderr, on_pty)
        self._events: List[Tuple[int, Any]] = []  # (0 stdout, 1 stderr, 2 pty; the text or bytes)
        self._cursor = 0  # the events iterating the handle has yielded (the next loop goes on from there)
        self._text: List[List[str]] = [[], []]
        self._more = asyncio.Event()
        self._killed = False
        self._disconnected = False
        self._result: Optional[CommandResult] = None
        self._proc: Optional[Process] = None
        self._waiter: Optional[Process] = None
        self._end: "Optional[asyncio.Future[Tuple[bytes, bytes]]]" = None
        self._tasks: List["asyncio.Future[None]"] = []
        self._done: "asyncio.Future[CommandResult]" = asyncio.get_running_loop().create_future()

    # ---- following the log ----

    def _start(self) -> None:
        """Start ``hako logs -f --process P`` and ``hako wait --json --process
        P``: at once, nothing to await (_proc.py).  The waiter runs from the
        start, so that it reads the end even when the sandbox is deleted
        right after (hako-wait(8))."""
        sb = self._sandbox
        pid, sid = str(self._pid), sb.sandbox_id
        self._waiter = Process(sb._transport.argv(["wait", "--json", "--process", pid, sid]))
        self._end = self._waiter.communicate()
        self._proc = Process(sb._transport.argv(["logs", "-f", "--process", pid, sid]))
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._tasks = [asyncio.ensure_future(self._pump(self._proc.stdout, 2 if self._pty else 0)),
                       asyncio.ensure_future(self._pump(self._proc.stderr, 1))]
        self._done = asyncio.ensure_future(self._collect())

    def _finished(self, result: CommandResult) -> None:
        """A handle of a command that could not be executed: done already."""
        self._result = result
        self._done.set_result(result)

    def _add(self, kind: int, data: Any) -> None:
        self._events.append((kind, data))
        if kind < 2:
            self._text[kind].append(data)
        more, self._more = self._more, asyncio.Event()
        more.set()

    async def _pump(self, reader: Reader, kind: int) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            data = await reader.read(CHUNK)
            final = not data
            out: Any = data if kind == 2 else decoder.decode(data, final)
            if out:
                self._add(kind, out)
                cb = self._callbacks[kind]
                if cb is not None:
                    r = cb(out)
                    if asyncio.iscoroutine(r):
                        await r
            if final:
                return

    async def _collect(self) -> CommandResult:
        assert self._proc is not None
        await asyncio.gather(*self._tasks)
        rc = await self._proc.wait()
        if self._disconnected:
            raise SandboxException(f"process {self._pid}: disconnected (commands.connect(pid) follows it again)",
                                   sandbox_id=self.sandbox_id)
        if rc != 0:
            err = "".join(self._text[1]).encode()
            from hako._async import _error
            raise _error(rc, err, self.sandbox_id, "logs")
        self._result = await self._read_end()
        return self._result

    async def _read_end(self) -> CommandResult:
        assert self._waiter is not None
        assert self._end is not None
        out, err = await asyncio.shield(self._end)
        rc = self._waiter.returncode if self._waiter.returncode is not None else 125
        try:
            rec = json.loads(out)
        except ValueError:
            from hako._async import _error
            raise _error(rc, err, self.sandbox_id, "wait") from None
        reason = str(rec.get("reason") or "exited")
        if self._killed and reason == "signaled":
            reason = "killed"  # by this handle (or commands.kill)
        started, ended = _ms(rec.get("started")), _ms(rec.get("ended"))

        def us(k: str) -> Optional[float]:
            v = rec.get(k)
            return int(v) / 1e6 if isinstance(v, int) else None

        return CommandResult(
            exit_code=int(rec["exit_code"]), stdout="".join(self._text[0]), stderr="".join(self._text[1]),
            stdout_truncated=bool(rec.get("stdout_truncated")), stderr_truncated=bool(rec.get("stderr_truncated")),
            timed_out=bool(rec.get("timed_out")), reason=reason,
            duration=(ended - started) if started is not None and ended is not None else 0.0,
            signal=rec.get("signal"), pid=self._pid, oom_kills=rec.get("oom_kills"),
            user_cpu=us("user_cpu_us"), system_cpu=us("system_cpu_us"), peak_memory=rec.get("peak_rss_bytes"))

    # ---- e2b's handle ----

    @property
    def sandbox_id(self) -> str:
        return self._sandbox.sandbox_id

    @property
    def pid(self) -> Optional[int]:
        """Its id: the host pid that ``hako exec --detach`` printed (None: it never ran)."""
        return self._pid

    async def get_pid(self) -> Optional[int]:
        return self._pid

    @property
    def stdout(self) -> str:
        """What it wrote on stdout so far (a PTY session's output is in on_data only)."""
        return "".join(self._text[0])

    @property
    def stderr(self) -> str:
        return "".join(self._text[1])

    @property
    def exit_code(self) -> Optional[int]:
        """None while it runs."""
        return self._result.exit_code if self._result is not None else None

    @property
    def error(self) -> Optional[str]:
        return self._result.error if self._result is not None else None

    async def _chunks(self, strict: bool) -> AsyncIterator[Chunk]:
        """Its output as it comes, from the start.  ``strict`` (iterating the
        handle, e2b's): from where the last loop over the handle stopped, and
        TimeoutException after the last chunk when its ``timeout`` killed it."""
        i = self._cursor if strict else 0
        while True:
            while i < len(self._events):
                kind, data = self._events[i]
                i += 1
                if strict:
                    self._cursor = i
                yield (data, None, None) if kind == 0 else (None, data, None) if kind == 1 else (None, None, data)
            if self._done.done():
                if i >= len(self._events):
                    res = None if self._done.cancelled() or self._done.exception() else self._done.result()
                    if strict and res is not None and res.timed_out:
                        raise TimeoutException("command timed out", result=res, sandbox_id=self.sandbox_id)
                    return
                continue
            waiter: "asyncio.Future[Any]" = asyncio.ensure_future(self._more.wait())
            done: "asyncio.Future[Any]" = self._done
            try:
                await asyncio.wait([waiter, done], return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()

    def __aiter__(self) -> AsyncIterator[Chunk]:
        """(stdout, stderr, pty) as they come, from the first (a loop after
        one that stopped early goes on where it stopped, as e2b's); ends with
        the process (TimeoutException if its ``timeout`` killed it)."""
        return self._chunks(True)

    async def wait(self, on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                   on_pty: Optional[PtyCallback] = None, check: bool = True) -> CommandResult:
        """Its end.  The callbacks get its output from the start.  Raises
        CommandExitException on a non-zero exit and TimeoutException when its
        timeout killed it, unless ``check=False`` (or this handle killed it)."""
        if on_stdout or on_stderr or on_pty:
            async for out, err, pty in self._chunks(False):
                r: Any = None
                if out is not None and on_stdout is not None:
                    r = on_stdout(out)
                elif err is not None and on_stderr is not None:
                    r = on_stderr(err)
                elif pty is not None and on_pty is not None:
                    r = on_pty(pty)
                if asyncio.iscoroutine(r):
                    await r
        # Shielded: a wait() cancelled leaves the output being read, for the next.
        res = await asyncio.shield(self._done)
        if check and res.timed_out:
            raise TimeoutException("command timed out", result=res, sandbox_id=self.sandbox_id)
        if check and res.exit_code != 0 and not self._killed:
            raise CommandExitException(res)
        return res

    async def kill(self) -> bool:
        """SIGKILL it and its process group.  False if it had ended."""
        if self._pid is None or self._result is not None:
            return False
        # Set first: _kill returns once the end is recorded, which the
        # follower may read before it returns, and that end is "killed".
        self._killed = True
        if not await _kill(self._sandbox, self._pid):
            self._killed = False
            return False
        if not self._disconnected:
            try:
                await asyncio.shield(self._done)
            except SandboxException:
                pass
        return True

    async def send_stdin(self, data: Union[str, bytes], request_timeout: Optional[float] = None) -> None:
        """To its stdin (``stdin=True`` at run) or its terminal."""
        if self._pid is None:
            raise NotRunningException("the command never ran", sandbox_id=self.sandbox_id)
        await _send_stdin(self._sandbox, self._pid, data, close=False)

    async def close_stdin(self, request_timeout: Optional[float] = None) -> None:
        if self._pid is None:
            raise NotRunningException("the command never ran", sandbox_id=self.sandbox_id)
        await _send_stdin(self._sandbox, self._pid, b"", close=True)

    async def disconnect(self) -> None:
        """Stop following it; it runs on (``commands.connect(pid)``)."""
        if self._disconnected or self._proc is None:
            return
        self._disconnected = True
        self._proc.kill()
        if self._waiter is not None:
            self._waiter.kill()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await despite_cancel(asyncio.ensure_future(self._proc.wait()))
        if self._end is not None:
            await despite_cancel(self._end)
        try:
            await asyncio.shield(self._done)
        except SandboxException:
            pass


# ---- the verbs over hako's ----------------------------------------------------------------


# How long kill waits for the end of the process it killed (a paused
# sandbox's process dies only once thawed: not waited for beyond this).
KILL_WAIT = 5.0


async def _kill(sb: "AsyncSandbox", pid: int) -> bool:
    """SIGKILL the kept process and its group; returns once its record says
    it ended (e2b's kill returns with the process gone: ``commands.list()``
    right after does not show it), or after KILL_WAIT seconds."""
    try:
        await sb._call(["kill", "--all", "--process", str(pid), sb.sandbox_id, "KILL"])
    except (NotRunningException, NotFoundException):
        return False
    try:
        await asyncio.wait_for(sb._call(["wait", "--process", str(pid), sb.sandbox_id], ok=range(256)), KILL_WAIT)
    except asyncio.TimeoutError:
        pass
    return True


async def _send_stdin(sb: "AsyncSandbox", pid: int, data: Union[str, bytes], close: bool) -> None:
    raw = data.encode() if isinstance(data, str) else bytes(data)
    await sb._call(["stdin"] + (["--close"] if close else []) + ["--process", str(pid), sb.sandbox_id],
                   stdin_data=raw)


async def _records(sb: "AsyncSandbox") -> List[Dict[str, Any]]:
    _, out, _ = await sb._call(["ps", "--detached", "--format", "json", sb.sandbox_id])
    recs = json.loads(out or b"[]")
    return [r for r in recs if isinstance(r, dict)]


def _info(rec: Dict[str, Any]) -> ProcessInfo:
    argv = [str(a) for a in rec.get("command") or []]
    ns = rec.get("ns_pid")
    return ProcessInfo(pid=int(rec["pid"]), tag=None, cmd=argv[0] if argv else "", args=argv[1:],
                       tty=bool(rec.get("tty")), ns_pid=int(ns) if isinstance(ns, int) else None, raw=rec)


async def _connect(sb: "AsyncSandbox", pid: int, tty: bool, on_stdout: Optional[OutputCallback],
                   on_stderr: Optional[OutputCallback], on_pty: Optional[PtyCallback]) -> AsyncCommandHandle:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise InvalidArgumentException(f"pid {pid!r}: expected a process id", sandbox_id=sb.sandbox_id)
    rec = next((r for r in await _records(sb) if r.get("pid") == pid), None)
    if rec is None:
        raise NotFoundException(f"sandbox {sb.sandbox_id} has no process {pid}", sandbox_id=sb.sandbox_id)
    if bool(rec.get("tty")) != tty:
        what = "a PTY session (sandbox.pty.connect)" if rec.get("tty") else "a command (commands.connect)"
        raise InvalidArgumentException(f"process {pid} is {what}", sandbox_id=sb.sandbox_id)
    h = AsyncCommandHandle(sb, pid, pty=tty, on_stdout=on_stdout, on_stderr=on_stderr, on_pty=on_pty)
    h._start()
    return h


async def start(sb: "AsyncSandbox", args: List[str], argv: List[str], stdin: Any,
                on_stdout: Optional[OutputCallback], on_stderr: Optional[OutputCallback],
                on_pty: Optional[PtyCallback] = None, pty: bool = False) -> AsyncCommandHandle:
    """``hako exec --detach ARGS ID -- ARGV`` and a handle following it.
    stdin: True keeps its stdin open (-i), str or bytes are sent and closed."""
    keep = stdin is not None and stdin is not False
    # Cancelled, hako ends its start and the process it started is killed
    # (_call's undo): nothing of a cancelled call runs on.
    rc, out, err = await sb._call(["exec", "--detach"] + (["-i"] if keep and not pty else []) + args
                                  + [sb.sandbox_id, "--"] + argv, ok=(0, 126, 127),
                                  undo=lambda out: ["kill", "--all", "--process", out.decode().strip() or "0",
                                                    sb.sandbox_id, "KILL"])
    if rc != 0:  # it could not be executed: a handle that has ended
        h = AsyncCommandHandle(sb, None)
        msg = ""
        for line in err.decode("utf-8", "replace").splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and "msg" in obj:
                msg = str(obj["msg"])
        h._finished(CommandResult(rc, "", "", error=msg,
                                  error_kind="not_found" if rc == 127 else "not_executable"))
        return h
    pid = int(out.split()[0])
    h = AsyncCommandHandle(sb, pid, pty=pty, on_stdout=on_stdout, on_stderr=on_stderr, on_pty=on_pty)
    h._start()
    if isinstance(stdin, (str, bytes)):
        try:
            await _send_stdin(sb, pid, stdin, close=True)
        except NotRunningException:
            pass  # it ended (or stopped reading) first: what it read is its output
    return h


class AsyncPty:
    """``sb.pty``: terminal sessions, e2b's ``sandbox.pty``."""

    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._sandbox = sandbox

    async def create(self, size: PtySize = PtySize(), on_data: Optional[PtyCallback] = None,
                     user: Optional[str] = None, cwd: Optional[str] = None,
                     envs: Optional[Dict[str, str]] = None, timeout: Optional[float] = 60,
                     request_timeout: Optional[float] = None, *,
                     cmd: Optional[Sequence[str]] = None) -> AsyncCommandHandle:
        """A shell on a new terminal of ``size`` (bash -i -l where there is
        bash, else sh -i; or ``cmd``); ``on_data`` gets its output (bytes).
        It is killed after ``timeout`` seconds (e2b's 60; None: never)."""
        from hako._async import _exec_options
        env = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        env.update(envs or {})
        args = ["--tty", "--tty-size", f"{int(size.rows)}x{int(size.cols)}"]
        args += _exec_options(self._sandbox, timeout, None, env, cwd, user)
        argv = list(cmd) if cmd else ["/bin/sh", "-c", 'if command -v bash >/dev/null 2>&1; '
                                      'then exec bash -i -l; else exec sh -i; fi']
        return await start(self._sandbox, args, argv, None, None, None, on_pty=on_data, pty=True)

    async def connect(self, pid: int, on_data: Optional[PtyCallback] = None, timeout: Optional[float] = None,
                      request_timeout: Optional[float] = None) -> AsyncCommandHandle:
        """Follow a PTY session again; ``on_data`` gets its output from the start."""
        return await _connect(self._sandbox, pid, True, None, None, on_data)

    async def send_stdin(self, pid: int, data: Union[str, bytes], request_timeout: Optional[float] = None) -> None:
        """Keys typed on its terminal."""
        await _send_stdin(self._sandbox, pid, data, close=False)

    async def resize(self, pid: int, size: PtySize, request_timeout: Optional[float] = None) -> None:
        sb = self._sandbox
        await sb._call(["resize", "--process", str(pid), sb.sandbox_id, f"{int(size.rows)}x{int(size.cols)}"])

    async def kill(self, pid: int, request_timeout: Optional[float] = None) -> bool:
        """SIGKILL it and its process group.  False if it had ended."""
        return await _kill(self._sandbox, pid)


class KeptCommands:
    """The part of ``sb.commands`` that reaches kept processes by pid."""

    _sandbox: "AsyncSandbox"

    async def list(self, request_timeout: Optional[float] = None) -> List[ProcessInfo]:
        """The running kept processes (background commands and PTY sessions)."""
        return [_info(r) for r in await _records(self._sandbox) if r.get("state") == "running"]

    async def connect(self, pid: int, timeout: Optional[float] = None, request_timeout: Optional[float] = None,
                      on_stdout: Optional[OutputCallback] = None,
                      on_stderr: Optional[OutputCallback] = None) -> AsyncCommandHandle:
        """Follow a background command again: its output from the start, its end."""
        return await _connect(self._sandbox, pid, False, on_stdout, on_stderr, None)

    async def kill(self, pid: int, request_timeout: Optional[float] = None) -> bool:
        """SIGKILL it and its process group.  False if it had ended."""
        return await _kill(self._sandbox, pid)

    async def send_stdin(self, pid: int, data: Union[str, bytes], request_timeout: Optional[float] = None) -> None:
        """To its stdin, which ``run(..., background=True, stdin=True)`` kept open."""
        await _send_stdin(self._sandbox, pid, data, close=False)

    async def close_stdin(self, pid: int, request_timeout: Optional[float] = None) -> None:
        await _send_stdin(self._sandbox, pid, b"", close=True)
