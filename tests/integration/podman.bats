#!/usr/bin/env bats
# podman drives hako through conmon: run, exit codes, exec, pause/unpause,
# stop, rm, terminals, and a runtime named runc (conmon passes such a one
# --log-format=json --log).
#
# Each test has a private podman: --root/--runroot/--tmpdir and a
# containers.conf (file locks, no events) under its TEST_ROOT, so nothing
# touches the host's podman store or /dev/shm, and a cgroup parent of its
# own.  The runtime is a one-line script that execs hako with the test's
# --root/--data-root: podman does not pass --runtime-flag to the cleanup
# it has conmon run, and after exec hako's parent is conmon itself.

bats_require_minimum_version 1.5.0
load helpers

setup_file () {
  hako_setup_file
}

setup () {
  command -v podman >/dev/null || skip "podman is not installed (Debian package podman)"
  command -v conmon >/dev/null || skip "conmon is not installed (Debian package conmon)"
  hako_setup
  PM="$TEST_ROOT/podman"
  mkdir -p "$PM/bin"
  printf '[engine]\nlock_type = "file"\nevents_logger = "none"\n' > "$PM/containers.conf"
  CGPARENT="hako-podman-${TEST_ROOT##*.}"
  runtime_named hako
  # podman's rootful default rlimits (nofile 1048576) exceed this host's hard
  # limits, which hako cannot raise without CAP_SYS_RESOURCE.
  RUNOPTS=(--network none --cgroup-parent "/$CGPARENT" --ulimit nofile=1024:1024
           --ulimit nproc=1024:1024)
  OPTS=("${RUNOPTS[@]}" --rootfs "$BUNDLE_DIR/rootfs")
}

# runtime_named NAME: the runtime podman gets is $PM/bin/NAME, which records
# its arguments in $PM/calls and execs hako.
runtime_named () {
  RUNTIME="$PM/bin/$1"
  cat > "$RUNTIME" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >> "$PM/calls"
exec "$HAKO" --root "$STATE" --data-root "$DATA" "\$@"
EOF
  chmod +x "$RUNTIME"
}

# deleted ID: hako has no sandbox ID, within 5 s.
deleted () {
  local i
  for i in $(seq 50); do
    $H state "$1" >/dev/null 2>&1 || return 0
    sleep 0.1
  done
  echo "sandbox $1 is still there: $($H state "$1")" >&2
  return 1
}

pm () {
  CONTAINERS_CONF="$PM/containers.conf" podman --root "$PM/storage" --runroot "$PM/run" \
    --tmpdir "$PM/tmp" --storage-driver vfs --runtime "$RUNTIME" --cgroup-manager cgroupfs "$@"
}

# Processes still running (not zombies) whose command line names this
# test's podman directory: conmon, podman's cleanup.  The pattern comes from
# a file so that grep is not one.
podman_processes () {
  local p s
  for p in $(grep -lzF -f <(printf '%s\n' "$PM/") /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
    s=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    case "$s" in Z|X|"") ;; *) echo "$p" ;; esac
  done
}

