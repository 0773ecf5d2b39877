#!/bin/sh
# Run every test — the C unit tests, the fuzz targets, the bats integration
# tests and a sanitizer slice — read their TAP, and end with one line:
# "N passed, N failed, N skipped".
# Environment: HAKO (the built binary), UNIT_TESTS (unit test binaries),
# TESTS_FILTER (optional: only integration files whose name matches),
# HAKO_SRC/HAKO_BUILD/DEP_CFLAGS/DEP_LIBS (from make: for the rebuilt variants),
# FUZZ_SECONDS (per fuzz target; 0 skips them), SANITIZE_SLICE (integration
# files run again with an ASan+UBSan hako; "none" skips the slice),
# SHARED_SLICE (files run in that slice with a UBSan-only hako, whose exec
# command shares hako's memory as in production; "none" skips it),
# TEST_JOBS (integration files run at once; default: the number of CPUs),
# FILE_TIMEOUT (seconds a bats file or the pytest run may take before
# tests/watchdog.sh kills it as hung and says what it waited in; 1200).
# Integration files run TEST_JOBS at a time, each in its own private roots;
# those in SERIAL_FILES (global state: containerd, podman, the bench, or
# timing bounds that a loaded machine would stretch) run alone afterwards.
# Each file's time is printed, and the total.
set -u
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../hako}
export HAKO
log=$(mktemp -d /tmp/hako-tests.XXXXXX)
trap 'rm -rf "$log"' EXIT
# The suite's own temporary directory: bats's run directories, pytest's and
# every mktemp without a template land here, so the leftovers check below
# sees what a test left without taking another process's /tmp entry for it.
# 0711: sandboxes in a user namespace pass through it as an unprivileged id.
mkdir "$log/tmp"
chmod 711 "$log" "$log/tmp"
export TMPDIR="$log/tmp"
pass=0 fail=0 skip=0
# Assertion lines of the C unit tests, counted apart: each unit-test
# program is one test in the closing line.
asserts_ok=0 asserts_bad=0
failures=""
failed_taps=""

# count NAME FILE: tally one TAP stream and echo its failures.
count () {
  name=$1 file=$2
  p=$(grep -Eci '^ok [0-9]+' "$file" || true)
  s=$(grep -Eci '^ok [0-9]+.*# skip' "$file" || true)
  f=$(grep -Eci '^not ok [0-9]+' "$file" || true)
  pass=$((pass + p - s)); skip=$((skip + s)); fail=$((fail + f))
  if [ "$f" -gt 0 ]; then
    failures="$failures $name"
    failed_taps="$failed_taps $file"
  fi
  grep -Ei '^not ok|# skip' "$file" | sed "s|^|  $name: |"
}

# run_unit BINARY NAME: one unit test binary, one test: failed when any of
# its assertions failed or it exited abnormally, skipped when every
# assertion skipped.  Its assertion lines go to asserts_ok/asserts_bad.
run_unit () {
  out="$log/$2.tap"
  echo "== unit: $2"
  if ! "$1" > "$out" 2>&1 && ! grep -Eq '^not ok' "$out"; then
    # crashed before reporting a failure: count the crash itself
    echo "not ok 999 - $2 exited abnormally" >> "$out"
    tail -20 "$out" | sed 's/^/# /'
  fi
  grep -E '^#' "$out" | head -20
  p=$(grep -Eci '^ok [0-9]+' "$out" || true)
  s=$(grep -Eci '^ok [0-9]+.*# skip' "$out" || true)
  f=$(grep -Eci '^not ok [0-9]+' "$out" || true)
  asserts_ok=$((asserts_ok + p)); asserts_bad=$((asserts_bad + f))
  grep -Ei '^not ok|# skip' "$out" | sed "s|^|  $2: |"
  if [ "$f" -gt 0 ]; then
    fail=$((fail + 1)); failures="$failures $2"; failed_taps="$failed_taps $out"
  elif [ "$p" -gt 0 ] && [ "$s" = "$p" ]; then
    skip=$((skip + 1))
  elif [ "$p" -gt 0 ]; then
    pass=$((pass + 1))
  else
    echo "  $2: no assertion ran"; fail=$((fail + 1)); failures="$failures $2"
  fi
}

# Files that must run alone: they start daemons or use host-wide state
# (containerd, podman's storage, criu), or they time something.
SERIAL_FILES=${SERIAL_FILES:-"bench.bats load.bats valgrind.bats containerd.bats podman.bats checkpoint.bats stop.bats cri.bats timing.bats"}
TEST_JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
start_all=$(date +%s)

