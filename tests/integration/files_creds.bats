#!/usr/bin/env bats
# put and get act with the sandbox's own credentials: they succeed exactly
# when the sandbox's process, as the user the call names (default: its root),
# could do the same.  Every attack here is planted from inside.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# files_box ID: a running busybox sandbox (runc's default spec: no user
# namespace, runc's capabilities) with a writable /tmp.
files_box () {
  local b
  b=$(new_bundle "$1")
  edit_config "$b" '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" "$1"
}

# host_bundle ID: a host-profile bundle (its root is host uid 1000000000).
host_bundle () {
  local b="$TEST_ROOT/bundle-$1"
  mkdir -p "$b"
  (cd "$TEST_ROOT" && $H spec --profile host --bundle "$b")
  set_args "$b" sleep 1000
  echo "$b"
}

need_secret_shadow () {
  [ -f /etc/shadow ] || skip "this host has no /etc/shadow"
  case "$(stat -c %a /etc/shadow)" in
    *[4567]) skip "this host's /etc/shadow is world-readable" ;;
  esac
}

# nonzero_addresses: the lines of a kallsyms listing on stdin whose address is not 0.
nonzero_addresses () { awk '$1 !~ /^0+$/' | wc -l; }

@test "get of a host file the sandbox cannot read: EACCES, exit 125, nothing printed, direct or via a symlink" {
  need_secret_shadow
  cd "$TEST_ROOT"
  $H run --detach --profile host hs -- sleep 1000
  # The sandbox itself cannot read it: its /etc is the host's, read-only.
  run $H exec hs -- cat /etc/shadow
  [ "$status" -ne 0 ]
  $H exec hs -- ln -s /etc/shadow /work/out.txt
  $H exec hs -- ln -s ../etc/shadow /tmp/rel
  for p in /etc/shadow /work/out.txt /tmp/rel; do
    run --separate-stderr $H get hs "$p"
    [ "$status" -eq 125 ]
    [ -z "$output" ]
    [[ "$stderr" == *"Permission denied"* ]]
  done
  # What it can read, get reads.
  run $H get hs /etc/hostname
  [ "$status" -eq 0 ]
  [ "$output" = "$(cat /etc/hostname)" ]
  # Stopped, the same rule: the helper has the sandbox's ids and no more.
  $H stop hs
  run --separate-stderr $H get hs /etc/shadow
  [ "$status" -eq 125 ]
  [ -z "$output" ]
  [[ "$stderr" == *"Permission denied"* ]]
  run --separate-stderr $H get hs /work/out.txt
  [ "$status" -eq 125 ]
  [ -z "$output" ]
}

@test "get of /proc/kallsyms through a symlink reads as the sandbox reads it: no kernel address" {
  [ -r /proc/kallsyms ] || skip "no /proc/kallsyms"
  [ "$(nonzero_addresses < /proc/kallsyms)" -gt 0 ] || skip "this kernel hides kallsyms addresses from root too"
  files_box ks
  [ "$($H exec ks cat /proc/kallsyms | nonzero_addresses)" -eq 0 ] \
    || skip "this kernel shows kallsyms addresses to the sandbox itself (kptr_restrict, perf_event_paranoid)"
  $H exec ks ln -s /proc/kallsyms /dev/shm/r.txt
  $H exec ks ln -s /proc/kallsyms /tmp/k
  for p in /dev/shm/r.txt /tmp/k /proc/kallsyms; do
    $H get ks "$p" > "$TEST_ROOT/k"
    [ "$(wc -l < "$TEST_ROOT/k")" -gt 100 ]
    [ "$(nonzero_addresses < "$TEST_ROOT/k")" -eq 0 ]
  done
  # And the host profile's sandbox (in a user namespace), the same.
  cd "$TEST_ROOT"
  $H run --detach --profile host kh -- sleep 1000
  $H exec kh -- ln -s /proc/kallsyms /dev/shm/r.txt
  $H get kh /dev/shm/r.txt > "$TEST_ROOT/k"
  [ "$(wc -l < "$TEST_ROOT/k")" -gt 100 ]
  [ "$(nonzero_addresses < "$TEST_ROOT/k")" -eq 0 ]
}

