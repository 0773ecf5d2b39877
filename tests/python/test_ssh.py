"""transport=SSH(...): the SDK drives hako through the OpenSSH client, against
an sshd this test starts on 127.0.0.1 with a key it makes (no password), and
kills after."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any, Dict, Iterator, List

import pytest

import hako
from hako import Sandbox

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.access("/usr/sbin/sshd", os.X_OK) else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ssh(kw: Dict[str, Any]) -> Iterator[hako.SSH]:
    if SSHD is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("needs openssh-server and openssh-client (sshd, ssh, ssh-keygen)")
    d = tempfile.mkdtemp(prefix="hako-py-ssh.")
    proc = None
    made_run_sshd = False
    try:
        for name in ("host", "client"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, name)],
                           check=True)
        shutil.copy(os.path.join(d, "client.pub"), os.path.join(d, "authorized_keys"))
        port = _free_port()
        with open(os.path.join(d, "sshd_config"), "w") as f:
            f.write(f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host\n"
                    f"AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nUsePAM no\n"
                    f"StrictModes no\nPidFile {d}/sshd.pid\n"
                    # One connection per SDK call: a pool of them authenticates at
                    # once, past the default 10 (sshd then resets some).
                    "MaxStartups 100\n")
        if not os.path.isdir("/run/sshd"):  # sshd's privilege separation dir, removed after
            os.makedirs("/run/sshd", mode=0o755)
            made_run_sshd = True
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", os.path.join(d, "sshd_config")],
                                stderr=open(os.path.join(d, "sshd.log"), "w"))
        opts = ["-i", os.path.join(d, "client"), "-o", "StrictHostKeyChecking=no",
                "-o", f"UserKnownHostsFile={d}/known_hosts", "-o", "LogLevel=ERROR"]
        for _ in range(100):
            r = subprocess.run(["ssh", "-o", "BatchMode=yes", "-p", str(port), *opts, "root@127.0.0.1", "true"],
                               capture_output=True)
            if r.returncode == 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"sshd never accepted the key: {open(os.path.join(d, 'sshd.log')).read()[-500:]}")
        yield hako.SSH("127.0.0.1", user="root", port=port, hako=kw["hako"], root=kw["root"],
                       data_root=kw["data_root"], options=opts)
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)
        if made_run_sshd:
            shutil.rmtree("/run/sshd", ignore_errors=True)


def test_ssh_transport(ssh: hako.SSH, kw: Dict[str, Any], tmp_path: Any) -> None:
    with Sandbox.create(transport=ssh) as sb:
        assert sb.sandbox_id in [i.sandbox_id for i in Sandbox.list(**kw)]  # on "the other machine"
        seen: List[Any] = []
        t0 = time.monotonic()
        r = sb.commands.run("echo one; echo e1 >&2; sleep 3; echo two; printf 'no-newline' >&2",
                            on_stdout=lambda s: seen.append((s, time.monotonic() - t0)))
        end = time.monotonic() - t0
        assert (r.stdout, r.stderr, r.exit_code) == ("one\ntwo\n", "e1\nno-newline", 0)
        assert seen[0][0] == "one\n" and seen[0][1] < end - 2  # streamed over the channel
        assert isinstance(r.pid, int)
        with pytest.raises(hako.CommandExitException) as e:
            sb.commands.run("exit 7")
        assert e.value.exit_code == 7
        with pytest.raises(hako.TimeoutException):
            sb.commands.run("sleep 10", timeout=0.3)
        big = tmp_path / "big"
        big.write_bytes(os.urandom(2 << 20))
        sb.files.write("/tmp/big", big)  # over the channel's stdin
        assert sb.files.read("/tmp/big", format="bytes") == big.read_bytes()
        assert sb.files.exists("/tmp/big")
        tree = tmp_path / "tree"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "x").write_text("over ssh")
        sb.files.make_dir("/work/up")
        sb.files.upload(str(tree), "/work/up")  # a tar stream on cp's "-"
        assert sb.files.read("/work/up/tree/sub/x") == "over ssh"
        down = tmp_path / "down"
        sb.files.download("/work/up/tree", str(down))
        assert (down / "tree" / "sub" / "x").read_text() == "over ssh"
        h = sb.commands.run("sleep 300", background=True, timeout=None)
        time.sleep(0.5)
        assert h.kill()
        assert h.wait().reason == "killed"
        with pytest.raises(hako.NotFoundException):
            Sandbox.connect("no-such", transport=ssh)

    async def many() -> List[str]:
        async def one(i: int) -> str:
            async with await hako.AsyncSandbox.create(transport=ssh) as a:
                return (await a.commands.run(f"echo {i}")).stdout.strip()
        return list(await asyncio.gather(*(one(i) for i in range(5))))

    assert asyncio.run(many()) == [str(i) for i in range(5)]
    assert Sandbox.list(**kw) == []
