"""unionai-sandbox's shape: ``async with hako.session(...) as s: await s.run(...)``."""

from __future__ import annotations

from typing import Any, Optional

from hako._async import AsyncSandbox, Command
from hako._types import CommandResult


class Session:
    """A sandbox for one ``async with`` block: ``run()``, ``put_bytes()``, ``get_bytes()``."""

    def __init__(self, **create: Any) -> None:
        self._create = create
        self.sandbox: Optional[AsyncSandbox] = None

    def _sb(self) -> AsyncSandbox:
        if self.sandbox is None:
            raise RuntimeError("the session is not open (use `async with hako.session(...)`)")
        return self.sandbox

    async def __aenter__(self) -> "Session":
        self.sandbox = await AsyncSandbox.create(**self._create)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.sandbox is not None:
            await self.sandbox.kill()
            self.sandbox = None

    async def run(self, cmd: Command, *, timeout: Optional[float] = 60, **kw: Any) -> CommandResult:
        """Run ``cmd``; the result whatever its exit code (``check=False``)."""
        res: CommandResult = await self._sb().commands.run(cmd, timeout=timeout, check=False, **kw)
        return res

    async def put_bytes(self, path: str, data: bytes) -> None:
        await self._sb().files.write(path, data)

    async def get_bytes(self, path: str) -> bytes:
        out: bytes = await self._sb().files.read(path, format="bytes")
        return out


def session(**create: Any) -> Session:
    """``async with hako.session(image=..., memory=...) as s:``; the
    arguments are AsyncSandbox.create's."""
    return Session(**create)
