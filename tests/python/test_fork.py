"""sandbox.fork(n): n running children with the parent's files at one
instant, the parent running on; all or none."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any, Dict

import pytest

import hako
from hako import AsyncSandbox, Sandbox


def _mechanism(roots: Any) -> str:
    r = roots.hako("doctor", "--format", "json")
    assert r.returncode == 0
    return str(json.loads(r.stdout)["checks"]["fork"]["mechanism"])


def test_fork_children_branch_from_one_instant(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox.create(**kw) as sb:
        sb.files.write("/work/a", "before")
        # A handle's own envs (connect's, not the config's) go with its children's.
        kids = Sandbox.connect(sb.sandbox_id, envs={"WHO": "handle-env"}, **kw).fork(3)
        try:
            assert len(kids) == 3 and len({k.sandbox_id for k in kids}) == 3
            assert sb.sandbox_id not in [k.sandbox_id for k in kids]
            assert sb.is_running()
            sb.files.write("/work/a", "after")
            for k in kids:
                assert k.is_running()
                assert k.files.read("/work/a") == "before"
                assert k.commands.run("echo $WHO").stdout == "handle-env\n"
            kids[0].files.write("/work/a", "mine")
            assert kids[1].files.read("/work/a") == "before"
            assert sb.files.read("/work/a") == "after"
            listed = {i.sandbox_id for i in Sandbox.list(**kw)}
            assert {k.sandbox_id for k in kids} <= listed
            if _mechanism(roots) == "snapshot":
                # One image for the family: each child's name links the parent's.
                img = os.path.join(roots.data, "disks", sb.sandbox_id + ".img")
                assert os.stat(img).st_nlink == 4
        finally:
            for k in kids:
                assert k.kill()
    assert Sandbox.list(**kw) == []


def test_fork_named_children_and_bad_input(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb, Sandbox.create(**kw) as other:
        sb.files.write("/work/x", "x")
        with pytest.raises(hako.InvalidArgumentException):
            sb.fork(0)
        with pytest.raises(hako.InvalidArgumentException):
            sb.fork(True)
        with pytest.raises(hako.InvalidArgumentException):
            sb.fork(2, sandbox_ids=["only-one"])
        with pytest.raises(hako.InvalidArgumentException):
            sb.fork(sandbox_ids=["bad/id"])
        # A taken id fails the whole fork: the free one is not made either.
        with pytest.raises(hako.AlreadyExistsException):
            sb.fork(sandbox_ids=["free-one", other.sandbox_id])
        assert "free-one" not in {i.sandbox_id for i in Sandbox.list(**kw)}
        (k,) = sb.fork(sandbox_ids=["named-child"])
        with k:
            assert k.sandbox_id == "named-child"
            assert k.files.read("/work/x") == "x"
        with pytest.raises(hako.NotFoundException):
            Sandbox.connect("named-child", **kw)


def test_fork_of_an_image_sandbox_async(kw: Dict[str, Any], busybox: str) -> None:
    async def main() -> None:
        sb = await AsyncSandbox.create(image=busybox, **kw)
        try:
            await sb.files.write("/etc/mark", "img")
            await sb.commands.run("rm /bin/vi")
            kids = await sb.fork(2)
            for k in kids:
                assert await k.files.read("/etc/mark") == "img"
                assert not await k.files.exists("/bin/vi")
            await asyncio.gather(*(k.kill() for k in kids))
        finally:
            await sb.kill()

    asyncio.run(main())


def test_fork_of_a_deleted_sandbox_is_not_found(kw: Dict[str, Any]) -> None:
    sb = Sandbox.create(**kw)
    sb.kill()
    with pytest.raises(hako.NotFoundException):
        sb.fork()


def test_fork_count_and_timeout_as_e2b_spells_them(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox.create(**kw) as sb:  # the config's lifetime: 300 s
        kids = sb.fork(count=2, timeout=60)
        try:
            assert len(kids) == 2
            now_ms = time.time() * 1000
            for k in kids:
                with open(os.path.join(roots.root, k.sandbox_id, "deadline")) as f:
                    deadline = int(f.read().strip())
                assert now_ms + 50_000 < deadline < now_ms + 70_000
        finally:
            for k in kids:
                k.kill()
