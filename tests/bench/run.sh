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
#   unshare  unshare -Umpniuf --map-root-user /bin/true (the host's /bin/true:
#            namespaces alone, the floor; not in the rows below)
# — every one with new pid, net, ipc, uts, mount and cgroup namespaces — and
# prints each median and its ratio to hako's.  Then the row of the same work
# as hako's own default profile (run-default):
#   hako     run --rm of a bundle from `hako spec` (user namespace, idmapped
#            rootfs, Landlock, seccomp, memory and pids limits)
#   bwrap    bwrap --unshare-all --unshare-user --uid 0 --gid 0 --bind ROOTFS /
#            --proc /proc --dev /dev /bin/true (the same namespaces, user
#            namespace included; no cgroups, seccomp or Landlock)  A runtime that is not installed
# is reported as skipped; one that fails is reported as failed (with its
# error) and the others are still measured.
#
# Then, for the same runtimes (bwrap has no lifecycle verbs):
#   create+start+delete   `create -b B ID; start ID; delete --force ID`, one
#                         hyperfine command run by its shell (hyperfine
#                         subtracts the shell's own start-up);
#   create+delete, disk  `create --profile host [--disk none|1g] ID; delete ID`
#                         for hako alone: what the default disk limit (and
#                         --disk 1g) adds to create over --disk none;
#   peak RSS              /usr/bin/time -f %M of the run command, RSS_RUNS
#                         times, median: the largest resident set of the
#                         runtime's processes (and of the tiny /bin/true).
# The lifecycle runs under tests/integration/subreaper.c (compiled here when
# a C compiler is installed): crun's and runc's container process outlives
# `create` and must be reaped by someone.
#
# Environment: HAKO (the hako binary; default ../../hako from here, then
# `hako` in PATH), RUNS (default 30), WARMUP (default 3), RSS_RUNS (default
# 5), BENCH_OUT (a directory to keep hyperfine's JSON exports in; by default
# they are removed with the rest of the temporary directory), BENCH_FORMAT
# (`lines`: the human output goes to stderr, and stdout gets one line
# `BENCH ROW TOOL VALUE UNIT [NOTE]` per figure, VALUE `-` with the reason as
# NOTE when there is none; rows: run, run-default, lifecycle, rss-run,
# disk-create).
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
RSS_RUNS=${RSS_RUNS:-5}

if [ -z "${HAKO:-}" ]; then
  if [ -x "$here/../../hako" ]; then
    HAKO=$here/../../hako
  else
    HAKO=$(command -v hako || true)
  fi
fi

# In lines mode fd 3 is the machine-readable stdout; everything else is stderr.
if [ "${BENCH_FORMAT:-}" = lines ]; then
  exec 3>&1 1>&2
else
  exec 3> /dev/null
fi
emit () { printf 'BENCH %s\n' "$*" >&3; }

say () { printf '%s\n' "$*"; }
die () { say "bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (the runtimes build rootful sandboxes)"
command -v hyperfine > /dev/null || die "hyperfine not found: apt-get install hyperfine"

tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench.XXXXXX) || die "mktemp failed"
# A user namespace's root (the default profile's) passes through here.
chmod 711 "$tmp"
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

# A reaper for the lifecycle runs (see above); without a compiler, none.
reaper=""
if command -v cc > /dev/null &&
   cc -O2 -o "$tmp/subreaper" "$here/../integration/subreaper.c" 2> /dev/null; then
  reaper=$tmp/subreaper
fi

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
  # hako-default and bwrap-all are the row of hako's default profile, as
  # hako and bwrap.
  case $name in
    hako-default) r="run-default hako" ;;
    bwrap-all) r="run-default bwrap" ;;
    *) r="run $name" ;;
  esac
  if [ "$status" = ok ]; then
    emit "$r $(awk -v m="$median" 'BEGIN { printf "%.3f", m * 1000 }') ms $*"
  elif [ "$status" = skipped ]; then
    emit "$r - - n/a $*"
  else
    emit "$r - - $status: $*"
  fi
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

# Commands that worked, for the lifecycle and RSS passes: NAME<TAB>RUN-LINE<TAB>LIFECYCLE-LINE
passes=$tmp/passes
: > "$passes"

# hako
note=""
if [ -z "$HAKO" ] || [ ! -x "$HAKO" ]; then
  record hako skipped - "(HAKO not set or not executable: ${HAKO:-none})"
