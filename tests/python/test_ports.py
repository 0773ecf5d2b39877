"""get_host(port): e2b's way to reach a server in the sandbox, over hako port
--add (issue 37, item 3): a real HTTP server inside, a client here."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.request
from typing import Any, Dict

import pytest

import hako
from hako import AsyncSandbox, Sandbox

# Past any proxy of the environment: the server is on this machine.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> str:
    with _OPENER.open(url, timeout=10) as r:
        body: bytes = r.read()
        return body.decode()


def _page(host: str, name: str = "index.html", tries: int = 300) -> str:
    """The page at http://host/name, once the server inside listens."""
    last: Exception = Exception("no attempt")
    for _ in range(tries):
        try:
            return _get(f"http://{host}/{name}")
        except OSError as e:  # refused inside: the server is not up yet
            last = e
            time.sleep(0.1)
    raise last


SERVE = "mkdir -p /tmp/www && echo from-$SB > /tmp/www/index.html && exec busybox httpd -f -p 127.0.0.1:{p} -h /tmp/www"


def _serve(sb: Sandbox, port: int = 8000) -> None:
    sb.commands.run(SERVE.format(p=port), envs={"SB": sb.sandbox_id}, background=True, timeout=None)


def test_get_host_publishes_a_port_of_a_running_sandbox(kw: Dict[str, Any], roots: Any) -> None:
    with Sandbox(**kw) as sb:
        _serve(sb)
        host = sb.get_host(8000)
        ip, port = host.rsplit(":", 1)
        assert ip == "127.0.0.1" and int(port) > 0
        assert _page(host) == f"from-{sb.sandbox_id}\n"
        # The same again: published once, on first use.
        assert sb.get_host(8000) == host
        with open(os.path.join(roots.root, sb.sandbox_id, "ports")) as f:
            assert len(f.read().splitlines()) == 1
        listed = json.loads(roots.hako("port", "--format", "json", sb.sandbox_id).stdout)
        assert listed == [{"port": 8000, "protocol": "tcp", "host_ip": "127.0.0.1", "host_port": int(port)}]
        # Another port, another address; every interface when asked.
        _serve(sb, 8001)
        wide = sb.get_host(8001, host_ip="0.0.0.0")
        assert wide.startswith("127.0.0.1:") and wide != host
        assert _page(wide) == f"from-{sb.sandbox_id}\n"
        assert json.loads(roots.hako("port", "--format", "json", sb.sandbox_id, "8001").stdout)[0]["host_ip"] \
            == "0.0.0.0"


def test_get_host_two_sandboxes_same_port_and_async(kw: Dict[str, Any]) -> None:
    async def main() -> None:
        a, b = await asyncio.gather(AsyncSandbox.create(**kw), AsyncSandbox.create(**kw))
        try:
            for sb in (a, b):
                await sb.commands.run(SERVE.format(p=8000), envs={"SB": sb.sandbox_id}, background=True,
                                      timeout=None)
            ha, hb = await asyncio.gather(a.get_host(8000), b.get_host(8000))
            assert ha != hb
            pa, pb = await asyncio.gather(asyncio.to_thread(_page, ha), asyncio.to_thread(_page, hb))
            assert (pa, pb) == (f"from-{a.sandbox_id}\n", f"from-{b.sandbox_id}\n")
        finally:
            await asyncio.gather(a.kill(), b.kill())
        # Gone with them: nothing listens there any more.
        for h in (ha, hb):
            with pytest.raises(OSError):
                _get(f"http://{h}/")

    asyncio.run(main())


def test_get_host_bad_input(kw: Dict[str, Any]) -> None:
    with Sandbox(**kw) as sb:
        for bad in (0, 65536, -1, "80", True):
            with pytest.raises(hako.InvalidArgumentException):
                sb.get_host(bad)  # type: ignore[arg-type]
        with pytest.raises(hako.InvalidArgumentException):
            sb.get_host(8000, host_ip="not-an-address")
    # A sandbox on the host's network has nothing to publish.
    with Sandbox(network="host", **kw) as sb:
        with pytest.raises(hako.InvalidArgumentException):
            sb.get_host(8000)
    sb.kill()
    with pytest.raises(hako.NotFoundException):
        sb.get_host(8000)


def test_get_host_over_ssh_needs_an_address_and_names_the_ssh_host(ssh: hako.SSH) -> None:
    with Sandbox.create(transport=ssh) as sb:
        _serve(sb)
        with pytest.raises(hako.UnsupportedException):
            sb.get_host(8000)  # it would be on the remote machine's own loopback
        host = sb.get_host(8000, host_ip="0.0.0.0")
        assert host.startswith(f"{ssh.host}:")
        assert _page(host) == f"from-{sb.sandbox_id}\n"
