"""Warm pools (SandboxPool, AsyncSandboxPool): sandboxes made ahead, handed
out fresh, replaced, deleted or reset on release, all gone on close."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any, Dict, List

import pytest

import hako
from hako import AsyncSandboxPool, SandboxPool


def _gone(sid: str, kw: Dict[str, Any]) -> bool:
    try:
        hako.Sandbox.connect(sid, **kw)
    except hako.NotFoundException:
        return True
    return False


def _ids(kw: Dict[str, Any]) -> List[str]:
    return sorted(i.sandbox_id for i in hako.Sandbox.list(**kw))


def test_acquire_hands_out_distinct_fresh_sandboxes_and_replaces_them(kw: Dict[str, Any]) -> None:
    with SandboxPool(size=2, **kw) as pool:
        pool.wait_ready(120)
        assert pool.ready == 2
        a = pool.acquire()
        b = pool.acquire()
        assert a.sandbox_id != b.sandbox_id
        for sb in (a, b):
            assert sb.get_info().status == "running"
            # Fresh: nothing written, nothing started but its own process.
            assert sb.commands.run("ls -A /work").stdout == ""
            assert sb.commands.run("ps -o comm= | grep -cv -e '^ps$' -e '^sh$' -e '^grep$'",
                                   check=False).stdout.strip() == "1"
        # Each acquire started a replacement: the pool is full again.
        pool.wait_ready(120)
        assert pool.ready == 2
        assert set(_ids(kw)) >= {a.sandbox_id, b.sandbox_id}
        # Released without reset: deleted.
        pool.release(a)
        assert _gone(a.sandbox_id, kw)
        c = pool.acquire()
        assert c.sandbox_id not in (a.sandbox_id, b.sandbox_id)
        pool.release(b)
        pool.release(c)
    assert _ids(kw) == []


def test_release_with_reset_gives_an_empty_work_and_no_surviving_process(kw: Dict[str, Any]) -> None:
    with SandboxPool(size=1, **kw) as pool:
        a = pool.acquire(timeout=120)
        a.commands.run("echo secret > /work/f; mkdir /work/d")
        # Untimed: a timed command's leftovers die with it.
        a.commands.run("setsid sleep 1000 > /dev/null 2>&1 < /dev/null &", timeout=None)
        assert "sleep" in a.commands.run("ps -o comm=").stdout
        pool.release(a, reset=True)
        # A reset sandbox goes back first: the next acquire is the same one.
        b = pool.acquire(timeout=120)
        assert b.sandbox_id == a.sandbox_id
        assert b.commands.run("ls -A /work").stdout == ""
        assert "sleep" not in b.commands.run("ps -o comm=").stdout
        # And the pool is never more than its size.
        pool.wait_ready(120)
        assert pool.ready == 1
        pool.release(b)
    assert _ids(kw) == []


def test_reset_of_an_image_sandbox_empties_its_writable_layer(kw: Dict[str, Any], busybox: str) -> None:
    with SandboxPool(size=1, image=busybox, **kw) as pool:
        a = pool.acquire(timeout=120)
        a.commands.run("echo secret > /etc/mine; rm /bin/ls")
        pool.release(a, reset=True)
        b = pool.acquire(timeout=120)
        assert b.sandbox_id == a.sandbox_id
        assert b.commands.run("test -e /etc/mine", check=False).exit_code == 1
        assert b.commands.run("test -e /bin/ls", check=False).exit_code == 0
        pool.release(b)
    assert _ids(kw) == []


def test_a_failed_create_is_reported_and_does_not_poison_the_pool(kw: Dict[str, Any], tmp_path: Any) -> None:
    # A hako whose second `run` fails, as a host out of memory might.
    count = tmp_path / "count"
    count.write_text("0")
    wrapper = tmp_path / "hako"
    wrapper.write_text(f"""#!/bin/sh
case " $* " in *" run "*)
  exec 9> {count}.lock
  flock 9
  n=$(($(cat {count}) + 1)); echo $n > {count}
  flock -u 9
  if [ $n -eq 2 ]; then
    echo '{{"level":"error","kind":"admission","msg":"injected: no room"}}' >&2
    exit 125
  fi ;;
esac
exec {kw['hako']} "$@"
""")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    seen: List[BaseException] = []
    with SandboxPool(size=2, on_error=seen.append, **dict(kw, hako=str(wrapper))) as pool:
        pool.wait_ready(120)
        assert pool.ready == 2
        assert len(seen) == 1 and isinstance(seen[0], hako.AdmissionException)
        assert "injected" in str(seen[0])
        assert pool.errors == seen
        a = pool.acquire()
        assert a.commands.run("echo ok").stdout == "ok\n"
        pool.release(a)
    assert _ids(kw) == []


def test_close_deletes_everything_ready_in_the_making_and_handed_out(kw: Dict[str, Any]) -> None:
    pool = SandboxPool(size=3, **kw)
    a = pool.acquire(timeout=120)  # handed out, never released
    # Close at once: creates are still in flight.
    pool.close()
    assert _gone(a.sandbox_id, kw)
    assert _ids(kw) == []
    with pytest.raises(hako.SandboxException):
        pool.acquire(timeout=1)


def test_acquire_times_out_naming_the_create_error(kw: Dict[str, Any]) -> None:
    # A pool whose every create fails (a bundle that does not exist).
    seen: List[BaseException] = []
    with SandboxPool(size=1, bundle=os.path.join(kw["root"], "nope"), on_error=seen.append, **kw) as pool:
        with pytest.raises(hako.TimeoutException) as e:
            pool.acquire(timeout=3)
        assert "nope" in str(e.value)
        assert seen
    assert _ids(kw) == []


def test_async_pool(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        async with AsyncSandboxPool(size=2, **kw) as pool:
            await pool.wait_ready(120)
            # Three at once from a pool of two: the third waits for a replacement.
            got = await asyncio.gather(*(pool.acquire(timeout=120) for _ in range(3)))
            assert len({sb.sandbox_id for sb in got}) == 3
            r = await got[2].commands.run("echo hi")
            assert r.stdout == "hi\n"
            await pool.release(got[0])
            await pool.release(got[1], reset=True)
            again = await pool.acquire(timeout=120)
            assert again.sandbox_id == got[1].sandbox_id
            await pool.release(again)
            await pool.release(got[2])
    asyncio.run(main())
    assert _ids(kw) == []


def test_a_pool_sandbox_has_no_lifetime_unless_asked(kw: Dict[str, Any], roots: Any) -> None:
    with SandboxPool(size=1, **kw) as pool:
        a = pool.acquire(timeout=120)
        r = roots.hako("state", a.sandbox_id)
        assert r.returncode == 0, r.stderr
        # No deadline file says when: create's 300 s default is not there.
        deadline = os.path.join(kw["root"], a.sandbox_id, "deadline")
        assert not os.path.exists(deadline) or open(deadline).read().strip() == "none"
        pool.release(a)
    with SandboxPool(size=1, timeout=600, **kw) as pool:
        b = pool.acquire(timeout=120)
        deadline = os.path.join(kw["root"], b.sandbox_id, "deadline")
        assert os.path.exists(deadline) and open(deadline).read().strip() != "none"
        pool.release(b)
