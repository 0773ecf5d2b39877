"""e2b's own examples, as an e2b user writes them, against hako's SDK (issue
37, item 9).

Each test is one of e2b's documented examples for its Python SDK (e2b.dev's
docs: commands, background commands, streaming, PTY, filesystem, watch,
internet access and get_host, metadata and listing, sandbox lifetime,
metrics, connect, persistence; and the behaviour its python-sdk's tests
show), written again here in our own words.  What changes from e2b's:

- the import: ``from hako import ...`` for ``from e2b import ...``;
- ``**kw`` on the calls that make or find a sandbox: this test's hako binary
  and private ``root``/``data_root`` (conftest.py), where an e2b program has
  its API key in the environment;
- the template: e2b's base template runs commands in /home/user, hako's host
  profile in /work (HOME below), and has ``python3`` (e2b's has ``python``).

Where hako cannot do what e2b does, the test says so and checks hako's
behaviour instead, and docs/python.md's migration table says how it
differs.  Servers listen only on the sandbox's loopback, reached from here
on 127.0.0.1 past any proxy of the environment."""

from __future__ import annotations

import asyncio
import datetime
import io
import re
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Dict, List

import pytest

from hako import (AsyncSandbox, CommandExitException, FilesystemEvent, FileNotFoundException, FilesystemEventType, FileType,
                  InvalidArgumentException, NotFoundException, PtySize, Sandbox, SandboxException, SandboxQuery,
                  SandboxState, TimeoutException, WriteEntry, WriteInfo)

# The template's home, where its commands start: e2b's is /home/user.
HOME = "/work"

