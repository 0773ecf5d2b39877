"""The values the SDK returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

# A label is the annotation of this prefix (hako-run(8), --label).
LABEL_PREFIX = "io.hako.label."


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
    # What the command's processes used (None: not reported): CPU seconds in
    # user and kernel mode, and the peak resident set of its largest process
    # in bytes (hako-exec(8), JSON RESULT)
    user_cpu: Optional[float] = None
    system_cpu: Optional[float] = None
    peak_memory: Optional[int] = None
    error_kind: Optional[str] = None  # 126/127: not_found, permission or not_executable


@dataclass
class SandboxInfo:
    """A sandbox's state (``hako state``), with the raw object in ``raw``."""

    sandbox_id: str
    status: str
    pid: Optional[int]
    created: Optional[str]
    bundle: Optional[str]
    raw: Dict[str, Any] = field(default_factory=dict)
    metadata: Dict[str, str] = field(default_factory=dict)  # its labels (create's metadata=)

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
            metadata=labels_of(obj),
        )


def labels_of(obj: Dict[str, Any]) -> Dict[str, str]:
    """The labels in a state or list object: its annotations of LABEL_PREFIX."""
    labels = obj.get("labels")
    if isinstance(labels, dict):
        return {str(k): str(v) for k, v in labels.items()}
    ann = obj.get("annotations") or {}
    return {k[len(LABEL_PREFIX):]: str(v) for k, v in ann.items() if k.startswith(LABEL_PREFIX)}


@dataclass
class SandboxQuery:
    """``Sandbox.list(query=...)``: e2b's filter, by metadata and by state
    (``"running"``, ``"paused"``, ``"created"``, ``"stopped"``; any of them)."""

    metadata: Optional[Mapping[str, str]] = None
    state: Optional[Sequence[str]] = None


def list_filters(query: Union[SandboxQuery, Mapping[str, Any], None]) -> List[str]:
    """`hako list --filter` arguments for a query (one state: a filter of
    its own; several: left to the caller)."""
    if query is None:
        return []
    md = query.get("metadata") if isinstance(query, Mapping) else query.metadata
    out = []
    for k, v in (md or {}).items():
        out += ["--filter", f"label={k}={v}"]
    return out


@dataclass
class EntryInfo:
    """One entry of ``files.list``."""

    name: str
    path: str
    type: str  # "file", "dir", "symlink" or "other"


@dataclass(frozen=True)
class Secret:
    """A secret the sandbox never sees (``create(secrets={"NAME": Secret(...)})``):
    its environment's NAME holds a random placeholder, and hako's egress
    proxy puts the value in its place in requests to ``host`` (HOST or
    HOST:PORT, port 443 by default) over TLS it verified, and nowhere else.

    The value comes from exactly one of ``value`` (passed in hako's
    environment: a local transport only), ``env`` (a variable of hako's
    environment on the machine it runs on) or ``file`` (a file there).
    ``query``: also replace the placeholder in the URL's query string."""

    host: str
    value: Optional[str] = None
    env: Optional[str] = None
    file: Optional[str] = None
    query: bool = False
