#!/bin/sh
# Run every test — the C unit tests, the fuzz targets, the bats integration
# tests and a sanitizer slice — read their TAP, and end with one line:
# "N passed, N failed, N skipped".
# Environment: HAKO (the built binary), UNIT_TESTS (unit test binaries),
# TESTS_FILTER (optional: only integration files whose name matches),
# HAKO_SRC/HAKO_BUILD/DEP_CFLAGS/DEP_LIBS (from make: for the rebuilt variants),
# FUZZ_SECONDS (per fuzz target; 0 skips them), SANITIZE_SLICE (integration
# files run again with an ASan+UBSan hako; "none" skips the slice).
set -u
here=$(cd "$(dirname "$0")" && pwd)
HAKO=${HAKO:-$here/../hako}
export HAKO
log=$(mktemp -d /tmp/hako-tests.XXXXXX)
trap 'rm -rf "$log"' EXIT
pass=0 fail=0 skip=0
failures=""

# count NAME FILE: tally one TAP stream and echo its failures.
count () {
  name=$1 file=$2
  p=$(grep -Eci '^ok [0-9]+' "$file" || true)
  s=$(grep -Eci '^ok [0-9]+.*# skip' "$file" || true)
  f=$(grep -Eci '^not ok [0-9]+' "$file" || true)
  pass=$((pass + p - s)); skip=$((skip + s)); fail=$((fail + f))
  if [ "$f" -gt 0 ]; then
    failures="$failures $name"
  fi
  grep -Ei '^not ok|# skip' "$file" | sed "s|^|  $name: |"
}

# run_unit BINARY NAME: one unit test binary.
run_unit () {
  out="$log/$2.tap"
  echo "== unit: $2"
  if ! "$1" > "$out" 2>&1 && ! grep -Eq '^not ok' "$out"; then
    # crashed before reporting a failure: count the crash itself
    echo "not ok 999 - $2 exited abnormally" >> "$out"
    tail -20 "$out" | sed 's/^/# /'
  fi
  grep -E '^#' "$out" | head -20
  count "$2" "$out"
}

# run_bats FILE NAME: one integration file, with the HAKO of the environment.
run_bats () {
  out="$log/$2.tap"
  echo "== integration: $2"
  bats --tap "$1" > "$out" 2>&1
  grep -E '^#' "$out" | head -40
  count "$2" "$out"
  if ! grep -Eq '^1\.\.[0-9]+' "$out"; then
    echo "  $2: no TAP plan (bats failed to run)"; fail=$((fail + 1))
  fi
}

for t in ${UNIT_TESTS:-}; do
  run_unit "$t" "$(basename "$t")"
done

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
  for f in "$here"/integration/*.bats; do
    [ -e "$f" ] || continue
    case "$(basename "$f")" in *${TESTS_FILTER:-}*) ;; *) continue ;; esac
    run_bats "$f" "$(basename "$f")"
  done
fi

# The sanitizer slice: hako and the unit tests rebuilt with ASan+UBSan, the
# unit tests and the SANITIZE_SLICE integration files run with them.  Any
# sanitizer report (written to files, so a test that expects a failure
# cannot hide one) fails the slice.
slice=${SANITIZE_SLICE:-none}
if [ "$slice" != none ] && [ -n "${HAKO_SRC:-}" ]; then
  asan="$log/asan"
  echo "== sanitizers: rebuilding hako and the unit tests with ASan+UBSan"
  flags="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
  cflags="-std=gnu11 -g -I$HAKO_SRC -I$HAKO_BUILD -include config.h -DHAKO_VERSION=\"variant\""
  cflags="$cflags $flags ${DEP_CFLAGS:-}"
  ok=true
  "$here/variant.sh" "$HAKO_SRC" "$HAKO_BUILD" "$asan" gcc $flags ${DEP_CFLAGS:-} > "$log/asan.build" 2>&1 \
    && gcc $cflags "$HAKO_SRC"/cmd/*.c "$asan/libvariant.a" ${DEP_LIBS:-} \
         -o "$asan/hako" >> "$log/asan.build" 2>&1 || ok=false
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
      for name in $slice; do
        [ -e "$here/integration/$name.bats" ] || continue
        case "$name" in *${TESTS_FILTER:-}*) ;; *) continue ;; esac
        HAKO="$asan/hako" run_bats "$here/integration/$name.bats" "asan:$name.bats"
      done
    fi
    unset ASAN_OPTIONS UBSAN_OPTIONS
    out="$log/asan-reports.tap"
    if [ -n "$(ls -A "$log/reports")" ]; then
      head -c 4000 "$log"/reports/* | sed 's/^/# /'
      echo "not ok 1 - sanitizer reports during the slice" > "$out"
    else
      echo "ok 1 - no sanitizer report during the slice" > "$out"
    fi
    count sanitizer-reports "$out"
  fi
fi

[ -n "$failures" ] && echo "failed in:$failures"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
