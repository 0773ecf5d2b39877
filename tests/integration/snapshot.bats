#!/usr/bin/env bats
# snapshot (a frozen copy of a sandbox's writable state), branches from it
# (create/run --from-snapshot), hibernate and wake.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () { hako_setup; }
teardown () { hako_teardown; }

# The host profile's /work of sandbox ID on the host.
work_of () { echo "$DATA/sandboxes/$1/work"; }

# A sandbox whose writer appends whole lines (one write(2) each) to /work/log.
start_writer () {
  $H run --detach --profile host "$1" -- sh -c \
    'i=0; while :; do echo "line $i $(date +%s%N)" >> /work/log; i=$((i+1)); done'
  for i in $(seq 50); do [ -s "$(work_of "$1")/log" ] && break; sleep 0.1; done
  [ -s "$(work_of "$1")/log" ]
}

# Every line of FILE is whole: "line N NANOSECONDS".
whole_lines () {
  [ -s "$1" ]
  ! grep -qvE '^line [0-9]+ [0-9]+$' "$1"
}

@test "snapshot while a writer appends: no torn line, the sandbox writes on; files keep their kind" {
  start_writer w
  w=$(work_of w)
  # What the copy must keep, made beside the writer's log.
  echo data > "$w/file"
  ln "$w/file" "$w/hard"
  ln -s /etc/passwd "$w/link"
  truncate -s 64M "$w/sparse"
  printf end | dd of="$w/sparse" bs=1 seek=$((64 * 1024 * 1024 - 3)) conv=notrunc 2>/dev/null
  mknod "$w/whiteout" c 0 0
  mkdir "$w/opaque"
  setfattr -n trusted.overlay.opaque -v y "$w/opaque"
  setfattr -n user.note -v kept "$w/file"
  chown 1000000007:1000000008 "$w/file"
  chmod 4750 "$w/file"
  touch -d '2001-02-03 04:05:06' "$w/file"
  sleep 0.3
  $H snapshot w "$TEST_ROOT/snap"
  d="$TEST_ROOT/snap/data"
  whole_lines "$d/log"
  # The sandbox carries on: running, its log grows past the copy.
  [ "$($H state w | jq -r .status)" = running ]
  n=$(wc -l < "$d/log")
  for i in $(seq 50); do [ "$(wc -l < "$w/log")" -gt "$n" ] && break; sleep 0.1; done
  [ "$(wc -l < "$w/log")" -gt "$n" ]
  # Hardlink, symlink (not followed), sparse, whiteout, xattrs, owner, mode, time.
  [ "$(stat -c %i "$d/file")" = "$(stat -c %i "$d/hard")" ]
  [ "$(readlink "$d/link")" = /etc/passwd ]
  [ "$(stat -c %s "$d/sparse")" = $((64 * 1024 * 1024)) ]
  [ "$(du -k "$d/sparse" | cut -f1)" -lt 1024 ]
  [ "$(tail -c 3 "$d/sparse")" = end ]
  [ "$(stat -c '%F %t:%T' "$d/whiteout")" = "character special file 0:0" ]
  [ "$(getfattr --only-values -n trusted.overlay.opaque "$d/opaque")" = y ]
  [ "$(getfattr --only-values -n user.note "$d/file")" = kept ]
  [ "$(stat -c '%u:%g %a %Y' "$d/file")" = "1000000007:1000000008 4750 $(date -d '2001-02-03 04:05:06' +%s)" ]
  [ "$(stat -c '%u:%g' "$d")" = "$(stat -c '%u:%g' "$w")" ]
  # Metadata, the frozen config byte for byte; DEST is closed to other users.
  jq -e '.source == "w" and .kind == "workdir" and (.hakoVersion | length > 0) and (.created | length > 0)' \
    "$TEST_ROOT/snap/snapshot.json"
  cmp "$TEST_ROOT/snap/config.json" "$STATE/w/config.json"
  [ "$(stat -c %a "$TEST_ROOT/snap")" = 700 ]
}

