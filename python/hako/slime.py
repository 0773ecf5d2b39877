"""slime's agent sandbox protocol on hako: ``async with HakoSandbox(...) as sb``,
``await sb.exec(cmd) -> (exit_code, stdout, stderr)``, ``write_file``, ``read_file``."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from hako._async import AsyncSandbox, Command
from hako._types import CommandResult


class HakoSandbox:
    def __init__(self, **create: Any) -> None:
        self._create = create
        self._sb: Optional[AsyncSandbox] = None

    async def start(self) -> None:
        if self._sb is None:
            self._sb = await AsyncSandbox.create(**self._create)

    async def close(self) -> None:
        if self._sb is not None:
            await self._sb.kill()
            self._sb = None

    @property
    def sandbox(self) -> AsyncSandbox:
        if self._sb is None:
            raise RuntimeError("HakoSandbox is not started (use `async with` or start())")
        return self._sb

    async def __aenter__(self) -> "HakoSandbox":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def exec(self, cmd: Command, timeout: Optional[float] = 60) -> Tuple[int, str, str]:
        res: CommandResult = await self.sandbox.commands.run(cmd, timeout=timeout, check=False)
        return res.exit_code, res.stdout, res.stderr

    async def write_file(self, path: str, content: Union[str, bytes]) -> None:
        await self.sandbox.files.write(path, content)

    async def read_file(self, path: str) -> str:
        out: str = await self.sandbox.files.read(path)
        return out
