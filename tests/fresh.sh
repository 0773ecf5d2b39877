#!/bin/sh
# Run the suite as on a machine that never ran podman, crun or util-linux's
# mount: in a private mount namespace, with /tmp, /var/tmp, /run and
# /dev/shm empty, holding only what a booted Debian 12 has there
# (/run/lock, /run/user, /run/shm -> /dev/shm).  What the suite's tools make
# on first use (/run/crun, /run/containers, /run/libpod, /run/mount,
# /dev/shm/libpod_lock) is then made during the run, as on a fresh machine;
# the host keeps none of it.  /run and /dev/shm are fresh tmpfs, as on a
# booted machine; /tmp and /var/tmp are empty directories of the root file
# system (Debian's /tmp is on disk: a test that tells disk from memory sees
# what it would), removed afterwards.
# Usage, from the build directory: tests/fresh.sh [COMMAND [ARG...]]
# (default: make check).
set -eu
[ "$(id -u)" = 0 ] || { echo "tests/fresh.sh: needs root (a mount namespace)" >&2; exit 2; }
[ $# -gt 0 ] || set -- make check
disk=$(mktemp -d /var/lib/hako-fresh.XXXXXX)
trap 'rm -rf "$disk"' EXIT
mkdir -m 1777 "$disk/tmp" "$disk/var-tmp"
status=0
unshare --mount --propagation private sh -euc '
  mount --bind "$1/tmp" /tmp
  mount --bind "$1/var-tmp" /var/tmp
  mount -t tmpfs -o mode=1777 tmpfs /dev/shm
  mount -t tmpfs -o mode=0755 tmpfs /run
  mkdir -m 1777 /run/lock
  mkdir -m 0755 /run/user
  ln -s /dev/shm /run/shm
  shift
  exec "$@"' sh "$disk" "$@" || status=$?
exit "$status"
