#!/usr/bin/env bats
# The benchmark suite's smoke run: tests/bench/all.sh (`make bench`) with
# QUICK=1 and the smallest counts and sizes prints one table with every row,
# hako's rows hold figures, and a tool this host lacks is "n/a (not
# installed)", never a failure.  The figures themselves are not checked: this
# is a busy test machine.  A peer that is installed but fails on this host
# (runc's concurrent runs on hybrid cgroups do, now and then) is printed as a
# warning: its row must still be there, and hako's rows must hold figures.  Full runs: docs/benchmarks.md.

load helpers

setup () { hako_setup; }
teardown () { hako_teardown; }

# cell LABEL TOOL: "MEDIAN|NOTE" of that row of the table in $output
# (a row whose label cell is empty belongs to the label above it).
cell () {
  awk -F'|' -v l="$1" -v t="$2" '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    /^\| / && NF >= 6 {
      if (trim($2) != "") label = trim($2)
      if (label == l && trim($3) == t) { print trim($4) "|" trim($6); found = 1 }
    }
    END { exit !found }' <<< "$output"
}

@test "bench: all.sh QUICK=1 prints every row; hako's are figures; a missing tool is n/a, not a failure" {
  command -v hyperfine > /dev/null || skip "hyperfine not installed (apt-get install hyperfine)"
  command -v runc > /dev/null || skip "runc not installed: the bench bundle's config comes from runc spec"
  command -v cc > /dev/null || skip "no C compiler (proxy.sh builds its HTTP server)"
  run env TMPDIR="$TEST_ROOT" HAKO="$HAKO" QUICK=1 RUN_RUNS=2 EXEC_RUNS=2 WARMUP=0 RSS_RUNS=1 \
    IMAGE_RUNS=1 CREATE_RUNS=2 LAYER1=usr/share/common-licenses LAYER2=usr/share/base-files \
    SNAP_SIZES="1 2" SNAP_RUNS=2 FORK_SIZES="1 2" FORK_RUNS=2 PROXY_SIZE=4194304 PROXY_LAT_N=20 PAR_JOBS=2 PAR_PER=1 PHASE_RUNS=2 SESSION_RUNS=1 SESSION_MB=2 TAIL_SAMPLES=2 TAIL_CONCS="1 2" POOL_ACQUIRES=8 \
    bash "$BATS_TEST_DIRNAME/../bench/all.sh"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q '^- kernel: .*cores'
  echo "$output" | grep -q '^- cgroups: '
  echo "$output" | grep -q '^- hako: hako version '
  local label tools tool c
  while IFS=: read -r label tools; do
    for tool in $tools; do
      c=$(cell "$label" "$tool") || { echo "row missing: $label / $tool" >&2; return 1; }
      case $tool:$c in
        hako:*failed*) echo "failed: $label / $tool: $c" >&2; return 1 ;;
        *failed*) echo "warning: $tool failed on this host: $label: $c" >&2; continue ;;
      esac
      if [ "$tool" = hako ] || [[ $tool == hako-* ]]; then
        # Peak RSS needs GNU time (package time), and proxy CONNECT curl
        # (busybox wget has none); everything else is a figure.
        case "$label:$c" in
          "peak RSS"*":-|n/a (GNU time not installed)") ;;
          "proxy, CONNECT:-|n/a (busybox wget"*) command -v curl > /dev/null && return 1 ;;
          "proxy, small request p"*":-|n/a (needs curl"*) command -v curl > /dev/null && return 1 ;;
          "published port, small request"*":-|n/a (needs curl"*) command -v curl > /dev/null && return 1 ;;
          *) [[ $c =~ ^[0-9.]+\ (s|ms|MiB|MiB/s|sbx/s)\| ]] || { echo "no figure: $label / hako: $c" >&2; return 1; } ;;
        esac
      elif [ "$tool" = direct ] || [ "$tool" = snapshot+branch ] || command -v "$tool" > /dev/null; then
        [[ $c != *"n/a (not installed)"* ]] || { echo "$tool is installed: $label: $c" >&2; return 1; }
      else
        [[ $c == *"n/a (not installed)" ]] || { echo "$tool is missing: $label: $c" >&2; return 1; }
      fi
    done
  done <<'ROWS'
