"""Background commands as kept processes (hako exec --detach) and PTY
sessions, with e2b's API: handles to iterate, wait for, kill, disconnect
from and connect to again; commands.list/connect/kill/send_stdin/
close_stdin; sandbox.pty.create/send_stdin/resize/kill/connect."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional

import pytest

import hako
from hako import PtySize, Sandbox


def test_background_handle_iterates_and_waits(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        h = sb.commands.run("echo a; echo b >&2; sleep 0.3; echo c; exit 2", background=True)
        assert isinstance(h.pid, int) and h.exit_code is None
        out: List[str] = []
        err: List[str] = []
        for stdout, stderr, pty in h:  # e2b's (stdout, stderr, pty) chunks, as they come
            assert pty is None
            if stdout is not None:
                out.append(stdout)
            if stderr is not None:
                err.append(stderr)
        assert "".join(out) == "a\nc\n" and "".join(err) == "b\n"
        with pytest.raises(hako.CommandExitException):
            h.wait()
        r = h.wait(check=False)
        assert (r.exit_code, r.stdout, r.stderr, r.reason, r.pid) == (2, "a\nc\n", "b\n", "exited", h.pid)
        assert h.exit_code == 2 and r.duration >= 0.29  # sleep 0.3 (its times are rounded)
        # wait()'s callbacks get its output from the start
        # (chunks as they come, not lines: each stream joined)
        seen_out: List[str] = []
        seen_err: List[str] = []
        h.wait(on_stdout=seen_out.append, on_stderr=seen_err.append, check=False)
        assert ("".join(seen_out), "".join(seen_err)) == ("a\nc\n", "b\n")


def test_disconnect_and_connect_again(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        h = sb.commands.run("echo one; read x; echo two", background=True, stdin=True)
        pid = h.pid
        assert pid is not None
        h.disconnect()
        with pytest.raises(hako.SandboxException):
            h.wait()
        # it runs on; a new handle follows it from the start
        assert pid in [p.pid for p in sb.commands.list()]
        info = next(p for p in sb.commands.list() if p.pid == pid)
        assert (info.cmd, info.args, info.tty) == ("/bin/sh", ["-c", "echo one; read x; echo two"], False)
        again = sb.commands.connect(pid)
        sb.commands.close_stdin(pid)
        r = again.wait()
        assert (r.exit_code, r.stdout) == (0, "one\ntwo\n")
        assert pid not in [p.pid for p in sb.commands.list()]  # running ones only, as e2b's
        with pytest.raises(hako.NotFoundException):
            sb.commands.connect(4000000)
        with pytest.raises(hako.InvalidArgumentException):
            sb.commands.connect(0)


def test_send_stdin_and_close_it(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        h = sb.commands.run("cat; echo '<eof>'", background=True, stdin=True)
        assert h.pid is not None
        sb.commands.send_stdin(h.pid, "x\n")
        h.send_stdin(b"y")
        h.close_stdin()
        assert h.wait().stdout == "x\ny<eof>\n"
        # data given to run: sent, then closed
        assert sb.commands.run("wc -c", background=True, stdin="12345").wait().stdout.strip() == "5"
        # without stdin=True its stdin is closed from the start
        k = sb.commands.run("cat; sleep 30", background=True)
        assert k.pid is not None
        with pytest.raises(hako.InvalidArgumentException):
            sb.commands.send_stdin(k.pid, "nobody reads")
        assert k.kill()


def test_kill_by_pid_and_timeout(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        h = sb.commands.run("sleep 3100 & sleep 3101", background=True, timeout=None)
        assert h.pid is not None
        assert sb.commands.kill(h.pid)
        r = h.wait(check=False)
        assert (r.exit_code, r.signal, r.reason) == (137, 9, "signaled")
        assert not sb.commands.kill(h.pid)  # it has ended
        assert not sb.commands.kill(4000000)
        # its process group went with it
        ps = subprocess.run(["pgrep", "-f", "sleep 310[01]"], capture_output=True)
        assert ps.stdout == b""
        t = sb.commands.run("sleep 3102", background=True, timeout=0.5)
        with pytest.raises(hako.TimeoutException):
            t.wait()
        assert t.wait(check=False).reason == "timeout"


def test_outlives_the_sdk_process(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        # a second program starts it and exits without waiting
        code = (
            "import hako\n"
            f"sb = hako.Sandbox.connect({sb.sandbox_id!r}, hako={kw['hako']!r}, root={kw['root']!r}, "
            f"data_root={kw['data_root']!r})\n"
            "h = sb.commands.run('echo early; read x; echo late', background=True, stdin=True)\n"
            "print(h.pid)\n"
        )
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hako.__file__)))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        pid = int(r.stdout)
        h = sb.commands.connect(pid)
        h.send_stdin("\n")
        assert h.wait().stdout == "early\nlate\n"


def test_async_handles(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        async with await hako.AsyncSandbox.create(**kw) as sb:
            h = await sb.commands.run("for i in 1 2 3; do echo $i; sleep 0.1; done", background=True)
            chunks = [out async for out, _, _ in h if out is not None]
            assert "".join(chunks) == "1\n2\n3\n"
            assert (await h.wait()).stdout == "1\n2\n3\n"
            got: List[str] = []

            async def cb(s: str) -> None:
                got.append(s)

            k = await sb.commands.run("echo x; read l; echo y", background=True, stdin=True, on_stdout=cb)
            assert k.pid is not None
            async for out, _, _ in k:  # run's on_stdout sees it as it comes
                if out:
                    break
            assert got == ["x\n"]
            await k.disconnect()
            again = await sb.commands.connect(k.pid)
            await sb.commands.send_stdin(k.pid, "\n")
            assert (await again.wait()).stdout == "x\ny\n"

    asyncio.run(main())


async def _until(buf: bytearray, text: bytes, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.05)):
        if text in buf:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text!r} never came: {bytes(buf)!r}")


def test_pty_sessions(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        async with await hako.AsyncSandbox.create(**kw) as sb:
            data = bytearray()
            t = await sb.pty.create(PtySize(rows=30, cols=100), on_data=data.extend, timeout=None)
            assert t.pid is not None
            await sb.pty.send_stdin(t.pid, b"stty size\n")
            await _until(data, b"30 100")
            await sb.pty.resize(t.pid, PtySize(rows=40, cols=120))
            await sb.pty.send_stdin(t.pid, b"stty size\n")
            await _until(data, b"40 120")
            # an interactive cat: a line echoed by the terminal, then by cat; ^D ends it
            # (typed once the shell has given the terminal back to cooked mode
            # for the command line: before that, its line editor reads with
            # the kernel's echo off, and the line would be echoed once)
            await t.send_stdin(b"echo ready-$((6*7)); cat\n")
            await _until(data, b"ready-42")
            await sb.pty.send_stdin(t.pid, b"hello\n")
            await _until(data, b"hello\r\nhello\r\n")
            await sb.pty.send_stdin(t.pid, b"\x04")
            await sb.pty.send_stdin(t.pid, b"echo $TERM; exit 3\n")
            r = await t.wait(check=False)
            assert r.exit_code == 3 and b"xterm-256color" in data
            assert t.stdout == ""  # a terminal's output is on_data's (e2b's pty)
            # one to follow again, then kill
            u = await sb.pty.create(PtySize(24, 80), timeout=None)
            assert u.pid is not None
            await sb.pty.send_stdin(u.pid, b"echo marker-$((6*7))\n")
            again = bytearray()
            v = await sb.pty.connect(u.pid, on_data=again.extend)
            await _until(again, b"marker-42")
            with pytest.raises(hako.InvalidArgumentException):
                await sb.commands.connect(u.pid)  # a PTY session, not a command
            assert await sb.pty.kill(u.pid)
            assert (await v.wait(check=False)).exit_code == 137
            assert not await sb.pty.kill(u.pid)
            c = await sb.commands.run("sleep 30", background=True)
            assert c.pid is not None
            with pytest.raises(hako.InvalidArgumentException):
                await sb.pty.resize(c.pid, PtySize(10, 10))  # no terminal
            assert await c.kill()

    asyncio.run(main())


def test_pty_sync(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        t = sb.pty.create(PtySize(rows=25, cols=90), timeout=None)
        assert t.pid is not None
        sb.pty.send_stdin(t.pid, b"stty size; exit 0\n")
        out = bytearray()
        r = t.wait(on_pty=out.extend)
        assert r.exit_code == 0 and b"25 90" in out


def test_cancelled_start_leaves_nothing(kw: Dict[str, Any]) -> None:
    # A cancelled run(background=True) has ended when the cancellation is
    # raised: hako finishes starting it (killed, its holder would go on) and
    # the process it started is killed, whenever the cancellation came.
    def running() -> bytes:
        return subprocess.run(["pgrep", "-f", "sleep 3200"], capture_output=True).stdout

    async def main() -> None:
        async with await hako.AsyncSandbox.create(**kw) as sb:
            for delay in (0.0, 0.002, 0.01, 0.03, 0.1):
                try:
                    h = await asyncio.wait_for(sb.commands.run("sleep 3200", background=True, timeout=None), delay)
                except asyncio.TimeoutError:
                    pass
                else:  # started in time: not this test's case
                    assert await h.kill()
                    continue
                for _ in range(100):
                    if not running():
                        break
                    await asyncio.sleep(0.05)
                assert running() == b"", f"cancelled after {delay} s, it runs on"
            assert await sb.commands.list() == []

    asyncio.run(main())


def test_sandbox_deleted_under_a_waiting_handle(kw: Dict[str, Any]) -> None:
    # its end is the sandbox's: reason "deleted", as an attached command's
    sb = Sandbox.create(**kw)
    h = sb.commands.run("echo before; sleep 3300", background=True, timeout=None)
    for out, _, _ in h:
        if out:
            break
    assert sb.kill()
    r = h.wait(check=False)
    assert (r.exit_code, r.signal, r.reason, r.stdout) == (137, 9, "deleted", "before\n")
