#!/usr/bin/env bats
# put and get: files into and out of a sandbox, resolved inside its root,
# whole or not at all, running or stopped.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# files_box ID [BUNDLE]: a running busybox sandbox with a writable /tmp.
files_box () {
  local b=${2:-$(new_bundle "$1")}
  edit_config "$b" '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" "$1"
}

# own_rootfs BUNDLE: give the bundle a copy of the rootfs it may change.
own_rootfs () {
  rm "$1/rootfs"
  cp -a "$BUNDLE_DIR/rootfs" "$1/rootfs"
}

@test "put then get of a 100 MiB random file round-trips byte for byte, in little memory" {
  files_box rt
  head -c 100M /dev/urandom > "$TEST_ROOT/rand"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$TEST_ROOT/rss" $H put rt /tmp/rand < "$TEST_ROOT/rand"
    # hako streams (in the kernel, else 256 KiB at a time): about 4 MiB
    # resident, mostly libc and the libraries; a copy held in memory would
    # be over 100 MiB.
    peak_rss_below 16384 "$TEST_ROOT/rss"
  else
    $H put rt /tmp/rand < "$TEST_ROOT/rand"
  fi
  $H get rt /tmp/rand > "$TEST_ROOT/back"
  cmp "$TEST_ROOT/rand" "$TEST_ROOT/back"
  run $H exec rt sha256sum /tmp/rand
  [ "${output%% *}" = "$(sha256sum < "$TEST_ROOT/rand" | cut -d' ' -f1)" ]
}

@test "put and get: the same bytes whichever way the kernel copies (file, pipe, append, a proc file, nothing)" {
  files_box kc
  head -c 3M /dev/urandom > "$TEST_ROOT/r"
  $H put kc /tmp/from-file < "$TEST_ROOT/r"     # copy_file_range or sendfile
  cat "$TEST_ROOT/r" | $H put kc /tmp/from-pipe  # splice
  $H get kc /tmp/from-file > "$TEST_ROOT/to-file"
  $H get kc /tmp/from-pipe | cat > "$TEST_ROOT/to-pipe"
  echo x > "$TEST_ROOT/appended"
  $H get kc /tmp/from-file >> "$TEST_ROOT/appended"  # O_APPEND: through the buffer
  cmp "$TEST_ROOT/r" "$TEST_ROOT/to-file"
  cmp "$TEST_ROOT/r" "$TEST_ROOT/to-pipe"
  tail -c +3 "$TEST_ROOT/appended" | cmp - "$TEST_ROOT/r"
  # A proc file says its size is 0 and still has contents.
  run $H get kc /proc/version
  [ "$status" -eq 0 ]
  [ "$output" = "$(cat /proc/version)" ]
  : | $H put kc /tmp/empty
  run $H exec kc wc -c /tmp/empty
  [ "${output%% *}" = 0 ]
  # --max-bytes one short: refused, and nothing of it written.
  run --separate-stderr $H get --max-bytes 3145727 kc /tmp/from-pipe
  [ "$status" -eq 125 ]
  [ -z "$output" ]
}

@test "an interrupted put leaves the old file intact and nothing behind" {
  files_box ip
  echo old > "$TEST_ROOT/old"
  $H put ip /tmp/f < "$TEST_ROOT/old"
  mkfifo "$TEST_ROOT/in"
  $H put ip /tmp/f < "$TEST_ROOT/in" & putter=$!
  exec 5> "$TEST_ROOT/in"
  head -c 5M /dev/urandom >&5
  kill -9 $putter
  wait $putter || true
  exec 5>&-
  run $H get ip /tmp/f
  [ "$output" = old ]
  run $H exec ip ls -a /tmp
  [ "$(echo $output)" = ". .. f" ]
  # A put whose input fails is no better.
  run $H put ip /tmp/f < /
  [ "$status" -eq 125 ]
  run $H get ip /tmp/f
  [ "$output" = old ]
}

