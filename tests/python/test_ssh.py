"""transport=SSH(...): the SDK drives hako through the OpenSSH client, against
an sshd the ``ssh`` fixture (conftest.py) starts on 127.0.0.1 with a key it
makes (no password), and kills after."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Dict, List

import pytest

import hako
from hako import Sandbox


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
