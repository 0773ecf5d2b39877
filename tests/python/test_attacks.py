"""What the SDK builds into argv from values handed to it (a sandbox id from
a request, a host name from a config): each is checked before anything runs,
so none becomes an option of hako's or of ssh's."""

from __future__ import annotations

import shutil
from typing import Any, Dict

import pytest

import hako
from hako import Sandbox


def test_ssh_host_or_user_that_ssh_would_take_for_an_option_is_refused(tmp_path: Any) -> None:
    if shutil.which("ssh") is None:
        pytest.skip("needs openssh-client (ssh)")
    mark = tmp_path / "ran-here"
    # ssh reads a destination beginning with "-" as its option: a
    # ProxyCommand would run on this machine.
    with pytest.raises(hako.InvalidArgumentException):
        Sandbox.list(transport=hako.SSH(f"-oProxyCommand=touch {mark}"))
    with pytest.raises(hako.InvalidArgumentException):
        Sandbox.list(transport=hako.SSH("127.0.0.1", user=f"-oProxyCommand=touch {mark}"))
    assert not mark.exists()
    for host, user in (("", None), ("a b", None), ("host\n-oX=y", None), ("127.0.0.1", "")):
        with pytest.raises(hako.InvalidArgumentException):
            hako.SSH(host, user=user)
    assert hako.SSH("127.0.0.1", user="root").host == "127.0.0.1"


def test_a_sandbox_id_outside_hakos_grammar_is_refused_before_hako_runs(kw: Dict[str, Any]) -> None:
    # As hako's verbs read argv, "-h" would be a help text taken for a
    # state, "-a" an option of the verb's.
    for bad in ("-h", "--all", "-a", "../x", "a b", "", "x" * 65, "a;touch /tmp/x"):
        with pytest.raises(hako.InvalidArgumentException):
            Sandbox.connect(bad, **kw)
        if bad:  # create's "" is no id given: one is made
            with pytest.raises(hako.InvalidArgumentException):
                Sandbox.create(sandbox_id=bad, **kw)
    assert Sandbox.list(**kw) == []
