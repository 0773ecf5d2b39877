#!/bin/sh
# Assertions that can fail.  bats runs a test with `set -e`, and bash's
# errexit ignores a command negated with `!` and every command of an `&&`
# list but the last: `! grep -q secret log` or `[ "$a" = 1 ] && [ "$b" = 2 ]`
# in the middle of a test passes whatever the output (only a function's
# last command is checked, as its status).  Two TAP lines, each offender
# named by file:line, a third that every file parses, and a fourth that
# it finds what tests/style/bats.plant plants:
#   1. a `!` command (alone, or ending an `&&` list) that is not its
#      function's last command: write `run ! cmd`, or `! cmd || false`;
#   2. an `&&` list of checks (`[ ]`, `[[ ]]`, `test`, `!`, `kill -0`,
#      `grep -q`, `cmp`, `diff`, `jq -e` last) that is not the function's
#      last command: one check a line.  A guard is fine: `[ c ] && skip`,
#      `&& break`, `&& kill`, anything with `||` (`[ a ] && [ b ] || false`).
# bash itself parses each file (bats's `@test` lines made functions, the
# whole file wrapped in one), and `declare -f` prints it one command a line
# with continuations joined and comments gone; the awk below walks that,
# tracking quotes, $( ), [[ ]] and here-documents.
# Usage: bats.sh SRCDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "${1:-.}" || exit 1
files=$(find tests -name '*.bats' -o -name '*.bash' | sort)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hako-bats-lint.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/found"
: > "$tmp/unparsed"
# walk FILE: its findings, FILE:LINE <tab> KIND <tab> WHAT, on stdout.
walk () {
  # `@test "name" {` becomes `__t_LINE () {` (bats's own rewrite, keyed by
  # the line so the test is found again).
  { echo '__file__ () {'
    awk '/^[ \t]*@test[ \t].*\{[ \t]*$/ { print "__t_" NR " () {"; next } { print }' "$1"
    echo; echo '}'; } > "$tmp/wrapped"
  if ! bash -c '. "$1" && declare -f __file__' _ "$tmp/wrapped" > "$tmp/parsed" 2> "$tmp/err"; then
    echo "$1: $(head -c 300 "$tmp/err")" >> "$tmp/unparsed"
    return
  fi
  awk -v file="$1" -f "$here/bats.awk" "$1" "$tmp/parsed"
}
for f in $files; do
  walk "$f" >> "$tmp/found"
done
# The walker's own proof: tests/style/bats.plant, whose findings are known.
planted=$(walk "$here/bats.plant" | cut -f1,2 | sed 's|.*/||' | tr '\t\n' ' ,')
echo "1..4"
for kind in bang chain; do
  n=1 what="no \`!\` command that is not its function's last (set -e ignores it; run ! or || false)"
  [ $kind = chain ] && n=2 what="no \`&&\` chain of checks that is not its function's last (set -e checks only the last; one a line)"
  bad=$(grep "	$kind	" "$tmp/found" | cut -f1,3)
  if [ -z "$bad" ]; then
    echo "ok $n - $what"
  else
    echo "not ok $n - $what: $(printf '%s\n' "$bad" | wc -l) found"
    printf '%s\n' "$bad" | sed 's/^/#   /; s/	/: /'
  fi
done
if [ -s "$tmp/unparsed" ]; then
  echo "not ok 3 - every bats file parses as bash"
  sed 's/^/#   /' "$tmp/unparsed"
else
  echo "ok 3 - every bats file parses as bash"
fi
want="bats.plant:15 bang,bats.plant:17 chain,bats.plant:18 bang,bats.plant:19 chain,"
if [ "$planted" = "$want" ]; then
  echo "ok 4 - it finds what tests/style/bats.plant plants, and nothing else"
else
  echo "not ok 4 - it finds what tests/style/bats.plant plants, and nothing else"
  echo "#   found: $planted"
  echo "#   want:  $want"
fi