else
  rt="'$HAKO' --root '$hako_root' --data-root '$hako_data'"
  if trial hako sh -c "$rt run --rm --bundle '$bundle' trial-hako"; then
    measure hako "$rt run --rm --bundle '$bundle' bench-hako" &&
      printf '%s\t%s\t%s\n' hako "$rt run --rm --bundle '$bundle' bench-hako" \
        "$rt create --bundle '$bundle' lc-hako && $rt start lc-hako && $rt delete --force lc-hako" >> "$passes"
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
    rt="crun --root '$state/crun-root'"
    measure crun "$rt run -b '$bundle' bench-crun" &&
      printf '%s\t%s\t%s\n' crun "$rt run -b '$bundle' bench-crun" \
        "$rt create -b '$bundle' lc-crun && $rt start lc-crun && $rt delete --force lc-crun" >> "$passes"
  fi
fi

# runc
note=""
if trial runc runc --root "$state/runc-root" run -b "$bundle" trial-runc; then
  rt="runc --root '$state/runc-root'"
  measure runc "$rt run -b '$bundle' bench-runc" &&
    printf '%s\t%s\t%s\n' runc "$rt run -b '$bundle' bench-runc" \
      "$rt create -b '$bundle' lc-runc && $rt start lc-runc && $rt delete --force lc-runc" >> "$passes"
fi

# bwrap
note=""
if ! command -v bwrap > /dev/null; then
  record bwrap skipped - "(not installed)"
else
  bw="bwrap --unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup"
  bw="$bw --bind '$bundle/rootfs' / --proc /proc --dev /dev /bin/true"
  if trial bwrap sh -c "$bw"; then
    measure bwrap "$bw" && printf '%s\t%s\t%s\n' bwrap "$bw" "" >> "$passes"
  fi
fi

# unshare: the floor issue 24 measures run against, namespaces alone (a user
# namespace, no rootfs, cgroup, seccomp, capabilities or state).
note="namespaces only"
if ! command -v unshare > /dev/null; then
  record unshare skipped - "(not installed)"
elif trial unshare unshare -Umpniuf --map-root-user /bin/true; then
  measure unshare "unshare -Umpniuf --map-root-user /bin/true"
fi

# The same work as hako's own default profile (`hako spec`: a user
# namespace with an idmapped rootfs, Landlock, seccomp, cgroups with a
# memory and a pids limit), beside bwrap making the same namespaces
# (--unshare-all and a user namespace, root in it), which has no cgroups,
# seccomp or Landlock.
note=""
if [ -n "$HAKO" ] && [ -x "$HAKO" ]; then
  if HAKO=$HAKO "$here/../fixtures/make-bundle.sh" "$tmp/hbundle" hako /bin/true > /dev/null 2>&1; then
    rt="'$HAKO' --root '$hako_root' --data-root '$hako_data'"
    trial hako-default sh -c "$rt run --rm --bundle '$tmp/hbundle' trial-hd" &&
      measure hako-default "$rt run --rm --bundle '$tmp/hbundle' bench-hd"
  else
    record hako-default failed - "hako spec could not make the default profile's bundle"
  fi
fi
if ! command -v bwrap > /dev/null; then
  record bwrap-all skipped - "(not installed)"
else
  bw="bwrap --unshare-all --unshare-user --uid 0 --gid 0"
  bw="$bw --bind '$bundle/rootfs' / --proc /proc --dev /dev /bin/true"
  trial bwrap-all sh -c "$bw" && measure bwrap-all "$bw"
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

# ---- create+start+delete, and peak RSS --------------------------------------

# The runtimes that could not be measured above get a reason in these rows too.
awk '$2 != "ok" { n = ""; for (i = 4; i <= NF; i++) n = n " " $i
                  print $1 "\t" $2 n }' "$results" > "$tmp/missing"
while IFS='	' read -r name why; do
  case $name in unshare | hako-default | bwrap-all) continue ;; esac
  [ "$name" = bwrap ] || emit "lifecycle $name - - $why"
  emit "rss-run $name - - $why"
done < "$tmp/missing"

say ""
say "== create + start + delete --force (hyperfine, shell subtracted; bwrap has no lifecycle)"
lc=$tmp/lifecycle
: > "$lc"
while IFS='	' read -r name runline lcline; do
  [ -n "$lcline" ] || continue
  json=$tmp/$name-lc.json
  # shellcheck disable=SC2086 # $reaper is one word or none
  if in_env "$name" $reaper hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" \
       --export-json "$json" --command-name "$name" "$lcline" < /dev/null > "$tmp/$name-lc.out" 2>&1 &&
     m=$(median_of "$json") && [ -n "$m" ]; then
    say "$name $m" >> "$lc"
    emit "lifecycle $name $(awk -v m="$m" 'BEGIN { printf "%.3f", m * 1000 }') ms ${reaper:+(under a subreaper)}"
  else
    say "$name failed: $(grep -v '^reaped' "$tmp/$name-lc.out" | tail -n 3 | tr '\n' ' ')"
    emit "lifecycle $name - - failed (hyperfine: a run exited non-zero)"
  fi
