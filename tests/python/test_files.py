"""The files API in e2b's style (write many, read as a stream, get_info,
list with depth, watch_dir), against the built hako: no shell needed in the
sandbox, every call as the sandbox's user."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List

import pytest

import hako
from hako import (AsyncSandbox, FileNotFoundException, FilesystemEvent, FilesystemEventType, FileType, Sandbox,
                  WriteEntry, WriteInfo)

HERE = os.path.dirname(os.path.abspath(__file__))
BUSYBOX = os.path.join(HERE, "..", "fixtures", "busybox-rootfs.sh")


def watchers(sandbox_id: str) -> List[int]:
    """hako fs watch processes on the sandbox (hako and its helper in it)."""
    out = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"watch" in args and b"fs" in args and sandbox_id.encode() in args:
            out.append(int(d))
    return out


def wait_until(cond: Any, seconds: float = 10) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, f"waited {seconds} s in vain for {cond}"
        time.sleep(0.05)


@pytest.fixture
def bare(roots: Any) -> str:
    """A bundle whose root holds /bin/sleep (busybox under that name) and
    /etc/passwd and /etc/group: no shell, no ls, no rm in the sandbox."""
    if not os.path.exists("/bin/busybox"):
        pytest.skip("needs busybox-static")
    b = os.path.join(roots.dir, "bare")
    r = os.path.join(b, "rootfs")
    for d in ("bin", "etc", "proc", "dev", "sys", "tmp", "data"):
        os.makedirs(os.path.join(r, d))
    shutil.copy("/bin/busybox", os.path.join(r, "bin", "sleep"))
    with open(os.path.join(r, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n")
    with open(os.path.join(r, "etc", "group"), "w") as f:
        f.write("root:x:0:\nnogroup:x:65534:\n")
    assert roots.hako("spec", "--profile", "runc", "--bundle", b).returncode == 0
    with open(os.path.join(b, "config.json")) as f:
        cfg = json.load(f)
    cfg["process"]["args"] = ["/bin/sleep", "1000"]
    cfg["process"]["terminal"] = False
    cfg["root"]["readonly"] = False
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(cfg, f)
    return b


def test_write_many_then_read_as_stream(kw: Dict[str, Any], tmp_path: Any) -> None:
    with Sandbox.create(**kw) as sb:
        assert sb.files.write_files([]) == []
        local = tmp_path / "big"
        local.write_bytes(os.urandom(20 << 20))
        files = [WriteEntry(path=f"/work/many/test_write_{i}.txt", data=f"This is a test file {i}.") for i in range(10)]
        files += [WriteEntry(path="/work/many/bytes.bin", data=b"\x00\xff"),
                  WriteEntry(path="/work/many/from-path", data=local),
                  WriteEntry(path="/work/many/deep/er/io", data=io.BytesIO(b"x" * 100000)),
                  {"path": "/work/many/text-io", "data": io.StringIO("héllo " * 1000)}]
        infos = sb.files.write(files)  # e2b's older spelling of write_files
        assert [i.path for i in infos] == [f["path"] for f in files]
        assert all(isinstance(i, WriteInfo) and i.type == FileType.FILE for i in infos)
        for i in range(10):
            assert sb.files.read(f"/work/many/test_write_{i}.txt") == f"This is a test file {i}."
        assert sb.files.read("/work/many/bytes.bin", format="bytes") == b"\x00\xff"
        assert sb.files.read("/work/many/text-io") == "héllo " * 1000
        assert sb.files.get_info("/work/many/deep/er/io").size == 100000
        # A stream: chunks of at most 64 KiB, as they are read.
        digest = hashlib.sha256()
        n = 0
        with sb.files.read("/work/many/from-path", format="stream") as stream:
            for chunk in stream:
                assert 0 < len(chunk) <= 65536
                digest.update(chunk)
                n += len(chunk)
        assert n == 20 << 20 and digest.hexdigest() == hashlib.sha256(local.read_bytes()).hexdigest()
        # Closed after one chunk: hako is killed, nothing left running.
        stream = sb.files.read("/work/many/from-path", format="stream")
        assert len(next(iter(stream))) > 0
        stream.close()
        assert b"".join(sb.files.read("/work/many/bytes.bin", format="stream")) == b"\x00\xff"
        with pytest.raises(FileNotFoundException):
            sb.files.read("/work/nope", format="stream")
        # One bad entry: what came before it is written, the error says which.
        with pytest.raises(hako.InvalidArgumentException):
            sb.files.write_files([WriteEntry(path="relative", data="x")])


def test_get_info_list_depth_exists_make_dir_rename_remove(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        before = datetime.now(timezone.utc) - timedelta(seconds=5)
        parent = "/work/test_directory"
        assert sb.files.make_dir(parent)
        assert not sb.files.make_dir(parent)
        for d in ("subdir1/subdir1_1", "subdir1/subdir1_2", "subdir2/subdir2_1", "subdir2/subdir2_2"):
            assert sb.files.make_dir(f"{parent}/{d}")
        sb.files.write(f"{parent}/file1.txt", "Hello, world!")
        names = [e.name for e in sb.files.list(parent)]
        assert names == ["file1.txt", "subdir1", "subdir2"]
        assert sb.files.list(parent, depth=1) == sb.files.list(parent)
        for depth in (2, 3):
            got = sb.files.list(parent, depth=depth)
            assert [e.path for e in got] == [f"{parent}/{p}" for p in (
                "file1.txt", "subdir1", "subdir1/subdir1_1", "subdir1/subdir1_2",
                "subdir2", "subdir2/subdir2_1", "subdir2/subdir2_2")]
            assert [e.type for e in got] == [FileType.FILE] + [FileType.DIR] * 6
        info = sb.files.get_info(f"{parent}/file1.txt")
        assert (info.name, info.type, info.path, info.size) == ("file1.txt", FileType.FILE, f"{parent}/file1.txt", 13)
        assert (info.mode, info.permissions, info.owner, info.group) == (0o644, "-rw-r--r--", "root", "root")
        assert info.modified_time.tzinfo is not None and info.modified_time > before
        assert info.symlink_target is None
        d = sb.files.get_info(f"{parent}/subdir1")
        assert (d.type, d.mode, d.permissions) == (FileType.DIR, 0o755, "drwxr-xr-x")
        # A symlink: its target's type, and where it leads.
        sb.commands.run(f"ln -s file1.txt {parent}/link && ln -s nowhere {parent}/dangling")
        link = sb.files.get_info(f"{parent}/link")
        assert (link.type, link.symlink_target) == (FileType.FILE, f"{parent}/file1.txt")
        assert sb.files.get_info(f"{parent}/dangling").type == FileType.SYMLINK
        assert sb.files.exists(f"{parent}/file1.txt") and not sb.files.exists(f"{parent}/nope")
        assert not sb.files.exists(f"{parent}/file1.txt/below")
        with pytest.raises(FileNotFoundException):
            sb.files.get_info(f"{parent}/nope")
        with pytest.raises(hako.InvalidArgumentException):
            sb.files.list(f"{parent}/file1.txt")
        with pytest.raises(hako.InvalidArgumentException):
            sb.files.list(parent, depth=0)
        with pytest.raises(hako.InvalidArgumentException):
            sb.files.get_info("work/relative")
        moved = sb.files.rename(f"{parent}/file1.txt", f"{parent}/subdir2/renamed.txt")
        assert (moved.path, moved.name, moved.size) == (f"{parent}/subdir2/renamed.txt", "renamed.txt", 13)
        assert sb.files.read(f"{parent}/subdir2/renamed.txt") == "Hello, world!"
        with pytest.raises(FileNotFoundException):
            sb.files.rename(f"{parent}/file1.txt", f"{parent}/again")
        sb.files.remove(f"{parent}/subdir1")  # a tree
        sb.files.remove(f"{parent}/nothing-there")  # no error, as e2b's
        assert [e.name for e in sb.files.list(parent)] == ["dangling", "link", "subdir2"]
        sb.files.remove(parent)
        assert not sb.files.exists(parent)


def test_files_as_the_sandboxs_user(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        sb.commands.run("mkdir -m 700 /work/private && echo s > /work/private/s && mkdir -m 1777 /work/open")
        for call in (lambda: sb.files.get_info("/work/private/s", user="nobody"),
                     lambda: sb.files.list("/work/private", user="nobody"),
                     lambda: sb.files.make_dir("/work/private/x", user="nobody"),
                     lambda: sb.files.remove("/work/private/s", user="nobody"),
                     lambda: sb.files.write_files([WriteEntry(path="/work/private/w", data="w")], user="nobody"),
                     lambda: sb.files.watch_dir("/work/private", user="nobody")):
            with pytest.raises(hako.PermissionException):
                call()
        assert sb.files.make_dir("/work/open/mine", user="nobody")
        sb.files.write_files([WriteEntry(path="/work/open/mine/f", data="x")], user="nobody")
        info = sb.files.get_info("/work/open/mine/f", user="nobody")
        assert (info.owner, info.group) == ("nobody", "nogroup")
        sb.files.remove("/work/open/mine", user="nobody")
        assert sb.files.list("/work/open") == []


def test_watch_dir_events(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        d = "/work/test_watch_dir"
        sb.files.make_dir(d)
        sb.files.write(f"{d}/test_watch.txt", "This file will be watched.")
        handle = sb.files.watch_dir(d)
        sb.files.write(f"{d}/test_watch.txt", "This file has been modified.")
        # Every change made before the call is there: no wait, no retry.
        events = handle.get_new_events()
        assert events == [FilesystemEvent(name="test_watch.txt", type=FilesystemEventType.WRITE)]
        sb.files.write(f"{d}/new.txt", "new")
        sb.files.rename(f"{d}/new.txt", f"{d}/renamed.txt")
        sb.commands.run(f"chmod 600 {d}/renamed.txt")
        sb.files.remove(f"{d}/renamed.txt")
        sb.files.make_dir(f"{d}/sub")
        sb.files.write(f"{d}/sub/not-watched", "x")
        assert [(e.type.value, e.name) for e in handle.get_new_events()] == [
            ("create", "new.txt"), ("write", "new.txt"), ("rename", "new.txt"), ("create", "renamed.txt"),
            ("chmod", "renamed.txt"), ("remove", "renamed.txt"), ("create", "sub")]
        assert handle.get_new_events() == []
        assert len(watchers(sb.sandbox_id)) == 2
        handle.stop()
        wait_until(lambda: watchers(sb.sandbox_id) == [])
        with pytest.raises(hako.SandboxException):
            handle.get_new_events()
        # Recursive: directories below, those made later too.
        handle = sb.files.watch_dir(d, recursive=True)
        sb.files.make_dir(f"{d}/sub/nested")
        sb.files.write(f"{d}/sub/nested/test_watch.txt", "deep")
        events = handle.get_new_events()
        assert [(e.type, e.name) for e in events] == [
            (FilesystemEventType.CREATE, "sub/nested"), (FilesystemEventType.CREATE, "sub/nested/test_watch.txt"),
            (FilesystemEventType.WRITE, "sub/nested/test_watch.txt")]
        handle.stop()
        with pytest.raises(FileNotFoundException):
            sb.files.watch_dir("/work/non_existing_watch_dir")
        with pytest.raises(hako.InvalidArgumentException):
            sb.files.watch_dir(f"{d}/test_watch.txt")
        assert watchers(sb.sandbox_id) == []


def test_async_watch_dir_on_event_on_exit_timeout(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        sb = await AsyncSandbox.create(**kw)
        try:
            await sb.files.make_dir("/work/w")
            got: List[FilesystemEvent] = []
            exits: List[Any] = []
            seen = asyncio.Event()

            async def on_event(e: FilesystemEvent) -> None:
                got.append(e)
                if e.name == "b":
                    seen.set()

            h = await sb.files.watch_dir("/work/w", on_event, on_exit=exits.append, timeout=0)
            await sb.files.write("/work/w/a", "a")
            await sb.files.write_files([WriteEntry(path="/work/w/b", data="b")])
            await asyncio.wait_for(seen.wait(), 20)
            assert [(e.type.value, e.name) for e in got] == [("create", "a"), ("write", "a"), ("create", "b"),
                                                             ("write", "b")]
            await h.stop()
            assert exits == [None]
            # A watch's timeout ends it by itself: on_exit(None).
            ended = asyncio.Event()
            h = await sb.files.watch_dir("/work/w", got.append, on_exit=lambda e: ended.set(), timeout=0.3)
            await asyncio.wait_for(ended.wait(), 20)
            await h.stop()
            with pytest.raises(FileNotFoundException):
                await sb.files.watch_dir("/work/nope", got.append)
            # read as a stream, async
            await sb.files.write("/work/w/big", b"y" * 300000)
            chunks = []
            async with await sb.files.read("/work/w/big", format="stream") as stream:
                async for chunk in stream:
                    chunks.append(chunk)
            assert b"".join(chunks) == b"y" * 300000 and max(map(len, chunks)) <= 65536
        finally:
            await sb.kill()
        assert watchers(sb.sandbox_id) == []

    asyncio.run(main())


def test_a_client_killed_mid_watch_leaves_nothing_running(kw: Dict[str, Any]) -> None:
    with Sandbox.create(**kw) as sb:
        sb.files.make_dir("/work/w")
        code = ("import sys, time; sys.path.insert(0, sys.argv[1]); import hako\n"
                "sb = hako.Sandbox.connect(sys.argv[2], hako=sys.argv[3], root=sys.argv[4], data_root=sys.argv[5])\n"
                "h = sb.files.watch_dir('/work/w', recursive=True)\n"
                "print('watching', flush=True)\n"
                "time.sleep(3600)\n")
        p = subprocess.Popen([sys.executable, "-c", code, os.path.join(HERE, "..", "..", "python"), sb.sandbox_id,
                              kw["hako"], kw["root"], kw["data_root"]], stdout=subprocess.PIPE)
        try:
            assert p.stdout is not None and p.stdout.readline() == b"watching\n"
            assert len(watchers(sb.sandbox_id)) == 2
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait()
        # The hako it ran sees its stdin's end; killed, its helper dies with it.
        wait_until(lambda: watchers(sb.sandbox_id) == [])
        sb.files.write("/work/w/after", "x")
        assert sb.files.exists("/work/w/after")


def test_files_in_a_sandbox_without_a_shell(kw: Dict[str, Any], bare: str) -> None:
    with Sandbox.create(bundle=bare, **kw) as sb:
        r = sb.commands.run("true", check=False)
        assert r.exit_code == 127  # no /bin/sh: the old sh-script files API could not work here
        infos = sb.files.write_files([WriteEntry(path=f"/data/d/f{i}", data=str(i)) for i in range(5)])
        assert len(infos) == 5
        h = sb.files.watch_dir("/data/d")
        assert [e.name for e in sb.files.list("/data/d")] == [f"f{i}" for i in range(5)]
        assert sb.files.get_info("/bin/sleep").mode == 0o755
        assert sb.files.make_dir("/data/d/sub")
        sb.files.rename("/data/d/f0", "/data/d/sub/g")
        sb.files.remove("/data/d/f1")
        assert b"".join(sb.files.read("/data/d/sub/g", format="stream")) == b"0"
        assert sb.files.exists("/data/d/sub/g") and not sb.files.exists("/data/d/f0")
        assert [(e.type.value, e.name) for e in h.get_new_events()] == [
            ("create", "sub"), ("rename", "f0"), ("remove", "f1")]
        h.stop()
        assert [e.path for e in sb.files.list("/data", depth=3)] == [
            "/data/d", "/data/d/f2", "/data/d/f3", "/data/d/f4", "/data/d/sub", "/data/d/sub/g"]


def test_files_over_ssh(ssh: hako.SSH, kw: Dict[str, Any]) -> None:
    """The same calls through the OpenSSH client: the tar stream, the read
    stream and the watch's --sync lines all go over the channel."""
    with Sandbox.create(transport=ssh) as sb:
        sb.files.write_files([WriteEntry(path=f"/work/s/f{i}", data=str(i) * 70000) for i in range(3)])
        assert [e.size for e in sb.files.list("/work/s")] == [70000] * 3
        assert b"".join(sb.files.read("/work/s/f2", format="stream")) == b"2" * 70000
        h = sb.files.watch_dir("/work/s")
        sb.files.remove("/work/s/f0")
        assert [(e.type, e.name) for e in h.get_new_events()] == [(FilesystemEventType.REMOVE, "f0")]
        h.stop()
        wait_until(lambda: watchers(sb.sandbox_id) == [])