# What the whole run leaves on the host, beyond each test's own leak check,
# limited to what the suite itself makes, so another process's entry does
# not fail it: everything in the suite's TMPDIR; in /tmp and /var/tmp the
# names tests and hako choose (hako-*, bats*); in /run hako's state, the
# containerd, sshd and netns entries tests make and /run/user dirs
# (rootless.bats); cgroups named hako-* in any hierarchy; mounts of hako's.
# Not listed: what other tools make on first use and keep, as on any host
# that ran them (crun's /run/crun, podman's /run/containers and
# /run/libpod, runc's /run/runc, util-linux mount's /run/mount): a machine
# that never ran them must pass too (tests/fresh.sh runs the suite so).
# Listed before and compared at the end.
host_leftovers () {
  find "$TMPDIR" -mindepth 1 -maxdepth 1 2> /dev/null
  find /tmp /var/tmp -mindepth 1 -maxdepth 1 \( -name 'hako-*' -o -name 'bats*' \) ! -path "$log" 2> /dev/null
  find /run -mindepth 1 -maxdepth 1 \( -name 'hako*' -o -name containerd -o -name sshd \) 2> /dev/null
  find /run/netns /run/user -mindepth 1 -maxdepth 1 2> /dev/null
  find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'hako-*' 2> /dev/null
  awk '$5 ~ /hako/ { print "mount " $5 }' /proc/self/mountinfo
}
host_leftovers | sort > "$log/host.before"
times=""

# bats_file FILE NAME [HAKO]: run one integration file into $log/NAME.tap,
# its seconds into $log/NAME.secs.  Safe to run several at once.
bats_file () {
  t0=$(date +%s)
  # bats reads its stdin: not the list the caller's loop reads.
  # HAKO_EXEC_FORKS: the ASan hako forks the exec command (SHARE_MEMORY 0).
  forks=""
  case $2 in asan:*) forks=1 ;; esac
  # FILE_TIMEOUT: a file still running after it is killed, and said so
  # with what it waited in (tests/watchdog.sh), so one hang cannot hold the
  # suite past CI's limit.  HAKO_IT_ROOTS: its tests' roots, for that case.
  : > "$log/$2.roots"
  HAKO=${3:-$HAKO} HAKO_EXEC_FORKS=$forks HAKO_IT_ROOTS="$log/$2.roots" \
    bash "$here/watchdog.sh" "${FILE_TIMEOUT:-1200}" "$log/$2.roots" \
    bats --tap "$1" > "$log/$2.tap" 2>&1 < /dev/null
  echo $(($(date +%s) - t0)) > "$log/$2.secs"
  echo "  done: $2 ($(cat "$log/$2.secs") s)"
}

# report_bats NAME: print and count one file that bats_file ran.
report_bats () {
  out="$log/$1.tap"
  echo "== integration: $1 ($(cat "$log/$1.secs" 2>/dev/null || echo ?) s)"
  times="$times $1=$(cat "$log/$1.secs" 2>/dev/null || echo ?)s"
  comments "$out"
  count "$1" "$out"
  if ! grep -Eq '^1\.\.[0-9]+' "$out"; then
    echo "  $1: no TAP plan (bats failed to run)"; fail=$((fail + 1))
  fi
}

# comments FILE: its TAP comments, the first 15 and the last 25 where there
# are more than 40 (a failure's cause is often at the end of a long trace).
comments () {
  grep -E '^#' "$1" | awk '{ l[NR] = $0 } END {
    for (i = 1; i <= NR; i++)
      if (NR <= 40 || i <= 15 || i > NR - 25) print l[i]
      else if (i == 16) printf "#   ... %d lines ...\n", NR - 40 }'
}

# run_pool LIST: run the "FILE NAME HAKO" lines of LIST, TEST_JOBS at a time
# (each worker claims the next line with an atomic mkdir), then report them
# in LIST's order.
run_pool () {
  list=$1 w=0
  while [ "$w" -lt "$TEST_JOBS" ]; do
    (
      n=0
      while read -r f name hk; do
        n=$((n + 1))
        mkdir "$log/claim.$n" 2>/dev/null || continue
        bats_file "$f" "$name" "$hk"
      done < "$list"
    ) &
    w=$((w + 1))
  done
  wait
  rm -rf "$log"/claim.*
  while read -r f name hk; do
    report_bats "$name"
  done < "$list"
}

