"""hako: e2b-style sandboxes on the hako CLI, sync (Sandbox) and async (AsyncSandbox)."""

from hako._async import DEFAULT_LIFETIME, AsyncSandbox
from hako._errors import (AdmissionException, AlreadyExistsException, BusyException, CommandExitException,
                          InvalidArgumentException, NoSpaceException, NotFoundException, NotRunningException,
                          PermissionException, SandboxException, TimeoutException, UnsupportedException)
from hako._metrics import SandboxMetrics
from hako._procs import AsyncCommandHandle, AsyncPty, ProcessInfo, PtySize
from hako._sync import CommandHandle, Pty, Sandbox
from hako._pool import AsyncSandboxPool, SandboxPool
from hako._transport import SSH, Local, Transport
from hako._types import CommandResult, EntryInfo, SandboxInfo, SandboxList, SandboxQuery, Secret
from hako.session import Session, session

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_LIFETIME", "AdmissionException", "AlreadyExistsException", "AsyncCommandHandle", "AsyncPty", "AsyncSandbox",
    "AsyncSandboxPool", "BusyException",
    "CommandExitException", "CommandHandle", "CommandResult", "EntryInfo", "InvalidArgumentException", "Local",
    "NoSpaceException", "NotFoundException", "NotRunningException", "PermissionException", "ProcessInfo", "Pty",
    "PtySize", "SSH", "Sandbox", "SandboxPool",
    "SandboxException", "SandboxInfo", "SandboxList", "SandboxMetrics", "SandboxQuery", "Secret", "Session", "TimeoutException", "Transport", "UnsupportedException",
    "session",
]

# The files API beyond read and write (hako-fs(8)), with e2b's names.
from hako._errors import FileNotFoundException  # noqa: E402
from hako._files import AsyncFileStreamReader, AsyncWatchHandle  # noqa: E402
from hako._sync import FileStreamReader, WatchHandle  # noqa: E402
from hako._types import FilesystemEvent, FilesystemEventType, FileType, WriteEntry, WriteInfo  # noqa: E402

__all__ += ["AsyncFileStreamReader", "AsyncWatchHandle", "FileNotFoundException", "FileStreamReader", "FileType",
            "FilesystemEvent", "FilesystemEventType", "WatchHandle", "WriteEntry", "WriteInfo"]

# e2b's other names: its sandbox states, its paginator, its exceptions.
from hako._errors import NotEnoughSpaceException, SandboxNotFoundException  # noqa: E402
from hako._types import SandboxState  # noqa: E402

SandboxPaginator = SandboxList

__all__ += ["NotEnoughSpaceException", "SandboxNotFoundException", "SandboxPaginator", "SandboxState"]
