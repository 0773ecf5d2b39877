"""files.download's host side: the tar stream ``hako cp ID:PATH -`` sends,
unpacked into the caller's directory by the SDK itself, on both transports.

The stream is the sandbox's to choose (its names, its symlinks, their order),
and so is the destination's content once a download has been made there: a
first download leaves the sandbox's symlink ``dest/a/x -> /root/.ssh``, and a
path-based write of a second one's ``a/x/authorized_keys`` lands in
/root/.ssh.  So nothing here is written through a path: the destination is
opened once, and every name beneath it is resolved one component at a time
under the directory fd of the one before, with O_NOFOLLOW (a symlink met on
the way is an error, never followed), and made with O_EXCL (never opened as
it was found).  The tree is unpacked into a fresh directory of the SDK's in
the destination and moved to its names (merged into a directory already
there) only once the whole stream has been read and hako has exited 0, so a
download that fails (hako's error, a refused entry, a cut stream, a
cancellation) leaves nothing.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tarfile
from typing import IO, List, Optional, Tuple

from hako._errors import SandboxException
from hako._proc import CHUNK

# A directory beneath one already open, never through a symlink.
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A new file: made here (O_EXCL also refuses a dangling symlink at the name).
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

TMP_PREFIX = ".hako-download."
# A directory of the stream: its path, mode and time, and the (st_dev,
# st_ino) of the one made for it.
Dir = Tuple[List[str], int, int, Tuple[int, int]]
# Read and written 1 MiB at a time: tarfile's default 10 KiB records made a
# download twice as slow as hako cp's own unpacking.
_BUF = 1 << 20


def _refused(name: str, why: str) -> SandboxException:
    return SandboxException(f"download: refused tar member {name!r}: {why}")


def _parts(name: str) -> List[str]:
    """NAME's components below the destination; "" and "." dropped."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts:
        raise _refused(name, "an absolute path or a .. component")
    return parts


def _open_dir(parent: int, name: str, member: str, make: bool) -> int:
    """The directory NAME under the fd PARENT (made 0700 if missing and MAKE)."""
    for _ in range(2):
        try:
            return os.open(name, _DIR, dir_fd=parent)
        except FileNotFoundError:
            if not make:
                raise
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _refused(member, f"{name!r} on its path is not a directory") from None
            raise
    raise _refused(member, f"{name!r} on its path keeps changing")


def _parent(top: int, parts: List[str], member: str, make: bool = True) -> int:
    """A new fd of the directory that holds PARTS[-1], below TOP."""
    fd = os.dup(top)
    try:
        for p in parts[:-1]:
            nfd = _open_dir(fd, p, member, make)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _make_file(parent: int, name: str, src: Optional[IO[bytes]], m: tarfile.TarInfo) -> None:
    try:
        fd = os.open(name, _NEW, 0o600, dir_fd=parent)
    except FileExistsError:  # the stream named it twice: the last one wins
        _unlink_nondir(parent, name, m.name)
        fd = os.open(name, _NEW, 0o600, dir_fd=parent)
    try:
        while src is not None:
            chunk = src.read(_BUF)
            if not chunk:
                break
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        # The caller owns what is made; set-user-ID and set-group-ID bits
        # are dropped, as hako cp drops them (a sandbox's setuid file would
        # otherwise be one of the caller's).
        os.fchmod(fd, m.mode & 0o777)
        os.utime(fd, (m.mtime, m.mtime))
    finally:
        os.close(fd)


def _unlink_nondir(parent: int, name: str, member: str) -> None:
    try:
        os.unlink(name, dir_fd=parent)
    except IsADirectoryError:
        raise _refused(member, "a directory of the same name came before it") from None


