#!/bin/sh
# The include arrows point down only: cmd → runtime, images → oci → lib, and
# runtime and images never include each other.  Prints one TAP line per
# source directory; a wrong-way include names the file and the header.
# Usage: layers.sh SRCDIR
set -u
src=${1:-.}
cd "$src" || exit 1
# allowed DIR: the directories DIR's files may include from.
allowed () {
  case $1 in
    cmd) echo "cmd runtime images oci lib" ;;
    runtime) echo "runtime oci lib" ;;
    images) echo "images oci lib" ;;
    oci) echo "oci lib" ;;
    lib) echo "lib" ;;
    init) echo "init lib" ;;
  esac
}
n=0
echo "1..6"
for dir in cmd runtime images oci lib init; do
  n=$((n + 1))
  bad=""
  for f in "$dir"/*.c "$dir"/*.h "$dir"/*/*.c "$dir"/*/*.h; do
    [ -e "$f" ] || continue
    for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*"/\1/p' "$f" | sort -u); do
      case " $(allowed "$dir") " in
        *" $inc "*) ;;
        *) bad="$bad $f→$inc" ;;
      esac
    done
  done
  if [ -z "$bad" ]; then
    echo "ok $n - $dir/ includes only $(allowed "$dir")"
  else
    echo "not ok $n - $dir/ includes the wrong way:$bad"
  fi
done
