"""The SDK against the built binary: real sandboxes, no mocks."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

import hako
from hako import Sandbox


def test_host_profile_create_run_files_kill(kw: Dict[str, Any], roots: Any, tmp_path: Any) -> None:
    sb = Sandbox.create(**kw)
    try:
        assert sb.get_info().status == "running"
        assert sb.sandbox_id in [i.sandbox_id for i in Sandbox.list(**kw)]
        r = sb.commands.run("echo out; echo err >&2")
        assert (r.exit_code, r.stdout, r.stderr, r.reason) == (0, "out\n", "err\n", "exited")
        assert isinstance(r.pid, int) and r.duration >= 0
        assert sb.commands.run(["printf", "%s|", "a b", "c"]).stdout == "a b|c|"
        sb.files.write("/tmp/d/e/f.txt", "héllo")
        assert sb.files.read("/tmp/d/e/f.txt") == "héllo"
        sb.files.write("/tmp/b.bin", b"\x00\xff")
        assert sb.files.read("/tmp/b.bin", format="bytes") == b"\x00\xff"
        local = tmp_path / "big"
        local.write_bytes(os.urandom(3 << 20))
        sb.files.write("/tmp/big", local)  # a path: streamed as hako's stdin
        with open(local, "rb") as f:
            sb.files.write("/tmp/big2", f)
        sb.files.write("/tmp/big3", io.BytesIO(b"x" * 200000))  # no fd: fed in chunks
        assert sb.files.read("/tmp/big", format="bytes") == local.read_bytes()
        assert sb.commands.run("cmp /tmp/big /tmp/big2 && wc -c < /tmp/big3").stdout.strip() == "200000"
        names = [(e.name, e.type) for e in sb.files.list("/tmp/d")]
        assert names == [("e", "dir")]
        assert sb.files.exists("/tmp/d/e/f.txt") and not sb.files.exists("/tmp/nope")
        assert sb.files.make_dir("/tmp/m/n") and not sb.files.make_dir("/tmp/m/n")
        sb.files.rename("/tmp/d/e/f.txt", "/tmp/m/g.txt")
        assert sb.files.read("/tmp/m/g.txt") == "héllo"
        sb.files.remove("/tmp/m")
        assert not sb.files.exists("/tmp/m")
        with pytest.raises(hako.NotFoundException):
            sb.files.read("/tmp/nope")
        with pytest.raises(hako.NotFoundException):
            sb.files.list("/tmp/nope")
    finally:
        assert sb.kill()
    assert not sb.kill()  # gone already
    assert Sandbox.list(**kw) == []


def test_image_sandbox(kw: Dict[str, Any], busybox: str) -> None:
    with Sandbox.create(image=busybox, **kw) as sb:
        r = sb.commands.run("cat /etc/os-release 2>/dev/null; busybox | head -n 1")
        assert "BusyBox" in r.stdout
        sb.files.write("/root/x", "in the image")
        assert sb.files.read("/root/x") == "in the image"
        assert [e.name for e in sb.files.list("/root")] == ["x"] or "x" in [e.name for e in sb.files.list("/root")]
    assert Sandbox.list(**kw) == []


def test_exit_exception_and_check_false(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        with pytest.raises(hako.CommandExitException) as e:
            sb.commands.run("echo partial; exit 3")
        assert e.value.exit_code == 3 and e.value.stdout == "partial\n" and e.value.result.reason == "exited"
        r = sb.commands.run("exit 4", check=False)
        assert r.exit_code == 4
        r = sb.commands.run("/no/such/thing", check=False)
        assert r.exit_code == 127 and r.error
        r = sb.commands.run("kill -TERM $$", check=False)
        assert (r.exit_code, r.signal, r.reason) == (143, 15, "signaled")


def test_timeout_kills_daemonized_children(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        t0 = time.monotonic()
        with pytest.raises(hako.TimeoutException) as e:
            sb.commands.run("setsid sh -c 'echo $$ > /tmp/daemon; sleep 300' & sleep 300", timeout=1)
        assert time.monotonic() - t0 < 10
        assert e.value.result is not None and e.value.result.timed_out and e.value.result.exit_code == 124
        r = sb.commands.run('kill -0 "$(cat /tmp/daemon)"', check=False)
        assert r.exit_code != 0, "the daemonized child outlived the timeout"
        r = sb.commands.run("sleep 5", timeout=0.2, check=False)
        assert r.timed_out and r.reason == "timeout"


def test_truncation(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        r = sb.commands.run("head -c 100000 /dev/zero | tr '\\0' a; echo e >&2", max_output=10)
        assert r.stdout == "a" * 10 and r.stdout_truncated and not r.stderr_truncated and r.stderr == "e\n"


def test_streaming_callbacks_before_the_end(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        seen: List[Any] = []
        t0 = time.monotonic()
        r = sb.commands.run("echo one; echo two >&2; sleep 2; echo three",
                            on_stdout=lambda s: seen.append(("out", s, time.monotonic() - t0)),
                            on_stderr=lambda s: seen.append(("err", s, time.monotonic() - t0)))
        end = time.monotonic() - t0
        assert r.stdout == "one\nthree\n"
        first_out = next(x for x in seen if x[0] == "out")
        first_err = next(x for x in seen if x[0] == "err")
        assert first_out[1] == "one\n" and first_out[2] < end - 1.5
        assert first_err[1] == "two\n" and first_err[2] < end - 1.5


def test_background_handles(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        h = sb.commands.run("echo started; sleep 0.5; echo done; exit 2", background=True)
        assert isinstance(h.pid, int) and h.pid > 1
        with pytest.raises(hako.CommandExitException):
            h.wait()
        assert h.wait(check=False).stdout == "started\ndone\n"
        k = sb.commands.run("sleep 300", background=True, timeout=None)
        pid = k.pid
        assert pid is not None and os.path.exists(f"/proc/{pid}")
        assert k.kill()
        res = k.wait()
        assert res.reason == "killed" and res.exit_code == 137
        for _ in range(50):
            if not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.1)
        assert not os.path.exists(f"/proc/{pid}")
        assert not k.kill()


def test_stdin_envs_cwd_user(kw: Dict[str, Any]) -> None:
    with Sandbox.create(envs={"A": "1"}, cwd="/tmp", **kw) as sb:
        r = sb.commands.run('cat; echo "$A$B"; pwd; id -u', stdin="fed\n", envs={"B": "2"})
        assert r.stdout.splitlines()[:3] == ["fed", "12", "/tmp"]
        assert sb.commands.run("id -u", user="1000").stdout.strip() == "1000"
        sb.commands.run("mkdir -p /work/priv && chmod 700 /work/priv")
        with pytest.raises(hako.PermissionException):
            sb.files.write("/work/priv/x", "x", user="1000")
        sb.files.write("/work/mine", "x", user="0")


def test_lifecycle(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox.create(**kw) as sb:
        sb.files.write("/work/kept", "state")
        sb.pause()
        assert sb.get_info().status == "paused"
        sb.resume()
        sb.stop(timeout=1)
        assert sb.get_info().status == "stopped"
        assert sb.files.read("/work/kept") == "state"  # files of a stopped sandbox
        with pytest.raises(hako.NotRunningException):
            sb.commands.run("true")
        sb.start()
        assert sb.is_running()
        dest = os.path.join(roots.dir, "snap")
        sb.snapshot(dest)
        with Sandbox.create(from_snapshot=dest, **kw) as b:
            assert b.is_running()
            assert b.files.read("/work/kept") == "state"
        sb.hibernate("sync")
        assert sb.get_info().status == "stopped"
        sb.wake("true")
        assert sb.is_running()
        with pytest.raises(hako.CommandExitException):
            sb.hibernate("exit 5")
        assert sb.is_running()


def test_limits_by_flag(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox.create(memory="64m", pids=32, **kw) as sb:
        assert sb.commands.run("echo ok").stdout == "ok\n"
        r = roots.hako("events", "--stats", sb.sandbox_id)
        assert r.returncode == 0


def _roots_node(roots: Any, text: str) -> str:
    p = os.path.join(roots.dir, "node.json")
    with open(p, "w") as f:
        f.write(text)
    return p


def test_every_exception_kind(kw: Dict[str, Any], roots: Any, monkeypatch: Any) -> None:
    with pytest.raises(hako.NotFoundException) as nf:
        Sandbox.connect("no-such-sandbox", **kw)
    assert nf.value.kind == "not_found" and nf.value.sandbox_id == "no-such-sandbox"
    with pytest.raises(hako.NotFoundException):
        Sandbox.create(image="no-such-image", **kw)
    with pytest.raises(hako.InvalidArgumentException):
        Sandbox.create(network="bogus", **kw)
    with pytest.raises(hako.InvalidArgumentException):
        Sandbox.create(sandbox_id="bad/id", **kw)
    with pytest.raises(hako.InvalidArgumentException):
        Sandbox.create(memory="lots", **kw)
    assert Sandbox.list(**kw) == []  # nothing half-made
    with Sandbox.create(**kw) as sb:
        with pytest.raises(hako.AlreadyExistsException):
            Sandbox.create(sandbox_id=sb.sandbox_id, **kw)
        with pytest.raises(hako.TimeoutException):
            sb.commands.run("sleep 10", timeout=0.2)
        with pytest.raises(hako.CommandExitException):
            sb.commands.run("false")
        sb.stop(timeout=1)
        with pytest.raises(hako.NotRunningException):
            sb.commands.run("true")
    # a full node pool: the first sandbox takes all of it
    monkeypatch.setenv("HAKO_NODE_CONFIG", _roots_node(roots, '{"memory_pool": "6G", "overcommit": 1}'))
    with Sandbox.create(**kw) as first:
        with pytest.raises(hako.AdmissionException) as adm:
            Sandbox.create(**kw)
        assert adm.value.kind == "admission"
        del first
    monkeypatch.delenv("HAKO_NODE_CONFIG")
    # what the host cannot enforce: no host has 3 MB huge pages
    b = os.path.join(roots.dir, "bundle")
    os.makedirs(b)
    assert roots.hako("spec", "--profile", "host", "--bundle", b).returncode == 0
    import json
    cfg = json.load(open(os.path.join(b, "config.json")))
    cfg["linux"].setdefault("resources", {})["hugepageLimits"] = [{"pageSize": "3MB", "limit": 1048576}]
    json.dump(cfg, open(os.path.join(b, "config.json"), "w"))
    with pytest.raises(hako.UnsupportedException):
        Sandbox.create(bundle=b, **kw)
    assert Sandbox.list(**kw) == []


def test_fifty_sandboxes_from_one_loop(kw: Dict[str, Any]) -> None:
    async def one(i: int) -> str:
        async with await hako.AsyncSandbox.create(**kw) as sb:
            r = await sb.commands.run(f"echo {i}")
            await sb.files.write("/tmp/i", str(i))
            return r.stdout.strip() + ":" + await sb.files.read("/tmp/i")

    async def main() -> List[str]:
        return list(await asyncio.gather(*(one(i) for i in range(50))))

    t0 = time.monotonic()
    out = asyncio.run(main())
    assert out == [f"{i}:{i}" for i in range(50)]
    print(f"50 sandboxes from one loop: {time.monotonic() - t0:.1f} s")
    assert Sandbox.list(**kw) == []


def _host_procs(marker: str) -> int:
    """How many processes on this machine have MARKER in their command line."""
    n = 0
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                n += marker.encode() in f.read().replace(b"\0", b" ")
        except OSError:
            pass
    return n


def test_a_failing_task_ends_the_loop_leaving_nothing(kw: Dict[str, Any]) -> None:
    # asyncio.run cancels every task when its main fails.  The tasks still
    # creating their sandbox, or running a command, then end at once: a
    # sandbox made meanwhile is deleted, a command killed.  Python 3.11's
    # create_subprocess_exec hung for ever when cancelled while it started
    # (seen in CI: one task's error hung the pool at its end).
    async def one(i: int, delay: float) -> None:
        async with await hako.AsyncSandbox.create(**kw) as sb:
            if i == 0:
                await asyncio.sleep(delay)
                raise RuntimeError("one task fails")
            await sb.commands.run("sleep 3001", timeout=None)

    async def main(delay: float) -> None:
        await asyncio.gather(*(one(i, delay) for i in range(10)))

    for delay in (0, 0.02, 0.3):
        with pytest.raises(RuntimeError):
            asyncio.run(main(delay))
        assert Sandbox.list(**kw) == []
        assert _host_procs("sleep 3001") == 0


def test_cancelled_calls_leave_nothing_running(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        # create, cancelled at any point: either a sandbox, or none at all
        for limit in (0.001, 0.01, 0.03, 0.1):
            try:
                sb = await asyncio.wait_for(hako.AsyncSandbox.create(**kw), limit)
                await sb.kill()
            except asyncio.TimeoutError:
                pass
            assert await hako.AsyncSandbox.list(**kw) == []
        async with await hako.AsyncSandbox.create(**kw) as sb:
            # run(), cancelled: its command is killed, the sandbox carries on
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(sb.commands.run("sleep 3002", timeout=None), 0.5)
            assert _host_procs("sleep 3002") == 0
            assert (await sb.commands.run("echo on")).stdout == "on\n"
            # a background command's wait(), cancelled: the command goes on,
            # and a later wait() has all of its output
            h = await sb.commands.run("echo a; sleep 1; echo b", background=True)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(h.wait(), 0.3)
            assert (await h.wait()).stdout == "a\nb\n"

    asyncio.run(main())


class _Interrupt(Exception):
    pass


def test_interrupted_sync_call_kills_its_command(kw: Dict[str, Any]) -> None:
    # Ctrl-C in a blocking call: the command it ran is killed, not left to
    # run with nobody to reap hako (a signal handler that raises stands in
    # for SIGINT's KeyboardInterrupt, which would stop pytest itself).
    def interrupt(*_: Any) -> None:
        raise _Interrupt()

    old = signal.signal(signal.SIGUSR1, interrupt)
    try:
        with Sandbox.create(**kw) as sb:
            timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGUSR1))
            timer.start()
            try:
                with pytest.raises(_Interrupt):
                    sb.commands.run("sleep 3003", timeout=None)
            finally:
                timer.cancel()
            assert _host_procs("sleep 3003") == 0
            assert sb.commands.run("echo on").stdout == "on\n"
    finally:
        signal.signal(signal.SIGUSR1, old)


def test_connect_from_a_second_process(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        sb.files.write("/tmp/shared", "from the first")
        code = (
            "import sys, hako\n"
            f"sb = hako.Sandbox.connect({sb.sandbox_id!r}, hako={kw['hako']!r}, root={kw['root']!r}, "
            f"data_root={kw['data_root']!r})\n"
            "print(sb.files.read('/tmp/shared') + '|' + sb.commands.run('echo second').stdout.strip())\n"
        )
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hako.__file__)))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode().strip() == "from the first|second"


def test_async_api(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        async with await hako.AsyncSandbox.create(**kw) as sb:
            chunks: List[str] = []

            async def cb(s: str) -> None:
                chunks.append(s)

            r = await sb.commands.run("echo a; sleep 0.2; echo b", on_stdout=cb)
            assert r.stdout == "a\nb\n" and chunks[0] == "a\n"
            h = await sb.commands.run("sleep 0.3; echo bg", background=True)
            assert isinstance(await h.get_pid(), int)
            assert (await h.wait()).stdout == "bg\n"
            with pytest.raises(hako.CommandExitException):
                await sb.commands.run("exit 1")
            assert (await sb.get_info()).status == "running"

    asyncio.run(main())


def test_sandbox_timeout_and_set_timeout(kw: Dict[str, Any]) -> None:
    with Sandbox.create(timeout=1.5, **kw) as sb:
        sb.set_timeout(600)  # moved: it outlives the first deadline
        time.sleep(2.5)
        assert sb.is_running()
        sb.set_timeout(0.5)
        for _ in range(100):
            if sb.get_info().status == "stopped":
                break
            time.sleep(0.1)
        assert sb.get_info().status == "stopped"
        with pytest.raises(hako.NotRunningException):
            sb.commands.run("true")


def test_upload_download_mounts(kw: Dict[str, Any], roots: Any, tmp_path: Any) -> None:
    src = tmp_path / "tree"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("A")
    (src / "sub" / "b.bin").write_bytes(b"\x00B")
    os.symlink("a.txt", src / "link")
    shared = os.path.join(roots.dir, "shared")
    os.makedirs(shared)
    with open(os.path.join(shared, "f"), "w") as f:
        f.write("from the host")
    os.chmod(shared, 0o755)
    with Sandbox.create(mounts=[f"{shared}:/mnt/shared:ro"], **kw) as sb:
        assert sb.files.read("/mnt/shared/f") == "from the host"
        assert sb.commands.run("touch /mnt/shared/g", check=False).exit_code != 0  # read-only
        sb.files.make_dir("/work/up")
        sb.files.upload(str(src), "/work/up")
        r = sb.commands.run("cd /work/up && find . | sort && readlink tree/link 2>/dev/null || readlink link")
        assert "a.txt" in r.stdout and "b.bin" in r.stdout
        dest = tmp_path / "down"
        dest.mkdir()
        sb.files.download("/work/up", str(dest))
        found = {os.path.relpath(os.path.join(d, f), dest) for d, _, fs in os.walk(dest) for f in fs}
        assert any(p.endswith("sub/b.bin") for p in found), found


def test_devices_cdi_and_host_node(kw: Dict[str, Any], roots: Any, monkeypatch: Any) -> None:
    """devices=: a CDI device of a fake vendor (its node made from /dev/null's
    numbers, its env) and a raw host node; an unknown name is NotFound."""
    d = os.path.join(roots.dir, "cdi")
    os.makedirs(os.path.join(d, "nodes"))
    node = os.path.join(d, "nodes", "fake0")
    os.mknod(node, 0o666 | 0o020000, os.makedev(1, 3))
    os.chmod(node, 0o666)  # past the umask: the sandbox's user is not its owner
    with open(os.path.join(d, "fake.json"), "w") as f:
        f.write('{"cdiVersion":"0.6.0","kind":"example.com/fake","devices":[{"name":"gpu0","containerEdits":'
                '{"env":["FAKE_GPU=0"],"deviceNodes":[{"path":"/dev/fake0","hostPath":"%s"}]}}]}' % node)
    monkeypatch.setenv("HAKO_NODE_CONFIG", _roots_node(roots, '{"cdi_spec_dirs": ["%s"]}' % d))
    with Sandbox.create(devices=["example.com/fake=gpu0"], **kw) as sb:
        r = sb.commands.run("echo $FAKE_GPU; echo x > /dev/fake0 && echo wrote", check=False)
        assert r.stderr == ""
        assert r.stdout == "0\nwrote\n"
    if os.path.exists("/dev/fuse"):
        with Sandbox.create(devices=["/dev/fuse"], **kw) as sb:
            assert sb.commands.run("test -c /dev/fuse && echo ok").stdout == "ok\n"
    with pytest.raises(hako.NotFoundException):
        Sandbox.create(devices=["example.com/fake=nope"], **kw)
    assert Sandbox.list(**kw) == []  # nothing half-made


def test_constructor_creates_a_sandbox_as_e2bs_does(kw: Dict[str, Any], roots: Any) -> None:
    # e2b's `Sandbox()`: the constructor creates and starts one (issue 36,
    # item 15: it raised a TypeError about a positional argument `a`).
    sb = Sandbox(**kw)
    try:
        assert sb.get_info().status == "running"
        assert sb.commands.run("echo made").stdout == "made\n"
        with Sandbox(envs={"X": "1"}, **kw) as sb2:
            assert sb2.commands.run("echo $X").stdout == "1\n"
            assert sb2.sandbox_id != sb.sandbox_id
    finally:
        sb.kill()
    with pytest.raises(TypeError):
        Sandbox(no_such_argument=1, **kw)


def _frozen_config(roots: Any, sid: str) -> Dict[str, Any]:
    import json
    with open(os.path.join(roots.root, sid, "config.json")) as f:
        return json.load(f)


def test_a_sandbox_lives_300_s_unless_told_as_e2bs(kw: Dict[str, Any], roots: Any) -> None:
    # A crashed orchestrator leaves nothing running for ever (issue 37, item 6).
    assert hako.DEFAULT_LIFETIME == 300
    with Sandbox.create(**kw) as sb:
        assert _frozen_config(roots, sb.sandbox_id)["sandbox"]["limits"]["timeout"] == "300000ms"
    with Sandbox.create(timeout=None, **kw) as sb:
        assert "timeout" not in _frozen_config(roots, sb.sandbox_id).get("sandbox", {}).get("limits", {})
    # And the deadline is real: a short one ends the sandbox by itself.
    sb = Sandbox.create(timeout=1, **kw)
    deadline = time.monotonic() + 30
    while sb.is_running() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sb.is_running()
    sb.kill()


def test_metadata_labels_and_list_by_query(kw: Dict[str, Any], roots: Any) -> None:
    # e2b's metadata= and Sandbox.list(query=...) (issue 37, item 5), over
    # hako's --label and list --filter.
    a = Sandbox.create(metadata={"user": "ann", "run": "1"}, **kw)
    b = Sandbox.create(metadata={"user": "bob"}, **kw)
    c = Sandbox.create(**kw)
    try:
        assert a.get_info().metadata == {"user": "ann", "run": "1"}
        assert c.get_info().metadata == {}
        ids = lambda q: sorted(i.sandbox_id for i in Sandbox.list(q, **kw))  # noqa: E731
        assert ids(hako.SandboxQuery(metadata={"user": "ann"})) == [a.sandbox_id]
        assert ids({"metadata": {"user": "bob"}}) == [b.sandbox_id]
        assert ids(hako.SandboxQuery(metadata={"user": "ann", "run": "2"})) == []
        assert ids(None) == sorted([a.sandbox_id, b.sandbox_id, c.sandbox_id])
        c.pause()
        assert ids(hako.SandboxQuery(state=["paused"])) == [c.sandbox_id]
        assert ids(hako.SandboxQuery(state=["running", "paused"])) == sorted([a.sandbox_id, b.sandbox_id, c.sandbox_id])
        listed = {i.sandbox_id: i.metadata for i in Sandbox.list(**kw)}
        assert listed[b.sandbox_id] == {"user": "bob"}
        with pytest.raises(hako.InvalidArgumentException):
            Sandbox.create(metadata={"bad key": "x"}, **kw)
    finally:
        for s in (a, b, c):
            s.kill()


def test_egress_rules_and_secrets(kw: Dict[str, Any], roots: Any) -> None:
    """allow/deny rules by method and path reach hako's proxy; a secret's
    value never enters the sandbox, only its placeholder does."""
    import http.server
    import socketserver

    seen: List[str] = []

    class H(http.server.BaseHTTPRequestHandler):
        def _any(self) -> None:
            seen.append(f"{self.command} {self.path} {self.headers.get('X-T', '')}")
            self.send_response(200)
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.write(b"ok\n")

        do_GET = do_POST = do_DELETE = _any

        def log_message(self, *a: Any) -> None:
            pass

    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{port}"
        with Sandbox.create(allow=[f"GET,POST {base}/ok/**"], deny=[f"POST {base}/ok/locked"],
                            secrets={"TOKEN": hako.Secret(host="api.example.com", value="s3cret-sdk-value")},
                            **kw) as sb:
            codes = sb.commands.run(
                f"for a in 'GET /ok/a' 'POST /ok/b' 'POST /ok/locked' 'DELETE /ok/a' 'GET /other'; do "
                f"set -- $a; curl -s -o /dev/null -w '%{{http_code}} ' -X $1 -H \"X-T: $TOKEN\" {base}$2; done").stdout
            assert codes.split() == ["200", "200", "403", "403", "403"]
            env = sb.commands.run("echo $TOKEN; tr '\\0' '\\n' < /proc/self/environ | grep -c s3cret-sdk-value",
                                  check=False).stdout.split()
            assert env[0].startswith("hako-secret-") and env[1] == "0"
            # Plain HTTP to another host: the placeholder went out as it was.
            assert seen[0] == f"GET /ok/a {env[0]}"
            with pytest.raises(hako.InvalidArgumentException):
                Sandbox.create(secrets={"T": hako.Secret(host="h", value="v", env="X")}, allow=["h"], **kw)
    finally:
        srv.shutdown()
        srv.server_close()