@test "put through a symlink onto a bind-mounted directory the sandbox cannot write: refused" {
  mkdir -m 755 "$TEST_ROOT/hostdir" "$TEST_ROOT/owned"
  chown 1000000000:1000000000 "$TEST_ROOT/owned"
  b=$(host_bundle bm)
  jq --arg h "$TEST_ROOT/hostdir" --arg o "$TEST_ROOT/owned" \
    '.mounts += [{"destination": "/data", "type": "bind", "source": $h, "options": ["rbind", "rw"]},
                 {"destination": "/mine", "type": "bind", "source": $o, "options": ["rbind", "rw"]}]' \
    "$b/config.json" > "$b/config.json.new"
  mv "$b/config.json.new" "$b/config.json"
  (cd "$TEST_ROOT" && $H run --detach --bundle "$b" bm)
  # The sandbox cannot create a file there itself (host root's directory).
  run $H exec bm -- sh -c 'echo x > /data/direct'
  [ "$status" -ne 0 ]
  $H exec bm -- ln -s /data/planted /work/link
  run --separate-stderr $H put bm /work/link <<< evil
  [ "$status" -eq 125 ]
  [[ "$stderr" == *"Permission denied"* ]]
  run $H put bm /data/direct <<< evil
  [ "$status" -eq 125 ]
  run $H put --mkdir bm /data/sub/f <<< evil
  [ "$status" -eq 125 ]
  [ -z "$(ls -A "$TEST_ROOT/hostdir")" ]
  # Where the sandbox may write, put writes, as the sandbox's root.
  $H exec bm -- ln -s /mine/f /work/ok
  $H put bm /work/ok <<< fine
  [ "$(cat "$TEST_ROOT/owned/f")" = fine ]
  [ "$(stat -c %u:%g "$TEST_ROOT/owned/f")" = 1000000000:1000000000 ]
  # Stopped, the same.
  $H stop bm
  run $H put bm /data/direct <<< evil
  [ "$status" -eq 125 ]
  [ -z "$(ls -A "$TEST_ROOT/hostdir")" ]
}

@test "get and put --user U act as U: its permissions, its files" {
  files_box us
  $H exec us sh -c 'echo secret > /tmp/root600; chmod 600 /tmp/root600; mkdir -m 755 /tmp/rootdir'
  run --separate-stderr $H get --user 1000 us /tmp/root600
  [ "$status" -eq 125 ]
  [ -z "$output" ]
  [[ "$stderr" == *"Permission denied"* ]]
  run $H get us /tmp/root600
  [ "$output" = secret ]
  run $H get --user nobody us /etc/passwd
  [ "$status" -eq 0 ]
  # A put as U is U's file; where U may not create one, put may not either.
  $H put --user 1000:1000 us /tmp/mine <<< mine
  run $H exec us stat -c '%u:%g %a' /tmp/mine
  [ "$output" = "1000:1000 644" ]
  run $H get --user 1000 us /tmp/mine
  [ "$output" = mine ]
  run --separate-stderr $H put --user 1000 us /tmp/rootdir/f <<< x
  [ "$status" -eq 125 ]
  [[ "$stderr" == *"Permission denied"* ]]
  run $H put --user 1000 us /tmp/root600 <<< x
  [ "$status" -eq 125 ]
  run $H get us /tmp/root600
  [ "$output" = secret ]
  $H put us /tmp/rootdir/f <<< root
  run $H exec us stat -c '%u:%g' /tmp/rootdir/f
  [ "$output" = 0:0 ]
  run $H get --user nosuch us /tmp/mine
  [ "$status" -eq 125 ]
  [[ "$output" == *"no such user"* ]]
}

@test "stopped: get and put --user U act as U" {
  cd "$TEST_ROOT"
  $H run --profile host su -- sh -c 'echo s > /work/secret; chmod 600 /work/secret; mkdir -m 777 /work/open'
  [ "$($H state su | jq -r .status)" = stopped ]
  run $H get su /work/secret
  [ "$output" = s ]
  run $H get --user 1000 su /work/secret
  [ "$status" -eq 125 ]
  [[ "$output" == *"Permission denied"* ]]
  run $H put --user 1000 su /work/f <<< x
  [ "$status" -eq 125 ]
  $H put --user 1000:1000 su /work/open/f <<< x
  [ "$(stat -c %u:%g "$DATA/sandboxes/su/work/open/f")" = 1000001000:1000001000 ]
}

@test "a directory swapped with a symlink while get runs: 200 rounds, nothing leaked" {
  need_secret_shadow
  cd "$TEST_ROOT"
  $H run --detach --profile host race -- sleep 1000
  # Inside: /work/d flips between a directory holding the sandbox's own
  # "shadow" and a symlink to /etc (the host's, read-only), until told to stop.
  $H exec --detach race -- sh -c 'while [ ! -e /work/stop ]; do
      rm -rf /work/d; mkdir /work/d; echo mine > /work/d/shadow; rm -rf /work/d; ln -s /etc /work/d
    done'
  mine=0
  for i in $(seq 200); do
    out=$($H get race /work/d/shadow 2>/dev/null) || true
    if [ -n "$out" ] && [ "$out" != mine ]; then
      echo "round $i leaked: ${out:0:40}"
      return 1
    fi
    [ "$out" != mine ] || mine=$((mine + 1))
  done
  $H exec race -- touch /work/stop
  echo "rounds that read the sandbox's own file: $mine"
}
