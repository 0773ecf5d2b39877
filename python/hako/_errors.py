"""Exceptions, each mapped from one error kind of the hako CLI (hako(8), DIAGNOSTICS)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Type

if TYPE_CHECKING:
    from hako._types import CommandResult


class SandboxException(Exception):
    """Base of every error the SDK raises.  ``kind`` is the CLI's error kind."""

    kind: str = "internal"

    def __init__(self, message: str, *, kind: Optional[str] = None, verb: Optional[str] = None,
                 sandbox_id: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        self.verb = verb
        self.sandbox_id = sandbox_id


class NotFoundException(SandboxException):
    """No such sandbox, image, file, user or command (kind ``not_found``)."""

    kind = "not_found"


# e2b's names for a file and for a sandbox that are not there: the same
# exception here (kind not_found does not say which is missing).
FileNotFoundException = NotFoundException
SandboxNotFoundException = NotFoundException


class AlreadyExistsException(SandboxException):
    """The sandbox id (or a file) is taken (kind ``exists``)."""

    kind = "exists"


class NotRunningException(SandboxException):
    """The call needs a running sandbox (kind ``not_running``)."""

    kind = "not_running"


class InvalidArgumentException(SandboxException):
    """A bad argument or config (kinds ``invalid_argument``, ``invalid_config``)."""

    kind = "invalid_argument"


class UnsupportedException(SandboxException):
    """The host cannot enforce what was asked (kind ``unsupported``)."""

    kind = "unsupported"


class PermissionException(SandboxException):
    """Refused by the kernel or the trust policy (kind ``permission``)."""

    kind = "permission"


class BusyException(SandboxException):
    """Held by another call or sandbox (kind ``busy``)."""

    kind = "busy"


class AdmissionException(SandboxException):
    """The node's pool has no room (kind ``admission``)."""

    kind = "admission"


class NoSpaceException(SandboxException):
    """A disk or quota is full (kind ``no_space``)."""

    kind = "no_space"


# e2b's name for it.
NotEnoughSpaceException = NoSpaceException


class TimeoutException(SandboxException):
    """A deadline passed (kind ``timeout``), or a command's ``timeout``
    killed it (``result`` holds what it wrote)."""

    kind = "timeout"

    def __init__(self, message: str, *, result: Optional[CommandResult] = None, **kw: Optional[str]) -> None:
        super().__init__(message, **kw)
        self.result = result


class CommandExitException(SandboxException):
    """A command exited non-zero (``check=True``, the default)."""

    kind = "command_exit"

    def __init__(self, result: CommandResult) -> None:
        super().__init__(f"command exited with code {result.exit_code}"
                         + (f" ({result.reason})" if result.reason != "exited" else ""))
        self.result = result
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.error = result.error


KINDS: Dict[str, Type[SandboxException]] = {
    "not_found": NotFoundException,
    "exists": AlreadyExistsException,
    "not_running": NotRunningException,
    "invalid_config": InvalidArgumentException,
    "invalid_argument": InvalidArgumentException,
    "unsupported": UnsupportedException,
    "permission": PermissionException,
    "busy": BusyException,
    "admission": AdmissionException,
    "no_space": NoSpaceException,
    "timeout": TimeoutException,
    "internal": SandboxException,
}


def from_kind(kind: str, message: str, *, verb: Optional[str] = None,
              sandbox_id: Optional[str] = None) -> SandboxException:
    """The exception for a CLI error kind; an unknown (newer) kind is a plain SandboxException."""
    cls = KINDS.get(kind, SandboxException)
    if cls is TimeoutException:
        return TimeoutException(message, kind=kind, verb=verb, sandbox_id=sandbox_id)
    return cls(message, kind=kind, verb=verb, sandbox_id=sandbox_id)
