#!/usr/bin/env bats
# What the sandbox's process sees: the host profile's filesystem, its own
# namespaces, dropped privileges, and no way back to the host.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () {
  # The shared host mount of the propagation test, and what came back to it.
  if [ -n "${PROP_DIR:-}" ]; then
    umount -R "$PROP_DIR" 2>/dev/null
  fi
  hako_teardown
}

@test "host profile: the README's first sandbox works without a bundle" {
  cd "$TEST_ROOT"
  run $H run --rm box -- sh -c 'id; ls /work; cat /etc/os-release'
  [ "$status" -eq 0 ]
  [[ "$output" == *"uid=0(root)"* ]]
  [[ "$output" == *"PRETTY_NAME"* ]]
}

@test "host profile: host dirs read-only, fresh /tmp, own pid/uts/net namespaces" {
  cd "$TEST_ROOT"
  run $H run --rm hp -- sh -c '
    touch /usr/x 2>/dev/null && echo usr-writable
    touch /etc/x 2>/dev/null && echo etc-writable
    touch /tmp/x && echo tmp-ok
    echo pid1=$(cat /proc/1/comm)
    hostname
    cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "
    ls /tmp'
  [ "$status" -eq 0 ]
  [[ "$output" != *"writable"* ]]
  [[ "$output" == *"tmp-ok"* ]]
  [[ "$output" == *"pid1=sh"* ]]
  [[ "$output" == *"hako"* ]]
  [ "$(echo "$output" | grep -cx 'lo')" -eq 1 ]
  [ "$(echo "$output" | grep -vx 'lo' | grep -cE '^(eth|ens|veth|wl)')" -eq 0 ]
}

@test "host profile: /work persists on the data root until delete" {
  cd "$TEST_ROOT"
  $H run wk -- sh -c 'echo kept > /work/file'
  [ "$(cat "$DATA/sandboxes/wk/work/file")" = kept ]
  $H delete wk
  [ ! -e "$DATA/sandboxes/wk" ]
}

# as_nobody CMD: CMD run by sh as the host's nobody, another local user.
as_nobody () { su nobody -s /bin/sh -c "$1"; }

@test "attack: another host user reads nothing of a sandbox's /work through the data root; the sandbox's own users, stopped too, as before" {
  $H run -d --profile host lu -- sleep 1000
  $H exec lu sh -c 'echo private > /work/f; mkdir /work/pub; chmod 777 /work/pub; stat -c %a /work'
  # Its ids are in every ps: the path is known; the data dir lets none pass.
  run ! as_nobody "cat '$DATA/sandboxes/lu/work/f'"
  run ! as_nobody "ls '$DATA/sandboxes/lu/work'"
  [ "$(stat -c %a "$DATA/sandboxes/lu")" = 710 ]
  [ "$(stat -c %g "$DATA/sandboxes/lu")" = "$(awk '$1 == 0 {print $2}' "/proc/$($H state lu | jq .pid)/gid_map")" ]
  [ "$($H exec lu cat /work/f)" = private ]
  $H stop lu
  run ! as_nobody "cat '$DATA/sandboxes/lu/work/f'"
  # Stopped, a call as one of its users gets that user's rights from /work on.
  echo hi | $H put -u 65534 lu /work/pub/x
  [ "$($H get -u 65534 lu /work/pub/x)" = hi ]
  run -0 $H fs ls -u 65534 lu /work
  $H start lu
  [ "$($H exec lu cat /work/pub/x)" = hi ]
  [ "$(stat -c %a "$DATA/sandboxes/lu")" = 710 ]
  $H delete --force lu
}

@test "host profile: the host's other directories are not there" {
  cd "$TEST_ROOT"
  run $H run --rm hid -- sh -c 'ls /root /home /run /var 2>&1; ls /'
  [[ "$output" != *"hako-it"* ]]
  [[ "$output" == *"No such file"* ]]
}

@test "capabilities are the spec's: a default process cannot mount or chown" {
  b=$(new_bundle caps)
  set_args "$b" sh -c 'grep CapEff /proc/self/status; mount -t tmpfs t /tmp 2>&1; chown 1 /tmp 2>&1; echo end'
  run $H run --rm --bundle "$b" caps
  [ "$status" -eq 0 ]
  # runc's default set: AUDIT_WRITE KILL NET_BIND_SERVICE = 0x20000420
  [[ "$output" == *"CapEff:"*"0000000020000420"* ]]
  [[ "$output" == *"mount"*"ermission denied"* || "$output" == *"mount"*"not permitted"* ]]
  [[ "$output" == *"end"* ]]
}