def _member(top: int, tf: "tarfile.TarFile", m: tarfile.TarInfo, dirs: List[Dir]) -> None:
    """Make the member M below the fd TOP; a directory's mode waits in DIRS."""
    parts = _parts(m.name)
    if not parts:  # "./": the source's own directory (a copy of PATH/.)
        return
    if not (m.isdir() or m.isreg() or m.issym()):
        raise _refused(m.name, "not a directory, regular file or symlink")
    parent = _parent(top, parts, m.name)
    name = parts[-1]
    try:
        if m.isdir():
            fd = _open_dir(parent, name, m.name, make=True)
            st = os.fstat(fd)
            os.close(fd)
            dirs.append((parts, m.mode & 0o1777, int(m.mtime), (st.st_dev, st.st_ino)))
        elif m.isreg():
            _make_file(parent, name, tf.extractfile(m), m)
        else:
            try:
                os.symlink(m.linkname, name, dir_fd=parent)
            except FileExistsError:
                _unlink_nondir(parent, name, m.name)
                os.symlink(m.linkname, name, dir_fd=parent)
            os.utime(name, (m.mtime, m.mtime), dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)


def _set_dirs(top: int, dirs: List[Dir]) -> None:
    """Each directory's mode and time, once everything is in place, deepest
    first: a 0500 directory (a caller who is not root could not have put
    anything in it, nor moved it) is made so only once nothing more goes in.

    Only a directory this download made is changed, known by its inode: a
    directory it merged into keeps its own mode, and one swapped in under
    the name (the sandbox's rename of a root-only directory beside it, where
    it can write the destination) is not made the stream's 0777."""
    for parts, mode, mtime, made in sorted(dirs, key=lambda d: -len(d[0])):
        name = "/".join(parts)
        try:
            parent = _parent(top, parts, name, make=False)
            try:
                fd = _open_dir(parent, parts[-1], name, make=False)
            finally:
                os.close(parent)
        except (FileNotFoundError, SandboxException):  # no longer there, or not a directory
            continue
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == made:
                os.fchmod(fd, mode)
                os.utime(fd, (mtime, mtime))
        finally:
            os.close(fd)


def _is_dir(parent: int, name: str) -> Optional[bool]:
    """Whether NAME under PARENT is a directory (a symlink is not); None if absent."""
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None


def _swappable(parent: int, child: int) -> bool:
    """Whether someone but the caller could have renamed the directory CHILD
    into its place in PARENT (both fds): PARENT is another user's, or others
    may write it and its sticky bit does not keep them off CHILD."""
    me = os.geteuid()
    p, c = os.fstat(parent), os.fstat(child)
    if p.st_uid != me:
        return True
    if not p.st_mode & 0o022:
        return False
    return not (p.st_mode & stat.S_ISVTX and c.st_uid == me)


def _refuse_merge(where: str) -> SandboxException:
    # A sandbox that can write the destination (a bind) could rename a
    # directory beside it that it may not write (root's 0700 one) to the
    # name the download takes: a merge would fill that directory for it.
    return SandboxException(f"download: {where} exists in a directory others can write: not merged into")


def _conflict(new: int, old: int, where: str) -> Optional[SandboxException]:
    """Why the tree NEW cannot be merged into OLD (a directory would be
    replaced by a file, which hako cp never does, or merged into where
    another user could have put it), checked before anything moves."""
    for name in sorted(os.listdir(new)):
        if not _is_dir(old, name):
            continue
        if not _is_dir(new, name):
            return SandboxException(f"download: {where + name} is a directory: not replaced by a file")
        n, o = os.open(name, _DIR, dir_fd=new), os.open(name, _DIR, dir_fd=old)
        try:
            found = _refuse_merge(where + name) if _swappable(old, o) else _conflict(n, o, where + name + "/")
        finally:
            os.close(n)
            os.close(o)
        if found:
            return found
    return None


