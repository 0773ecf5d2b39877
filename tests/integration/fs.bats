#!/usr/bin/env bats
# hako fs (stat, ls, rm, mkdir, mv, watch) and put --tar: hako's own code
# acting inside the sandbox as its user, every path resolved inside its
# root, no shell or tool needed in it.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# fs_box ID [JQ]: a running busybox sandbox with a writable /tmp (and its
# config edited by JQ).
fs_box () {
  local b
  b=$(new_bundle "$1")
  edit_config "$b" '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
  [ -z "${2:-}" ] || edit_config "$b" "$2"
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" "$1"
}

# bare_box ID: a sandbox whose root holds bin/sleep (busybox under that
# name) and etc/passwd and etc/group, nothing else: no shell, no ls, no rm.
bare_box () {
  local b r
  b=$(new_bundle "$1")
  r=$b/rootfs
  rm "$r"
  mkdir -p "$r/bin" "$r/etc" "$r/proc" "$r/dev" "$r/sys" "$r/tmp" "$r/data"
  cp "$BUNDLE_DIR/rootfs/bin/busybox" "$r/bin/sleep"
  cp "$BUNDLE_DIR/rootfs/etc/passwd" "$BUNDLE_DIR/rootfs/etc/group" "$r/etc/"
  edit_config "$b" '.root.readonly = false'
  set_args "$b" /bin/sleep 1000
  $H run --detach --bundle "$b" "$1"
}

# kind_is KIND: the JSON error line run --separate-stderr left in $stderr.
kind_is () {
  echo "$stderr" | jq -e --arg k "$1" '.kind == $k' > /dev/null || { echo "not $1: $stderr" >&2; return 1; }
}

# The processes of `hako fs watch` on sandbox ID (hako and its helper, a
# fork of it: both have its command line).
watchers () { pgrep -f -- "fs watch .*$1 /" || true; }
no_watchers () { [ -z "$(watchers "$1")" ]; }
watching () { [ "$(watchers "$1" | wc -l)" -ge 2 ]; }

# events FILE: a watch's JSON lines as "TYPE NAME" joined by commas.
events () { jq -r '"\(.type) \(.name)"' "$1" | paste -sd, -; }

@test "fs stat and ls: type, size, mode, owner names from the sandbox's files, mtime, where a link leads; ls -d descends through no link" {
  fs_box st '.process.capabilities |= map_values(. + ["CAP_CHOWN", "CAP_FOWNER"])'
  $H exec st sh -c 'mkdir -p /tmp/t/sub/deep && ln -s f /tmp/t/rel && ln -s /etc /tmp/t/abs && ln -s nowhere /tmp/t/dangling &&
    echo x > /tmp/t/sub/deep/x && mkfifo /tmp/t/fifo'
  printf 12345 | $H put --mode 0640 st /tmp/t/f
  $H exec st sh -c 'chown 65534:65534 /tmp/t/f && touch -d "2001-02-03 04:05:06" /tmp/t/f'
  run -0 $H fs stat --format json st /tmp/t/f
  echo "$output" | jq -e '.name == "f" and .path == "/tmp/t/f" and .type == "file" and .size == 5 and .mode == 416
    and .permissions == "-rw-r-----" and .uid == 65534 and .owner == "nobody" and .group == "nogroup"
    and .mtime_ns == 981173106000000000 and .mtime == "2001-02-03T04:05:06.000000000Z" and .symlink_target == null'
  # A link is itself (lstat), with its text and where it leads inside the root.
  run -0 $H fs stat --format json st /tmp/t/abs
  echo "$output" | jq -e '.type == "symlink" and .symlink_target == "/etc" and .resolved_path == "/etc" and .resolved_type == "dir"'
  run -0 $H fs stat --format json st /tmp/t/dangling
  echo "$output" | jq -e '.symlink_target == "nowhere" and .resolved_path == null'
  run -0 $H fs stat st /tmp/t/f
  [[ "$output" == "-rw-r----- nobody   nogroup           5 2001-02-03 "*" /tmp/t/f" ]]
  # ls: the directory's entries, sorted; -d 3 goes down, and never through a link.
  run -0 $H fs ls st /tmp/t
  [ "$(echo "$output" | awk '{print $7 $8 $9}' | paste -sd,)" = "abs->/etc,dangling->nowhere,f,fifo,rel->f,sub" ]
  run -0 $H fs ls --format json -d 3 st /tmp/t
  [ "$(echo "$output" | jq -r '"\(.rel):\(.type)"' | paste -sd,)" = "abs:symlink,dangling:symlink,f:file,fifo:fifo,rel:symlink,sub:dir,sub/deep:dir,sub/deep/x:file" ]
  [ "$(echo "$output" | jq -r 'select(.rel == "sub/deep/x") | .path')" = /tmp/t/sub/deep/x ]
  # ls of a link to a directory lists the directory, inside the root.
  run -0 $H fs ls --format json st /tmp/t/abs
  echo "$output" | jq -e 'select(.name == "passwd") | .path == "/tmp/t/abs/passwd" and .size > 0'
  # Paths are normalized; the root is "/".
  run -0 $H fs stat --format json st //tmp/./t/sub/../f
  echo "$output" | jq -e '.path == "/tmp/t/f"'
  run -0 $H fs stat --format json st /
  echo "$output" | jq -e '.name == "/" and .type == "dir"'
  # A name the sandbox chose is shown as text, never as the escape sequence
  # it may hold, in a listing and in an error alike.
  $H exec st sh -c 'mkdir /tmp/e && touch "/tmp/e/x$(printf "\033]0;owned\007")y"'
  run -0 $H fs ls st /tmp/e
  [[ "$output" == *' x?]0;owned?y' ]]
  run -125 $H fs rm -r -u nobody st /tmp/e
  [[ "$output" == *'remove /tmp/e/x?]0;owned?y: Permission denied'* ]]
  [[ "$output" != *$'\033'* ]]
}

