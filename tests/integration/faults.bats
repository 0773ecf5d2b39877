#!/usr/bin/env bats
# Fault injection beyond create (errors.bats kills create at each sync point):
# hako killed with SIGKILL at random moments of start, exec and delete, at
# each point of an image import (HAKO_TEST_STALL) and at random moments of
# it, and a full disk under put and import.  Afterwards the sandbox is in a
# state the verbs accept, `delete --force` leaves nothing behind, and the
# image store verifies, holds no temporary and takes the import again.

load helpers

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () {
  hako_setup
  accept_policy
  H_IMPORT="$H image import --policy $TEST_ROOT/accept.json"
}
teardown () {
  # A failed test's sandbox holds mounts on the small data root: its
  # sandboxes go first, or the umount is refused and the mount leaks.
  if [ -n "${SMALL:-}" ]; then
    local id
    for id in $(ls "$STATE" 2>/dev/null); do $H delete --force "$id" >/dev/null 2>&1 || true; done
    umount "$SMALL" 2>/dev/null || true
  fi
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

# ---- image import ----------------------------------------------------------

import_points="import-extracted import-doc-written import-layer-unpacked import-blob-committed import-layer-committed import-before-names import-names-written"

# temporaries: what an import writes before renaming it into place.
temporaries () { find "$DATA/images" -name '.tmp-*' -o -path "$DATA/images/tmp/*" 2>/dev/null; }

# store_recovers SOURCE: after an interrupted import, `image verify` passes
# and sweeps every temporary; a name in the store is a whole image; the
# import then succeeds and `image rm` leaves no blob or layer.  (No mount or
# process either: the teardown's leak_report, once per test, for it is slow.)
store_recovers () {
  run $H image verify
  [ "$status" -eq 0 ] || { echo "verify after an interrupted import: $output" >&2; false; }
  [ -z "$(temporaries)" ] || { echo "left after verify: $(temporaries)" >&2; false; }
  local name
  for name in $($H image ls -q); do $H image inspect "$name" > /dev/null; done
  $H_IMPORT "$1" --name fault > /dev/null
  $H image verify > /dev/null
  [ -z "$(temporaries)" ]
  $H image rm fault
  [ -z "$(find "$DATA/images/blobs/sha256" "$DATA/images/layers" -mindepth 1 -maxdepth 1)" ]
}

@test "kill -9 at each point of an image import: nothing partial, the store verifies, the import succeeds again" {
  local src point n=0
  for src in "$IMG/oci.tar" "$IMG/docker.tar" "$IMG/layout:latest"; do
    for point in $import_points; do
      [ "$point" = import-extracted ] && [[ "$src" == *layout* ]] && continue
      rm -rf "$DATA"
      HAKO_TEST_STALL=$point $H_IMPORT "$src" --name fault > /dev/null 2>&1 & importer=$!
      for i in $(seq 100); do [ -e "$DATA/images/stalled" ] && break; sleep 0.05; done
      [ -e "$DATA/images/stalled" ] || { echo "$src: never reached $point" >&2; false; }
      kill -9 $importer
      wait $importer || true
      rm "$DATA/images/stalled"
      # Killed before the name was recorded: no image.
      [ -z "$($H image ls -q)" ]
      store_recovers "$src"
      n=$((n + 1))
    done
  done
  echo "imports killed at a named point: $n"
  [ "$n" -eq 20 ]
}

@test "kill -9 at random moments during image import: the store verifies, the import succeeds again" {
  local src delay
  for src in "$IMG/oci.tar" "$IMG/layout:latest"; do
    # An import of this image takes 100-200 ms.
    for delay in 0.01 0.03 0.06 0.1 0.15; do
      rm -rf "$DATA"
      $H_IMPORT "$src" --name fault > /dev/null 2>&1 & importer=$!
      sleep $delay
      kill -9 $importer 2>/dev/null || true
      wait $importer || true
      store_recovers "$src"
    done
  done
}

@test "a full disk during image import: 125 naming ENOSPC, nothing partial, the store verifies" {
  mkdir -p "$DATA"
  SMALL=$DATA
  local src opts
  # Out of bytes (the blob's copy) and out of inodes (the unpack).
  for opts in size=1m size=10m,nr_inodes=60; do
    mount -t tmpfs -o $opts,mode=0711 hako-test-small "$SMALL"
    for src in "$IMG/oci.tar" "$IMG/docker.tar" "$IMG/layout:latest"; do
      run $H_IMPORT "$src" --name full
      [ "$status" -eq 125 ]
      [[ "$output" == *"image import"*"No space left on device"* ]] || { echo "$opts $src: $output" >&2; false; }
      [ -z "$(temporaries)" ]
      [ -z "$($H image ls -q)" ]
      $H image verify
    done
    umount "$SMALL"
  done
  SMALL=
}
