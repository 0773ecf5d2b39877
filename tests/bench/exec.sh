#!/bin/bash
# tests/bench/exec.sh: one more command in a running sandbox, side by side.
#
# One busybox bundle (`runc spec`, process `sleep 1000`) runs under hako, crun
# and runc; hyperfine then times, in one run,
#   hako     hako exec ID true
#   crun     crun exec ID true
#   runc     runc exec ID true
#   nsenter  nsenter -a -t PID true   (namespaces only: no cgroup, no caps,
#                                      no seccomp, no Landlock — the floor)
# and prints medians and ratios to hako's.  Debian 12's crun refuses a hybrid
# cgroup layout: on such a host crun runs (and is timed) in a private mount
# namespace without /sys/fs/cgroup/unified, as tests/bench/run.sh does.
# Environment: HAKO, RUNS (default 200), WARMUP (default 10).  Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
RUNS=${RUNS:-200}
WARMUP=${WARMUP:-10}
command -v hyperfine > /dev/null || { echo "exec.sh: hyperfine not installed" >&2; exit 1; }
work=$(mktemp -d /tmp/hako-bench-exec.XXXXXX)
chmod 711 "$work"
mount -t tmpfs -o mode=0711 hako-bench "$work"
"$here/../fixtures/make-bundle.sh" "$work/b" runc > /dev/null
jq '.process.args = ["sleep", "1000"]' "$work/b/config.json" > "$work/c" && mv "$work/c" "$work/b/config.json"
H="$HAKO --root $work/hako --data-root $work/data"
hybrid=false
if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then hybrid=true; fi
crun_ns () { if $hybrid; then unshare -m sh -c "umount /sys/fs/cgroup/unified; $*"; else sh -c "$*"; fi; }
cleanup () {
  $H delete --force hx > /dev/null 2>&1 || true
  crun_ns "crun --root $work/crun delete --force cx" > /dev/null 2>&1 || true
  runc --root "$work/runc" delete --force rx > /dev/null 2>&1 || true
  umount -l "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
$H run --detach --bundle "$work/b" hx
pid=$($H state hx | jq .pid)
out=$work/out; mkdir -p "$out"
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$out/h.json" \
  -n hako "$H exec hx true" -n nsenter "nsenter -a -t $pid true" > /dev/null
ok_crun=false ok_runc=false
if command -v crun > /dev/null && crun_ns "crun --root $work/crun run -d -b $work/b cx" > /dev/null 2>&1; then
  crun_ns "hyperfine -N --style basic --warmup $WARMUP --runs $RUNS --export-json $out/c.json \
    -n crun 'crun --root $work/crun exec cx true'" > /dev/null && ok_crun=true
fi
if command -v runc > /dev/null && runc --root "$work/runc" run -d -b "$work/b" rx > /dev/null 2>&1 < /dev/null; then
  hyperfine -N --style basic --warmup 3 --runs 50 --export-json "$out/r.json" \
    -n runc "runc --root $work/runc exec rx true" > /dev/null && ok_runc=true
fi
median () { jq -r ".results[] | select(.command == \"$2\") | .median * 1000" "$1"; }
hm=$(median "$out/h.json" hako)
printf '%-8s %8.2f ms\n' hako "$hm"
printf '%-8s %8.2f ms  (%.2fx hako)\n' nsenter "$(median "$out/h.json" nsenter)" \
  "$(echo "$(median "$out/h.json" nsenter) / $hm" | bc -l)"
$ok_crun && printf '%-8s %8.2f ms  (%.2fx hako)\n' crun "$(median "$out/c.json" crun)" \
  "$(echo "$(median "$out/c.json" crun) / $hm" | bc -l)"
$ok_runc && printf '%-8s %8.2f ms  (%.2fx hako)\n' runc "$(median "$out/r.json" runc)" \
  "$(echo "$(median "$out/r.json" runc) / $hm" | bc -l)"
exit 0
