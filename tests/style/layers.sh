#!/bin/sh
# The include arrows point down only: cmd → runtime, images → oci → lib, and
# runtime and images never include each other.  Inside runtime/ the rooms
# are in an order too (ROOMS, bottom first): a room's files include its own
# headers and those of the rooms below it, never one above, and every file
# of runtime/ is in one of them.  Prints one TAP line per source directory
# and one per room; a wrong-way include names the file and the header.
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
# runtime/'s rooms, bottom first (docs/architecture.md says what each holds).
ROOMS="cgroup state node proxy confine build exec files save lifecycle doctor"
dirs="cmd runtime images oci lib init"
set -- $ROOMS
echo "1..$((6 + $# + 1))"
n=0
for dir in $dirs; do
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
# Each room: the rooms up to it are allowed; an include of a room above it,
# of no room (a header directly in runtime/) or of an unknown one is not.
below=""
for room in $ROOMS; do
  n=$((n + 1))
  below="$below $room"
  bad=""
  for f in runtime/"$room"/*.c runtime/"$room"/*.h; do
    [ -e "$f" ] || continue
    for inc in $(sed -n 's/^#include "\(runtime\/[^"]*\)"/\1/p' "$f" | sort -u); do
      r=${inc#runtime/}
      case $r in */*) r=${r%%/*} ;; *) r="" ;; esac
      case " $below " in
        *" $r "*) ;;
        *) bad="$bad $f→$inc" ;;
      esac
    done
  done
  if [ -z "$bad" ]; then
    echo "ok $n - runtime/$room/ includes only runtime/{$(echo $below | tr ' ' ,)}"
  else
    echo "not ok $n - runtime/$room/ includes a room above it:$bad"
  fi
done
# No file of runtime/ outside the rooms: a new one goes into the room of
# what it does (or a new room, placed in ROOMS).
n=$((n + 1))
bad=""
for f in runtime/* runtime/*/*; do
  [ -e "$f" ] || continue
  case $f in *.o | */.deps | */.dirstamp) continue ;; esac
  r=${f#runtime/}
  case $r in
    */*) r=${r%%/*} ;;
    *) [ -d "$f" ] && continue ;;
  esac
  case " $ROOMS " in
    *" $r "*) ;;
    *) bad="$bad $f" ;;
  esac
done
if [ -z "$bad" ]; then
  echo "ok $n - every file of runtime/ is in one of its rooms"
else
  echo "not ok $n - files of runtime/ in no room of layers.sh's ROOMS:$bad"
fi
