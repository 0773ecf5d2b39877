"""hako: e2b-style sandboxes on the hako CLI, sync (Sandbox) and async (AsyncSandbox)."""

from hako._async import DEFAULT_LIFETIME, AsyncCommandHandle, AsyncSandbox
from hako._errors import (AdmissionException, AlreadyExistsException, BusyException, CommandExitException,
                          InvalidArgumentException, NoSpaceException, NotFoundException, NotRunningException,
                          PermissionException, SandboxException, TimeoutException, UnsupportedException)
from hako._sync import CommandHandle, Sandbox
from hako._transport import SSH, Local, Transport
from hako._types import CommandResult, EntryInfo, SandboxInfo, SandboxQuery, Secret
from hako.session import Session, session

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_LIFETIME", "AdmissionException", "AlreadyExistsException", "AsyncCommandHandle", "AsyncSandbox", "BusyException",
    "CommandExitException", "CommandHandle", "CommandResult", "EntryInfo", "InvalidArgumentException", "Local",
    "NoSpaceException", "NotFoundException", "NotRunningException", "PermissionException", "SSH", "Sandbox",
    "SandboxException", "SandboxInfo", "SandboxQuery", "Secret", "Session", "TimeoutException", "Transport", "UnsupportedException",
    "session",
]
