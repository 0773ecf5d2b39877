#!/bin/sh
# Run the suite as on a machine that never ran podman, crun or util-linux's
# mount: in a private mount namespace, with fresh tmpfs on /tmp, /var/tmp,
# /run and /dev/shm, holding only what a booted Debian 12 has there (/run/lock,
# /run/user, /run/shm -> /dev/shm).  What the suite's tools make on first use
# (/run/crun, /run/containers, /run/libpod, /run/mount, /dev/shm/libpod_lock)
# is then made during the run, as on a fresh machine; the host keeps none of
# it.  Usage, from the build directory: tests/fresh.sh [COMMAND [ARG...]]
# (default: make check).
set -eu
[ "$(id -u)" = 0 ] || { echo "tests/fresh.sh: needs root (a mount namespace)" >&2; exit 2; }
[ $# -gt 0 ] || set -- make check
exec unshare --mount --propagation private sh -euc '
  for d in /tmp /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777 tmpfs "$d"; done
  mount -t tmpfs -o mode=0755 tmpfs /run
  mkdir -m 1777 /run/lock
  mkdir -m 0755 /run/user
  ln -s /dev/shm /run/shm
  exec "$@"' sh "$@"