@test "attack: a name with C1 controls (CSI as UTF-8) or bytes that are not UTF-8 reaches no terminal as such: ls, stat, watch, an error" {
  fs_box c1
  # U+009B (CSI) is "ESC [" to xterm and VTE; a lone 0x9b is CSI to an 8-bit terminal.
  $H exec c1 sh -c 'mkdir /tmp/e && touch "/tmp/e/a$(printf "\302\233")2Jb" "/tmp/e/c$(printf "\233")31md" "/tmp/e/$(printf "\303\251")t"'
  run -0 $H fs ls c1 /tmp/e
  echo "$output"
  [[ "$output" == *' a??2Jb'* ]]
  [[ "$output" == *' c?31md'* ]]
  [[ "$output" == *$' \303\251t'* ]]
  [[ "$output" != *$'\233'* ]]
  run -0 $H fs stat c1 "/tmp/e/a$(printf '\302\233')2Jb"
  [[ "$output" == *' /tmp/e/a??2Jb' ]]
  # In JSON the name is whole, as the sandbox wrote it.
  run -0 $H fs ls --format json c1 /tmp/e
  [ "$(echo "$output" | jq -r 'select(.name | startswith("a")) | .name' | od -An -tx1 | tr -d ' \n')" = 61c29b324a620a ]
  run -125 $H fs rm -r -u nobody c1 /tmp/e
  [[ "$output" == *'remove /tmp/e/a??2Jb: Permission denied'* ]]
  [[ "$output" != *$'\233'* ]]
  $H fs watch c1 /tmp/e > "$TEST_ROOT/w" & w=$!
  wait_for 20 marked c1 "$TEST_ROOT/w"
  $H exec c1 sh -c 'touch "/tmp/e/n$(printf "\302\233")x"'
  wait_for 20 grep -q "create n??x" "$TEST_ROOT/w"
  kill -TERM "$w"
  wait "$w"
  run ! grep -q $'\233' "$TEST_ROOT/w"
}