# Past any proxy of the environment: the sandbox's server is on this machine.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _wait_until(cond: Any, what: str, seconds: float = 20.0) -> None:
    """Poll ``cond()`` until it holds (an event we cannot be told of)."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting after {seconds} s: {what}")
        time.sleep(0.05)


# ---- commands ------------------------------------------------------------------------------


def test_run_a_command(kw: Dict[str, Any]) -> None:
    # docs/commands: run a command, read its result.
    with Sandbox.create(**kw) as sandbox:
        result = sandbox.commands.run("ls -l /")
        assert result.exit_code == 0 and "work" in result.stdout

        text = "Hello, World!"
        cmd = sandbox.commands.run(f'echo "{text}"')
        assert (cmd.exit_code, cmd.stdout, cmd.stderr) == (0, f"{text}\n", "")

        specials = "!@#$%^&*()_+"
        assert sandbox.commands.run(f'echo "{specials}"').stdout == f"{specials}\n"
        assert sandbox.commands.run('echo "Hello,\nWorld!"').stdout == "Hello,\nWorld!\n"

        # A command's output is decoded as UTF-8, broken bytes replaced.
        broken = sandbox.commands.run('printf "' + "a" * 8191 + '\\342"')
        assert broken.stdout == "a" * 8191 + "\ufffd"

        # A non-zero exit raises, with what it wrote.
        with pytest.raises(CommandExitException) as e:
            sandbox.commands.run("echo oops >&2; exit 3")
        assert (e.value.exit_code, e.value.stderr) == (3, "oops\n")


def test_environment_variables(kw: Dict[str, Any]) -> None:
    # docs/sandbox/environment-variables: the sandbox's, and one command's.
    with Sandbox.create(envs={"MY_VAR": "my_value"}, **kw) as sandbox:
        assert sandbox.commands.run("echo $MY_VAR").stdout == "my_value\n"
        assert sandbox.commands.run("echo $MY_VAR", envs={"MY_VAR": "123"}).stdout == "123\n"
        # A command's own are its own: the next one does not see them.
        assert sandbox.commands.run("echo $FOO", envs={"FOO": "bar"}).stdout.strip() == "bar"
        assert sandbox.commands.run('echo "$FOO"').stdout.strip() == ""
        assert sandbox.commands.run("python3 -c \"import os; print(os.environ['FOO'])\"",
                                    envs={"FOO": "bar"}).stdout.strip() == "bar"


def test_streaming_output(kw: Dict[str, Any]) -> None:
    # docs/commands/streaming: on_stdout and on_stderr see the output as it comes.
    with Sandbox.create(**kw) as sandbox:
        out: List[str] = []
        err: List[str] = []
        result = sandbox.commands.run("echo hello; sleep 1; echo world >&2",
                                      on_stdout=lambda data: out.append(data),
                                      on_stderr=lambda data: err.append(data))
        assert (out, err) == (["hello\n"], ["world\n"])
        assert (result.stdout, result.stderr) == ("hello\n", "world\n")

        # As it comes: the command goes on only once "hello" has reached
        # on_stdout here (another thread makes the file it waits for), so a
        # callback called at the end would leave it waiting until its timeout.
        seen = threading.Event()
        go = threading.Thread(target=lambda: seen.wait(30) and sandbox.files.write(f"{HOME}/go", ""))
        go.start()
        try:
            r = sandbox.commands.run(f"echo hello; while [ ! -e {HOME}/go ]; do sleep 0.02; done; echo world",
                                     on_stdout=lambda data: seen.set() if "hello" in data else None, timeout=20)
        finally:
            seen.set()
            go.join()
        assert r.stdout == "hello\nworld\n"


def test_background_command(kw: Dict[str, Any]) -> None:
    # docs/commands/background: start it, read its output as it comes, kill it.
    with Sandbox.create(**kw) as sandbox:
        command = sandbox.commands.run("echo hello; sleep 10; echo world", background=True)
        seen = []
        for stdout, stderr, _ in command:
            if stdout:
                seen.append(stdout)
                break  # e2b's example reads to the end (10 s); "hello" is enough here
        assert seen == ["hello\n"]
        assert command.pid in [p.pid for p in sandbox.commands.list()]
        assert command.kill()
        assert command.pid not in [p.pid for p in sandbox.commands.list()]
        # e2b's wait() then raises CommandExitException; hako's knows its own
        # handle killed it (the table says so).
        result = command.wait()
        assert (result.exit_code, result.reason, result.stdout) == (137, "killed", "hello\n")
        assert not command.kill()  # it had ended

        # wait(on_stdout=) from e2b's docs: the callback sees every piece.
        pieces: List[str] = []
        handle = sandbox.commands.run("for i in 1 2 3; do printf $i; sleep 0.1; done; echo done",
                                      background=True)
        assert handle.wait(on_stdout=lambda data: pieces.append(data)).stdout == "123done\n"
        assert "".join(pieces) == "123done\n"


def test_command_timeouts(kw: Dict[str, Any]) -> None:
    # python-sdk tests: a command past its timeout raises TimeoutException,
    # in the foreground and while a background one is iterated.
    with Sandbox.create(**kw) as sandbox:
        assert sandbox.commands.run('echo "Hello, World!"', timeout=10).exit_code == 0
        with pytest.raises(TimeoutException):
            sandbox.commands.run("sleep 10", timeout=1)
        cmd = sandbox.commands.run("sleep 10", timeout=1, background=True)
        with pytest.raises(TimeoutException):
            for _ in cmd:
                pass


def test_send_stdin(kw: Dict[str, Any]) -> None:
    # python-sdk tests: stdin=True keeps a background command's stdin open.
    with Sandbox.create(**kw) as sandbox:
        cmd = sandbox.commands.run("cat", background=True, stdin=True)
        sandbox.commands.send_stdin(cmd.pid, "Hello, World!")
        for stdout, _, _ in cmd:
            assert stdout == "Hello, World!"
            break
        cmd.send_stdin(b"!@#$%^&*()_+\nsecond line")
        got = ""
        for stdout, _, _ in cmd:  # a second loop goes on where the first stopped
            got += stdout or ""
            if got.endswith("second line"):
                break
        assert got == "!@#$%^&*()_+\nsecond line"
        cmd.close_stdin()  # cat ends at the end of its input
        result = cmd.wait()
        assert (result.exit_code, result.stdout) == (0, "Hello, World!!@#$%^&*()_+\nsecond line")


def test_list_connect_and_kill_processes(kw: Dict[str, Any]) -> None:
    # python-sdk tests: commands.list, connect and kill by pid.
    with Sandbox.create(**kw) as sandbox:
        c1 = sandbox.commands.run("sleep 10", background=True)
        c2 = sandbox.commands.run("sleep 10", background=True)
        processes = sandbox.commands.list()
        assert {c1.pid, c2.pid} <= {p.pid for p in processes}

        process_info = sandbox.commands.connect(c1.pid)
        assert process_info.pid == c1.pid

        # e2b's test checks the kill with `kill -0 PID` in another command.
        # hako's pid is the host's (the sandbox's own: ProcessInfo.ns_pid),
        # and one command may not signal another's processes (each is its
        # own Landlock domain, signals scoped): /proc says whether it runs.
        ns_pid = next(p.ns_pid for p in processes if p.pid == c1.pid)
        assert "not permitted" in sandbox.commands.run(f"kill -0 {ns_pid}", check=False).stderr
        sandbox.commands.run(f"test -e /proc/{ns_pid}")
        assert sandbox.commands.kill(c1.pid)  # returns once it is gone, as e2b's
        with pytest.raises(CommandExitException):
            sandbox.commands.run(f"test -e /proc/{ns_pid}")
        assert [p.pid for p in sandbox.commands.list()] == [c2.pid]

        with pytest.raises(NotFoundException):
            sandbox.commands.connect(999999)
        assert not sandbox.commands.kill(999999)

        # Disconnect, and follow it again by pid.
        h = sandbox.commands.run("echo one; read x; echo two", background=True, stdin=True)
        h.disconnect()
        again = sandbox.commands.connect(h.pid)
        sandbox.commands.send_stdin(h.pid, "go\n")
        assert "two" in again.wait().stdout
        assert sandbox.commands.kill(c2.pid)


# ---- PTY -----------------------------------------------------------------------------------


def _text(chunks: List[bytes]) -> str:
    return b"".join(chunks).decode("utf-8", "replace")


def test_pty(kw: Dict[str, Any]) -> None:
    # python-sdk tests: a terminal, keys typed into it, its output.
    with Sandbox.create(**kw) as sandbox:
        terminal = sandbox.pty.create(PtySize(24, 80), envs={"ABC": "123"}, cwd="/")
        sandbox.pty.send_stdin(terminal.pid, b"echo $ABC-$PWD\nexit\n")
        output: List[bytes] = []
        result = terminal.wait(on_pty=lambda data: output.append(data))
        assert result.exit_code == 0
        assert "123-/" in _text(output)


def test_pty_resize(kw: Dict[str, Any]) -> None:
    # python-sdk tests: tput cols says the terminal's width, before and after resize.
    with Sandbox.create(**kw) as sandbox:
        terminal = sandbox.pty.create(PtySize(cols=80, rows=24))
        sandbox.pty.send_stdin(terminal.pid, b"tput cols\nexit\n")
        output: List[bytes] = []
        assert terminal.wait(on_pty=lambda data: output.append(data)).exit_code == 0
        assert re.search(r"\b80\r\n", _text(output))

        terminal = sandbox.pty.create(PtySize(cols=80, rows=24))
        sandbox.pty.resize(terminal.pid, PtySize(cols=100, rows=24))
        sandbox.pty.send_stdin(terminal.pid, b"tput cols\nexit\n")
        output = []
        assert terminal.wait(on_pty=lambda data: output.append(data)).exit_code == 0
        assert re.search(r"\b100\r\n", _text(output))


def test_pty_kill_and_connect(kw: Dict[str, Any]) -> None:
    # python-sdk tests: kill a terminal; disconnect and connect to one again.
    with Sandbox.create(**kw) as sandbox:
        terminal = sandbox.pty.create(PtySize(24, 80))
        assert sandbox.pty.kill(terminal.pid)
        assert terminal.pid not in [p.pid for p in sandbox.commands.list()]
        assert not sandbox.pty.kill(999999)

        terminal = sandbox.pty.create(PtySize(24, 80), envs={"FOO": "bar"})
        sandbox.pty.send_stdin(terminal.pid, b"echo $FOO\n")
        terminal.disconnect()
        reconnect = sandbox.pty.connect(terminal.pid)
        sandbox.pty.send_stdin(terminal.pid, b"echo $FOO-again\nexit\n")
        output: List[bytes] = []
        result = reconnect.wait(on_pty=lambda data: output.append(data))
        assert reconnect.pid == terminal.pid and result.exit_code == 0
        assert "bar-again" in _text(output)


# ---- the filesystem ------------------------------------------------------------------------


def test_read_and_write_files(kw: Dict[str, Any]) -> None:
    # docs/filesystem/read-write and upload, python-sdk tests.
    with Sandbox.create(**kw) as sandbox:
        info = sandbox.files.write(f"{HOME}/test_write.txt", "This is a test file.")
        assert (info.name, info.path, info.type) == ("test_write.txt", f"{HOME}/test_write.txt", FileType.FILE)
        assert sandbox.files.exists(f"{HOME}/test_write.txt")
        assert sandbox.files.read(f"{HOME}/test_write.txt") == "This is a test file."
        assert sandbox.files.read(f"{HOME}/test_write.txt", format="bytes") == b"This is a test file."
        assert sandbox.commands.run(f"cat {HOME}/test_write.txt").stdout == "This is a test file."

        sandbox.files.write(f"{HOME}/test_write.txt", "New content.")  # overwritten
        assert sandbox.files.read(f"{HOME}/test_write.txt") == "New content."
        sandbox.files.write(f"{HOME}/non_existing_dir/test_write.txt", "made")  # its directory too
        assert sandbox.files.read(f"{HOME}/non_existing_dir/test_write.txt") == "made"
        # A binary file object, as open("local", "rb") gives.
        sandbox.files.write(f"{HOME}/test_write.bin", io.BytesIO(b"binary data"))
        assert sandbox.files.read(f"{HOME}/test_write.bin") == "binary data"

        # Many files in one call: an empty list, WriteEntry, dicts, several kinds of data.
        assert sandbox.files.write_files([]) == []
        infos = sandbox.files.write_files([WriteEntry(path=f"{HOME}/w_{i}.txt", data=f"file {i}") for i in range(10)])
        assert all(isinstance(i, WriteInfo) and i.type == FileType.FILE for i in infos)
        assert [i.path for i in infos] == [f"{HOME}/w_{i}.txt" for i in range(10)]
        assert [sandbox.files.read(i.path) for i in infos] == [f"file {i}" for i in range(10)]
        sandbox.files.write_files([
            {"path": f"{HOME}/text.txt", "data": "Text string data"},
            {"path": f"{HOME}/bytes.bin", "data": b"Bytes data"},
            {"path": f"{HOME}/bytesio.bin", "data": io.BytesIO(b"BytesIO data")},
            {"path": f"{HOME}/stringio.txt", "data": io.StringIO("StringIO data")},
        ])
        assert [sandbox.files.read(f"{HOME}/{n}") for n in ("text.txt", "bytes.bin", "bytesio.bin", "stringio.txt")] \
            == ["Text string data", "Bytes data", "BytesIO data", "StringIO data"]

        # A stream of chunks: whole, with `with`, or closed after the first.
        content = "Streamed read content. " * 10_000
        sandbox.files.write(f"{HOME}/stream.txt", content)
        assert b"".join(sandbox.files.read(f"{HOME}/stream.txt", format="stream")).decode() == content
        with sandbox.files.read(f"{HOME}/stream.txt", format="stream") as stream:
            assert b"".join(stream).decode() == content
        stream = sandbox.files.read(f"{HOME}/stream.txt", format="stream")
        assert len(next(iter(stream))) > 0
        stream.close()

        with pytest.raises(FileNotFoundException):
            sandbox.files.read(f"{HOME}/non_existing_file.txt")
        with pytest.raises(FileNotFoundException):
            sandbox.files.read(f"{HOME}/non_existing_file.txt", format="stream")
        with pytest.raises(NotFoundException):  # e2b's older name for it
            sandbox.files.read(f"{HOME}/non_existing_file.txt")

        # e2b resolves a relative path against the user's home; hako refuses
        # it (InvalidArgumentException) rather than guess a home.
        with pytest.raises(InvalidArgumentException):
            sandbox.files.write("test_write.txt", "relative")


def test_file_info_list_and_manage(kw: Dict[str, Any]) -> None:
    # docs/filesystem/info, python-sdk tests: get_info, list with depth,
    # make_dir, exists, rename, remove.
    with Sandbox.create(**kw) as sandbox:
        sandbox.files.write(f"{HOME}/test_file.txt", "test")
        info = sandbox.files.get_info(f"{HOME}/test_file.txt")
        pwd = sandbox.commands.run("pwd").stdout.strip()
        assert (info.name, info.type, info.path, info.size) == ("test_file.txt", FileType.FILE, f"{pwd}/test_file.txt", 4)
        assert (info.mode, info.permissions) == (0o644, "-rw-r--r--")
        assert (info.owner, info.group) == ("root", "root")  # e2b's default user is "user"
        assert info.modified_time.tzinfo is not None and info.symlink_target is None

        assert sandbox.files.make_dir(f"{HOME}/test_dir")
        assert not sandbox.files.make_dir(f"{HOME}/test_dir")  # it was there
        info = sandbox.files.get_info(f"{HOME}/test_dir")
        assert (info.name, info.type, info.mode, info.permissions) == ("test_dir", FileType.DIR, 0o755, "drwxr-xr-x")
        with pytest.raises(FileNotFoundException):
            sandbox.files.get_info(f"{HOME}/test_does_not_exist.txt")

        # A symlink: its target's type, and where it leads.
        sandbox.files.write(f"{HOME}/test_dir/test.txt", "Hello, World!")
        sandbox.commands.run("ln -s test.txt symlink_to_test.txt", cwd=f"{HOME}/test_dir")
        link = sandbox.files.get_info(f"{HOME}/test_dir/symlink_to_test.txt")
        assert (link.type, link.symlink_target) == (FileType.FILE, f"{pwd}/test_dir/test.txt")

        parent = f"{HOME}/test_directory"
        for d in ("subdir1/subdir1_1", "subdir1/subdir1_2", "subdir2/subdir2_1", "subdir2/subdir2_2"):
            sandbox.files.make_dir(f"{parent}/{d}")
        sandbox.files.write(f"{parent}/file1.txt", "Hello, world!")
        top = ["file1.txt", "subdir1", "subdir2"]
        for depth in (None, 1):
            files = sandbox.files.list(parent, depth=depth)
            assert [f.name for f in files] == top
            assert [f.path for f in files] == [f"{parent}/{n}" for n in top]
            assert [f.type for f in files] == [FileType.FILE, FileType.DIR, FileType.DIR]
        all_of_it = ["file1.txt", "subdir1", "subdir1_1", "subdir1_2", "subdir2", "subdir2_1", "subdir2_2"]
        for depth in (2, 3):
            assert [f.name for f in sandbox.files.list(parent, depth=depth)] == all_of_it
        with pytest.raises(SandboxException, match="depth should be at least 1"):
            sandbox.files.list(parent, depth=-1)
        entry = sandbox.files.list(f"{parent}/subdir1", depth=1)[0]
        assert (entry.name, entry.type, entry.permissions) == ("subdir1_1", FileType.DIR, "drwxr-xr-x")

        info = sandbox.files.rename(f"{HOME}/test_file.txt", f"{HOME}/test_rename_new.txt")
        assert info.path == f"{HOME}/test_rename_new.txt"
        assert not sandbox.files.exists(f"{HOME}/test_file.txt")
        assert sandbox.files.read(f"{HOME}/test_rename_new.txt") == "test"
        with pytest.raises(FileNotFoundException):
            sandbox.files.rename(f"{HOME}/non_existing_file.txt", f"{HOME}/new.txt")

        sandbox.files.remove(f"{HOME}/test_rename_new.txt")
        assert not sandbox.files.exists(f"{HOME}/test_rename_new.txt")
        sandbox.files.remove(parent)  # a tree too
        assert not sandbox.files.exists(parent)
        sandbox.files.remove(f"{HOME}/non_existing_file.txt")  # nothing there: no error


def test_watch_directory(kw: Dict[str, Any]) -> None:
    # docs/filesystem/watch, python-sdk tests: watch_dir, then get_new_events.
    with Sandbox.create(**kw) as sandbox:
        dirname = HOME
        handle = sandbox.files.watch_dir(dirname)
        sandbox.files.write(f"{dirname}/my-file", "hello")
        events = handle.get_new_events()
        assert [(e.type, e.name) for e in events if e.type == FilesystemEventType.WRITE] == \
            [(FilesystemEventType.WRITE, "my-file")]
        assert events[0].type == FilesystemEventType.CREATE  # e2b's tests count 3 events; hako's are 2
        sandbox.files.write(f"{dirname}/my-file", "hello again")
        assert [(e.type, e.name) for e in handle.get_new_events()] == [(FilesystemEventType.WRITE, "my-file")]
        assert handle.get_new_events() == []  # none twice
        handle.stop()

        # Recursive: a file in a directory below, and one made after the watch began.
        sandbox.files.make_dir(f"{dirname}/my-folder/nested")
        handle = sandbox.files.watch_dir(dirname, recursive=True)
        sandbox.files.write(f"{dirname}/my-folder/nested/my-file", "hello")
        events = handle.get_new_events()
        assert (events[0].type, events[0].name) == (FilesystemEventType.CREATE, "my-folder/nested/my-file")
        sandbox.files.make_dir(f"{dirname}/my-folder/later")
        sandbox.files.write(f"{dirname}/my-folder/later/f", "x")
        seen = {(e.type, e.name) for e in handle.get_new_events()}
        assert (FilesystemEventType.CREATE, "my-folder/later") in seen
        assert (FilesystemEventType.WRITE, "my-folder/later/f") in seen
        handle.stop()

        with pytest.raises(FileNotFoundException):
            sandbox.files.watch_dir(f"{HOME}/non_existing_watch_dir")
        with pytest.raises(SandboxException):
            sandbox.files.watch_dir(f"{dirname}/my-file")  # a file, not a directory


# ---- ports ---------------------------------------------------------------------------------


def test_get_host_reaches_a_server_in_the_sandbox(kw: Dict[str, Any]) -> None:
    # docs/sandbox/internet-access: start a server inside, reach it with get_host.
    with Sandbox.create(**kw) as sandbox:
        process = sandbox.commands.run("python3 -m http.server 3000", background=True)  # e2b's template: python
        host = sandbox.get_host(3000)
        assert host.startswith("127.0.0.1:")
        url = f"http://{host}"  # e2b's is https://3000-ID.e2b.app; hako's is this machine's loopback
        body = ""

        def served() -> bool:
            nonlocal body
            try:
                with _OPENER.open(url, timeout=5) as response:
                    assert response.status == 200
                    body = response.read().decode()
                    return True
            except (OSError, urllib.error.URLError):  # the server is not up yet
                return False

        _wait_until(served, f"the server in the sandbox at {url}")
        assert "Directory listing for /" in body
        assert process.kill()
        with pytest.raises(OSError):  # nobody listens inside any more
            _OPENER.open(url, timeout=5).read()


# ---- sandboxes: metadata, listing, lifetime, metrics, connect, fork -----------------------


def test_metadata_and_list(kw: Dict[str, Any]) -> None:
    # docs/sandbox/metadata and list, python-sdk tests.
    with Sandbox.create(metadata={"userId": "123"}, **kw) as sandbox, \
            Sandbox.create(metadata={"env": "dev", "app": "my-app", "user_id": "123"}, **kw) as other:
        paginator = Sandbox.list(query=SandboxQuery(metadata={"userId": "123"}), **kw)
        running_sandboxes = paginator.next_items()
        assert [s.sandbox_id for s in running_sandboxes] == [sandbox.sandbox_id]
        assert running_sandboxes[0].metadata == {"userId": "123"}
        assert running_sandboxes[0].started_at is not None
        assert not paginator.has_next

        found = Sandbox.list(query=SandboxQuery(metadata={"user_id": "123", "env": "dev"}), **kw).next_items()
        assert [s.sandbox_id for s in found] == [other.sandbox_id]

        other.beta_pause()
        paused = Sandbox.list(SandboxQuery(state=[SandboxState.PAUSED]), **kw).next_items()
        assert [(s.sandbox_id, s.state) for s in paused] == [(other.sandbox_id, SandboxState.PAUSED)]
        both = Sandbox.list(query=SandboxQuery(state=[SandboxState.RUNNING, SandboxState.PAUSED]), **kw).next_items()
        assert {s.sandbox_id for s in both} == {sandbox.sandbox_id, other.sandbox_id}

        # Pages: limit per page, has_next and next_token, and e2b's loop.
        paginator = Sandbox.list(limit=1, order="asc", **kw)
        first = paginator.next_items()
        assert [s.sandbox_id for s in first] == [sandbox.sandbox_id]
        assert paginator.has_next and paginator.next_token is not None
        assert [s.sandbox_id for s in paginator.next_items()] == [other.sandbox_id]
        assert not paginator.has_next and paginator.next_token is None
        paginator = Sandbox.list(limit=1, order="desc", **kw)
        sandboxes = []
        while paginator.has_next:
            sandboxes.extend(paginator.next_items())
        assert [s.sandbox_id for s in sandboxes] == [other.sandbox_id, sandbox.sandbox_id]

        info = sandbox.get_info()
        later = Sandbox.list(query=SandboxQuery(metadata={"userId": "123"},
                                                started_after=info.started_at + datetime.timedelta(seconds=1)), **kw)
        assert later.next_items() == []


def test_sandbox_lifetime(kw: Dict[str, Any]) -> None:
    # docs/sandbox: a timeout on create, set_timeout, get_info, kill; python-sdk tests.
    sandbox = Sandbox(timeout=60, **kw)  # e2b's constructor, as create
    try:
        info = sandbox.get_info()
        assert info.sandbox_id == sandbox.sandbox_id and info.metadata == {}
        assert info.end_at is not None and info.started_at is not None
        assert 58 <= (info.end_at - info.started_at).total_seconds() <= 62
        sandbox.set_timeout(30)  # 30 s from now: earlier than before
        assert sandbox.get_info().end_at < info.end_at  # type: ignore[operator]
        assert Sandbox.get_info(sandbox.sandbox_id, **kw).end_at == sandbox.get_info().end_at
        sandbox.set_timeout(1)
        _wait_until(lambda: not sandbox.is_running(request_timeout=5), "the sandbox's timeout")
        # e2b's sandbox is gone at its timeout; hako's is stopped, its files kept until kill()
        assert sandbox.get_info().state == "stopped"
    finally:
        assert sandbox.kill()
    assert not sandbox.kill()  # gone already
    assert not Sandbox.kill(sandbox.sandbox_id, **kw)
    with pytest.raises(NotFoundException):
        Sandbox.connect(sandbox.sandbox_id, **kw)

    # Five minutes unless told: e2b's default.
    sandbox = Sandbox.create(**kw)
    info = sandbox.get_info()
    assert 298 <= (info.end_at - info.started_at).total_seconds() <= 302  # type: ignore[operator]
    assert Sandbox.kill(sandbox.sandbox_id, **kw)  # by id, as e2b's
    assert Sandbox.list(**kw) == []


def test_metrics(kw: Dict[str, Any]) -> None:
    # docs/sandbox/metrics, python-sdk tests.  e2b collects a sample every 5 s
    # (its example sleeps 10 s first); hako takes one on each call.
    with Sandbox.create(timeout=60, disk="64m", **kw) as sbx:  # hako: disk_* need a disk limit
        start = datetime.datetime.now(datetime.timezone.utc)
        sbx.commands.run("python3 -c 'sum(range(10**6))'")
        metrics = sbx.get_metrics()
        assert len(metrics) == 1
        metric = metrics[0]
        assert metric.cpu_count > 0 and metric.cpu_used_pct >= 0
        assert 0 < metric.mem_used <= metric.mem_total
        assert metric.disk_used is not None and metric.disk_total is not None
        assert 0 <= metric.disk_used <= metric.disk_total
        assert start <= metric.timestamp <= datetime.datetime.now(datetime.timezone.utc)
        assert len(sbx.get_metrics()) == 2  # the one before, and one now
        assert sbx.get_metrics(start=start - datetime.timedelta(hours=1),
                               end=start - datetime.timedelta(minutes=30)) == []
        assert len(Sandbox.get_metrics(sbx.sandbox_id, **kw)) == 1  # by id: a sample now


def test_connect_to_a_running_sandbox(kw: Dict[str, Any]) -> None:
    # docs/sandbox/connect and persistence, python-sdk tests.
    with Sandbox.create(timeout=120, **kw) as sbx:
        running_sandboxes = Sandbox.list(**kw).next_items()
        sandbox_id = running_sandboxes[0].sandbox_id
        sandbox = Sandbox.connect(sandbox_id, **kw)
        r = sandbox.commands.run("whoami")
        assert (sandbox.sandbox_id, r.stdout.strip()) == (sbx.sandbox_id, "root")  # e2b's: "user"
        sandbox.files.write(f"{HOME}/shared.txt", "seen by both")
        assert sbx.files.read(f"{HOME}/shared.txt") == "seen by both"

        # connect's timeout extends the lifetime, never shortens it.
        before = sbx.get_info().end_at
        Sandbox.connect(sandbox_id, timeout=10, **kw)
        assert sbx.get_info().end_at == before
        Sandbox.connect(sandbox_id, timeout=600, **kw)
        assert sbx.get_info().end_at > before  # type: ignore[operator]

        # Paused, and connect resumes it.
        assert sbx.pause()
        assert not sbx.is_running() and not sbx.pause()  # paused already
        resumed = Sandbox.connect(sbx.sandbox_id, **kw)
        assert resumed.is_running()
        sbx.beta_pause()
        same_sbx = sbx.connect()
        assert same_sbx.sandbox_id == sbx.sandbox_id and sbx.is_running()
        assert Sandbox.pause(sbx.sandbox_id, **kw)  # by id
        assert Sandbox.get_info(sbx.sandbox_id, **kw).state == SandboxState.PAUSED
        sbx.connect()
        assert sbx.commands.run("echo awake").stdout == "awake\n"


def test_fork(kw: Dict[str, Any]) -> None:
    # python-sdk tests: fork a sandbox, the children start from its files.
    with Sandbox.create(**kw) as sandbox:
        sandbox.files.write(f"{HOME}/state.txt", "state before fork")
        forks = sandbox.fork()
        assert len(forks) == 1 and isinstance(forks[0], Sandbox)
        fork = forks[0]
        try:
            assert fork.sandbox_id != sandbox.sandbox_id
            assert sandbox.is_running() and fork.is_running()
            assert fork.files.read(f"{HOME}/state.txt") == "state before fork"
            fork.files.write(f"{HOME}/state.txt", "modified in fork")
            assert sandbox.files.read(f"{HOME}/state.txt") == "state before fork"
        finally:
            fork.kill()

        forks = Sandbox.fork(sandbox.sandbox_id, count=2, timeout=60, **kw)  # by id
        try:
            assert len({f.sandbox_id for f in forks} | {sandbox.sandbox_id}) == 3
            assert all(f.is_running() for f in forks)
            assert all(f.get_info().end_at is not None for f in forks)
        finally:
            for f in forks:
                f.kill()
        with pytest.raises(InvalidArgumentException):
            Sandbox.fork(sandbox.sandbox_id, count=0, **kw)


# ---- the async SDK -------------------------------------------------------------------------


def test_async_sandbox(kw: Dict[str, Any]) -> None:
    # python-sdk's async tests: the same calls awaited; watch_dir and
    # pty.create take callbacks.
    async def main() -> None:
        sandbox = await AsyncSandbox.create(**kw)
        try:
            out: List[str] = []
            result = await sandbox.commands.run("echo hello", on_stdout=out.append)
            assert (result.stdout, out) == ("hello\n", ["hello\n"])

            cmd = await sandbox.commands.run("echo one; sleep 10", background=True)
            async for stdout, _, _ in cmd:
                assert stdout == "one\n"
                break
            assert await sandbox.commands.kill(cmd.pid)

            event_triggered = asyncio.Event()
            received: List[FilesystemEvent] = []

            def handle_event(e: FilesystemEvent) -> None:
                if e.type == FilesystemEventType.WRITE and e.name == "test_watch.txt":
                    received.append(e)
                    event_triggered.set()

            handle = await sandbox.files.watch_dir(HOME, on_event=handle_event)
            await sandbox.files.write(f"{HOME}/test_watch.txt", "This file will be watched.")
            await asyncio.wait_for(event_triggered.wait(), 20)
            assert received[0].name == "test_watch.txt"
            await handle.stop()

            output: List[str] = []
            terminal = await sandbox.pty.create(PtySize(24, 80), on_data=lambda x: output.append(x.decode()),
                                                envs={"ABC": "123"})
            await sandbox.pty.send_stdin(terminal.pid, b"echo $ABC\n")
            await sandbox.pty.send_stdin(terminal.pid, b"exit\n")
            await terminal.wait()
            assert terminal.exit_code == 0 and "123" in "".join(output)

            same = await AsyncSandbox.connect(sandbox.sandbox_id, **kw)
            assert (await same.get_info()).state == SandboxState.RUNNING
        finally:
            assert await AsyncSandbox.kill(sandbox.sandbox_id, **kw)  # by id
        assert not await sandbox.kill()

    asyncio.run(main())
