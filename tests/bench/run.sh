#!/bin/sh
# tests/bench/run.sh: start-up cost of one sandbox, side by side, in one run.
#
# On one busybox bundle (tests/fixtures/make-bundle.sh: `runc spec` with
# "terminal": false and args ["/bin/true"]) this times, with hyperfine,
#   hako   $HAKO --root R --data-root D run --rm --bundle B ID
#   crun   crun --root R run -b B ID
#   runc   runc --root R run -b B ID
#   bwrap  bwrap --unshare-{pid,net,ipc,uts,cgroup} --bind ROOTFS / --proc /proc
#                --dev /dev /bin/true
# — every one with new pid, net, ipc, uts, mount and cgroup namespaces — and
# prints each median and its ratio to hako's.  A runtime that is not installed
# is reported as skipped; one that fails is reported as failed (with its
# error) and the others are still measured.
#
# Environment: HAKO (the hako binary; default ../../hako from here, then
# `hako` in PATH), RUNS (default 30), WARMUP (default 3), BENCH_OUT (a
# directory to keep hyperfine's JSON exports in; by default they are removed
# with the rest of the temporary directory).
#
# Debian 12's crun 1.8.1 refuses a hybrid cgroup layout ("cgroups in hybrid
# mode not supported").  When crun fails on its own and /sys/fs/cgroup/unified
# is a cgroup2 mount, crun's whole measurement runs in a private mount
# namespace where that mount is gone (unshare -m; umount): the workaround is
# set up once, outside the timed command.
#
# Needs root: the bundle is a rootful one.
set -u

here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}

if [ -z "${HAKO:-}" ]; then
  if [ -x "$here/../../hako" ]; then
    HAKO=$here/../../hako
  else
    HAKO=$(command -v hako || true)
  fi
fi

