#!/bin/sh
# tests/bench/parallel.sh: sandboxes per second with 8 concurrent
# `run /bin/true`, side by side, in one run.
#
# JOBS workers (default 8) each run PER sandboxes (default 10) one after the
# other, every sandbox with its own id, on the busybox bundle
# (tests/fixtures/make-bundle.sh), all state on one tmpfs:
#   hako   $HAKO --root R --data-root D run --rm --bundle B IDn
#   runc   runc --root R run -b B IDn (then delete)
#   crun   crun --root R run -b B IDn (on a hybrid-cgroup host in a private
#          mount namespace without /sys/fs/cgroup/unified, as run.sh)
#   bwrap  bwrap --unshare-{pid,net,ipc,uts,cgroup} --bind ROOTFS / ... /bin/true
# The figure is JOBS*PER over the wall time from the first start to the last
# end.  Where they contend: hako's state root lock is taken per sandbox only
# (store.c, one lock file per id), the shared hako-HASH cgroup parent is
# made and removed under a lock per hierarchy (cgroup.c), and the kernel's
# cgroup migrations (one RCU grace period per v1 cgroup.procs write) and
# namespace creation (the net namespace above all) are serialised inside
# the kernel for every runtime alike.
#
# Environment: HAKO, JOBS, PER, BENCH_FORMAT (`lines`: `BENCH parallel TOOL
# VALUE sbx/s [NOTE]`).  Needs root.
set -u
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
only=""
[ "${1:-}" = --only ] && only=$2
JOBS=${JOBS:-8}
PER=${PER:-10}
HAKO=${HAKO:-$here/../../hako}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
emit () { printf 'BENCH %s\n' "$*" >&3; }
[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-par.XXXXXX) || exit 1
chmod 711 "$tmp"
state=$tmp/state
mkdir -p "$state" && mount -t tmpfs -o size=128m,mode=700 hako-par "$state" || exit 1
cleanup () {
  trap - EXIT INT TERM
  for id in $("$HAKO" --root "$state/hako" list -q 2> /dev/null); do
    "$HAKO" --root "$state/hako" --data-root "$state/data" delete --force "$id" > /dev/null 2>&1
  done
  for rt in runc crun; do
    command -v $rt > /dev/null || continue
    for id in $($rt --root "$state/$rt" list -q 2> /dev/null); do
      $rt --root "$state/$rt" delete --force "$id" > /dev/null 2>&1
    done
  done
  umount "$state" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
"$here/../fixtures/make-bundle.sh" "$tmp/bundle" runc > /dev/null || exit 1
bundle=$tmp/bundle

# worker TOOL W: PER sandboxes of TOOL, ids par-W-N.
worker () {
  n=0
  while [ $n -lt "$PER" ]; do
    id=par-$2-$n
    case $1 in
      hako) "$HAKO" --root "$state/hako" --data-root "$state/data" run --rm --bundle "$bundle" "$id" ;;
      runc | crun) $1 --root "$state/$1" run -b "$bundle" "$id" ;;
      bwrap) bwrap --unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup \
        --bind "$bundle/rootfs" / --proc /proc --dev /dev /bin/true ;;
    esac > /dev/null 2>> "$tmp/$1.err" || { echo x >> "$tmp/$1.failed"; }
    n=$((n + 1))
  done
}

# measure TOOL: all workers at once; prints sandboxes per second.
measure () {
  rm -f "$tmp/$1.failed"
  t0=$(date +%s%N)
  w=0
  while [ $w -lt "$JOBS" ]; do
    worker "$1" $w &
    w=$((w + 1))
  done
  wait
  t1=$(date +%s%N)
  [ -e "$tmp/$1.failed" ] && return 1
  echo "$JOBS $PER $t0 $t1" | awk '{ printf "%.1f", $1 * $2 / (($4 - $3) / 1e9) }'
}

hybrid=false
[ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ] && hybrid=true
for tool in ${only:-hako crun runc bwrap}; do
  if [ $tool != hako ] && ! command -v $tool > /dev/null; then
    emit parallel $tool - - "n/a (not installed)"
    continue
  fi
  note=""
  if [ $tool = crun ] && $hybrid && [ -z "$only" ]; then
    # crun 1.8.1 refuses hybrid cgroups: the whole measurement in a mount
    # namespace without the cgroup2 mount (set up once, outside the timing).
    v=$(unshare --mount --propagation private -- sh -c 'umount /sys/fs/cgroup/unified && BENCH_FORMAT= exec sh "$0" --only crun' \
      "$self" 2>> "$tmp/crun.err" | sed -n 's/^parallel .* crun: \([0-9.]*\) sandboxes.*/\1/p')
    note="(hybrid cgroups: private mount ns without /sys/fs/cgroup/unified)"
  elif v=$(measure $tool); then :; else v=""; fi
  if [ -n "$v" ]; then
    echo "parallel ($JOBS x $PER) $tool: $v sandboxes/s $note"
    emit parallel $tool "$v" sbx/s $note
  else
    echo "parallel $tool: failed: $(tail -n 2 "$tmp/$tool.err" 2> /dev/null)"
    emit parallel $tool - - "failed"
  fi
done