@test "three branches of one snapshot diverge; none sees another's writes or the source's" {
  $H run --detach --profile host src -- sh -c 'echo base > /work/base; sleep 1000'
  for i in $(seq 50); do [ -e "$(work_of src)/base" ] && break; sleep 0.1; done
  $H snapshot src "$TEST_ROOT/snap"
  $H exec src sh -c 'echo later > /work/later'
  for b in b1 b2; do $H create --from-snapshot "$TEST_ROOT/snap" "$b"; $H start "$b"; done
  $H run --detach --from-snapshot "$TEST_ROOT/snap" b3
  for b in b1 b2 b3; do $H exec "$b" sh -c "echo $b > /work/$b; echo $b >> /work/base"; done
  for b in b1 b2 b3; do
    [ "$($H exec "$b" ls /work | tr '\n' ' ')" = "$b base " ]
    [ "$($H exec "$b" cat /work/base | tr '\n' ' ')" = "base $b " ]
  done
  [ "$($H exec src ls /work | tr '\n' ' ')" = "base later " ]
  [ "$(cat "$TEST_ROOT/snap/data/base")" = base ]
  # The snapshot's own process, the same config.
  [ "$(jq -c .process.args "$STATE/b1/config.json")" = "$(jq -c .process.args "$STATE/src/config.json")" ]
  # Only the snapshot's config: no --bundle, --image, no command.
  run -125 $H create --from-snapshot "$TEST_ROOT/snap" --profile host b4
  run -125 $H run --from-snapshot "$TEST_ROOT/snap" b4 -- true
  run -125 $H create --from-snapshot "$TEST_ROOT/missing" b4
  [ ! -e "$STATE/b4" ]
}

@test "image sandbox: the writable layer with its whiteouts; a branch sees writes and deletions" {
  import_busybox
  $H run --detach --image busybox img -- sleep 1000
  $H exec img sh -c 'echo mine > /srv/mine; rm /etc/hako-image'
  $H snapshot img "$TEST_ROOT/snap"
  d="$TEST_ROOT/snap/data"
  [ "$(cat "$d/srv/mine")" = mine ]
  [ "$(stat -c '%F %t:%T' "$d/etc/hako-image")" = "character special file 0:0" ]
  jq -e '.kind == "image" and (.image.id | startswith("sha256:"))' "$TEST_ROOT/snap/snapshot.json"
  $H create --from-snapshot "$TEST_ROOT/snap" br
  $H start br
  [ "$($H exec br cat /srv/mine)" = mine ]
  run $H exec br cat /etc/hako-image
  [ "$status" -ne 0 ]
  $H exec br sh -c 'echo br > /srv/br'
  run $H exec img cat /srv/br
  [ "$status" -ne 0 ]
  # The image gone from the store: the branch is refused, naming it.
  $H delete --force br
  $H delete --force img
  $H image rm busybox
  run -125 $H create --from-snapshot "$TEST_ROOT/snap" br2
  [[ "$output" == *"image sha256:"*"no longer in the store"* ]]
  [ ! -e "$STATE/br2" ]
}

@test "a failed or interrupted snapshot leaves no DEST and a thawed sandbox; a missing sandbox is 125" {
  run -125 $H snapshot nosuch "$TEST_ROOT/snap"
  [[ "$output" == *"nosuch"* ]]
  [ ! -e "$TEST_ROOT/snap" ]
  start_writer w
  # DEST exists: refused, untouched.
  mkdir "$TEST_ROOT/exists"
  run -125 $H snapshot w "$TEST_ROOT/exists"
  [ -z "$(ls -A "$TEST_ROOT/exists")" ]
  run -125 $H snapshot w "$TEST_ROOT/no/such/dir"
  # SIGTERM while frozen: the copy is dropped after the thaw.
  HAKO_TEST_STALL=snapshot-frozen $H snapshot w "$TEST_ROOT/snap" & snapper=$!
  for i in $(seq 50); do [ -e "$STATE/w/stalled" ] && break; sleep 0.1; done
  [ -e "$STATE/w/stalled" ]
  # Frozen: the log does not grow.
  a=$(stat -c %s "$(work_of w)/log"); sleep 0.3; b=$(stat -c %s "$(work_of w)/log")
  [ "$a" = "$b" ]
  kill -TERM $snapper
  wait $snapper || true
  rm -f "$STATE/w/stalled"
  [ ! -e "$TEST_ROOT/snap" ]
  [ -z "$(ls -d "$TEST_ROOT"/snap.tmp-* 2>/dev/null)" ]
  [ "$($H state w | jq -r .status)" = running ]
  a=$(stat -c %s "$(work_of w)/log")
  for i in $(seq 50); do [ "$(stat -c %s "$(work_of w)/log")" -gt "$a" ] && break; sleep 0.1; done
  [ "$(stat -c %s "$(work_of w)/log")" -gt "$a" ]
  # SIGKILL while frozen (nothing can hold it off): the snapshot's guard
  # thaws the sandbox, puts its status back and removes the partial copy.
  HAKO_TEST_STALL=snapshot-frozen $H snapshot w "$TEST_ROOT/snap" & snapper=$!
  for i in $(seq 50); do [ -e "$STATE/w/stalled" ] && break; sleep 0.1; done
  [ -e "$STATE/w/stalled" ]
  kill -KILL $snapper
  wait $snapper || true
  rm -f "$STATE/w/stalled"
  for i in $(seq 50); do [ "$($H state w | jq -r .status)" = running ] && break; sleep 0.1; done
  [ "$($H state w | jq -r .status)" = running ]
  for i in $(seq 50); do [ -z "$(ls -d "$TEST_ROOT"/snap.tmp-* 2>/dev/null)" ] && break; sleep 0.1; done
  [ -z "$(ls -d "$TEST_ROOT"/snap.tmp-* 2>/dev/null)" ]
  [ ! -e "$TEST_ROOT/snap" ]
  a=$(stat -c %s "$(work_of w)/log")
  for i in $(seq 50); do [ "$(stat -c %s "$(work_of w)/log")" -gt "$a" ] && break; sleep 0.1; done
  [ "$(stat -c %s "$(work_of w)/log")" -gt "$a" ]
}