@test "get of a symlink to /etc/shadow returns the sandbox's file, never the host's" {
  b=$(new_bundle sh)
  own_rootfs "$b"
  echo sandbox-shadow > "$b/rootfs/etc/shadow"
  ln -s /etc/shadow "$b/rootfs/abs"
  ln -s ../../../../../../../etc/shadow "$b/rootfs/rel"
  files_box sh "$b"
  run $H get sh /abs
  [ "$output" = sandbox-shadow ]
  run $H get sh /rel
  [ "$output" = sandbox-shadow ]
  # And where the sandbox has no such file, there is nothing to get.
  files_box noshadow
  $H exec noshadow ln -s /etc/shadow /tmp/link
  run $H get noshadow /tmp/link
  [ "$status" -eq 125 ]
  [[ "$output" != *"root:"* ]]
  # Stopped, the same.
  $H kill sh KILL
  wait_status sh stopped
  run $H get sh /abs
  [ "$output" = sandbox-shadow ]
}

@test "put follows a symlink inside the sandbox and never writes the host" {
  files_box pl
  echo host > "$TEST_ROOT/hostfile"
  $H exec pl ln -s "$TEST_ROOT/hostfile" /tmp/evil
  run $H put pl /tmp/evil <<< inside
  [ "$status" -eq 125 ]
  [ "$(cat "$TEST_ROOT/hostfile")" = host ]
  $H exec pl sh -c 'echo a > /tmp/real; ln -s /tmp/real /tmp/ok; ln -s ../../../tmp/real /tmp/ok2'
  $H put pl /tmp/ok <<< via-link
  run $H exec pl cat /tmp/real
  [ "$output" = via-link ]
  $H put pl /tmp/ok2 <<< via-dots
  run $H exec pl cat /tmp/real
  [ "$output" = via-dots ]
  run $H exec pl readlink /tmp/ok
  [ "$output" = /tmp/real ]
}

@test "put and get refuse directories, devices, fifos and sockets" {
  files_box ty
  $H exec ty mkfifo /tmp/fifo
  for p in /dev/null /tmp /tmp/fifo; do
    run timeout 10 $H get ty "$p"
    [ "$status" -eq 125 ]
    [[ "$output" == *"only regular files"* ]]
  done
  run $H put ty /dev/null <<< x
  [ "$status" -eq 125 ]
  [[ "$output" == *"character device"* ]]
  run $H put ty /tmp <<< x
  [ "$status" -eq 125 ]
  run $H get ty relative/path
  [ "$status" -eq 125 ]
  [[ "$output" == *"must be absolute"* ]]
}

@test "get --max-bytes: a larger file is refused before a byte is written" {
  files_box mb
  head -c 5000 /dev/zero | $H put mb /tmp/big
  run --separate-stderr $H get --max-bytes 4k mb /tmp/big
  [ "$status" -eq 125 ]
  [ -z "$output" ]
  [[ "$stderr" == *"5000 bytes, more than --max-bytes 4096"* ]]
  run $H get --max-bytes 5000 mb /tmp/big
  [ "$status" -eq 0 ]
}

@test "put --mode, --user, --mkdir; a replaced file keeps its owner and mode" {
  # put writes as the sandbox's root with its process's capabilities: to
  # replace another user's file in that user's directory and keep it theirs,
  # root needs what a process would (runc's default set has neither).
  b=$(new_bundle own)
  edit_config "$b" '.process.capabilities |= with_entries(.value += ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER"])'
  files_box own "$b"
  $H put --mkdir --user nobody --mode 0600 own /tmp/a/b/f <<< secret
  run $H exec own stat -c '%u:%g %a' /tmp/a /tmp/a/b /tmp/a/b/f
  [ "$(echo $output)" = "65534:65534 755 65534:65534 755 65534:65534 600" ]
  $H put own /tmp/a/b/f <<< again
  run $H exec own stat -c '%u:%g %a' /tmp/a/b/f
  [ "$output" = "65534:65534 600" ]
  run $H get own /tmp/a/b/f
  [ "$output" = again ]
  $H put own /tmp/new <<< x
  run $H exec own stat -c '%u:%g %a' /tmp/new
  [ "$output" = "0:0 644" ]
  run -125 --separate-stderr $H --log-format json put own /tmp/missing/f <<< x
  echo "$stderr" | jq -e '.kind == "not_found" and (.msg | contains("put -p creates missing parents"))'
  # -p, as mkdir -p
  $H put -p own /tmp/missing/deeper/f <<< made
  run -0 $H get own /tmp/missing/deeper/f
  [ "$output" = made ]
  $H put --parents own /tmp/missing2/f <<< made2
  [ "$($H get own /tmp/missing2/f)" = made2 ]
  run $H put --user nosuch own /tmp/x <<< x
  [ "$status" -eq 125 ]
  [[ "$output" == *'no such user'* ]]
  run $H put --mode 999 own /tmp/x <<< x
  [ "$status" -eq 125 ]
}

