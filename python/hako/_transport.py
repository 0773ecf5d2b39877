"""How the SDK reaches the hako CLI: on this machine, or on another one over SSH."""

from __future__ import annotations

import os
import shlex
import shutil
from typing import List, Optional, Sequence

from hako._errors import InvalidArgumentException, NotFoundException


class Transport:
    """Builds the argv that runs ``hako ARGS...`` with the global options."""

    remote = False

    def __init__(self, hako: Optional[str] = None, root: Optional[str] = None,
                 data_root: Optional[str] = None) -> None:
        self.hako = hako or os.environ.get("HAKO") or "hako"
        self.root = root if root is not None else os.environ.get("HAKO_ROOT")
        self.data_root = data_root if data_root is not None else os.environ.get("HAKO_DATA_ROOT")

    def hako_argv(self, args: Sequence[str]) -> List[str]:
        argv = [self.hako, "--log-format", "json"]
        if self.root:
            argv += ["--root", self.root]
        if self.data_root:
            argv += ["--data-root", self.data_root]
        return argv + list(args)

    def argv(self, args: Sequence[str]) -> List[str]:
        return self.hako_argv(args)


class Local(Transport):
    """hako on this machine: the binary on PATH, ``hako=``, or $HAKO."""

    def __init__(self, hako: Optional[str] = None, root: Optional[str] = None,
                 data_root: Optional[str] = None) -> None:
        super().__init__(hako, root, data_root)
        found = shutil.which(self.hako)
        if found is None:
            raise NotFoundException(f"hako binary {self.hako!r} not found (give hako= or put it on PATH)")
        self.hako = found


class SSH(Transport):
    """hako on another machine, through the OpenSSH client (``ssh``).

    Authentication is ssh's (keys, agent, ~/.ssh/config); it never prompts
    (BatchMode).  Files stream over the channel's stdin and stdout."""

    remote = True

    def __init__(self, host: str, user: Optional[str] = None, port: int = 22, hako: str = "hako",
                 root: Optional[str] = None, data_root: Optional[str] = None,
                 ssh: str = "ssh", options: Sequence[str] = ()) -> None:
        super().__init__(hako, root, data_root)
        # ssh reads a destination that begins with "-" as an option of its
        # own ("-oProxyCommand=..." runs a command here): a host or user
        # name handed on from elsewhere must not become one.
        for what, value in (("host", host), ("user", user)):
            if value is not None and (not value or value.startswith("-")
                                      or any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in value)):
                raise InvalidArgumentException(f"SSH {what} {value!r}: not a {what} name (empty, "
                                               "begins with '-', or holds a space or a control character)")
        self.host = host
        self.user = user
        self.port = port
        self.ssh = ssh
        self.options = list(options)

    def ssh_argv(self, remote: Sequence[str]) -> List[str]:
        dest = f"{self.user}@{self.host}" if self.user else self.host
        return ([self.ssh, "-o", "BatchMode=yes", "-p", str(self.port)] + self.options
                + [dest, "--", shlex.join(list(remote))])

    def argv(self, args: Sequence[str]) -> List[str]:
        return self.ssh_argv(self.hako_argv(args))


# An SSH channel has no fd 3: the remote shell keeps exec's --status-fd in a
# file and sends it on stderr after a line holding only a fresh random nonce,
# which the command cannot know.  Its first stderr line is "NONCE PGID".
# The file is unlinked as soon as it is open (fd 3 to write, fd 4 to read
# back): a kill -KILL of the group (Command.kill) leaves nothing in /tmp.
SSH_STATUS_SCRIPT = (
    'printf "%s %s\\n" "$0" "$$" >&2; f=$(mktemp) || exit 125; '
    'exec 3>"$f" 4<"$f"; rm -f "$f"; '
    '"$@" 4<&-; rc=$?; exec 3>&-; printf "\\n%s\\n" "$0" >&2; cat <&4 >&2; exit $rc'
)
