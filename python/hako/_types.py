"""The values the SDK returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional


@dataclass
class CommandResult:
    """How a command ended and what it wrote (hako-exec(8), JSON RESULT)."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    # exited, signaled, timeout, oom, sandbox_timeout, stopped, deleted, killed
    reason: str = "exited"
    duration: float = 0.0  # seconds
    signal: Optional[int] = None
    pid: Optional[int] = None  # the command's pid as the host sees it
    error: Optional[str] = None  # why it could not be executed (126, 127)
    # processes of the sandbox the OOM killer took while it ran (None: no counter)
    oom_kills: Optional[int] = None
    warning: Optional[str] = None  # hako's own diagnostic, never in stderr


@dataclass
class SandboxInfo:
    """A sandbox's state (``hako state``), with the raw object in ``raw``."""

    sandbox_id: str
    status: str
    pid: Optional[int]
    created: Optional[str]
    bundle: Optional[str]
    raw: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_state(cls, obj: Dict[str, Any]) -> "SandboxInfo":
        pid = obj.get("pid")
        return cls(
            sandbox_id=str(obj.get("id", "")),
            status=str(obj.get("status", "")),
            pid=int(pid) if isinstance(pid, int) and pid > 0 else None,
            created=obj.get("created"),
            bundle=obj.get("bundle"),
            raw=obj,
        )


@dataclass
class EntryInfo:
    """One entry of ``files.list``."""

    name: str
    path: str
    type: str  # "file", "dir", "symlink" or "other"