@test "no_new_privs and the process user from the spec" {
  b=$(new_bundle user)
  edit_config "$b" '.process.user = {"uid": 65534, "gid": 65534, "additionalGids": [5]}'
  set_args "$b" sh -c 'id -u; id -g; id -G; grep NoNewPrivs /proc/self/status'
  run $H run --rm --bundle "$b" user
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 65534 ]
  [ "${lines[1]}" = 65534 ]
  [[ "${lines[2]}" == *5* ]]
  [[ "${lines[3]}" == *"1" ]]
}

@test "no host file descriptor reaches the process" {
  b=$(new_bundle fds)
  set_args "$b" sh -c 'ls /proc/self/fd'
  exec 7</etc/hostname 8>"$TEST_ROOT/leak"
  run $H run --rm --bundle "$b" fds
  exec 7<&- 8>&-
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "cwd through a leaked host directory fd is refused (CVE-2024-21626 class)" {
  b=$(new_bundle cwd)
  edit_config "$b" '.process.cwd = "/proc/self/fd/0"'
  run $H run --rm --bundle "$b" cwd < /
  [ "$status" -eq 125 ]
  [[ "$output" == *"outside the sandbox root"* || "$output" == *"cwd"* ]]
  [ ! -e "$STATE/cwd" ]
}

@test "the hako binary is not writable from inside (CVE-2019-5736 class)" {
  b=$(new_bundle exe)
  set_args "$b" sh -c 'echo x >> /proc/1/exe && echo WROTE; for p in /proc/[0-9]*; do echo x >> $p/exe 2>/dev/null && echo WROTE; done; echo done'
  cp "$HAKO" "$TEST_ROOT/hako-copy"
  sum=$(sha256sum < "$TEST_ROOT/hako-copy")
  run "$TEST_ROOT/hako-copy" --root "$STATE" --data-root "$DATA" run --rm --bundle "$b" exe
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = done ]  # the script ran to its end: the writes were tried
  [[ "$output" != *"WROTE"* ]]
  [ "$(sha256sum < "$TEST_ROOT/hako-copy")" = "$sum" ]
  cd "$TEST_ROOT"
  run "$TEST_ROOT/hako-copy" --root "$STATE" --data-root "$DATA" run --rm exe2 -- sh -c "echo x >> $TEST_ROOT/hako-copy && echo WROTE; echo done"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = done ]
  [[ "$output" != *"WROTE"* ]]
  [ "$(sha256sum < "$TEST_ROOT/hako-copy")" = "$sum" ]
}

@test "masked and read-only paths of the runc default config hold" {
  b=$(new_bundle mask)
  masked=""
  for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug; do
    [ -r "$f" ] && [ "$(head -c 1 "$f" | wc -c)" = 1 ] && masked=$f && break
  done
  [ -n "$masked" ] || skip "none of runc's masked /proc files has content on this host"
  set_args "$b" sh -c "wc -c < $masked; echo 1 > /proc/sys/kernel/domainname || echo sys-ro; touch /proc/sysrq-trigger || echo ro2"
  run $H run --rm --bundle "$b" mask
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [[ "$output" == *"sys-ro"* ]]
  [[ "$output" == *"ro2"* ]]
}

@test "a symlink in the rootfs cannot redirect a mount onto the host" {
  b="$TEST_ROOT/evil"
  mkdir -p "$b" "$TEST_ROOT/outside"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  cp "$BUNDLE_DIR/config.json" "$b/config.json"
  rm -rf "$b/rootfs/mnt"
  ln -s "$TEST_ROOT/outside" "$b/rootfs/mnt"
  edit_config "$b" '.mounts += [{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs"}] | .process.args = ["sh", "-c", "touch /mnt/inside && echo done"]'
  run $H run --rm --bundle "$b" evil
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = done ]  # it ran, and wrote through the mount it got
  [ ! -e "$TEST_ROOT/outside/inside" ]
  [ -z "$(ls -A "$TEST_ROOT/outside")" ]
}

