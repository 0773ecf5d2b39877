"""files.download writes only beneath its directory, on both transports:
the sandbox chooses the tree (and so what a first download leaves in the
directory: its symlinks), never where a second download writes; a download
that fails leaves nothing (issue 34, item 5)."""

from __future__ import annotations

import asyncio
import io
import os
import stat
import tarfile
from typing import Any, Dict, List, Optional, Tuple

import pytest

import hako
from hako import Sandbox


@pytest.fixture(params=["local", "ssh"])
def create(request: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    """Sandbox.create's arguments: hako on this machine, or through sshd."""
    if request.param == "local":
        return kw
    return {"transport": request.getfixturevalue("ssh")}


def _tree(d: Any) -> List[str]:
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, ds, fs in os.walk(d) for n in ds + fs)


def test_download_never_writes_through_a_symlink_it_left(create: Dict[str, Any], tmp_path: Any) -> None:
    """The attack: a first download leaves the sandbox's symlinks to a
    root-only host directory in the local directory (a/x, a/key, top); the
    sandbox then turns them into a directory holding authorized_keys and a
    file, and a second download of the same trees into the same directory
    wrote through them.  Now the links are replaced, and the host directory
    stays empty."""
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    down = tmp_path / "down"
    down.mkdir()
    with Sandbox.create(**create) as sb:
        sb.commands.run(f"mkdir /work/a && ln -s {victim} /work/a/x && ln -s {victim}/key /work/a/key && "
                        f"ln -s {victim} /work/top && echo a > /work/a/f")
        sb.files.download("/work/a", str(down))
        sb.files.download("/work/top", str(down))
        assert os.readlink(down / "a" / "x") == str(victim) and os.readlink(down / "top") == str(victim)
        sb.commands.run("cd /work && rm a/x a/key top && mkdir a/x top && echo planted > a/x/authorized_keys && "
                        "echo planted > a/key && echo planted > top/authorized_keys")
        sb.files.download("/work/a", str(down))
        sb.files.download("/work/top", str(down))
    assert os.listdir(victim) == []
    assert (down / "a" / "x" / "authorized_keys").read_text() == "planted\n"
    assert not os.path.islink(down / "a" / "x") and not os.path.islink(down / "a" / "key")
    assert (down / "a" / "key").read_text() == "planted\n" and (down / "a" / "f").read_text() == "a\n"
    assert (down / "top" / "authorized_keys").read_text() == "planted\n"
    assert _tree(down) == ["a", "a/f", "a/key", "a/x", "a/x/authorized_keys", "top", "top/authorized_keys"]


def test_download_that_fails_leaves_nothing(create: Dict[str, Any], tmp_path: Any) -> None:
    """hako refuses the fifo after it has sent the file before it: the
    download raises and the directory holds nothing, not half a tree."""
    down = tmp_path / "down"
    down.mkdir()
    with Sandbox.create(**create) as sb:
        sb.commands.run("mkdir -p /work/p/d && head -c 300000 /dev/urandom > /work/p/a && "
                        "echo b > /work/p/d/b && mkfifo /work/p/z")
        with pytest.raises(hako.SandboxException):
            sb.files.download("/work/p", str(down))
        assert os.listdir(down) == []
        with pytest.raises(hako.NotFoundException):
            sb.files.download("/work/none", str(down))
        assert os.listdir(down) == []
        sb.commands.run("rm /work/p/z")
        sb.files.download("/work/p", str(down))  # and once the fifo is gone, it all arrives
    assert _tree(down) == ["p", "p/a", "p/d", "p/d/b"] and os.path.getsize(down / "p" / "a") == 300000


def test_download_cancelled_leaves_nothing(create: Dict[str, Any], tmp_path: Any) -> None:
    """Cancelled once its file has begun to arrive (in its temporary
    directory), the download ends, hako with it, and leaves nothing."""
    down = tmp_path / "down"
    down.mkdir()

    def begun() -> bool:  # a partial big, in a temporary directory or (written in place) not
        places = [os.path.join(down, "big")] + [os.path.join(down, d, "big") for d in os.listdir(down)]
        return any(os.path.isfile(p) and os.path.getsize(p) > 0 for p in places)

    async def main() -> None:
        async with await hako.AsyncSandbox.create(**create) as sb:
            await sb.commands.run("head -c 200000000 /dev/urandom > /work/big")
            task = asyncio.ensure_future(sb.files.download("/work/big", str(down)))
            while not begun() and not task.done():
                await asyncio.sleep(0.005)
            assert not task.done(), "the download ended before it could be cancelled"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert os.listdir(down) == []
            assert (await sb.commands.run("echo alive")).stdout == "alive\n"

    asyncio.run(main())