say () { printf '%s\n' "$*"; }
die () { say "bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (the runtimes build rootful sandboxes)"
command -v hyperfine > /dev/null || die "hyperfine not found: apt-get install hyperfine"

tmp=$(mktemp -d /tmp/hako-bench.XXXXXX) || die "mktemp failed"
bundle=$tmp/bundle
# Every runtime keeps its state on a tmpfs, as under its default root (/run):
# a disk-backed state dir would time the disk, not the runtime.
state=$tmp/state
mkdir -p "$state" && mount -t tmpfs -o size=64m,mode=700 hako-bench "$state" ||
  die "cannot mount a tmpfs for the state roots"
hako_root=$state/hako-root
hako_data=$tmp/hako-data
results=$tmp/results      # one line per runtime: NAME STATUS MEDIAN_S NOTE
: > "$results"

# ---- cleanup ---------------------------------------------------------------

crun_wrapped=false

# in_env NAME CMD...: run CMD where runtime NAME can work (see crun above).
in_env () {
  name=$1
  shift
  if [ "$name" = crun ] && $crun_wrapped; then
    unshare --mount --propagation private -- \
      sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' sh "$@"
  else
    "$@"
  fi
}

cleanup () {
  trap - EXIT INT TERM
  # Whatever a failed iteration left: containers first, then the files.
  if [ -n "$HAKO" ] && [ -x "$HAKO" ] && [ -d "$hako_root" ]; then
    for id in $("$HAKO" --root "$hako_root" list -q 2> /dev/null); do
      "$HAKO" --root "$hako_root" --data-root "$hako_data" delete --force "$id" > /dev/null 2>&1
    done
  fi
  for rt in runc crun; do
    [ -d "$state/$rt-root" ] || continue
    for id in $(in_env "$rt" "$rt" --root "$state/$rt-root" list -q 2> /dev/null); do
      in_env "$rt" "$rt" --root "$state/$rt-root" delete --force "$id" > /dev/null 2>&1
    done
  done
  if [ -n "${BENCH_OUT:-}" ] && ls "$tmp"/*.json > /dev/null 2>&1; then
    mkdir -p "$BENCH_OUT" && cp "$tmp"/*.json "$BENCH_OUT"/ && say "hyperfine JSON kept in $BENCH_OUT"
  fi
  umount "$state" 2> /dev/null
  # Never recurse into something still mounted.
  if awk -v t="$tmp" 'index($5, t) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    say "bench: mounts remain under $tmp; left in place" >&2
  else
    rm -rf --one-file-system "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the bundle ------------------------------------------------------------

if ! command -v runc > /dev/null; then
  die "runc not found: the shared bundle's config.json comes from \`runc spec\` (apt-get install runc)"
fi
"$here/../fixtures/make-bundle.sh" "$bundle" runc /bin/true || die "could not build the bundle"

# ---- measuring -------------------------------------------------------------

# median_of FILE: hyperfine's median (seconds) from its JSON export.
median_of () {
  sed -n 's/^[[:space:]]*"median":[[:space:]]*\([-+0-9.eE]*\),\{0,1\}[[:space:]]*$/\1/p' "$1" | head -n 1
}

# record NAME STATUS MEDIAN NOTE...
record () {
  name=$1 status=$2 median=$3
  shift 3
  say "$name $status $median $*" >> "$results"
}

# trial NAME CMD...: one untimed run; on failure record it with its error.
trial () {
  name=$1
  shift
  in_env "$name" "$@" > "$tmp/$name.trial" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && return 0
  msg=$(grep -v '^[[:space:]]*$' "$tmp/$name.trial" | head -n 1)
  record "$name" failed - "exit $rc${msg:+: $msg}"
  return 1
}

# measure NAME COMMAND-LINE: hyperfine it (no shell: the line is split by
# hyperfine itself) and record the median.
measure () {
  name=$1 line=$2
  json=$tmp/$name.json
  say ""
  say "== $name: $line"
  if in_env "$name" hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" \
       --export-json "$json" --command-name "$name" "$line"; then
    m=$(median_of "$json")
    if [ -n "$m" ]; then
      record "$name" ok "$m" "${note:-}"
      return 0
    fi
    record "$name" failed - "no median in hyperfine's JSON"
  else
    record "$name" failed - "hyperfine failed (a run exited non-zero; see above)"
  fi
  return 1
}

# hako
note=""
if [ -z "$HAKO" ] || [ ! -x "$HAKO" ]; then
  record hako skipped - "(HAKO not set or not executable: ${HAKO:-none})"
else
  rt="'$HAKO' --root '$hako_root' --data-root '$hako_data'"
  if trial hako sh -c "$rt run --rm --bundle '$bundle' trial-hako"; then
    measure hako "$rt run --rm --bundle '$bundle' bench-hako"
  fi
fi

# crun
note=""
if ! command -v crun > /dev/null; then
  record crun skipped - "(not installed)"
else
  if ! crun --root "$state/crun-root" run -b "$bundle" trial-crun > "$tmp/crun.plain" 2>&1 &&
     grep -q ' /sys/fs/cgroup/unified cgroup2 ' /proc/self/mounts; then
    crun --root "$state/crun-root" delete --force trial-crun > /dev/null 2>&1
    crun_wrapped=true
    note="(hybrid cgroups: private mount ns without /sys/fs/cgroup/unified)"
  fi
  if trial crun crun --root "$state/crun-root" run -b "$bundle" trial-crun2; then
    measure crun "crun --root '$state/crun-root' run -b '$bundle' bench-crun"
  fi
fi

# runc
note=""
if trial runc runc --root "$state/runc-root" run -b "$bundle" trial-runc; then
  measure runc "runc --root '$state/runc-root' run -b '$bundle' bench-runc"
fi

# bwrap
note=""
if ! command -v bwrap > /dev/null; then
  record bwrap skipped - "(not installed)"
else
  bw="bwrap --unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup"
  bw="$bw --bind '$bundle/rootfs' / --proc /proc --dev /dev /bin/true"
  if trial bwrap sh -c "$bw"; then
    measure bwrap "$bw"
  fi
fi

# ---- the table -------------------------------------------------------------

say ""
say "/bin/true in a busybox bundle; new pid, net, ipc, uts, mount, cgroup namespaces;"
say "hyperfine --warmup $WARMUP --runs $RUNS; kernel $(uname -r)"
hako_median=$(awk '$1 == "hako" && $2 == "ok" { print $3 }' "$results")
awk -v hm="${hako_median:-}" '
  BEGIN { printf "%-8s %10s %14s  %s\n", "runtime", "median ms", "ratio to hako", "" }
  {
    note = ""
    for (i = 4; i <= NF; i++) note = note (i > 4 ? " " : "") $i
    if ($2 != "ok") { printf "%-8s %10s %14s  %s %s\n", $1, "-", "-", $2, note; next }
    ratio = (hm != "" && hm > 0) ? sprintf("%.2fx", $3 / hm) : "-"
    printf "%-8s %10.2f %14s  %s\n", $1, $3 * 1000, ratio, note
  }' "$results"
say "(ratio: the runtime's median over hako's; above 1 means hako is faster)"