@test "attack: rm -r while the sandbox swaps a directory of the tree with a symlink (RENAME_EXCHANGE) never removes what the link names" {
  $H run -d --profile host sw -- sleep 1000
  $H exec sw sh -c 'mkdir -p /work/keep; for i in $(seq 50); do echo k > /work/keep/f$i; done'
  # Swapped as fast as it can: /work/t/d a directory, then a link to /work/keep.
  $H exec -d sw python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
while True:
    os.makedirs("/work/t/d/e", exist_ok=True)
    try:
        os.symlink("/work/keep", "/work/t/l")
    except FileExistsError:
        pass
    for _ in range(200):
        libc.renameat2(-100, b"/work/t/d", -100, b"/work/t/l", 2)
' > /dev/null
  wait_for 10 $H exec sw test -L /work/t/l
  for i in $(seq 30); do
    $H fs rm -r sw /work/t > /dev/null 2>&1 || true
  done
  # Only the f files count: the swapper's own makedirs can land in
  # /work/keep (through d while d is the link) and add an e there.
  run -0 $H exec sw sh -c 'ls /work/keep | grep -c "^f[0-9]*$"'
  [ "$output" = 50 ]
  $H delete --force sw
}

# marked ID FILE: a file touched in ID's /tmp/e shows in the text watch at FILE.
marked () { $H exec "$1" touch /tmp/e/mark; grep -q "mark" "$2"; }

@test "fs in a sandbox with no shell and no tools: put --tar, ls, stat, mkdir, mv, rm and watch all work" {
  bare_box bare
  run -127 $H exec bare sh -c true
  # Many files in one call.
  mkdir -p "$TEST_ROOT/src/d/e"
  echo one > "$TEST_ROOT/src/a"
  echo two > "$TEST_ROOT/src/d/e/b"
  tar -C "$TEST_ROOT/src" -cf "$TEST_ROOT/files.tar" .
  $H put --tar -p bare /data/in < "$TEST_ROOT/files.tar"
  run -0 $H fs ls -d 3 --format json bare /data/in
  [ "$(echo "$output" | jq -r '"\(.rel):\(.type):\(.size)"' | grep -v :dir: | paste -sd,)" = "a:file:4,d/e/b:file:4" ]
  [ "$($H get bare /data/in/d/e/b)" = two ]
  $H fs watch --format json bare /data/in > "$TEST_ROOT/ev" & w=$!
  wait_for 20 grep -q '"ready"' "$TEST_ROOT/ev"
  run -0 $H fs mkdir -p --format json bare /data/in/new/deeper
  echo "$output" | jq -e '.created == true and .type == "dir" and .mode == 493'
  run -0 $H fs mkdir -p --format json bare /data/in/new/deeper
  echo "$output" | jq -e '.created == false'
  $H fs mv bare /data/in/a /data/in/a2
  $H fs rm -r bare /data/in/d
  $H fs rm bare /data/in/a2
  run -0 $H fs stat --format json bare /bin/sleep
  echo "$output" | jq -e '.type == "file" and .mode == 493'
  echo z | $H put bare /data/in/zz
  wait_for 20 grep -q '"zz"' "$TEST_ROOT/ev"
  kill -TERM "$w"
  wait "$w"
  [ "$(events "$TEST_ROOT/ev")" = "ready ,create new,rename a,create a2,remove d,remove a2,create zz,write zz" ]
  run -0 $H fs ls bare /data/in
  [ "$(echo "$output" | awk '{print $NF}' | paste -sd,)" = "new,zz" ]
}