def _merge(new: int, old: int, where: str) -> None:
    """Move every entry of the directory NEW into OLD: one that is a
    directory on both sides is merged into the old one, anything else takes
    the name (a file or a symlink there is replaced, never written through)."""
    for name in sorted(os.listdir(new)):
        was, now = _is_dir(old, name), _is_dir(new, name)
        if was and now:
            n, o = os.open(name, _DIR, dir_fd=new), os.open(name, _DIR, dir_fd=old)
            try:
                if _swappable(old, o):  # again, on the directory it would write in
                    raise _refuse_merge(where + name)
                _merge(n, o, where + name + "/")
            finally:
                os.close(n)
                os.close(o)
            os.rmdir(name, dir_fd=new)
            continue
        if was is False and now:  # rename(2) puts a directory only on a free name
            os.unlink(name, dir_fd=old)
        os.rename(name, name, src_dir_fd=new, dst_dir_fd=old)


def _remove(parent: int, name: str) -> None:
    """Remove the tree NAME under PARENT, without following a symlink in it."""
    try:
        fd = os.open(name, _DIR, dir_fd=parent)
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        os.unlink(name, dir_fd=parent)
        return
    try:
        _clear(fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _clear(fd: int) -> None:
    """Remove everything in the directory FD."""
    os.fchmod(fd, 0o700)
    for n in os.listdir(fd):
        _remove(fd, n)


class Unpacked:
    """A tree from a tar stream in a fresh directory of the SDK's inside
    LOCAL_DIR (made if missing): ``read`` it, then ``commit`` it (once hako
    has said the stream is whole) or ``discard`` it.

    LOCAL_DIR itself is the caller's path and resolved as given; nothing
    beneath it is ever reached through a symlink."""

    def __init__(self, local_dir: str) -> None:
        self.local_dir = local_dir
        os.makedirs(local_dir, exist_ok=True)
        self._dest = os.open(local_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._tmp_name = TMP_PREFIX + secrets.token_hex(8)
        self._tmp = -1
        self._dirs: List[Dir] = []
        try:
            os.mkdir(self._tmp_name, 0o700, dir_fd=self._dest)
            self._tmp = os.open(self._tmp_name, _DIR, dir_fd=self._dest)
        except BaseException:
            self.discard()
            raise

    def read(self, f: IO[bytes]) -> None:
        """Unpack the stream F; on an error, F is read to its end all the
        same (its writer runs to its own end and says why, if it failed)."""
        try:
            with tarfile.open(fileobj=f, mode="r|", bufsize=_BUF) as tf:
                for m in tf:
                    _member(self._tmp, tf, m, self._dirs)
        except BaseException as e:
            while f.read(CHUNK):
                pass
            if isinstance(e, OSError):
                raise SandboxException(f"download into {self.local_dir}: {e}") from e
            raise

    def commit(self) -> None:
        """Move the tree to its names in LOCAL_DIR (merged into a directory
        already there, which keeps its mode), or raise and move nothing if
        that would replace a directory by a file."""
        try:
            where = os.path.join(self.local_dir, "")
            clash = _conflict(self._tmp, self._dest, where)
            if clash:
                raise clash
            _merge(self._tmp, self._dest, where)
            # The same names, now beneath the destination (_merge keeps them).
            _set_dirs(self._dest, self._dirs)
        except OSError as e:  # a name changed under it (where the sandbox can write the destination)
            raise SandboxException(f"download into {self.local_dir}: {e}") from e
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove what is left of the tree (all of it before a commit)."""
        if self._tmp >= 0:
            try:
                _clear(self._tmp)  # through its fd: what is in it is the SDK's
            finally:
                os.close(self._tmp)
                self._tmp = -1
        if self._dest >= 0:
            # By name, but only once empty: where the sandbox can write the
            # destination, it may have renamed root's directory to this name,
            # which a removal of the tree by name would delete for it.
            try:
                os.rmdir(self._tmp_name, dir_fd=self._dest)
            except OSError:
                pass
            finally:
                os.close(self._dest)
                self._dest = -1


def unpack(f: IO[bytes], local_dir: str) -> None:
    """Unpack the whole tar stream F into LOCAL_DIR, as Unpacked does."""
    u = Unpacked(local_dir)
    try:
        u.read(f)
    except BaseException:
        u.discard()
        raise
    u.commit()
