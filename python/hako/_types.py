"""The values the SDK returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, TypedDict, Union

from hako._errors import InvalidArgumentException

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
    started_at: Optional[datetime] = None  # when its process started (e2b's started_at), UTC
    # Its deadline (e2b's end_at; create's timeout, set_timeout): None when it
    # has none, or once it has stopped
    end_at: Optional[datetime] = None

    @property
    def state(self) -> str:
        """e2b's name for ``status``."""
        return self.status

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
            started_at=parse_time(obj.get("started")),
            end_at=parse_time(obj.get("deadline")),
        )


def parse_time(text: Any) -> Optional[datetime]:
    """hako's RFC 3339 UTC times (``2026-12-07T15:08:52.308662011Z``), to the
    microsecond; None for anything else."""
    if not isinstance(text, str) or not text.endswith("Z"):
        return None
    whole, _, frac = text[:-1].partition(".")
    try:
        t = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    micros = int((frac + "000000")[:6]) if frac.isdigit() else 0
    return t.replace(microsecond=micros, tzinfo=timezone.utc)


class SandboxState(str, Enum):
    """A sandbox's state: e2b's ``RUNNING`` and ``PAUSED``, and hako's
    ``CREATED`` and ``STOPPED`` (a str, so ``info.state == "running"`` and
    ``info.state == SandboxState.RUNNING`` both hold)."""

    RUNNING = "running"
    PAUSED = "paused"
    CREATED = "created"
    STOPPED = "stopped"


class SandboxList(List[SandboxInfo]):
    """``Sandbox.list()``'s answer: a list, and e2b's paginator over it
    (``has_next``, ``next_token``, ``next_items()``).  Without ``limit`` it
    is one page, the whole list; with it, pages of ``limit`` sandboxes, and
    ``next_token`` (e2b's cursor: here the position in the list) starts
    another ``Sandbox.list`` where this page ended."""

    def __init__(self, items: Iterable[SandboxInfo] = (), *, limit: Optional[int] = None,
                 next_token: Optional[str] = None) -> None:
        super().__init__(items)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidArgumentException(f"limit {limit!r}: must be a positive number")
        if next_token is not None and not (next_token.isdigit() and int(next_token) <= len(self)):
            raise InvalidArgumentException(f"next_token {next_token!r}: not a token of this list")
        self._limit = limit
        self._pos = int(next_token) if next_token else 0
        self._taken = False

    @property
    def has_next(self) -> bool:
        """True until the last page has been taken (before the first, always)."""
        return not self._taken or self._pos < len(self)

    @property
    def next_token(self) -> Optional[str]:
        """Where the next page starts; None when there is none."""
        return str(self._pos) if self._taken and self._pos < len(self) else None

    def next_items(self) -> List[SandboxInfo]:
        """The next page (all of the list without ``limit``); after the last
        page, an empty list."""
        end = len(self) if self._limit is None else self._pos + self._limit
        page = list(self[self._pos:end])
        self._pos = min(end, len(self))
        self._taken = True
        return page


def labels_of(obj: Dict[str, Any]) -> Dict[str, str]:
    """The labels in a state or list object: its annotations of LABEL_PREFIX."""
    labels = obj.get("labels")
    if isinstance(labels, dict):
        return {str(k): str(v) for k, v in labels.items()}
    ann = obj.get("annotations") or {}
    return {k[len(LABEL_PREFIX):]: str(v) for k, v in ann.items() if k.startswith(LABEL_PREFIX)}


@dataclass
class SandboxQuery:
    """``Sandbox.list(query=...)``: e2b's filter, by metadata, by state
    (``"running"``, ``"paused"``, ``"created"``, ``"stopped"``; any of them)
    and by start time; e2b's ``template`` is not kept by hako's list."""

    metadata: Optional[Mapping[str, str]] = None
    state: Optional[Sequence[str]] = None
    # e2b's: those started at or after this time (naive: local time)
    started_after: Optional[datetime] = None


def query_keeps(query: Union[SandboxQuery, Mapping[str, Any], None], info: SandboxInfo) -> bool:
    """What the query asks that ``hako list --filter`` cannot: several
    states (any of them), a start time."""
    if query is None:
        return True
    get = query.get if isinstance(query, Mapping) else lambda k: getattr(query, k, None)
    states = get("state")
    if isinstance(states, str):
        states = [states]
    if states and info.status not in states:
        return False
    after = get("started_after")
    if isinstance(after, datetime):
        return info.started_at is not None and info.started_at >= after.astimezone(timezone.utc)
    return True


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


class FileType(str, Enum):
    """What an entry is (e2b's FileType; a str, so ``entry.type == "dir"`` holds too)."""

    FILE = "file"
    DIR = "dir"
    SYMLINK = "symlink"  # a link that leads nowhere (one that does has its target's type)


@dataclass
class WriteInfo:
    """A file ``files.write`` wrote."""

    name: str
    type: Optional[FileType]
    path: str


@dataclass
class EntryInfo(WriteInfo):
    """One file, directory or link (``files.get_info``, ``files.list``; hako-fs(8), JSON).

    As e2b's: a symlink has the type of what it leads to and ``symlink_target``
    its absolute path inside the sandbox; ``size``, ``mode``, owners and
    ``modified_time`` are the entry's own (lstat).  ``type`` is None for a
    fifo, socket or device (``list`` leaves those out, as e2b's does)."""

    size: int
    mode: int  # permission bits, with set-id and sticky (0o7777)
    permissions: str  # as ls -l: "-rw-r--r--"
    owner: str  # a name from the sandbox's /etc/passwd, else the number
    group: str
    modified_time: datetime
    symlink_target: Optional[str] = None
    uid: int = 0
    gid: int = 0

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "EntryInfo":
        kind = str(obj.get("type"))
        target: Optional[str] = None
        if kind == "symlink":
            target = obj.get("resolved_path") or obj.get("symlink_target")
            kind = str(obj.get("resolved_type") or kind)
        ns = int(obj.get("mtime_ns", 0))
        when = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=ns // 1000)
        uid, gid = int(obj.get("uid", 0)), int(obj.get("gid", 0))
        return cls(name=str(obj["name"]), type=FileType(kind) if kind in _FILE_TYPES else None,
                   path=str(obj["path"]), size=int(obj.get("size", 0)), mode=int(obj.get("mode", 0)),
                   permissions=str(obj.get("permissions", "")), owner=str(obj.get("owner") or uid),
                   group=str(obj.get("group") or gid), modified_time=when, symlink_target=target,
                   uid=uid, gid=gid)


_FILE_TYPES = {t.value for t in FileType}


class WriteEntry(TypedDict):
    """One file of ``files.write([...])`` / ``files.write_files([...])``:
    ``WriteEntry(path="/work/a", data="...")``, or a plain dict."""

    path: str
    data: Any  # str, bytes, a local path (os.PathLike) or a file object


class FilesystemEventType(str, Enum):
    """What happened to an entry of a watched directory (e2b's)."""

    CHMOD = "chmod"
    CREATE = "create"
    REMOVE = "remove"
    RENAME = "rename"
    WRITE = "write"


@dataclass
class FilesystemEvent:
    """One change in a watched directory: ``name`` is relative to it."""

    name: str
    type: FilesystemEventType


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