@test "fs: a symlink the sandbox plants resolves inside its root, never to the host's files" {
  fs_box esc
  mkdir -p "$TEST_ROOT/host/dir"
  echo canary > "$TEST_ROOT/host/dir/canary"
  $H exec esc sh -c "ln -s $TEST_ROOT/host /tmp/tohost && ln -s ../../../../../../.. /tmp/up && ln -s / /tmp/slash && mkdir -p /tmp/d && ln -s /etc /tmp/d/etc"
  # Through a link to a host path: that path inside the sandbox, which has none.
  run -125 --separate-stderr $H --log-format json fs stat esc /tmp/tohost/dir/canary
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs ls esc /tmp/up$TEST_ROOT/host/dir
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs rm esc /tmp/tohost/dir/canary
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs mv esc /tmp/up$TEST_ROOT/host/dir/canary /tmp/stolen
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs watch esc /tmp/tohost/dir
  kind_is not_found
  # mkdir -p through the link: the path inside the sandbox, which has none
  # of it until the sandbox makes it; then it is made there.
  run -125 --separate-stderr $H --log-format json fs mkdir -p esc /tmp/tohost/dir/made
  kind_is not_found
  [ ! -e "$TEST_ROOT/host/dir/made" ]
  $H exec esc mkdir -p "$TEST_ROOT/host/dir"
  $H fs mkdir -p esc /tmp/tohost/dir/made
  [ ! -e "$TEST_ROOT/host/dir/made" ]
  run -0 $H exec esc ls -d "$TEST_ROOT/host/dir/made"
  [ "$(cat "$TEST_ROOT/host/dir/canary")" = canary ]
  # "..": as many as you like, the root is the top.
  run -0 $H fs stat --format json esc /tmp/up/etc/passwd
  echo "$output" | jq -e '.path == "/tmp/up/etc/passwd" and .size == 82'
  # rm -r of a tree with links in it removes the links, not what they lead to.
  $H fs rm -r esc /tmp/d
  run -0 $H exec esc cat /etc/passwd
  [[ "$output" == root:* ]]
  $H fs rm esc /tmp/slash
  run -0 $H fs stat esc /etc/group
}

@test "fs: bad input is a usage error or an error of its kind, and changes nothing" {
  fs_box bad
  $H exec bad sh -c 'mkdir -p /tmp/dir/sub && echo x > /tmp/file'
  run -125 --separate-stderr $H --log-format json fs stat bad tmp/file
  kind_is invalid_argument
  [[ "$stderr" == *'must be absolute'* ]]
  run -125 --separate-stderr $H --log-format json fs stat nosuch /tmp
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs stat bad /tmp/nope
  kind_is not_found
  # A file where a directory should be: no such path.
  run -125 --separate-stderr $H --log-format json fs stat bad /tmp/file/x
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs ls bad /tmp/file
  kind_is invalid_argument
  run -125 --separate-stderr $H --log-format json fs rm bad /tmp/dir
  kind_is invalid_argument
  [[ "$stderr" == *'-r removes it'* ]]
  run -125 --separate-stderr $H --log-format json fs rm -r bad /
  kind_is invalid_argument
  run -125 --separate-stderr $H --log-format json fs rm -r bad /tmp
  kind_is busy
  run -125 --separate-stderr $H --log-format json fs mkdir bad /tmp/dir
  kind_is exists
  run -125 --separate-stderr $H --log-format json fs mkdir -p bad /tmp/file
  kind_is exists
  run -125 --separate-stderr $H --log-format json fs mkdir bad /tmp/a/b
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs mv bad /tmp/nope /tmp/x
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs mv bad /tmp/dir /tmp/dir/sub/in
  kind_is invalid_argument
  # Usage errors, before anything is done.
  run -125 $H fs
  [[ "$output" == *'expects a subcommand'* ]]
  run -125 $H fs lst bad /tmp
  [[ "$output" == *'did you mean "ls"'* ]]
  run -125 $H fs ls -d 0 bad /tmp
  run -125 $H fs stat -r bad /tmp
  [[ "$output" == *'--recursive is not an option of fs stat'* ]]
  run -125 $H fs mv bad /tmp/file
  run -125 $H fs mkdir --mode 999 bad /tmp/m
  run -125 $H fs watch --timeout soon bad /tmp
  run -0 $H exec bad ls /tmp/dir /tmp/file
  run -0 $H exec bad ls /tmp
  [ "$(echo $output)" = "dir file" ]
}

