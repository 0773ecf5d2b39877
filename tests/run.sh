#!/bin/sh
# Run every test — the C unit tests and the bats integration tests — read
# their TAP, and end with one line: "N passed, N failed, N skipped".
# Environment: HAKO (the built binary), UNIT_TESTS (unit test binaries),
# TESTS_FILTER (optional: only integration files whose name matches),
# FUZZ_SRC/FUZZ_BUILD/FUZZ_SECONDS (the fuzz targets; tests/fuzz/run.sh).
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

for t in ${UNIT_TESTS:-}; do
  out="$log/$(basename "$t").tap"
  echo "== unit: $t"
  if ! "$t" > "$out" 2>&1 && ! grep -Eq '^not ok' "$out"; then
    # crashed before reporting a failure: count the crash itself
    echo "not ok 999 - $t exited abnormally" >> "$out"
  fi
  grep -E '^#' "$out" | head -20
  count "$t" "$out"
done

# Fuzz targets, each for FUZZ_SECONDS (tests/fuzz/run.sh; `make fuzz` runs longer).
if [ -n "${FUZZ_SRC:-}" ]; then
  out="$log/fuzz.tap"
  echo "== fuzz: ${FUZZ_SECONDS:-10}s per target"
  "$here/fuzz/run.sh" "$FUZZ_SRC" "$FUZZ_BUILD" "${FUZZ_SECONDS:-10}" > "$out" 2>&1
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
    out="$log/$(basename "$f").tap"
    echo "== integration: $(basename "$f")"
    bats --tap "$f" > "$out" 2>&1
    grep -E '^#' "$out" | head -40
    count "$(basename "$f")" "$out"
    if ! grep -Eq '^1\.\.[0-9]+' "$out"; then
      echo "  $(basename "$f"): no TAP plan (bats failed to run)"; fail=$((fail + 1))
    fi
  done
fi

[ -n "$failures" ] && echo "failed in:$failures"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