# run_serial LIST: the same lines, one after the other.
run_serial () {
  while read -r f name hk; do
    echo "  start: $name"
    bats_file "$f" "$name" "$hk" > /dev/null
    report_bats "$name"
  done < "$1"
}

# integration_lists PREFIX HAKO FILES...: write $log/PREFIX.pool and
# $log/PREFIX.serial, the files that pass TESTS_FILTER, split.
integration_lists () {
  prefix=$1 hk=$2
  shift 2
  : > "$log/$prefix.pool"
  : > "$log/$prefix.serial"
  for f in "$@"; do
    [ -e "$f" ] || continue
    b=$(basename "$f")
    case "$b" in *${TESTS_FILTER:-}*) ;; *) continue ;; esac
    name=$b
    [ "$prefix" = main ] || name="$prefix:$b"
    case " $SERIAL_FILES " in
      *" $b "*) echo "$f $name $hk" >> "$log/$prefix.serial" ;;
      *) echo "$f $name $hk" >> "$log/$prefix.pool" ;;
    esac
  done
}

for t in ${UNIT_TESTS:-}; do
  run_unit "$t" "$(basename "$t")"
done

# The rules the build checks: include arrows (tests/style/layers.sh), sizes
# (tests/style/size.sh: files to 1,000 lines, functions to 80),
# the checked-in .clang-format (tests/style/format.sh) and bats assertions
# that can fail (tests/style/bats.sh: no unchecked `!` or && chain).
if [ -z "${TESTS_FILTER:-}" ]; then
  for t in layers size format bats; do
    out="$log/style-$t.tap"
    echo "== style: $t"
    sh "$here/style/$t.sh" "$here/.." > "$out" 2>&1
    count "style-$t" "$out"
  done
fi

# Fuzz targets, each for FUZZ_SECONDS (tests/fuzz/run.sh; `make fuzz` runs longer).
if [ -n "${HAKO_SRC:-}" ]; then
  out="$log/fuzz.tap"
  echo "== fuzz: ${FUZZ_SECONDS:-10}s per target"
  "$here/fuzz/run.sh" "$HAKO_SRC" "$HAKO_BUILD" "${FUZZ_SECONDS:-10}" > "$out" 2>&1
  grep -E '^(ok|#)' "$out" | head -40
  count fuzz "$out"
fi

if [ "$(id -u)" != 0 ]; then
  echo "== integration: skipped, needs root"
  skip=$((skip + 1))