# The rootless test's user (made by that test, removed by teardown) and
# every process of it: conmon, podman's pause process, the container's.
PM_USER=hakopm
PM_SUB_BASE=210000000   # its /etc/subuid and /etc/subgid range (rootless.bats has 200000000)
pm_user_remove () {
  local p u
  for p in $(ps -o pid= -u "$PM_USER" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  if u=$(id -u "$PM_USER" 2>/dev/null); then
    rm -rf "/tmp/hako-$u"   # hako's last-resort roots, should a regression make them
    userdel -f "$PM_USER" >/dev/null 2>&1 || true
  fi
  sed -i "/^$PM_USER:/d" /etc/subuid /etc/subgid 2>/dev/null || true
}

teardown () {
  [ -n "${PM:-}" ] || return 0
  local leaks="" i p d
  [ -z "${PM_USER_MADE:-}" ] || pm_user_remove
  pm rm --all --force --time 0 >/dev/null 2>&1 || true
  for i in $(seq 50); do
    [ -z "$(podman_processes)" ] && break
    sleep 0.1
  done
  p=$(podman_processes)
  if [ -n "$p" ]; then
    leaks="$leaks podman-process:$(echo $p)"
    kill -9 $p 2>/dev/null || true
  fi
  # Anything still running from the bundle's root is a container that outlived rm.
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$BUNDLE_DIR/rootfs" ]; then
      leaks="$leaks container-process:${p#/proc/}"
      kill -9 "${p#/proc/}" 2>/dev/null || true
    fi
  done
  # podman's cgroup parent: conmon's cgroup is podman's to leave behind (as
  # with runc); a container's (libpod-ID) is hako's to remove.
  for d in /sys/fs/cgroup/*/"$CGPARENT"; do
    [ -d "$d" ] || continue
    for p in "$d"/libpod-*; do
      [ -d "$p" ] && leaks="$leaks cgroup:$p"
    done
    if [ "$(stat -f -c %T "$d")" = tmpfs ]; then
      # Not a cgroup: podman's cgroupfs manager makes its conmon directory,
      # and files in it, under every name in /sys/fs/cgroup, mounted or not
      # (hugetlb, net_cls, ... on this host are plain tmpfs directories).
      rm -rf "$d"
    else
      find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    fi
    # find's status is not rmdir's: what is still there is a leak.
    [ ! -e "$d" ] || leaks="$leaks cgroup:$d"
  done
  if [ -n "$leaks" ]; then
    echo "leaked:$leaks" >&2
    hako_teardown || true
    return 1
  fi
  hako_teardown
}

@test "podman: run --rm echo hi prints hi, and nothing is left" {
  run -0 pm run --rm "${OPTS[@]}" echo hi
  [ "$output" = hi ]
  # conmon's pipes are the process's stdio.
  run -0 --separate-stderr pm run --rm -i "${OPTS[@]}" sh -c 'cat; echo err >&2' <<< data
  [ "$output" = data ]
  [ "$stderr" = err ]
  [ -z "$(pm ps -a -q)" ]
  [ -z "$($H list -q)" ]
  # conmon recognises only runc and crun: this runtime got no log options.
  run -1 grep -q -- "--log-format" "$PM/calls"
  grep -q "^create --bundle .* --pid-file " "$PM/calls"
}

@test "podman: run --rm exits with the container's status" {
  run -3 pm run --rm "${OPTS[@]}" sh -c 'exit 3'
  run -127 pm run --rm "${OPTS[@]}" /no/such/command
  [[ "$output" == *"not found"* ]]
  [ -z "$($H list -q)" ]
}

@test "podman: run -d, exec, pause, unpause, stop and rm a running container" {
  pm run -d --name c1 "${OPTS[@]}" sh -c 'echo started; trap "exit 7" TERM; sleep 1000 & wait'
  id=$(pm inspect -f '{{.Id}}' c1)
  [ "$($H state "$id" | jq -r .status)" = running ]
  [ "$($H state "$id" | jq -r .pid)" = "$(pm inspect -f '{{.State.Pid}}' c1)" ]
  # conmon, a subreaper, reaps the process: hako runs no monitor for it.
  [ ! -e "$STATE/$id/monitor" ]
  [ "$(awk '/^PPid/ {print $2}' "/proc/$(pm inspect -f '{{.State.Pid}}' c1)/status")" = \
    "$(pm inspect -f '{{.State.ConmonPid}}' c1)" ]

  run -4 pm exec c1 sh -c 'echo in; exit 4'
  [ "$output" = in ]
  run -0 pm exec --user 1000:1000 --workdir /tmp --env FOO=bar c1 sh -c 'echo $(id -u) $PWD $FOO'
  [ "$output" = "1000 /tmp bar" ]
  run -0 pm logs c1
  [ "$output" = started ]

  pm pause c1
  [ "$($H state "$id" | jq -r .status)" = paused ]
  [ "$(pm inspect -f '{{.State.Status}}' c1)" = paused ]
  pm unpause c1
  [ "$($H state "$id" | jq -r .status)" = running ]
  [ "$(pm inspect -f '{{.State.Status}}' c1)" = running ]

  pm stop --time 10 c1
  [ "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' c1)" = "exited 7" ]
  # podman deletes the runtime's container once it has stopped.
  deleted "$id"
  pm rm c1
  [ -z "$(pm ps -a -q)" ]
  [ -z "$($H list -q)" ]
}

@test "podman: -v SRC:DST:idmap with --uidmap and --cap-drop SETFCAP: the volume's files are owned inside as on the host, and root's writes are root's" {
  uroot="$TEST_ROOT/uroot"
  cp -a "$BUNDLE_DIR/rootfs" "$uroot"
  chown -R 100000:100000 "$uroot"
  src=$(mktemp -d "$TEST_ROOT/vol.XXXXXX")
  echo host > "$src/f"
  maps=(--uidmap 0:100000:65536 --gidmap 0:100000:65536)
  # podman's default capabilities hold CAP_SETFCAP, whose file capabilities
  # set through the volume the host would honour: refused, naming the fix.
  # (--rootfs takes what follows its path as the command.)
  run -126 pm run --rm "${RUNOPTS[@]}" "${maps[@]}" -v "$src:/v:idmap" --rootfs "$uroot" true
  [[ "$output" == *"CAP_SETFCAP with the read-write idmapped bind on /v"*"--cap-drop SETFCAP"* ]]
  run -0 pm run --rm "${RUNOPTS[@]}" "${maps[@]}" --cap-drop SETFCAP -v "$src:/v:idmap" --rootfs "$uroot" \
    sh -c 'stat -c %u /v/f; cat /v/f; echo made > /v/new'
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = host ]
  [ "$(stat -c %u:%g "$src/new")" = 0:0 ]
  [ -z "$($H list -q)" ]
}

@test "podman: --uidmap (a rootful user namespace): the bind sources in podman's 0700 run dir are reached; exec joins" {
  # The rootfs is the mapped root's, as podman's storage makes it for --uidmap.
  uroot="$TEST_ROOT/uroot"
  cp -a "$BUNDLE_DIR/rootfs" "$uroot"
  chown -R 100000:100000 "$uroot"
  maps=(--uidmap 0:100000:65536 --gidmap 0:100000:65536)
  run -0 pm run --rm "${RUNOPTS[@]}" "${maps[@]}" --rootfs "$uroot" \
    sh -c 'tr -s " " < /proc/self/uid_map; id -u; test -s /etc/hosts && test -s /etc/hostname && echo binds'
  [ "${lines[0]}" = " 0 100000 65536" ]
  [ "${lines[1]}" = 0 ]
  [ "${lines[2]}" = binds ]
  pm run -d --name u1 "${RUNOPTS[@]}" "${maps[@]}" --rootfs "$uroot" sleep 1000
  run -0 pm exec u1 sh -c 'tr -s " " < /proc/self/uid_map'
  [ "$output" = " 0 100000 65536" ]
  pm rm --force --time 0 u1
  [ -z "$($H list -q)" ]
}

@test "podman: stop of a container that ignores TERM kills it; kill sends signals" {
  pm run -d --name c2 "${OPTS[@]}" sleep 1000
  pm stop --time 1 c2
  [ "$(pm inspect -f '{{.State.ExitCode}}' c2)" = 137 ]
  pm rm c2
  pm run -d --name c3 "${OPTS[@]}" sh -c 'trap "exit 9" USR1; sleep 1000 & wait'
  pm kill --signal USR1 c3
  [ "$(pm wait c3)" = 9 ]
  pm rm c3
  [ -z "$($H list -q)" ]
}

@test "podman: run -t and exec -t get a terminal through the console socket" {
  run -0 pm run --rm -t "${OPTS[@]}" tty
  [[ "$output" == /dev/pts/* ]]
  pm run -d -t --name t1 "${OPTS[@]}" sleep 1000
  run -0 pm exec -t t1 sh -c 'tty; exit 0'
  [[ "$output" == /dev/pts/* ]]
  pm rm --force --time 0 t1
}

@test "podman: a runtime named runc gets --log-format=json --log from conmon and works alike" {
  runtime_named runc
  run -0 pm run --rm "${OPTS[@]}" echo hi
  [ "$output" = hi ]
  grep -q -- "^--log-format=json --log .* create " "$PM/calls"
  # hako's error reaches podman through the JSON log.
  run -127 pm run --rm "${OPTS[@]}" /no/such/command
  [[ "$output" == *"/no/such/command"*"not found"* ]]
  pm run -d --name r1 "${OPTS[@]}" sleep 1000
  run -5 pm exec r1 sh -c 'exit 5'
  pm rm --force --time 0 r1
  [ -z "$($H list -q)" ]
}

@test "podman: an image loaded from the fixtures' docker-archive runs, its config applied" {
  "$fixtures/images.sh" busybox "$TEST_ROOT/img" >/dev/null
  pm load -i "$TEST_ROOT/img/docker.tar" >/dev/null
  img=localhost/busybox-docker:latest
  # The image's command, environment and working directory.
  run -0 pm run --rm --pull never "${RUNOPTS[@]}" "$img"
  [ "$output" = "hello from the image
GREETING=hi" ]
  run -0 pm run --rm --pull never "${RUNOPTS[@]}" "$img" pwd
  [ "$output" = /srv ]
  pm rmi "$img" >/dev/null
  [ -z "$($H list -q)" ]
}

@test "podman: --device and --privileged (device fileMode with its file type, as podman writes it)" {
  run -0 pm run --rm --device /dev/null:/dev/mynull "${OPTS[@]}" sh -c 'ls -l /dev/mynull; echo x > /dev/mynull'
  [[ "$output" == "crw-rw-rw-"*"1,"*"3"*"/dev/mynull" ]]
  run -0 pm run --rm --privileged "${OPTS[@]}" sh -c 'test -c /dev/null && echo ok'
  [ "$output" = ok ]
}

@test "podman rootless: an ordinary user's podman --runtime HAKO, no wrapper, no --root: run --rm, run -d, exec and rm, state under its XDG_RUNTIME_DIR/hako, nothing left" {
  command -v newuidmap >/dev/null && command -v newgidmap >/dev/null \
    || skip "newuidmap/newgidmap not installed (Debian package uidmap)"
  PM_USER_MADE=1
  pm_user_remove   # a run killed before its teardown
  local u d="$PM/rl"
  # Its home is a real one: podman's cleanup runs hako without HOME, which
  # then takes the passwd entry's, as create took $HOME.
  useradd -M -d "$d/home" -s /bin/sh -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 "$PM_USER"
  usermod --add-subuids "$PM_SUB_BASE-$((PM_SUB_BASE + 65535))" \
          --add-subgids "$PM_SUB_BASE-$((PM_SUB_BASE + 65535))" "$PM_USER"
  runuser -u "$PM_USER" -- unshare -U -r true 2>/dev/null \
    || skip "an ordinary user cannot create a user namespace on this host (see hako doctor)"
  u=$(id -u "$PM_USER")
  [ ! -e "/tmp/hako-$u" ] || skip "/tmp/hako-$u exists on this host"
  mkdir -p "$d/xdg" "$d/home"
  # The rootfs is the user's, as its own podman storage would make it.
  cp -a "$BUNDLE_DIR/rootfs" "$d/rootfs"
  chown -R "$PM_USER:" "$d"
  chmod 711 "$PM" "$d"
  chmod 700 "$d/xdg"
  chmod 644 "$PM/containers.conf"
  # podman as the user: its own storage, podman's own choice of everything
  # else (no --runtime-flag, no --root for hako); the runtime is hako itself.
  RP="runuser -u $PM_USER -- env -C $d XDG_RUNTIME_DIR=$d/xdg HOME=$d/home CONTAINERS_CONF=$PM/containers.conf
      podman --root $d/storage --runroot $d/run --tmpdir $d/tmp --storage-driver vfs --cgroup-manager cgroupfs
      --runtime $HAKO"
  # (podman warns on stderr that / is not a shared mount.)
  run --separate-stderr $RP run --rm --network none --rootfs "$d/rootfs" sh -c 'echo hi; id -u; tr -s " " < /proc/self/uid_map'
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = hi ]
  [ "${lines[1]}" = 0 ]
  [ "${lines[2]}" = " 0 $u 1" ]
  # hako's state went to the user's runtime dir, and podman's cleanup (a
  # separate hako from conmon) found it there: nothing is left.
  [ "$(stat -c %U "$d/xdg/hako")" = "$PM_USER" ]
  [ -z "$(ls -A "$d/xdg/hako")" ]
  run --separate-stderr $RP run -d --name rl1 --network none --rootfs "$d/rootfs" sleep 1000
  echo "$output $stderr"
  [ "$status" -eq 0 ]
  id=$output
  [ -d "$d/xdg/hako/$id" ]
  run --separate-stderr $RP exec rl1 sh -c 'echo exec-ok'
  [ "$status" -eq 0 ]
  [ "$output" = exec-ok ]
  run $RP rm --force --time 0 rl1
  [ "$status" -eq 0 ]
  for i in $(seq 50); do [ -z "$(ls -A "$d/xdg/hako")" ] && break; sleep 0.1; done
  [ -z "$(ls -A "$d/xdg/hako")" ]
  # Every call, create's and the cleanup's, chose the same roots: no
  # fallback of the user's was made, and the data root is in its home.
  [ ! -e "/tmp/hako-$u" ]
  [ -d "$d/home/.local/share/hako" ]
}