done < "$passes"
hl=$(awk '$1 == "hako" { print $2 }' "$lc")
awk -v hm="${hl:-}" '{ r = (hm != "" && hm > 0) ? sprintf("%.2fx", $2 / hm) : "-"
                       printf "%-8s %10.2f ms %8s\n", $1, $2 * 1000, r }' "$lc"

# ---- what a disk limit adds to create ---------------------------------------

# create + delete of a host-profile sandbox (it keeps /work under the data
# root): with --disk none, with the default limit (no flag: 10 GiB, a copy
# of the data root's mkfs'ed template) and with --disk 1g (its template is
# made by the warm-up, as the default's).  The difference is the image copy,
# the loop device and the mount, then the unmount (hako-spec(5), DISK LIMIT).
say ""
say "== create + delete --profile host: --disk none, the default disk limit, --disk 1g"
dk=$tmp/disk
: > "$dk"
if [ -n "$HAKO" ] && [ -x "$HAKO" ]; then
  # The host profile's root user (host uid 1000000000) passes through here.
  chmod 711 "$tmp" "$state"
  rt="'$HAKO' --root '$hako_root' --data-root '$hako_data'"
  for name in hako hako-default hako-disk; do
    case $name in
      hako) flag="--disk none" ;;
      hako-default) flag="" ;;
      *) flag="--disk 1g" ;;
    esac
    line="$rt create --profile host $flag dk-$name < /dev/null > /dev/null && $rt delete dk-$name"
    json=$tmp/$name-disk.json
    if hyperfine --style basic --warmup "$((WARMUP > 0 ? WARMUP : 1))" --runs "$RUNS" --export-json "$json" \
         --command-name "$name" "$line" < /dev/null > "$tmp/$name-disk.out" 2>&1 &&
       m=$(median_of "$json") && [ -n "$m" ]; then
      say "$name $m" >> "$dk"
      emit "disk-create $name $(awk -v m="$m" 'BEGIN { printf "%.3f", m * 1000 }') ms (${flag:-the default limit})"
    else
      say "$name failed: $(tail -n 3 "$tmp/$name-disk.out" | tr '\n' ' ')"
      emit "disk-create $name - - failed (hyperfine: a run exited non-zero)"
    fi
  done
else
  for name in hako hako-default hako-disk; do
    emit "disk-create $name - - n/a (HAKO not set or not executable)"
  done
fi
awk '{ printf "%-13s %10.2f ms\n", $1, $2 * 1000; v[$1] = $2 }
     END { if (("hako" in v) && ("hako-default" in v))
             printf "the default disk limit adds %.2f ms to create + delete\n", (v["hako-default"] - v["hako"]) * 1000 }' "$dk"

say ""
say "== peak RSS of the run command (/usr/bin/time -f %M, median of $RSS_RUNS)"
if [ ! -x /usr/bin/time ]; then
  say "GNU time not installed (apt-get install time): skipped"
  while IFS='	' read -r name runline lcline; do
    emit "rss-run $name - - n/a (GNU time not installed)"
  done < "$passes"
else
  while IFS='	' read -r name runline lcline; do
    : > "$tmp/$name.rss"
    i=0 ok=true
    while [ "$i" -lt "$RSS_RUNS" ]; do
      i=$((i + 1))
      # The line split here, not by a shell under time: a shell's own
      # resident set would count as the runtime's.
      eval "set -- $runline"
      in_env "$name" /usr/bin/time -o "$tmp/$name.rss1" -f %M "$@" < /dev/null > /dev/null 2>&1 || ok=false
      tail -n 1 "$tmp/$name.rss1" >> "$tmp/$name.rss"
    done
    if $ok; then
      kb=$(sort -n "$tmp/$name.rss" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
      say "$name $((kb / 1024)).$(( (kb % 1024) * 10 / 1024 )) MiB"
      emit "rss-run $name $(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
    else
      say "$name failed"
      emit "rss-run $name - - failed"
    fi
  done < "$passes"
fi