else
  integration_lists main "$HAKO" "$here"/integration/*.bats
  echo "== integration: $(wc -l < "$log/main.pool") files, $TEST_JOBS at a time"
  run_pool "$log/main.pool"
  run_serial "$log/main.serial"
fi

# The Python SDK (python/, tests/python): pytest against the built hako, its
# junit report read into TAP (a pytest skip counts as skipped).  Runs when
# TESTS_FILTER is empty or matches "python".
case python in
  *${TESTS_FILTER:-}*)
    py=""
    for c in python3 /usr/bin/python3; do
      if command -v "$c" > /dev/null && "$c" -c 'import pytest' 2> /dev/null; then py=$c; break; fi
    done
    out="$log/python.tap"
    if [ -z "$py" ]; then
      echo "== python: skipped, python3-pytest is not installed"
      echo "ok 1 - python SDK tests # skip python3-pytest is not installed" > "$out"
    else
      echo "== python: $py -m pytest tests/python"
      t0=$(date +%s)
      HAKO="$HAKO" HAKO_TEST_HANGS="$log/python.hangs" bash "$here/watchdog.sh" "${FILE_TIMEOUT:-1200}" /dev/null \
        "$py" -m pytest -q -p no:cacheprovider --basetemp="$log/pytest" --junitxml="$log/python.xml" "$here/python" \
        > "$log/python.out" 2>&1
      echo "$(($(date +%s) - t0))" > "$log/python.secs"
      times="$times python=$(cat "$log/python.secs")s"
      "$py" - "$log/python.xml" "$log/python.hangs" > "$out" 2>> "$log/python.out" <<'PY' || echo "not ok 1 - pytest ran (no junit report)" > "$out"
import os, sys, xml.etree.ElementTree as ET
out, n = [], 0
for case in ET.parse(sys.argv[1]).iter("testcase"):
    n += 1
    name = case.get("classname", "") + "::" + case.get("name", "")
    skip = case.find("skipped")
    bad = case.find("failure")
    if bad is None:
        bad = case.find("error")
    if bad is not None:
        out.append(f"not ok {n} {name}")
        # what pytest said of it, under its line, where run.sh's "why" finds it
        for line in ((bad.get("message") or "") + "\n" + (bad.text or "")).strip().splitlines()[-40:]:
            out.append("# " + line)
    elif skip is not None:
        out.append(f"ok {n} {name} # skip {(skip.get('message') or '').splitlines()[0] if skip.get('message') else ''}")
    else:
        out.append(f"ok {n} {name}")
# What tests/python/conftest.py's watchdog saw of a hung test, under the
# first failure (the hung test failed when the watchdog ended it).
if os.path.exists(sys.argv[2]):
    first = next((i for i, l in enumerate(out) if l.startswith("not ok")), None)
    if first is None:
        n += 1
        out.append(f"not ok {n} a test hung (tests/python/conftest.py's watchdog ended it)")
        first = len(out) - 1
    out[first + 1:first + 1] = ["# " + l for l in open(sys.argv[2]).read().splitlines()[:150]]
print("\n".join(out + [f"1..{n}"]))
PY
      # No report (pytest killed or crashed): its output's tail is the why.
      if [ ! -s "$log/python.xml" ]; then
        [ -f "$log/python.hangs" ] && sed 's/^/# /' "$log/python.hangs" | head -n 150 >> "$out"
        tail -n 60 "$log/python.out" | sed 's/^/# /' >> "$out"
      fi
      grep -q '^not ok' "$out" && tail -n 60 "$log/python.out" | sed 's/^/# /'
    fi
    count python "$out"
    ;;
esac

# The sanitizer slice: hako and the unit tests rebuilt with ASan+UBSan, the
# unit tests and the SANITIZE_SLICE integration files run with them.  Any
# sanitizer report (written to files, so a test that expects a failure
# cannot hide one) fails the slice.
slice=${SANITIZE_SLICE:-none}
if [ "$slice" != none ] && [ -n "${HAKO_SRC:-}" ]; then
  asan="$log/asan"
  echo "== sanitizers: rebuilding hako and the unit tests with ASan+UBSan"
  flags="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
  base="-std=gnu11 -g -I$HAKO_SRC -I$HAKO_BUILD -include config.h -DHAKO_VERSION=\"variant\""
  cflags="$base $flags ${DEP_CFLAGS:-}"
  ok=true
  "$here/variant.sh" "$HAKO_SRC" "$HAKO_BUILD" "$asan" gcc $flags ${DEP_CFLAGS:-} > "$log/asan.build" 2>&1 \
    && gcc $cflags "$HAKO_SRC"/cmd/*.c "$HAKO_SRC"/cmd/*/*.c "$asan/libvariant.a" ${DEP_LIBS:-} \
         -o "$asan/hako" >> "$log/asan.build" 2>&1 || ok=false
  # The shared-memory part.  ASan cannot follow a process on another stack
  # in its memory, so the ASan build forks the exec command: the production
  # path, the command in hako's memory (CLONE_VM | CLONE_VFORK, the clone3
  # trampoline) until its execve, never runs under it.  A second hako, with
  # UBSan alone, keeps that path (SHARE_MEMORY 1); the SHARED_SLICE files
  # run with it in the same pool; exec.bats's hk_no_alloc test fails should
  # its command not share hako's memory.
  shared=${SHARED_SLICE:-none}
  if $ok && [ "$shared" != none ]; then
    echo "== sanitizers: rebuilding hako with UBSan alone, for $shared"
    ub="-O1 -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined"
    "$here/variant.sh" "$HAKO_SRC" "$HAKO_BUILD" "$asan/ubsan" gcc $ub ${DEP_CFLAGS:-} >> "$log/asan.build" 2>&1 \
      && gcc $base $ub ${DEP_CFLAGS:-} "$HAKO_SRC"/cmd/*.c "$HAKO_SRC"/cmd/*/*.c "$asan/ubsan/libvariant.a" \
           ${DEP_LIBS:-} -o "$asan/ubsan/hako" >> "$log/asan.build" 2>&1 || ok=false
  fi
  for t in ${UNIT_TESTS:-}; do
    $ok || break
    n=$(basename "$t")
    gcc $cflags "$HAKO_SRC/tests/unit/$n.c" "$asan/libvariant.a" ${DEP_LIBS:-} -o "$asan/$n" \
      >> "$log/asan.build" 2>&1 || ok=false
  done
  if ! $ok; then
    tail -30 "$log/asan.build" | sed 's/^/# /'
    echo "not ok 1 - sanitizer build" > "$log/asan-build.tap"
    count sanitizer-build "$log/asan-build.tap"
  else
    mkdir -p "$log/reports"
    export ASAN_OPTIONS="log_path=$log/reports/asan:detect_leaks=1"
    export UBSAN_OPTIONS="log_path=$log/reports/ubsan:print_stacktrace=1:halt_on_error=1"
    for t in ${UNIT_TESTS:-}; do
      run_unit "$asan/$(basename "$t")" "asan:$(basename "$t")"
    done
    if [ "$(id -u)" = 0 ]; then
      files=""
      for name in $slice; do files="$files $here/integration/$name.bats"; done
      # The sanitizer slice checks correctness, not memory bounds
      # (peak_rss_below in helpers.bash).
      export HAKO_SANITIZED=1
      integration_lists asan "$asan/hako" $files
      if [ "$shared" != none ]; then
        files=""
        for name in $shared; do files="$files $here/integration/$name.bats"; done
        integration_lists ubsan "$asan/ubsan/hako" $files
        cat "$log/ubsan.pool" >> "$log/asan.pool"
        cat "$log/ubsan.serial" >> "$log/asan.serial"
      fi
      run_pool "$log/asan.pool"
      run_serial "$log/asan.serial"
      unset HAKO_SANITIZED
    fi
    unset ASAN_OPTIONS UBSAN_OPTIONS
    out="$log/asan-reports.tap"
    # A report that is only LeakSanitizer's "Unable to get registers from
    # thread N." is no finding: the process was killed (SIGKILL from a
    # delete, a deadline or a test) while its exit-time leak check had it
    # stopped, so the check could not run.  Shown, not counted.
    for r in "$log"/reports/*; do
      [ -f "$r" ] || continue
      if grep -qE '^==[0-9]+==Unable to get registers from thread [0-9]+\.$' "$r" \
         && ! grep -vE '^(==[0-9]+==Unable to get registers from thread [0-9]+\.)?$' "$r" | grep -q .; then
        echo "# a leak check cut short by a kill, not a finding: $(basename "$r"): $(head -1 "$r")"
        rm -f "$r"
      fi
    done
    if [ -n "$(ls -A "$log/reports")" ]; then
      # Which processes reported (a report file may be empty), then what.
      ls -l "$log/reports" | sed 's/^/# /'
      head -c 4000 "$log"/reports/* | sed 's/^/# /'
      echo "not ok 1 - sanitizer reports during the slice" > "$out"
    else
      echo "ok 1 - no sanitizer report during the slice" > "$out"
    fi
    count sanitizer-reports "$out"
  fi
fi

out="$log/leftovers.tap"
host_leftovers | sort > "$log/host.after"
left=$(comm -13 "$log/host.before" "$log/host.after")
if [ -n "$left" ]; then
  echo "not ok 1 - the run left these on the host (a test's cleanup missed them)" > "$out"
  printf '%s\n' "$left" | head -n 40 | sed 's/^/# /' >> "$out"
  cat "$out"
else
  echo "ok 1 - nothing left on the host: /tmp, /var/tmp, /run, hako-* cgroups, mounts" > "$out"
fi
count leftovers "$out"

echo "times:$times"
echo "total: $(($(date +%s) - start_all)) s"
# Each failure's own lines once more, last, where a reader of only the end
# of the output (a CI log's tail) sees why: the "not ok" line and the
# diagnostics bats prints under it: its first 10 and last 30 lines.
for t in $failed_taps; do
  echo "== why: $(basename "$t" .tap)"
  awk 'function flush(  i) {
         for (i = 1; i <= n; i++)
           if (n <= 40 || i <= 10 || i > n - 30) print d[i]
           else if (i == 11) printf "#   ... %d lines ...\n", n - 40
         n = 0 }
       /^(ok|not ok) / { flush(); on = /^not ok/; if (on) print; next }
       on && /^#/ { d[++n] = $0 }
       END { flush() }' "$t"
done
[ -n "$failures" ] && echo "failed in:$failures"
echo "unit-test assertions (each program counts once above): $asserts_ok ok, $asserts_bad not ok"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