@test "get and put on a stopped host-profile sandbox reach its /work; its /tmp is gone" {
  cd "$TEST_ROOT"
  $H run st -- sh -c 'echo kept > /work/out; echo t > /tmp/t'
  [ "$($H state st | jq -r .status)" = stopped ]
  run $H get st /work/out
  [ "$status" -eq 0 ]
  [ "$output" = kept ]
  run $H get st /tmp/t
  [ "$status" -eq 125 ]
  [[ "$output" == *"gone while it is stopped"* ]]
  $H put st /work/in <<< staged
  [ "$(cat "$DATA/sandboxes/st/work/in")" = staged ]
  run $H get nosuch /work/out
  [ "$status" -eq 125 ]
  [[ "$output" == *"does not exist"* ]]
}

@test "put in a user namespace: the sandbox's ids are mapped to the host's" {
  b=$(new_bundle userns)
  own_rootfs "$b"
  chown -R 100000:100000 "$b/rootfs"
  chmod 755 "$TEST_ROOT" "$b"
  edit_config "$b" '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .mounts |= map(select(.type != "cgroup")) | .mounts |= map(if .destination == "/sys" then {"destination": "/sys", "type": "bind", "source": "/sys", "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]} else . end)'
  files_box un "$b"
  $H put un /tmp/root-owned <<< a
  $H put --user nobody un /tmp/nobody-owned <<< b
  run $H exec un stat -c '%u:%g' /tmp/root-owned /tmp/nobody-owned
  [ "$(echo $output)" = "0:0 65534:65534" ]
  run $H put --user 70000 un /tmp/x <<< c
  [ "$status" -eq 125 ]
  [[ "$output" == *"not mapped"* ]]
}

@test "put and get: --help and usage errors" {
  run $H put --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"Usage: hako put"* ]]
  run $H get --help
  [[ "$output" == *"Usage: hako get"* ]]
  run $H put box
  [ "$status" -eq 125 ]
  run $H get --max-bytes lots box /x
  [ "$status" -eq 125 ]
}

@test "attack: put and cp into a stopped sandbox honour its read-only mounts, though the host files are its uid's" {
  cd "$TEST_ROOT"
  mkdir ro
  echo original > ro/f
  $H run --profile host -v "$TEST_ROOT/ro:/ro:ro" rs -- true
  [ "$($H state rs | jq -r .status)" = stopped ]
  # the directory and its file belong to the sandbox's root on the host:
  # only the mount keeps it from writing them
  host0=$(jq -r '.linux.uidMappings[0].hostID' "$STATE/rs/config.json")
  chown -R "$host0:$host0" ro
  run -125 $H put rs /ro/f <<< changed
  [[ "$output" == *"is on the sandbox's read-only mount at /ro (from $TEST_ROOT/ro)"* ]]
  run -125 $H put rs /ro/new <<< made
  echo x > "$TEST_ROOT/in"
  run -125 $H cp "$TEST_ROOT/in" rs:/ro/in
  [[ "$output" == *"read-only mount at /ro"* ]]
  [ "$(cat ro/f)" = original ]
  [ "$(ls ro)" = f ]
  # reading is as before, and its writable /work still takes a put
  [ "$($H get rs /ro/f)" = original ]
  $H put rs /work/in <<< staged
  [ "$(cat "$DATA/sandboxes/rs/work/in")" = staged ]
}
