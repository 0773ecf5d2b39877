#!/bin/bash
# tests/bench/tails.sh: the tail of what a user waits for — p50, p90, p99 and
# max, alone and under concurrency — with the phase that holds hako's p99.
#
# SAMPLES samples of each row at each concurrency in CONCS (1 8 32: that
# many samples in flight at once, each worker starting its next as its last
# ends), timed by tests/bench/lat.c (posix_spawn, CLOCK_MONOTONIC), on a
# tmpfs state root, all under lat as a child subreaper:
#   run            hako run --rm of hako's default profile (`hako spec`:
#                  user namespace, idmapped rootfs, Landlock, seccomp,
#                  memory and pids limits) /bin/true;  crun run of runc
#                  spec's bundle; bwrap --unshare-all with a user namespace
#   create+start   hako create + start of the default profile (sleep), the
#                  delete untimed;  crun create + start (runc spec's bundle)
#   ready to first command
#                  hako run -d (the default profile, sleep), then exec true:
#                  from the first spawn to the exec's end, the delete
#                  untimed;  crun run -d + crun exec true
#   exec           hako exec true into a running default-profile sandbox of
#                  the worker's own;  crun exec true into a crun container
#   sdk            the Python SDK's commands.run("true"), AsyncSandbox, CONC
#                  tasks on one event loop, each into a sandbox of its own
# crun 1.8.1 refuses a hybrid cgroup layout: on such a host its samples run
# in a private mount namespace without /sys/fs/cgroup/unified (as run.sh).
# hako's samples run with HAKO_TRACE=1 (lines to a file on the tmpfs): the
# "p99's phase" is the phase of hako's trace whose time in the samples at
# or above p99 exceeds its own median by most, with that excess (a phase
# that only waits for another process, "wait for ..." or "exec: joiner",
# is passed over for that process's own).
#
# Prints a markdown table on stdout (all.sh puts it after its table).
# Environment: HAKO, SAMPLES (default 200; 40 with QUICK=1), CONCS
# (default "1 8 32"), WARMUP (samples per worker before the timed ones,
# default 1), ROWS (default "run create exec-first exec sdk"), TAILS_KEEP (a
# directory to keep the samples and traces in).  Needs root and a C compiler.
set -u
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../../hako}
if [ "${QUICK:-0}" = 1 ]; then : "${SAMPLES:=40}"; fi
SAMPLES=${SAMPLES:-200}
CONCS=${CONCS:-1 8 32}
WARMUP=${WARMUP:-1}
ROWS=${ROWS:-run create exec-first exec sdk}
[ "$(id -u)" = 0 ] || { echo "tails.sh: needs root" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-tails.XXXXXX) || exit 1
chmod 711 "$tmp"
mkdir -p "$tmp/s" && mount -t tmpfs -o size=512m,mode=711 hako-tails "$tmp/s" || exit 1
H="$HAKO --root $tmp/s/r --data-root $tmp/s/d"
cleanup () {
  trap - EXIT INT TERM
  for id in $($H list -q 2> /dev/null); do $H delete --force "$id" > /dev/null 2>&1; done
  if command -v crun > /dev/null; then
    for id in $(crun_env crun --root "$tmp/s/crun" list -q 2> /dev/null); do
      crun_env crun --root "$tmp/s/crun" delete --force "$id" > /dev/null 2>&1
    done
  fi
  [ -z "${TAILS_KEEP:-}" ] || cp -r "$tmp/s/out" "$TAILS_KEEP" 2> /dev/null
  umount "$tmp/s" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cc -O2 -o "$tmp/lat" "$here/lat.c" || exit 1
mkdir -p "$tmp/s/out"
"$here/../fixtures/make-bundle.sh" "$tmp/rb" runc /bin/true > /dev/null || exit 1
"$here/../fixtures/make-bundle.sh" "$tmp/rbs" runc sleep 100000 > /dev/null || exit 1
HAKO=$HAKO "$here/../fixtures/make-bundle.sh" "$tmp/hb" hako /bin/true > /dev/null || exit 1
HAKO=$HAKO "$here/../fixtures/make-bundle.sh" "$tmp/hbs" hako sleep 100000 > /dev/null || exit 1

hybrid=false
[ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ] && hybrid=true
crun_note=""
$hybrid && crun_note="(hybrid cgroups: private mount ns without /sys/fs/cgroup/unified)"
# crun_env CMD...: CMD where crun 1.8.1 works (see above).
crun_env () {
  if $hybrid; then
    unshare --mount --propagation private -- sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' sh "$@"
  else
    "$@"
  fi
}

# pcts FILE: "n p50 p90 p99 max" of the samples' totals (column 4), ms,
# nearest rank, as lat wrote them.
pcts () {
  awk '{ print $4 }' "$1" | sort -g | awk '{ a[NR] = $1 } END {
    if (NR == 0) exit 1
    r50 = int(NR * 0.50 + 0.999); r90 = int(NR * 0.90 + 0.999); r99 = int(NR * 0.99 + 0.999)
    print NR, a[r50], a[r90], a[r99], a[NR] }'
}

