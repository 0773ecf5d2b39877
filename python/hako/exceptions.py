"""The exceptions, where e2b code imports them from (``from e2b.exceptions
import TimeoutException`` becomes ``from hako.exceptions import ...``)."""

from hako._errors import (AdmissionException, AlreadyExistsException, BusyException, CommandExitException,
                          FileNotFoundException, InvalidArgumentException, NoSpaceException, NotEnoughSpaceException,
                          NotFoundException, NotRunningException, PermissionException, SandboxException,
                          SandboxNotFoundException, TimeoutException, UnsupportedException)

__all__ = ["AdmissionException", "AlreadyExistsException", "BusyException", "CommandExitException",
           "FileNotFoundException", "InvalidArgumentException", "NoSpaceException", "NotEnoughSpaceException",
           "NotFoundException", "NotRunningException", "PermissionException", "SandboxException",
           "SandboxNotFoundException", "TimeoutException", "UnsupportedException"]
