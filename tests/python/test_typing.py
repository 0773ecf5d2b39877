"""The package is fully typed: mypy --strict (Debian's python3-mypy) is clean on it and the examples."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_mypy_strict() -> None:
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("python3-mypy is not installed")
    env = dict(os.environ, MYPYPATH=os.path.join(SRC, "python"))
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--python-version", "3.9", "--no-incremental", "--cache-dir", os.devnull,
                        os.path.join(SRC, "python", "hako")], capture_output=True, env=env, cwd=SRC)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    assert os.path.exists(os.path.join(SRC, "python", "hako", "py.typed"))