@test "kill -9 at random moments during snapshot: never left frozen, no partial copy, snapshot works again" {
  start_writer w
  local delay n
  for delay in 0 0.005 0.01 0.02 0.05 0.1 0.2; do
    rm -rf "$TEST_ROOT/snap"
    $H snapshot w "$TEST_ROOT/snap" 2>/dev/null & snapper=$!
    sleep $delay
    kill -KILL $snapper 2>/dev/null || true
    wait $snapper || true
    # The guard (if it was started) thaws and cleans up, holding the lock.
    for i in $(seq 50); do [ "$($H state w | jq -r .status)" = running ] && break; sleep 0.1; done
    [ "$($H state w | jq -r .status)" = running ] || { echo "after a kill at $delay s: $($H state w | jq -r .status)" >&2; false; }
    for i in $(seq 50); do [ -z "$(ls -d "$TEST_ROOT"/snap.tmp-* 2>/dev/null)" ] && break; sleep 0.1; done
    [ -z "$(ls -d "$TEST_ROOT"/snap.tmp-* 2>/dev/null)" ]
    # Either the whole snapshot (hako finished first) or none.
    [ ! -e "$TEST_ROOT/snap" ] || whole_lines "$TEST_ROOT/snap/data/log"
    n=$(wc -l < "$(work_of w)/log")
    for i in $(seq 50); do [ "$(wc -l < "$(work_of w)/log")" -gt "$n" ] && break; sleep 0.1; done
    [ "$(wc -l < "$(work_of w)/log")" -gt "$n" ]
  done
  rm -rf "$TEST_ROOT/snap"
  $H snapshot w "$TEST_ROOT/snap"
  whole_lines "$TEST_ROOT/snap/data/log"
}

@test "snapshot of a stopped or paused sandbox; the paused one stays paused" {
  $H run --detach --profile host s -- sh -c 'echo one > /work/one; sleep 1000'
  for i in $(seq 50); do [ -e "$(work_of s)/one" ] && break; sleep 0.1; done
  $H pause s
  $H snapshot s "$TEST_ROOT/p"
  [ "$($H state s | jq -r .status)" = paused ]
  $H resume s
  $H stop s
  $H snapshot s "$TEST_ROOT/st"
  [ "$(cat "$TEST_ROOT/p/data/one")" = one ]
  [ "$(cat "$TEST_ROOT/st/data/one")" = one ]
}

@test "hibernate: a failing command leaves the sandbox running with its status" {
  $H run --detach --profile host h -- sleep 1000
  run -3 $H hibernate h -- sh -c 'exit 3'
  [ "$($H state h | jq -r .status)" = running ]
  [ "$($H state h | jq -r .hibernated)" = null ]
  run -127 $H hibernate h -- /no/such/command
  [ "$($H state h | jq -r .status)" = running ]
  run -125 $H hibernate nosuch -- true
  run -125 $H hibernate h
}