@test "fs as the sandbox's user: its permissions are the kernel's answer, and what it makes is its own" {
  fs_box us
  $H exec us sh -c 'mkdir -m 700 /tmp/private && echo s > /tmp/private/s && mkdir -m 777 /tmp/open && echo r > /tmp/open/rootfile && chmod 1777 /tmp/open'
  run -125 --separate-stderr $H --log-format json fs stat -u 1000 us /tmp/private/s
  kind_is permission
  [[ "$stderr" == *'as uid 1000'* ]]
  run -125 --separate-stderr $H --log-format json fs ls -u 1000 us /tmp/private
  kind_is permission
  run -125 --separate-stderr $H --log-format json fs watch -u nobody us /tmp/private
  kind_is permission
  run -125 --separate-stderr $H --log-format json fs mkdir -u 1000 us /tmp/private/x
  kind_is permission
  # The sticky bit: another user's file in a shared directory stays.
  run -125 --separate-stderr $H --log-format json fs rm -u 1000 us /tmp/open/rootfile
  kind_is permission
  run -125 --separate-stderr $H --log-format json fs mv -u 1000 us /tmp/open/rootfile /tmp/open/mine
  kind_is permission
  $H fs mkdir -u 1000:1000 us /tmp/open/own
  run -0 $H exec us stat -c '%u:%g %a' /tmp/open/own
  [ "$output" = "1000:1000 755" ]
  $H fs mv -u 1000 us /tmp/open/own /tmp/open/own2
  $H fs rm -r -u 1000 us /tmp/open/own2
  # Without --user it is the sandbox's root, whose files are its own too.
  $H fs rm -r us /tmp/private
  run -0 $H exec us ls /tmp
  [ "$output" = open ]
}

@test "fs rm -r does not cross mounts: a bind below is left with its files, named, and the rest removed" {
  mkdir -p "$TEST_ROOT/bound"
  echo keep > "$TEST_ROOT/bound/keep"
  b=$(new_bundle rmm)
  edit_config "$b" '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"},
    {"destination": "/tmp/tree/mnt", "type": "bind", "source": "'"$TEST_ROOT/bound"'", "options": ["rbind"]}]'
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" rmm
  $H exec rmm sh -c 'mkdir -p /tmp/tree/a/b && echo x > /tmp/tree/a/b/f && echo y > /tmp/tree/g'
  run -125 --separate-stderr $H --log-format json fs rm -r rmm /tmp/tree
  kind_is busy
  [[ "$stderr" == *'/tmp/tree/mnt: a mount point'* ]]
  run -0 $H exec rmm find /tmp/tree
  [ "$(echo $output)" = "/tmp/tree /tmp/tree/mnt /tmp/tree/mnt/keep" ]
  [ "$(cat "$TEST_ROOT/bound/keep")" = keep ]
  run -125 --separate-stderr $H --log-format json fs rm -r rmm /tmp/tree/mnt
  kind_is busy
  run -125 --separate-stderr $H --log-format json fs mv rmm /tmp/tree/mnt/keep /tmp/keep
  kind_is invalid_argument
  [ "$(cat "$TEST_ROOT/bound/keep")" = keep ]
}

@test "fs watch: create, write, chmod, rename, remove; -r follows new and moved directories; put's writes are create+write and write" {
  fs_box wa
  $H exec wa mkdir -p /tmp/w/old /tmp/outside/inner
  $H fs watch -r --format json wa /tmp/w > "$TEST_ROOT/ev" & w=$!
  wait_for 20 grep -q '"ready"' "$TEST_ROOT/ev"
  $H exec wa sh -c 'echo a > /tmp/w/f; chmod 600 /tmp/w/f; mv /tmp/w/f /tmp/w/g; rm /tmp/w/g'
  $H exec wa mkdir /tmp/w/new
  $H exec wa sh -c 'echo x > /tmp/w/new/x; echo y > /tmp/w/old/y'
  $H exec wa mv /tmp/outside /tmp/w/moved
  $H exec wa sh -c 'echo z > /tmp/w/moved/inner/z; mv /tmp/w/moved /tmp/w/renamed; echo q > /tmp/w/renamed/inner/q'
  echo p | $H put wa /tmp/w/p
  echo p2 | $H put wa /tmp/w/p
  $H exec wa mkdir /tmp/w/end
  wait_for 20 grep -q '"end"' "$TEST_ROOT/ev"
  kill -TERM "$w"
  wait "$w"
  [ "$(events "$TEST_ROOT/ev")" = "ready ,create f,write f,chmod f,rename f,create g,remove g,create new,create new/x,write new/x,create old/y,write old/y,create moved,create moved/inner/z,write moved/inner/z,rename moved,create renamed,create renamed/inner/q,write renamed/inner/q,create p,write p,write p,create end" ]
  # Without -r, only the directory's own entries.
  $H fs watch --format json --timeout 30s wa /tmp/w > "$TEST_ROOT/ev2" & w=$!
  wait_for 20 grep -q '"ready"' "$TEST_ROOT/ev2"
  $H exec wa sh -c 'echo 1 > /tmp/w/new/deep; echo 2 > /tmp/w/top'
  wait_for 20 grep -q '"top"' "$TEST_ROOT/ev2"
  kill -TERM "$w"
  wait "$w"
  [ "$(events "$TEST_ROOT/ev2")" = "ready ,create top,write top" ]
}

