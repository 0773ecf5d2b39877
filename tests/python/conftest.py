"""pytest fixtures for the SDK's tests: the built hako, private roots per
test (as tests/integration/helpers.bash makes them), cleaned up even when a
test fails."""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "python"))
HAKO = os.path.abspath(os.environ.get("HAKO") or os.path.join(SRC, "hako"))
FIXTURES = os.path.join(SRC, "tests", "fixtures")

if os.geteuid() != 0:
    pytest.skip("the SDK's tests make rootful sandboxes: needs root", allow_module_level=True)
if not os.access(HAKO, os.X_OK):
    pytest.skip(f"no hako binary at {HAKO} (build it, or set HAKO)", allow_module_level=True)


# Seconds one test may take before the watchdog below ends it (the slowest
# takes under 40 s on a loaded 2-core machine).
TEST_TIMEOUT = float(os.environ.get("HAKO_TEST_TIMEOUT", "300"))


def _parent(pid: int) -> Optional[int]:
    """PID's parent (field 4 of /proc/PID/stat), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (ValueError, OSError, IndexError):
        return None


def _descendants(root: int) -> List[int]:
    parent: Dict[int, int] = {}
    for d in os.listdir("/proc"):
        pp = _parent(int(d)) if d.isdigit() else None
        if pp is not None:
            parent[int(d)] = pp
    keep = {root}
    more = True
    while more:
        more = False
        for p, pp in parent.items():
            if p not in keep and pp in keep:
                keep.add(p)
                more = True
    return sorted(keep - {root})


def _pipes() -> Dict[str, str]:
    """This process's pipes: "pipe:[INODE]" to the fd holding it."""
    out: Dict[str, str] = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("pipe:"):
            out[link] = fd
    return out


# The pipes pytest was started with (its stdio, whatever its caller left
# open): its caller's business, never a test's.
INHERITED = set(_pipes())


def _pipe_holders() -> List[Tuple[int, str]]:
    """Other processes holding a pipe a test made here (who keeps a read of
    ours from its end of file): each pid, and what it holds."""
    mine = {k: v for k, v in _pipes().items() if k not in INHERITED}
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            for fd in os.listdir(f"/proc/{d}/fd"):
                link = os.readlink(f"/proc/{d}/fd/{fd}")
                if link in mine:
                    out.append((int(d), f"pid {d} fd {fd} holds {link} (ours: fd {mine[link]})"))
        except OSError:
            continue
    return out


@pytest.fixture(autouse=True)
def _watchdog(request: Any) -> Iterator[None]:
    """A hung test (a hako call that never ends) would hold the whole run
    until tests/run.sh's watchdog killed pytest, with no report of which test
    hung or why.  After TEST_TIMEOUT this says which test, where each Python
    thread waits, the processes under pytest (and their kernel wait channel),
    who else holds pytest's pipes; then it kills those processes so the test
    fails by name and the run goes on."""
    done = threading.Event()

    def expire() -> None:
        if done.wait(TEST_TIMEOUT):
            return
        # pytest captures stderr for the test: say it in $HAKO_TEST_HANGS
        # too (tests/run.sh prints that file under the test's failure).
        hangs = os.environ.get("HAKO_TEST_HANGS")
        err = open(hangs, "a") if hangs else sys.stderr
        # Most telling first and last (a CI log's summary keeps a failure's
        # first and last lines): the pipes, the processes, then the Python
        # threads, the main one last.
        err.write(f"=== watchdog: {request.node.nodeid} still running after {TEST_TIMEOUT:.0f} s\n")
        holders = _pipe_holders()
        err.write("=== pytest's pipes held elsewhere:\n" + "".join(h + "\n" for _, h in holders))
        kids = _descendants(os.getpid())
        fmt = "pid,ppid,etimes,stat,wchan:24,args"
        if kids:
            ps = subprocess.run(["ps", "-o", fmt, "-p", ",".join(map(str, kids))], capture_output=True, text=True)
            err.write("=== the processes under pytest:\n" + ps.stdout)
        ps = subprocess.run(["ps", "-e", "-o", fmt], capture_output=True, text=True)
        lines = [l for l in ps.stdout.splitlines() if "hako" in l and "pytest" not in l]
        err.write("=== hako processes anywhere:\n" + "".join(l[:200] + "\n" for l in lines[:20]))
        err.write("=== the Python threads:\n")
        err.flush()
        faulthandler.dump_traceback(file=err, all_threads=True)
        err.flush()
        if err is not sys.stderr:
            err.close()
        ancestors: Set[int] = set()
        a: Optional[int] = os.getpid()
        while a is not None and a > 1:
            ancestors.add(a)
            a = _parent(a)
        for p in set(kids + [pid for pid, _ in holders]) - ancestors:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass

    t = threading.Thread(target=expire, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()


class Roots:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="hako-py.")
        os.chmod(self.dir, 0o711)  # sandboxes in a user namespace pass through
        self.root = os.path.join(self.dir, "state")
        self.data = os.path.join(self.dir, "data")
        self.kw: Dict[str, Any] = dict(hako=HAKO, root=self.root, data_root=self.data)

    def hako(self, *args: str, **kw: Any) -> "subprocess.CompletedProcess[bytes]":
        return subprocess.run([HAKO, "--root", self.root, "--data-root", self.data, *args],
                              capture_output=True, **kw)

    def cleanup(self) -> None:
        for sid in os.listdir(self.root) if os.path.isdir(self.root) else []:
            self.hako("delete", "--force", sid)
        subprocess.run(["umount", "-R", "-l", self.dir], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def leaks(self) -> list:
        out = []
        if os.path.isdir(self.root) and os.listdir(self.root):
            out.append(f"state: {os.listdir(self.root)}")
        sb = os.path.join(self.data, "sandboxes")
        if os.path.isdir(sb) and os.listdir(sb):
            out.append(f"data: {os.listdir(sb)}")
        with open("/proc/self/mountinfo") as f:
            if any(" " + self.dir in line for line in f):
                out.append("mounts")
        return out


@pytest.fixture
def roots() -> Iterator[Roots]:
    r = Roots()
    try:
        yield r
        leaks = r.leaks()
    finally:
        r.cleanup()
    assert not leaks, f"the test left {leaks}"


@pytest.fixture
def kw(roots: Roots) -> Dict[str, Any]:
    return roots.kw


@pytest.fixture(scope="session")
def image_layout(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = str(tmp_path_factory.mktemp("img"))
    os.chmod(out, 0o755)
    r = subprocess.run([os.path.join(FIXTURES, "images.sh"), "busybox", out], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"could not build the busybox image fixture: {r.stderr.decode()[-300:]}")
    return os.path.join(out, "layout")


@pytest.fixture
def busybox(roots: Roots, image_layout: str) -> str:
    """The fixture busybox image, imported as "busybox" into the test's roots."""
    policy = os.path.join(roots.dir, "accept.json")
    with open(policy, "w") as f:
        f.write('{"default": [{"type": "insecureAcceptAnything"}]}')
    r = roots.hako("image", "import", "--policy", policy, image_layout, "--name", "busybox")
    assert r.returncode == 0, r.stderr
    return "busybox"


SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.access("/usr/sbin/sshd", os.X_OK) else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ssh(kw: Dict[str, Any]) -> Iterator[Any]:
    """An sshd on 127.0.0.1 that takes a key made here, and the hako.SSH
    transport to it (root@127.0.0.1, this test's roots)."""
    import hako
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
