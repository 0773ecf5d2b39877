#!/bin/bash
# tests/watchdog.sh [-o FILE] SECONDS ROOTS CMD...: run CMD (one bats file,
# or a bench piece); if it is still running after SECONDS, say so on stdout
# (or at the end of FILE) as a TAP "not ok" and comments with the
# processes under it (what each waits in), kill them, and remove what the
# killed tests could not: the sandboxes, mounts and processes of every test
# root listed in the file ROOTS (helpers.bash's hako_setup appends each
# TEST_ROOT there).  Exit status: CMD's, or 124 when it was killed.
#
# Why: a hung test used to hold the whole suite until CI's own limit killed
# it, and the CI log then said nothing of what hung.
set -u
if [ "$1" = -o ]; then exec 4>> "$2"; shift 2; else exec 4>&1; fi
secs=$1 roots=$2
shift 2

"$@" 4>&- &
pid=$!
trap 'expired=1' USR1
expired=""
(
  sleep "$secs" &
  trap 'kill $! 2> /dev/null; exit 0' TERM
  wait
  kill -USR1 $$ 2> /dev/null
) &
dog=$!
while :; do
  wait "$pid"
  rc=$?
  [ -n "$expired" ] || break
  kill -0 "$pid" 2> /dev/null || break

  # descendants PID: PID and every process under it.
  descendants () {
    ps -e -o pid= -o ppid= | awk -v root="$1" '
      { parent[$1] = $2; pids[NR] = $1 }
      END {
        keep[root] = 1
        do { more = 0
          for (i in pids) { p = pids[i]
            if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; more = 1 } }
        } while (more)
        for (p in keep) print p
      }'
  }
  tree=$(descendants "$pid" | tr '\n' ',' | sed 's/,$//')
  {
    echo "not ok 999 - killed by tests/watchdog.sh: still running after $secs s: $*"
    echo "# watchdog: the processes under it, and hako's anywhere (wchan: where each waits):"
    { ps -o pid,ppid,etimes,stat,wchan:24,args -p "$tree"
      ps -e -o pid,ppid,etimes,stat,wchan:24,args | awk 'NR > 1 && /hako/ && !/watchdog/'
    } 2> /dev/null | cut -c1-220 | sed 's/^/#   /'
    for p in $(descendants "$pid" | sort -n | tail -n 3); do
      [ -r "/proc/$p/stack" ] || continue
      echo "# watchdog: kernel stack of $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null | cut -c1-80)):"
      sed 's/^/#     /' "/proc/$p/stack" 2> /dev/null | head -n 12
    done
  } >&4
  # shellcheck disable=SC2046
  kill -TERM $(descendants "$pid") 2> /dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2> /dev/null || break; sleep 1; done
  # shellcheck disable=SC2046
  kill -KILL $(descendants "$pid") 2> /dev/null
  wait "$pid" 2> /dev/null
  rc=124
  break
done
kill "$dog" 2> /dev/null
wait "$dog" 2> /dev/null

# The killed tests' teardowns did not run: do their work.
if [ "$rc" = 124 ] && [ -s "$roots" ]; then
  hako=${HAKO:-hako}
  while read -r root; do
    [ -d "$root" ] || continue
    for id in $(ls "$root/state" 2> /dev/null); do
      "$hako" --root "$root/state" --data-root "$root/data" delete --force "$id" > /dev/null 2>&1
    done
    for p in $(find /proc/[0-9]*/root -maxdepth 0 -lname "*$root*" 2> /dev/null); do
      p=${p#/proc/}
      kill -KILL "${p%/root}" 2> /dev/null
    done
    awk -v r="$root" 'index($5, r) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
      while read -r m; do umount -l "$m" 2> /dev/null; done
    rm -rf "$root"
    echo "# watchdog: removed what the killed test left in $root" >&4
  done < "$roots"
fi
exit "$rc"