@test "sysctl, hostname and domainname from the spec" {
  b=$(new_bundle sys)
  edit_config "$b" '.hostname = "boxy" | .domainname = "example" | .linux.sysctl = {"net.ipv4.ip_forward": "1"}'
  set_args "$b" sh -c 'hostname; cat /proc/sys/kernel/domainname; cat /proc/sys/net/ipv4/ip_forward'
  run $H run --rm --bundle "$b" sys
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | tr '\n' ' ')" = "boxy example 1 " ]
}

@test "a user namespace maps the sandbox's root to an unprivileged host uid" {
  b=$(new_bundle userns)
  # The sandbox's root is host uid 100000: it needs a rootfs it can reach.
  rm "$b/rootfs"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  chown -R 100000:100000 "$b/rootfs"
  chmod 755 "$TEST_ROOT" "$b"
  edit_config "$b" '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .mounts |= map(select(.type != "cgroup")) | .mounts |= map(if .destination == "/sys" then {"destination": "/sys", "type": "bind", "source": "/sys", "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]} else . end)'
  set_args "$b" sh -c 'id -u; cat /proc/self/uid_map | tr -s " "'
  run $H run --rm --bundle "$b" userns
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [[ "${lines[1]}" == *"0 100000 65536"* ]]
}

@test "user namespace: a bind source under a directory only host root may enter is reached (hako opens it), read-only as asked" {
  b=$(new_bundle usrc)
  rm "$b/rootfs"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  chown -R 100000:100000 "$b/rootfs"
  chmod 755 "$TEST_ROOT" "$b"
  # As podman's run dir holding /etc/hosts: 0700, host root's.
  mkdir -m 0700 "$TEST_ROOT/private"
  echo secret-file > "$TEST_ROOT/private/f"
  chmod 0666 "$TEST_ROOT/private/f"
  edit_config "$b" '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .mounts |= map(select(.type != "cgroup")) | .mounts |= map(if .destination == "/sys" then {"destination": "/sys", "type": "bind", "source": "/sys", "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]} else . end)'
  edit_config "$b" ".mounts += [{\"destination\": \"/f\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/private/f\", \"options\": [\"bind\", \"ro\"]}]"
  # The file is world-writable on the host; the bind is read-only as asked.
  set_args "$b" sh -c 'cat /f; (echo x > /f) 2>/dev/null && echo wrote; true'
  run $H run --rm --bundle "$b" usrc
  [ "$status" -eq 0 ]
  [ "$output" = secret-file ]
  [ "$(cat "$TEST_ROOT/private/f")" = secret-file ]
}

@test "rootfsPropagation rshared: a bind asked to be rshared (CRI's Bidirectional) propagates back to the host, a default bind does not" {
  # critest's mount propagation spec: after pivot_root hako made "." rslave
  # (the new root's mounts, not the old root's) and so every "rshared" bind
  # became a slave of the host: nothing mounted inside reached the host.
  PROP_DIR="$TEST_ROOT/prop"
  mkdir -p "$PROP_DIR/shared/x" "$PROP_DIR/plain/x"
  mount --bind "$PROP_DIR" "$PROP_DIR"
  mount --make-rshared "$PROP_DIR"
  local b
  b=$(new_bundle prop)
  set_args "$b" sh -c 'mount --bind /etc /shared/x && mount --bind /etc /plain/x && echo mounted'
  edit_config "$b" ".linux.rootfsPropagation = \"rshared\"
    | .process.capabilities.bounding += [\"CAP_SYS_ADMIN\"]
    | .process.capabilities.effective += [\"CAP_SYS_ADMIN\"]
    | .process.capabilities.permitted += [\"CAP_SYS_ADMIN\"]
    | .mounts += [{\"destination\": \"/shared\", \"type\": \"bind\", \"source\": \"$PROP_DIR/shared\", \"options\": [\"rbind\", \"rshared\"]},
                  {\"destination\": \"/plain\", \"type\": \"bind\", \"source\": \"$PROP_DIR/plain\", \"options\": [\"rbind\"]}]"
  run $H run --bundle "$b" prop1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *mounted* ]]
  # The rshared bind: the sandbox's mount is on the host (as with runc).
  [ -e "$PROP_DIR/shared/x/passwd" ]
  # The default bind is a slave: its mount stayed in the sandbox.
  [ ! -e "$PROP_DIR/plain/x/passwd" ]
  umount -R "$PROP_DIR"
  PROP_DIR=
}