@test "fs watch ends, leaving nothing running: the client killed, TERM, its reader gone, --timeout, --sync's input closed, the directory removed" {
  fs_box wk
  $H exec wk mkdir -p /tmp/w
  $H fs watch wk /tmp/w > /dev/null & w=$!
  wait_for 20 watching wk
  kill -9 "$w"
  wait "$w" || true
  wait_for 10 no_watchers wk
  $H fs watch wk /tmp/w > /dev/null & w=$!
  wait_for 20 watching wk
  kill -TERM "$w"
  wait "$w"
  wait_for 10 no_watchers wk
  run -0 bash -c "$H fs watch --format json wk /tmp/w | head -n 1"
  [ "$output" = '{"type":"ready","name":"","dir":true}' ]
  wait_for 10 no_watchers wk
  run -0 $H fs watch --timeout 200ms wk /tmp/w
  run -0 $H fs watch --sync wk /tmp/w < /dev/null
  $H fs watch --format json --timeout 60s wk /tmp/w > "$TEST_ROOT/ev" & w=$!
  wait_for 20 grep -q '"ready"' "$TEST_ROOT/ev"
  $H exec wk rmdir /tmp/w
  wait "$w"
  [ "$(events "$TEST_ROOT/ev")" = "ready ,remove " ]
  wait_for 10 no_watchers wk
}

@test "fs watch --sync: each line read is answered once every change made before it is reported" {
  fs_box sy
  $H exec sy mkdir -p /tmp/w
  coproc WATCH { $H fs watch --sync --format json sy /tmp/w; }
  read -r -t 20 -u "${WATCH[0]}" line
  [ "$line" = '{"type":"ready","name":"","dir":true}' ]
  for i in 1 2 3; do
    echo "$i" | $H put sy "/tmp/w/f$i"
    echo >&"${WATCH[1]}"
    got=""
    while read -r -t 20 -u "${WATCH[0]}" line && [ "$(jq -r .type <<< "$line")" != sync ]; do
      got="$got$(jq -r '"\(.type) \(.name)"' <<< "$line"),"
    done
    [ "$got" = "create f$i,write f$i," ]
  done
  exec {WATCH[1]}>&-
  wait "$WATCH_PID"
  wait_for 10 no_watchers sy
}

@test "fs watch: no such directory, not a directory, a stopped sandbox" {
  fs_box wn
  $H exec wn sh -c 'echo x > /tmp/file'
  run -125 --separate-stderr $H --log-format json fs watch wn /tmp/nope
  kind_is not_found
  run -125 --separate-stderr $H --log-format json fs watch wn /tmp/file
  kind_is invalid_argument
  $H kill wn KILL
  wait_status wn stopped
  run -125 --separate-stderr $H --log-format json fs watch wn /
  kind_is not_running
  no_watchers wn
}