# tail_phase SAMPLES TRACEDIR P99: the phase whose time in the samples at or
# above P99 exceeds its median over all samples by most, with that excess.
tail_phase () {
  local f
  for f in "$2"/0.*; do
    awk -v s="${f##*.}" '$1 == "hako-trace:" { t = $2; pid = $3; name = $4; for (i = 5; i <= NF; i++) name = name " " $i
        if (pid in last) printf "%s\t%s\t%.3f\n", s, lastname[pid], (t - last[pid]) * 1000
        last[pid] = t; lastname[pid] = name }' "$f"
  done > "$2.tsv"
  awk -v p="$3" '$4 >= p { print $3 }' "$1" > "$2.tail"
  awk -F'\t' 'FNR == NR { tail[$1] = 1; next }
    { all[$2] = all[$2] " " $3; if ($1 in tail) { ex[$2] += $3; cnt[$2]++ } }
    END {
      best = ""
      for (k in all) {
        # A process waiting for another: the other'"'"'s phases say why.
        if (!cnt[k] || k ~ /wait for|^exec: joiner$/) continue
        n = split(all[k], a, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        x = ex[k] / cnt[k] - a[int((n + 1) / 2)]
        if (best == "" || x > bx) { best = k; bx = x; bm = a[int((n + 1) / 2)] }
      }
      if (best != "") printf "%s (+%.1f ms over its median %.2f ms)", best, bx, bm }' "$2.tail" "$2.tsv"
}

# sample ROW TOOL CONC [crun] -- LAT-STEPS...: run lat, print the table's row.
out_rows=$tmp/rows
: > "$out_rows"
sample () {
  local row=$1 tool=$2 conc=$3 env=$4
  shift 5
  local key=$row-$tool-$conc res=$tmp/s/out/$row-$tool-$conc trace=""
  local label
  case $row in
    run) label="run /bin/true" ;;
    create) label="create+start" ;;
    exec-first) label="ready to first command (run -d, exec true)" ;;
    exec) label="exec true" ;;
  esac
  if [ "$tool" = hako ]; then
    trace=$tmp/s/out/$key.trace
    mkdir -p "$trace"
  fi
  local n=$SAMPLES w=$WARMUP
  [ "$n" -ge "$conc" ] || n=$conc
  if ! $env "$tmp/lat" -c "$conc" -n "$n" -w "$w" -o "$res" ${trace:+-t "$trace"} -- "$@" \
       2> "$tmp/s/out/$key.err"; then
    echo "| $label | $conc | $tool | - | - | - | - | | failed: $(grep -v '^$' "$tmp/s/out/$key.err" | tail -n 1 | cut -c1-160) |" >> "$out_rows"
    echo "tails.sh: $key failed:" >&2
    tail -n 5 "$tmp/s/out/$key.err" >&2
    return
  fi
  local nn p50 p90 p99 max note=""
  read -r nn p50 p90 p99 max < <(pcts "$res")
  if [ "$tool" = hako ]; then
    note="p99's phase: $(tail_phase "$res" "$trace" "$p99")"
  elif [ "$tool" = crun ]; then
    note=$crun_note
  fi
  awk -v l="$label" -v c="$conc" -v t="$tool" -v a="$p50" -v b="$p90" -v d="$p99" -v m="$max" -v n="$note" \
    'BEGIN { printf "| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %s |\n", l, c, t, a, b, d, m, d / a, n }' >> "$out_rows"
  printf 'BENCH tail-%s-c%s %s %s %s %s %s\n' "$row" "$conc" "$tool" "$p50" "$p90" "$p99" "$max" >&2
}

