"""pytest fixtures for the SDK's tests: the built hako, private roots per
test (as tests/integration/helpers.bash makes them), cleaned up even when a
test fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, Iterator

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