@test "put --tar: each file as put writes one; links, devices and names climbing out are refused" {
  fs_box pt '.process.capabilities |= map_values(. + ["CAP_CHOWN", "CAP_FOWNER"])'
  $H exec pt sh -c 'mkdir -p /tmp/in && echo old > /tmp/in/a && chmod 751 /tmp/in/a && chown 65534:65534 /tmp/in/a'
  mkdir -p "$TEST_ROOT/src/sub"
  echo new > "$TEST_ROOT/src/a"
  chmod 600 "$TEST_ROOT/src/a"
  echo b > "$TEST_ROOT/src/sub/b"
  for i in $(seq 100); do echo "$i" > "$TEST_ROOT/src/sub/n$i"; done
  tar -C "$TEST_ROOT/src" -cf - . | $H put --tar pt /tmp/in
  # The replaced file keeps its owner and mode, as put; new ones are 0644.
  run -0 $H exec pt stat -c '%u:%g %a %s' /tmp/in/a /tmp/in/sub/b /tmp/in/sub/n100
  [ "$(echo $output)" = "65534:65534 751 4 0:0 644 2 0:0 644 4" ]
  run -0 $H exec pt sh -c 'cat /tmp/in/sub/n* | wc -l'
  [ "$output" = 100 ]
  # Without -p a missing directory is an error; --mode applies to each file.
  tar -C "$TEST_ROOT/src" -cf - ./sub/b | $H put --tar -p --mode 0640 pt /tmp/new/dir
  run -0 $H exec pt stat -c %a /tmp/new/dir/sub/b
  [ "$output" = 640 ]
  ln -s /etc/passwd "$TEST_ROOT/src/link"
  run -125 --separate-stderr $H --log-format json put --tar pt /tmp/in < <(tar -C "$TEST_ROOT/src" -cf - ./link)
  kind_is invalid_argument
  [[ "$stderr" == *'a symlink'* ]]
  python3 -c '
import io, sys, tarfile
out = io.BytesIO()
with tarfile.open(fileobj=out, mode="w") as t:
    i = tarfile.TarInfo("sub/../../escaped"); i.size = 1
    t.addfile(i, io.BytesIO(b"x"))
sys.stdout.buffer.write(out.getvalue())' > "$TEST_ROOT/climb.tar"
  run -125 --separate-stderr $H --log-format json put --tar pt /tmp/in < "$TEST_ROOT/climb.tar"
  kind_is invalid_argument
  run -1 $H exec pt ls /tmp/escaped
  run -125 --separate-stderr $H --log-format json put --tar pt /tmp/in <<< 'not a tar stream at all'
  kind_is invalid_argument
  run -0 $H put --tar pt /tmp/in < /dev/null
}

@test "fs on a stopped sandbox: its kept files, through its work dir and binds; mounts that are gone say so" {
  $H run --detach --profile host sto -- sleep 1000
  echo kept | $H put sto /work/kept
  $H fs mkdir sto /work/d
  $H exec sto sh -c 'ln -s /etc /work/etc && ln -s ../../../../../../../.. /work/up'
  $H stop sto
  wait_status sto stopped
  run -0 $H fs ls --format json sto /work
  [ "$(echo "$output" | jq -r .name | paste -sd,)" = "d,etc,kept,up" ]
  # Stopped, hako works on the host's directories: a link still resolves
  # inside the sandbox's mount it is on (there /etc is the link itself, a
  # loop), never to the host's /etc.
  [ -e /etc/hostname ]
  run -125 --separate-stderr $H --log-format json fs stat sto /work/etc/hostname
  kind_is invalid_argument
  [[ "$stderr" == *'Too many levels of symbolic links'* ]]
  run -125 --separate-stderr $H --log-format json fs rm sto /work/etc/hostname
  kind_is invalid_argument
  run -125 --separate-stderr $H --log-format json fs ls sto /work/up/etc
  kind_is invalid_argument
  run -0 $H fs ls --format json sto /work/up
  [ "$(echo "$output" | jq -r .name | paste -sd,)" = "d,etc,kept,up" ]
  [ -e /etc/hostname ]
  $H fs rm sto /work/etc
  $H fs rm sto /work/up
  $H fs mv sto /work/kept /work/d/kept
  run -0 $H fs stat --format json sto /work/d/kept
  echo "$output" | jq -e '.size == 5 and .owner == "root"'
  run -125 --separate-stderr $H --log-format json fs rm -r sto /work
  kind_is busy
  run -125 --separate-stderr $H --log-format json fs mv sto /work/d /tmp/d
  kind_is not_found
  $H fs rm -r sto /work/d
  run -0 $H fs ls sto /work
  [ -z "$output" ]
  $H start sto
  run -0 $H exec sto ls -A /work
  [ -z "$output" ]
}