@test "hibernate then wake: stopped with its files, hibernated; wake runs the restore command" {
  $H run --detach --profile host h -- sh -c 'echo app > /work/app; sleep 1000'
  for i in $(seq 50); do [ -e "$(work_of h)/app" ] && break; sleep 0.1; done
  pid=$($H state h | jq -r .pid)
  $H hibernate h -- sh -c 'echo checkpoint > /work/saved'
  [ "$($H state h | jq -r .status)" = stopped ]
  [ "$($H state h | jq -r '"\(.hibernated) \(.restartable)"')" = "true true" ]
  pid_gone "$pid"
  [ "$(cat "$(work_of h)/saved")" = checkpoint ]
  # The restarted process holds the caller's stdout as `start` gives it: to a file.
  $H wake h -- sh -c 'cat /work/saved /work/app' > "$TEST_ROOT/out" 2>&1 </dev/null
  [ "$(cat "$TEST_ROOT/out")" = "$(printf 'checkpoint\napp')" ]
  [ "$($H state h | jq -r .status)" = running ]
  [ "$($H state h | jq -r '"\(.hibernated) \(.restartable)"')" = "null null" ]
  # Wake of a running sandbox: the start fails, 125; a failing restore: its status.
  run -125 $H wake h -- true
  $H stop h
  run -4 sh -c "$H wake h -- sh -c 'exit 4' >/dev/null 2>&1 </dev/null"
  [ "$($H state h | jq -r .status)" = running ]
}

@test "bundle sandbox: the snapshot copies its rootfs; a branch of it is refused" {
  b=$(new_bundle bun)
  edit_config "$b" '.root.readonly = false'
  set_args "$b" sh -c 'echo mine > /mine; sleep 1000'
  $H run --detach --bundle "$b" bun
  for i in $(seq 50); do [ -e "$b/rootfs/mine" ] && break; sleep 0.1; done
  $H snapshot bun "$TEST_ROOT/snap"
  jq -e '.kind == "bundle"' "$TEST_ROOT/snap/snapshot.json"
  [ "$(cat "$TEST_ROOT/snap/data/mine")" = mine ]
  [ -x "$TEST_ROOT/snap/data/bin/sh" ] || [ -L "$TEST_ROOT/snap/data/bin/sh" ]
  run -125 $H create --from-snapshot "$TEST_ROOT/snap" br
  [[ "$output" == *"bundle sandbox"* ]]
  [ ! -e "$STATE/br" ]
}

# hako_quiet ARGS...: $H ARGS, its output printed once it returned: a
# sandbox it created (on a hako that let the snapshot through) keeps no
# pipe of bats's open.
hako_quiet () {
  local r=0
  $H "$@" > "$TEST_ROOT/hako.out" 2>&1 || r=$?
  cat "$TEST_ROOT/hako.out"
  return $r
}

# evil_config SNAP OUT: SNAP's config with a createRuntime hook that marks
# $TEST_ROOT/pwned on the host (a hook runs as host root).
evil_config () {
  jq --arg t "$TEST_ROOT/pwned" \
    '.hooks.createRuntime = [{"path": "/bin/sh", "args": ["sh", "-c", "touch " + $t]}]' \
    "$1/config.json" > "$2"
}

@test "snapshot: into a directory the sandbox can write is refused; one the sandbox swapped in there is never branched from" {
  $H run --detach --profile host s -- sh -c 'echo one > /work/one; sleep 1000'
  for i in $(seq 50); do [ -e "$(work_of s)/one" ] && break; sleep 0.1; done
  w=$(work_of s)
  sbx_uid=$(stat -c %u "$w")
  [ "$sbx_uid" != 0 ]
  # A snapshot in a directory the sandbox can write (moved there by hand)
  # is swapped by the sandbox for its own: the same metadata, a config
  # with a hook of its choosing.
  $H snapshot s "$TEST_ROOT/snap"
  mv "$TEST_ROOT/snap" "$w/snap"
  evil_config "$w/snap" "$w/evil.json"
  cp "$w/snap/snapshot.json" "$w/meta.json"
  chmod 644 "$w/evil.json" "$w/meta.json"
  $H exec s -- sh -c 'mv /work/snap /work/old && mkdir /work/snap /work/snap/data &&
    cp /work/meta.json /work/snap/snapshot.json && cp /work/evil.json /work/snap/config.json'
  [ "$(stat -c %u "$w/snap/config.json")" = "$sbx_uid" ]
  run -125 hako_quiet create --from-snapshot "$w/snap" b
  echo "$output"
  [[ "$output" == *"snapshot $w/snap: $w is owned by uid $sbx_uid, not root"* ]]
  [ ! -e "$TEST_ROOT/pwned" ]
  [ ! -e "$STATE/b" ]
  # hako snapshot ID /work-on-the-host/snap: the sandbox could swap it.
  run -125 $H snapshot s "$w/snap2"
  echo "$output"
  [[ "$output" == *"destination $w/snap2: $w is owned by uid $sbx_uid, not root"* ]]
  [ -z "$(ls -d "$w"/snap2* 2>/dev/null)" ]
}