# The sandbox's racer, in a destination it can write: it moves every new
# directory t away and puts in its place a symlink to a root-only host
# directory, or the root-only directory "private" beside it (a rename in the
# same directory needs no right on what is renamed), and back.
RACER = """cd /mnt/shared || exit 1
n=0
while [ ! -e stop ]; do
  n=$((n + 1))
  if [ -d t ] && [ ! -L t ] && [ ! -e t/secret ]; then mv -T t gone.$n 2>/dev/null; ln -s "$1" t 2>/dev/null; fi
  rm -f t 2>/dev/null
  mv -T private t 2>/dev/null && mv -T t private 2>/dev/null
done
echo raced $n
"""


def test_download_into_a_directory_the_sandbox_writes(create: Dict[str, Any], tmp_path: Any) -> None:
    """Where the sandbox can write the destination (a bind), it races each
    download: nothing lands in the host's root-only directories, and none of
    them is chmod'ed, whether a download gets through or is refused."""
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # the sandbox's uid (its user namespace's root) writes here
    private = shared / "private"
    private.mkdir(mode=0o700)
    (private / "secret").write_text("root's")
    with Sandbox.create(mounts=[f"{shared}:/mnt/shared"], **create) as sb:
        sb.commands.run("mkdir -p /work/t && cd /work/t && for d in 1 2 3 4 5 6 7 8; do mkdir -m 777 d$d; "
                        "for f in 1 2 3 4 5 6; do echo $d$f > d$d/f$f; done; done && chmod 777 /work/t")
        racer = sb.commands.run(["sh", "-c", RACER, "sh", str(victim)], background=True, timeout=None)
        got = 0
        for _ in range(15):
            try:
                sb.files.download("/work/t", str(shared))
                got += 1
            except hako.SandboxException:
                pass
        (shared / "stop").touch()
        raced = racer.wait().stdout
    assert raced.startswith("raced "), raced
    assert os.listdir(victim) == []
    secret = [r for r, _, fs in os.walk(shared) if "secret" in fs]
    assert len(secret) == 1, secret
    assert os.listdir(secret[0]) == ["secret"]
    assert stat.S_IMODE(os.stat(secret[0]).st_mode) == 0o700
    print(f"{got} of 15 downloads got through; the racer {raced.strip()}")


# Streams no hako sends, but a sandbox that can swap its tree mid-copy, or
# the hako of a machine reached over SSH, might: the unpacking alone.


Member = Tuple[tarfile.TarInfo, Optional[bytes]]


def _stream(*members: Member) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for m, data in members:
            if data is not None:
                m.size = len(data)
            tf.addfile(m, io.BytesIO(data) if data is not None else None)
    buf.seek(0)
    return buf


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type, m.linkname, m.mode, m.mtime = kind, link, mode, 1000000000
    return m


@pytest.mark.parametrize("why", ["through a symlink", "through a file", "dotdot", "absolute", "hard link", "device",
                                 "fifo", "file over directory"])
