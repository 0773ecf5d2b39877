#!/usr/bin/env bats
# readme: README.md's ```sh blocks replayed in order as one session, against
# the test fixtures, with only the substitutions readme.subst lists (paths,
# downloads, the build): a tour command that breaks fails here.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

README=${README:-$BATS_TEST_DIRNAME/../../README.md}
SUBST=$BATS_TEST_DIRNAME/readme.subst

# The tour as a script: every logical line of every ```sh block (backslash
# continuations joined), each preceded by its README line number; skip and
# sub rules of readme.subst applied.
tour_script () {
  awk '
    /^```sh[[:space:]]*$/ { inblock = 1; next }
    /^```/ { inblock = 0; next }
    !inblock { next }
    {
      if (cont != "") { cont = cont " " $0 } else { cont = $0; start = NR }
      if (cont ~ /\\$/) { sub(/\\$/, "", cont); next }
      if (cont !~ /^[[:space:]]*(#.*)?$/) printf "%d\t%s\n", start, cont
      cont = ""
    }' "$README" | while IFS=$'\t' read -r n line; do
    local kind pat why skipped=""
    while IFS=$'\t' read -r kind pat why; do
      case "$kind" in
        skip) printf '%s\n' "$line" | grep -Eq -- "$pat" && skipped=1 ;;
        sub) line=$(printf '%s\n' "$line" | sed -e "$pat") ;;
      esac
    done < <(grep -v '^#' "$SUBST" | grep .)
    if [ -n "$skipped" ]; then
      printf 'echo "README.md:%d: skipped"\n' "$n"
    else
      printf 'step %d %q\n' "$n" "$line"
    fi
  done
}

@test "README.md: every shell block of the tour runs, in order" {
  command -v runc >/dev/null || skip "runc is not installed (the tour's bundle is made by runc spec)"
  [ -f "$README" ] || skip "no README.md beside the tests"
  export TOUR="$TEST_ROOT/tour"
  mkdir -p "$TOUR/tmp" "$TOUR/srv" "$TOUR/etc/hako"
  chmod -R 711 "$TOUR"
  # The tour's own directory reads as a checkout does (0755): the CI
  # example binds "$PWD" into a sandbox whose user is not the owner.
  chmod 755 "$TOUR"
  # The README's relative paths (tests/fixtures/...) are the source tree's.
  ln -s "$(cd "$BATS_TEST_DIRNAME/.." && pwd)" "$TOUR/tests"
  tour_script > "$TEST_ROOT/tour.sh"
  # Not a test that asserts nothing: the tour has dozens of commands.
  [ "$(grep -c '^step ' "$TEST_ROOT/tour.sh")" -ge 30 ]
  cat > "$TEST_ROOT/run-tour.sh" <<'EOS'
set -u -o pipefail
# hako with the test's roots; the README's /etc/hako files are the tour's.
hako () {
  # Read only once the tour has written it, as hako reads /etc/hako/node.json.
  if [ -f "$TOUR/etc/hako/node.json" ]; then export HAKO_NODE_CONFIG=$TOUR/etc/hako/node.json; fi
  if [ "${1:-}" = image ] && [ "${2:-}" = import ]; then
    "$HAKO" --root "$STATE" --data-root "$DATA" image import --policy "$TOUR/etc/hako/policy.json" "${@:3}"
  else
    "$HAKO" --root "$STATE" --data-root "$DATA" "$@"
  fi
}
# for_a_while hako ARGS: hako ARGS stopped after 2 s (timeout(1) runs no function).
for_a_while () {
  shift
  timeout 2 "$HAKO" --root "$STATE" --data-root "$DATA" "$@"
  local r=$?
  [ "$r" = 124 ] || [ "$r" = 0 ]
}
unless_criu_refused () {
  if command -v criu >/dev/null && criu check >/dev/null 2>&1; then "$@"; return; fi
  local out r; out=$("$@" 2>&1); r=$?
  echo "$out"; [ "$r" = 125 ] || return 1; [[ "$out" == *"CRIU cannot work on this host: criu check failed"* ]]
}
step () {
  local n=$1 line=$2
  echo "+ README.md:$n: $line"
  eval "$line" < /dev/null
  local r=$?
  if [ "$r" != 0 ]; then
    echo "README.md:$n: exit status $r: $line"
    exit 1
  fi
}
cd "$TOUR"
EOS
  cat "$TEST_ROOT/tour.sh" >> "$TEST_ROOT/run-tour.sh"
  echo 'echo "tour done"' >> "$TEST_ROOT/run-tour.sh"
  # Into a file, not a pipe: a sandbox the tour creates (create keeps runc's
  # stdio) must not hold the test open when a later line fails.
  local status=0
  bash "$TEST_ROOT/run-tour.sh" > "$TEST_ROOT/tour.log" 2>&1 || status=$?
  tail -40 "$TEST_ROOT/tour.log"
  [ "$status" -eq 0 ]
  [ "$(tail -1 "$TEST_ROOT/tour.log")" = "tour done" ]
}