@test "snapshot: a snapshot dir, or one above it, that others can write is refused, named" {
  $H run --detach --profile host s -- sleep 1000
  $H snapshot s "$TEST_ROOT/snap"
  chmod 0777 "$TEST_ROOT/snap"
  run -125 hako_quiet --log-format json create --from-snapshot "$TEST_ROOT/snap" b
  [ "$(echo "$output" | jq -r .kind)" = permission ]
  [[ "$output" == *"$TEST_ROOT/snap is writable by every user (mode 0777)"* ]]
  chmod 0700 "$TEST_ROOT/snap"
  chmod 0666 "$TEST_ROOT/snap/config.json"
  run -125 hako_quiet create --from-snapshot "$TEST_ROOT/snap" b
  [[ "$output" == *"$TEST_ROOT/snap/config.json is writable by every user (mode 0666)"* ]]
  chmod 0600 "$TEST_ROOT/snap/config.json"
  mkdir -m 0777 "$TEST_ROOT/open"
  mv "$TEST_ROOT/snap" "$TEST_ROOT/open/snap"
  run -125 hako_quiet create --from-snapshot "$TEST_ROOT/open/snap" b
  [[ "$output" == *"$TEST_ROOT/open is writable by every user (mode 0777)"* ]]
  run -125 $H snapshot s "$TEST_ROOT/open/snap2"
  [[ "$output" == *"$TEST_ROOT/open is writable by every user (mode 0777)"* ]]
  [ "$(ls "$TEST_ROOT/open")" = snap ]
  [ ! -e "$STATE/b" ]
  # Root's sticky directory above (as /tmp): a branch is made.
  chmod 1777 "$TEST_ROOT/open"
  $H create --from-snapshot "$TEST_ROOT/open/snap" b
  $H delete --force b
}

@test "snapshot: a config.json changed after the snapshot, or no digest, is refused (exit 125); its hook never runs" {
  $H run --detach --profile host s -- sleep 1000
  $H snapshot s "$TEST_ROOT/snap"
  want="sha256:$(sha256sum < "$TEST_ROOT/snap/config.json" | cut -d' ' -f1)"
  evil_config "$TEST_ROOT/snap" "$TEST_ROOT/evil.json"
  cp "$TEST_ROOT/evil.json" "$TEST_ROOT/snap/config.json"
  run -125 hako_quiet create --from-snapshot "$TEST_ROOT/snap" b
  echo "$output"
  [[ "$output" == *"snapshot $TEST_ROOT/snap: config.json does not match the digest in snapshot.json ($want recorded, sha256:"*"found)"* ]]
  [ ! -e "$TEST_ROOT/pwned" ]
  [ "$(jq -r .configDigest "$TEST_ROOT/snap/snapshot.json")" = "$want" ]
  jq 'del(.configDigest)' "$TEST_ROOT/snap/snapshot.json" > "$TEST_ROOT/meta.json"
  cp "$TEST_ROOT/meta.json" "$TEST_ROOT/snap/snapshot.json"
  run -125 hako_quiet create --from-snapshot "$TEST_ROOT/snap" b
  [[ "$output" == *"snapshot.json records no digest of config.json"* ]]
  [ ! -e "$TEST_ROOT/pwned" ]
  [ ! -e "$STATE/b" ]
}

@test "snapshot: an image record changed after the snapshot is refused: a host dir never becomes a branch's layer" {
  import_busybox
  $H run --detach --image busybox img -- sleep 1000
  $H snapshot img "$TEST_ROOT/snap"
  r="$TEST_ROOT/snap/image"
  want="sha256:$(sha256sum < "$r" | cut -d' ' -f1)"
  # Each line after the first is a layer dir the branch mounts: the host's /etc.
  { head -1 "$r"; echo /etc; tail -n +2 "$r"; } > "$TEST_ROOT/record"
  cp "$TEST_ROOT/record" "$r"
  run -125 hako_quiet create --from-snapshot "$TEST_ROOT/snap" br
  echo "$output"
  [[ "$output" == *"snapshot $TEST_ROOT/snap: image does not match the digest in snapshot.json"* ]]
  [ ! -e "$STATE/br" ]
  [ "$(jq -r .image.recordDigest "$TEST_ROOT/snap/snapshot.json")" = "$want" ]
}