def test_unpack_refuses_a_hostile_stream(why: str, tmp_path: Any) -> None:
    """A good directory and file, then the entry WHY: refused, nothing
    written outside, and nothing left inside (not even the good ones)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    ok: List[Member] = [(_info("t", tarfile.DIRTYPE, mode=0o755), None), (_info("t/first"), b"1")]
    cases: Dict[str, List[Member]] = {
        "through a symlink": [(_info("t/l", tarfile.SYMTYPE, str(victim)), None), (_info("t/l/k"), b"x")],
        "through a file": [(_info("t/f"), b"f"), (_info("t/f/k"), b"x")],
        "dotdot": [(_info("t/../../victim/k"), b"x")],
        "absolute": [(_info(f"{victim}/k"), b"x")],
        "hard link": [(_info("t/h", tarfile.LNKTYPE, str(victim / "k")), None)],
        "device": [(_info("t/d", tarfile.CHRTYPE), None)],
        "fifo": [(_info("t/p", tarfile.FIFOTYPE), None)],
        "file over directory": [(_info("t/d", tarfile.DIRTYPE), None), (_info("t/d"), b"x")],
    }
    bad = cases[why]
    from hako._download import unpack
    down = tmp_path / "down"
    with pytest.raises(hako.SandboxException, match="refused tar member"):
        unpack(_stream(*ok, *bad), str(down))
    assert os.listdir(victim) == [] and os.listdir(down) == []


def test_unpack_modes_times_and_merge(tmp_path: Any) -> None:
    """Modes and times as the stream says, set-user-ID dropped, a 0500
    directory filled before it is made so; into an existing directory the
    trees merge (it keeps its mode), and a file never replaces a directory
    (nothing moved)."""
    from hako._download import TMP_PREFIX, unpack
    down = tmp_path / "down"
    (down / "t" / "old").mkdir(parents=True)
    os.chmod(down / "t", 0o711)
    (down / "t" / "mine").write_text("kept")
    unpack(_stream((_info("t", tarfile.DIRTYPE, mode=0o750), None), (_info("t/ro", tarfile.DIRTYPE, mode=0o500), None),
                   (_info("t/ro/f", mode=0o4755), b"x"), (_info("t/s", tarfile.SYMTYPE, "ro/f"), None)), str(down))
    assert _tree(down) == ["t", "t/mine", "t/old", "t/ro", "t/ro/f", "t/s"]
    assert stat.S_IMODE(os.stat(down / "t" / "ro" / "f").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(down / "t" / "ro").st_mode) == 0o500
    assert stat.S_IMODE(os.stat(down / "t").st_mode) == 0o711
    assert os.stat(down / "t" / "ro").st_mtime == 1000000000 and os.lstat(down / "t" / "s").st_mtime == 1000000000
    with pytest.raises(hako.SandboxException, match="not replaced by a file"):
        unpack(_stream((_info("t", tarfile.DIRTYPE), None), (_info("t/new"), b"n"), (_info("t/old"), b"x")), str(down))
    assert _tree(down) == ["t", "t/mine", "t/old", "t/ro", "t/ro/f", "t/s"]
    assert not any(n.startswith(TMP_PREFIX) for n in os.listdir(down))


def test_unpack_merges_only_where_no_one_else_could_have_put_the_directory(tmp_path: Any) -> None:
    """In a directory others can write (0777), an existing t may be the
    sandbox's rename of someone's private directory: not merged into, and
    nothing moved.  In a sticky one (as /tmp) a t of the caller's is merged."""
    from hako._download import unpack
    stream = ((_info("t", tarfile.DIRTYPE), None), (_info("t/new"), b"n"))
    for mode, merged in ((0o777, False), (0o1777, True), (0o755, True)):
        d = tmp_path / f"d{mode:o}"
        (d / "t").mkdir(parents=True)
        os.chmod(d, mode)
        if merged:
            unpack(_stream(*stream), str(d))
        else:
            with pytest.raises(hako.SandboxException, match="others can write: not merged into"):
                unpack(_stream(*stream), str(d))
        assert _tree(d) == (["t", "t/new"] if merged else ["t"]), mode


def test_discard_never_removes_a_directory_renamed_to_its_name(tmp_path: Any) -> None:
    """Where the sandbox can write the destination, it can rename the SDK's
    temporary directory away and root's directory to its name: a failed
    download empties its own tree (by fd) and removes the name only if empty."""
    from hako._download import Unpacked
    d = tmp_path / "d"
    u = Unpacked(str(d))
    u.read(_stream((_info("t", tarfile.DIRTYPE), None), (_info("t/f"), b"x")))
    tmp = d / u._tmp_name
    os.rename(tmp, d / "moved")
    (tmp / "private").mkdir(parents=True)
    (tmp / "private" / "secret").write_text("root's")
    u.discard()
    assert _tree(d) == sorted(["moved", u._tmp_name, u._tmp_name + "/private", u._tmp_name + "/private/secret"])