# sdk_sample CONC: the Python SDK's commands.run("true") (AsyncSandbox, one
# event loop, CONC tasks each with a default-profile sandbox of its own),
# not traced (the SDK reads hako's stderr).
sdk_sample () {
  local conc=$1 res=$tmp/s/out/sdk-$1 n=$SAMPLES
  [ "$n" -ge "$conc" ] || n=$conc
  if ! PYTHONPATH="$here/../../python${PYTHONPATH:+:$PYTHONPATH}" python3 - "$HAKO" "$tmp/s/r" "$tmp/s/d" \
       "$tmp/hbs" "$conc" "$n" "$WARMUP" > "$res" 2> "$tmp/s/out/sdk-$conc.err" <<'PY'
import asyncio, sys, time
import hako
exe, root, data, bundle = sys.argv[1:5]
conc, n, warm = map(int, sys.argv[5:8])
kw = dict(hako=exe, root=root, data_root=data)
async def main():
    sbs = await asyncio.gather(*(hako.AsyncSandbox.create(bundle=bundle, timeout=None, **kw) for _ in range(conc)))
    async def worker(w):
        sb = sbs[w]
        for _ in range(warm):
            await sb.commands.run("true")
        for k in range(w, n, conc):
            t0 = time.perf_counter()
            await sb.commands.run("true")
            print(f"0 {w} {k} {(time.perf_counter() - t0) * 1000:.3f}")
    try:
        await asyncio.gather(*(worker(w) for w in range(conc)))
    finally:
        await asyncio.gather(*(sb.kill() for sb in sbs))
asyncio.run(main())
PY
  then
    echo "| Python commands.run(\"true\") | $conc | sdk | - | - | - | - | | failed: $(tail -n 1 "$tmp/s/out/sdk-$conc.err" | cut -c1-160) |" >> "$out_rows"
    return
  fi
  local nn p50 p90 p99 max
  read -r nn p50 p90 p99 max < <(pcts "$res")
  awk -v c="$conc" -v a="$p50" -v b="$p90" -v d="$p99" -v m="$max" \
    'BEGIN { printf "| Python commands.run(\"true\") | %s | sdk | %.2f | %.2f | %.2f | %.2f | %.2fx | not traced |\n", c, a, b, d, m, d / a }' >> "$out_rows"
}

plain () { "$@"; }
CR="crun --root $tmp/s/crun"
BW="bwrap --unshare-all --unshare-user --uid 0 --gid 0 --bind $tmp/rb/rootfs / --proc /proc --dev /dev /bin/true"
have () { command -v "$1" > /dev/null; }
for row in $ROWS; do
  for c in $CONCS; do
    case $row in
      run)
        sample run hako "$c" plain -- $H run --rm --bundle "$tmp/hb" t{}
        if have crun; then sample run crun "$c" crun_env -- $CR run -b "$tmp/rb" c{}
        else echo "| run /bin/true | $c | crun | - | - | - | - | | n/a (not installed) |" >> "$out_rows"; fi
        if have bwrap; then sample run bwrap "$c" plain -- $BW
        else echo "| run /bin/true | $c | bwrap | - | - | - | - | | n/a (not installed) |" >> "$out_rows"; fi
        ;;
      create)
        sample create hako "$c" plain -- $H create --bundle "$tmp/hbs" s{} :then $H start s{} \
          :untimed $H delete --force s{}
        if have crun; then
          sample create crun "$c" crun_env -- $CR create -b "$tmp/rbs" c{} :then $CR start c{} \
            :untimed $CR delete --force c{}
        else echo "| create+start | $c | crun | - | - | - | - | | n/a (not installed) |" >> "$out_rows"; fi
        ;;
      exec-first)
        sample exec-first hako "$c" plain -- $H run -d --bundle "$tmp/hbs" f{} :then $H exec f{} true \
          :untimed $H delete --force f{}
        if have crun; then
          sample exec-first crun "$c" crun_env -- $CR run -d -b "$tmp/rbs" c{} :then $CR exec c{} true \
            :untimed $CR delete --force c{}
        else echo "| ready to first command (run -d, exec true) | $c | crun | - | - | - | - | | n/a (not installed) |" >> "$out_rows"; fi
        ;;
      exec)
        sample exec hako "$c" plain -- $H exec e{w} true :setup $H run -d --bundle "$tmp/hbs" e{w} \
          :teardown $H delete --force e{w}
        if have crun; then
          sample exec crun "$c" crun_env -- $CR exec c{w} true :setup $CR run -d -b "$tmp/rbs" c{w} \
            :teardown $CR delete --force c{w}
        else echo "| exec true | $c | crun | - | - | - | - | | n/a (not installed) |" >> "$out_rows"; fi
        ;;
      sdk) sdk_sample "$c" ;;
    esac
  done
done

echo
echo "Tails: $SAMPLES samples of each row at each concurrency (that many in flight at once), ms; p99/p50 is the"
echo "spread; hako's samples traced (HAKO_TRACE=1), the phase named is the one that grew most in its p99 samples."
echo
echo "| measurement | concurrency | tool | p50 | p90 | p99 | max | p99/p50 | note |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---|"
cat "$out_rows"
