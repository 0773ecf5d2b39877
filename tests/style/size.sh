#!/bin/sh
# Size limits a reader can hold in mind: no source file over 1,000 lines and
# no function over 80 body lines (the lines between a column-0 `{` and the
# next column-0 `}`, as .clang-format lays out a function).  Two TAP lines;
# each offender is named with its size, so the fix is to split it.
# Usage: size.sh SRCDIR
set -u
cd "${1:-.}" || exit 1
max_file=1000
max_func=80
files=$(find cmd runtime images oci lib -name '*.[ch]' 2> /dev/null | sort)
echo "1..2"
bad=""
for f in $files; do
  n=$(wc -l < "$f")
  [ "$n" -gt "$max_file" ] && bad="$bad $f($n)"
done
if [ -z "$bad" ]; then
  echo "ok 1 - no source file over $max_file lines"
else
  echo "not ok 1 - source files over $max_file lines:$bad"
fi
bad=$(for f in $files; do
  case $f in *.c) ;; *) continue ;; esac
  awk -v max="$max_func" -v file="$f" '
    # The name is on the line before the `{` (or the one before that when
    # the parameters wrapped onto an indented line).
    /^\{/ && !open { open = NR; name = (prev ~ /^[ \t]/) ? prev2 : prev }
    /^\}/ && open {
      if (NR - open - 1 > max) {
        gsub(/__attribute__ *\(\([^)]*\)\)/, "", name)
        sub(/\(.*/, "", name); n = split(name, w, /[ *]+/)
        printf " %s:%s(%d)", file, w[n] == "" ? w[n - 1] : w[n], NR - open - 1
      }
      open = 0
    }
    { prev2 = prev; prev = $0 }' "$f"
done)
if [ -z "$bad" ]; then
  echo "ok 2 - no function over $max_func lines"
else
  echo "not ok 2 - functions over $max_func lines:$bad"
fi