run /bin/true:hako crun runc bwrap unshare
run /bin/true, hako's default profile; bwrap --unshare-all with a user namespace:hako bwrap
create+start+delete:hako crun runc
create+delete, host profile; --disk none, default limit, --disk 1g:hako hako-default hako-disk
exec true:hako crun runc nsenter
exec true, the per-command accounting on (hako) and compiled out (hako-noacct), interleaved:hako hako-noacct
peak RSS, run /bin/true:hako crun runc bwrap
peak RSS, exec true:hako crun runc
image import + unpack:hako umoci tar gunzip
create, small image:hako
create, large image:hako
snapshot, 1 MB:hako tar
snapshot, 2 MB:hako tar
fork, 1 MB of /work, one child (vs snapshot + create --from-snapshot + start):hako snapshot+branch
host disk that child costs, 1 MB:hako snapshot+branch
parent frozen during that fork, 1 MB:hako
fork, 2 MB of /work, one child (vs snapshot + create --from-snapshot + start):hako snapshot+branch
host disk that child costs, 2 MB:hako snapshot+branch
parent frozen during that fork, 2 MB:hako
proxy, plain HTTP:hako direct
proxy, CONNECT:hako direct
proxy, small request p50:hako direct
proxy, small request p99:hako direct
published port, download:hako direct
published port, small request on a new connection p50:hako direct
published port, small request on a new connection p99:hako direct
concurrent run /bin/true:hako crun runc bwrap
session, run -d --profile host to first exec:hako
session, PSS of idle monitor + process:hako
put 1 KiB:hako cp
get 1 KiB:hako cp
put 2 MB:hako cp
get 2 MB:hako cp
cp out, 1 GiB sparse file (1 MiB of data):hako cp
ROWS
  # The breakdown from the phase trace, for run and for exec.
  echo "$output" | grep -q '^| clone | [0-9.]* |$' || { echo "no clone phase in run's breakdown" >&2; return 1; }
  echo "$output" | grep -q '^| joiner: setns | [0-9.]* |$' || { echo "no setns phase in exec's breakdown" >&2; return 1; }
  # The tails: every row at each concurrency, hako's with figures and the
  # phase of its p99.
  local m
  for m in "run /bin/true" "create+start" "ready to first command (run -d, exec true)" "exec true"; do
    for c in 1 2; do
      echo "$output" | grep -qF "| $m | $c | hako | " || { echo "no tail row: $m at $c" >&2; return 1; }
      echo "$output" | grep -F "| $m | $c | hako | " | grep -qE '\| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \| p99.s phase: .+ \|$' ||
        { echo "no figures in the tail row: $m at $c" >&2; return 1; }
      echo "$output" | grep -qF "| $m | $c | crun | " || { echo "no crun tail row: $m at $c" >&2; return 1; }
    done
  done
  echo "$output" | grep -qE '^\| Python commands.run\("true"\) \| 2 \| sdk \| [0-9.]+ \|' || { echo "no SDK tail row" >&2; return 1; }
  # The warm pool's hand-out, p50 and p99.
  for p in p50 p99; do
    c=$(cell "Python pool acquire at steady state, $p" sdk) || { echo "no pool acquire $p row" >&2; return 1; }
    [[ $c =~ ^[0-9.]+\ (ms|s)\| ]] || { echo "no figure: pool acquire $p: $c" >&2; return 1; }
  done
  # Every piece removed its temporary directory.
  local left
  left=$(compgen -G "$TEST_ROOT/hako-*" || true)
  [ -z "$left" ] || { echo "left behind: $left" >&2; return 1; }
}
