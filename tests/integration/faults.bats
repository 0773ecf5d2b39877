#!/usr/bin/env bats
# Fault injection beyond create (errors.bats kills create at each sync point):
# hako killed with SIGKILL at random moments of start, exec and delete, and a
# full disk under put.  Afterwards the sandbox is in a state the verbs accept,
# and `delete --force` leaves nothing behind.

load helpers

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () {
  if [ -n "${SMALL:-}" ]; then umount "$SMALL" 2>/dev/null || true; fi
  hako_teardown
}

delays="0 0.001 0.002 0.005 0.01 0.02 0.05"

# status_of ID: the status `state` reports, or "gone".
status_of () { $H state "$1" 2>/dev/null | jq -r .status || echo gone; }

@test "kill -9 at random moments during start: created or running, never stuck; delete --force cleans up" {
  b=$(new_bundle fstart)
  set_args "$b" sleep 1000
  for delay in $delays; do
    $H create --bundle "$b" fstart
    $H start fstart 2>/dev/null & starter=$!
    sleep $delay
    kill -9 $starter 2>/dev/null || true
    wait $starter || true
    s=$(status_of fstart)
    [[ "$s" == created || "$s" == running ]] || { echo "after an interrupted start: $s" >&2; false; }
    # An interrupted start can always be completed or undone.
    if [ "$s" = created ]; then $H start fstart; fi
    [ "$(status_of fstart)" = running ]
    $H delete --force fstart
    [ -z "$(leak_report)" ]
  done
}

@test "kill -9 at random moments during exec --timeout: the sandbox runs on, the command's tree dies" {
  b=$(new_bundle fexec)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" fexec
  pid=$($H state fexec | jq -r .pid)
  for delay in $delays 0.1; do
    $H exec --timeout 30s fexec -- sh -c 'sleep 20 & setsid sleep 20 & sleep 20' > /dev/null 2>&1 & execer=$!
    sleep $delay
    kill -9 $execer 2>/dev/null || true
    wait $execer || true
  done
  [ "$(status_of fexec)" = running ]
  [ "$($H state fexec | jq -r .pid)" = "$pid" ]
  # A timed command never outlives its hako: killed with it, whole tree.
  for i in $(seq 50); do
    n=$($H exec fexec -- sh -c 'ps -o args | grep -c "^[s]leep 20"' || true)
    [ "$n" = 0 ] && break
    sleep 0.1
  done
  [ "$n" = 0 ]
  # The sandbox still serves exec.
  [ "$($H exec fexec -- echo alive)" = alive ]
  $H delete --force fexec
  pid_gone "$pid"
  [ -z "$(leak_report)" ]
}

@test "kill -9 at random moments during delete: delete --force finishes the job" {
  b=$(new_bundle fdel)
  set_args "$b" sleep 1000
  for delay in $delays; do
    $H run --detach --bundle "$b" fdel
    pid=$($H state fdel | jq -r .pid)
    $H delete --force fdel 2>/dev/null & deleter=$!
    sleep $delay
    kill -9 $deleter 2>/dev/null || true
    wait $deleter || true
    if [ -e "$STATE/fdel" ]; then $H delete --force fdel; fi
    [ ! -e "$STATE/fdel" ]
    pid_gone "$pid"
    [ -z "$(leak_report)" ]
  done
}

@test "a full disk under put: 125, the old file intact, no partial file" {
  # The host profile's /work lives in the data root: put that on a 1 MiB tmpfs.
  mkdir -p "$DATA"
  SMALL=$DATA
  mount -t tmpfs -o size=1m,mode=0711 hako-test-small "$SMALL"
  $H run --detach --profile host full -- sleep 1000
  echo old > "$TEST_ROOT/old"
  $H put full /work/f < "$TEST_ROOT/old"
  head -c 3M /dev/zero > "$TEST_ROOT/big"
  run $H put full /work/f < "$TEST_ROOT/big"
  [ "$status" -eq 125 ]
  [[ "$output" == *"No space left on device"* ]]
  [ "$($H get full /work/f)" = old ]
  # Nothing half-written beside it, visible or not.
  [ "$($H exec full -- ls -A /work)" = f ]
  [ "$(df -k --output=used "$SMALL" | tail -1)" -lt 512 ]
  $H delete --force full
  umount "$SMALL"
  SMALL=
}
