#!/usr/bin/env bats
# Idmapped binds (issue 36): docker's `-v "$PWD:/work" -w /work` with the
# host profile, whose root is host uid 1000000000, on a directory of the
# caller's — with `:idmap` it works, without it create warns; the OCI
# config's "idmap"/"ridmap" and a mount's own uidMappings; what is refused
# (exit 125, naming the field, nothing left); and what untrusted code
# inside tries through such a bind: set-id files for the host, a set-id
# program run with privilege inside, a host mount's lock lifted, a path
# outside the bind.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () {
  hako_setup
  MOUNTED=()
}
teardown () {
  local m
  for m in "${MOUNTED[@]}"; do umount -l "$m" 2>/dev/null || true; done
  hako_teardown
}

# A directory as `mktemp -d` makes it for the caller (root): 0700, root's.
pwd_dir () {
  mktemp -d "$TEST_ROOT/pwd.XXXXXX"
}

# host_bundle NAME [JQ]: the host profile as a bundle, edited by JQ.
host_bundle () {
  local b="$TEST_ROOT/bundle-$1"
  mkdir -p "$b"
  $HAKO spec --profile host --bundle "$b" >/dev/null
  [ -z "${2:-}" ] || edit_config "$b" "$2"
  echo "$b"
}

# ---- docker's idiom ------------------------------------------------------------

@test "-v \"\$PWD:/work:idmap\" -w /work on a 0700 root-owned mktemp -d: reads, writes owned by root on the host, mtime, rm" {
  d=$(pwd_dir)
  echo from-host > "$d/in"
  echo doomed > "$d/gone"
  echo users > "$d/users"
  chown 1000:1000 "$d/users"
  cd "$d"
  run -0 --separate-stderr $H run --rm -v "$PWD:/work:idmap" -w /work w1 -- sh -c \
    'cat in; stat -c "%u:%g" . in users; echo made > out; touch -d @981173106 out; rm gone; id -u'
  echo "$output"
  [ "$stderr" = "" ]
  [ "${lines[0]}" = from-host ]
  # The host's owners, as they are: root's is root's, uid 1000's is 1000's.
  [ "${lines[1]}" = 0:0 ]
  [ "${lines[2]}" = 0:0 ]
  [ "${lines[3]}" = 1000:1000 ]
  [ "${lines[4]}" = 0 ]
  [ "$(cat "$d/out")" = made ]
  [ "$(stat -c %u:%g "$d/out")" = 0:0 ]
  [ "$(stat -c %Y "$d/out")" = 981173106 ]
  [ ! -e "$d/gone" ]
  # Stopped, its files are the host's: get and put say where, and do nothing.
  $H run -v "$PWD:/work:idmap" w0 -- true
  run -125 $H get w0 /work/in
  [[ "$output" == *"/work/in is on the sandbox's idmapped bind at /work, whose files are the sandbox's only while it runs: on the host they are in $d"* ]]
  run -125 $H put w0 /work/put </dev/null
  [ ! -e "$d/put" ]
  $H delete w0
  # A single file too, and podman's spelling with a mode: ":rw,idmap".
  run -0 $H run --rm -v "$d/in:/tmp/f:rw,idmap" w2 -- sh -c 'stat -c %u /tmp/f; echo again >> /tmp/f'
  [ "$output" = 0 ]
  [ "$(tail -n 1 "$d/in")" = again ]
}

@test "-v SRC:DST:ro,idmap (and idmap,ro) is read-only; the config says rbind, ro, nosuid, nodev, idmap" {
  d=$(pwd_dir)
  echo x > "$d/f"
  for o in ro,idmap idmap,ro; do
    run -2 $H run --rm -v "$d:/work:$o" -w /work r1 -- sh -c 'cat f; echo y > f'
    [ "${lines[0]}" = x ]
    [[ "$output" == *"Read-only file system"* ]]
  done
  [ "$(cat "$d/f")" = x ]
  mkdir "$TEST_ROOT/spec"
  $HAKO spec --profile host --bundle "$TEST_ROOT/spec" -v "$d:/data:ro,idmap" -v "$d:/r:ridmap"
  jq -e --arg d "$d" '.mounts[] | select(.destination == "/data") | .source == $d
    and .options == ["rbind", "ro", "nosuid", "nodev", "idmap"]' "$TEST_ROOT/spec/config.json"
  jq -e '.mounts[] | select(.destination == "/r") | .options == ["rbind", "rw", "nosuid", "nodev", "ridmap"]' \
    "$TEST_ROOT/spec/config.json"
}

@test "without idmap: run and create warn, naming :idmap, chown and --user; reads of a 0700 dir and writes of a 0755 one fail with EACCES" {
  d=$(pwd_dir)
  echo x > "$d/f"
  run -2 --separate-stderr $H run --rm -v "$d:/work" -w / nw1 -- sh -c 'ls /work'
  [[ "$stderr" == *"warning: -v $d:/work: the sandbox's root (host uid 1000000000) cannot enter $d (mode 0700, owner 0, group 0)"* ]]
  [[ "$stderr" == *"add :idmap"*"chown 1000000000 $d"*"--user"* ]]
  [[ "$stderr" == *"ls: cannot open directory '/work': Permission denied"* ]]
  chmod 755 "$d"
  run -2 --separate-stderr $H run --rm -v "$d:/work" -w /work nw2 -- sh -c 'cat f; echo y > f'
  [ "$output" = x ]
  [[ "$stderr" == *"warning: -v $d:/work: the sandbox's root (host uid 1000000000) cannot write to $d (mode 0755, owner 0, group 0): writes there fail"* ]]
  [[ "$stderr" == *"Permission denied"* ]]
  # create says it too, once, before anything runs.
  # (Its process keeps create's stdio, as runc's does: not bats's pipes.)
  $H create --profile host -v "$d:/work" nw3 </dev/null >/dev/null 2>"$TEST_ROOT/create.err"
  grep -F "warning: -v $d:/work: the sandbox's root (host uid 1000000000) cannot write to $d" "$TEST_ROOT/create.err"
  $H delete nw3
  # With --user, the host uid it is.
  run -2 --separate-stderr $H run --rm -u 1000 -v "$d:/work" -w /work nw4 -- sh -c 'echo y > f'
  [[ "$stderr" == *"the sandbox's user 1000 (host uid 1000001000) cannot write to $d"* ]]
  # Nothing to say where the sandbox can write, with :ro where it can read,
  # with :idmap, or for a bundle's own mounts (its author's).
  chmod 777 "$d"
  run -0 --separate-stderr $H run --rm -v "$d:/work" nw5 -- true
  [ "$stderr" = "" ]
  chmod 755 "$d"
  run -0 --separate-stderr $H run --rm -v "$d:/work:ro" -v "$d:/w2:idmap" nw6 -- true
  [ "$stderr" = "" ]
  b=$(host_bundle own '.mounts += [{"destination": "/work", "type": "bind", "source": "'"$d"'", "options": ["rbind"]}]')
  run -0 --separate-stderr $H run --rm --bundle "$b" nw7 -- true
  [ "$stderr" = "" ]
}

@test "-v SRC:/work:idmap on uid 1000's checkout: root writes there as host root, so create warns naming --user 1000, with which the files stay 1000's" {
  d=$(pwd_dir)
  chown 1000:1000 "$d"
  chmod 755 "$d"
  run -2 --separate-stderr $H run --rm -v "$d:/work:idmap" -w /work co1 -- sh -c 'echo x > f'
  [[ "$stderr" == *"warning: -v $d:/work (idmapped): the sandbox's root (host uid 0 through the idmapping) cannot write to $d (mode 0755, owner 1000, group 1000)"*"(its owner: --user 1000)"* ]]
  [[ "$stderr" == *"Permission denied"* ]]
  run -0 --separate-stderr $H run --rm -u 1000 -v "$d:/work:idmap" -w /work co2 -- sh -c 'echo x > f; id -u'
  [ "$stderr" = "" ]
  [ "$output" = 1000 ]
  [ "$(stat -c %u:%g "$d/f")" = 1000:1000 ]
}

# ---- the OCI config's form -------------------------------------------------------

@test "config: options [\"rbind\", \"idmap\"] take the sandbox's mappings; a mount's own uidMappings map host uid 1000 to its root" {
  d=$(pwd_dir)
  echo mine > "$d/mine"
  chown 1000:1000 "$d" "$d/mine"
  chmod 755 "$d"
  echo root > "$d/roots"
  b=$(host_bundle cfg '.mounts += [{"destination": "/a", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"]},
    {"destination": "/b", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"],
     "uidMappings": [{"containerID": 1000, "hostID": 1000000000, "size": 1}],
     "gidMappings": [{"containerID": 1000, "hostID": 1000000000, "size": 1}]}]')
  set_args "$b" sh -c 'stat -c %u /a/mine /a/roots /b/mine /b/roots; echo new > /b/new; grep " /b " /proc/self/mountinfo'
  run -0 $H run --rm --bundle "$b" cfg
  echo "$output"
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 0 ]
  # Its own mapping: uid 1000's files are root's inside; root's, mapped
  # to nothing, are nobody's.
  [ "${lines[2]}" = 0 ]
  [ "${lines[3]}" = 65534 ]
  [[ "${lines[4]}" == *" /b rw,nosuid,nodev,"*"idmapped"* ]]
  [ "$(stat -c %u:%g "$d/new")" = 1000:1000 ]
}

@test "config: \"idmap\" maps the bind's top mount, \"ridmap\" every mount under it too" {
  d=$(pwd_dir)
  mkdir "$d/sub"
  mount -t tmpfs -o mode=0755 tmpfs "$d/sub"
  MOUNTED+=("$d/sub")
  touch "$d/sub/f"
  b=$(host_bundle rec '.mounts += [{"destination": "/i", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"]},
    {"destination": "/r", "type": "bind", "source": "'"$d"'", "options": ["rbind", "ridmap"]}]')
  set_args "$b" sh -c 'stat -c %u /i/sub/f /r/sub/f'
  run -0 $H run --rm --bundle "$b" rec
  [ "${lines[0]}" = 65534 ]
  [ "${lines[1]}" = 0 ]
}

# ---- refused: 125, the field named, nothing left ------------------------------------

# refused BUNDLE ID TEXT: run fails with 125 naming TEXT, and leaves no
# state.  (run, not create: a create that wrongly succeeded would leave a
# process holding bats's output pipe.)
refused () {
  run -125 $H run --rm --bundle "$1" "$2" -- true
  echo "$output"
  [[ "$output" == *"$3"* ]]
  [ -z "$(ls -A "$STATE" 2>/dev/null)" ]
  [ -z "$(ls -A "$DATA/sandboxes" 2>/dev/null)" ]
}

@test "refused: idmap on a non-bind, without a user namespace, malformed mappings, CAP_SETFCAP with a writable one" {
  d=$(pwd_dir)
  bind='{"destination": "/x", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"]}'
  b=$(host_bundle tmpfs '.mounts += [{"destination": "/x", "type": "tmpfs", "source": "tmpfs", "options": ["idmap"]}]')
  refused "$b" t1 '.mounts['
  refused "$b" t1 '].options: only a bind mount can be idmapped'
  # The runc profile has no user namespace.
  b=$(new_bundle nouserns)
  edit_config "$b" ".mounts += [$bind]"
  refused "$b" t2 '.options: the idmapped bind on /x needs a user namespace ("user" in .linux.namespaces), whose mappings it takes'
  run -125 $H run --rm -v "$d:/x:idmap" --bundle "$b" t3 -- true
  [[ "$output" == *"the idmapped bind on /x needs a user namespace"* ]]
  b=$(host_bundle half '.mounts += [{"destination": "/x", "type": "bind", "source": "'"$d"'", "options": ["rbind"],
    "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}]')
  refused "$b" t4 '].gidMappings: required with uidMappings (runtime-spec: both or neither)'
  b=$(host_bundle overlap '.mounts += [{"destination": "/x", "type": "bind", "source": "'"$d"'", "options": ["rbind"],
    "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 10}, {"containerID": 5, "hostID": 5000, "size": 1}],
    "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}]')
  refused "$b" t5 '].uidMappings[1].containerID: the range overlaps entry 0'"'"'s'
  b=$(host_bundle zero '.mounts += [{"destination": "/x", "type": "bind", "source": "'"$d"'", "options": ["rbind"],
    "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 0}], "gidMappings": []}]')
  refused "$b" t6 '].uidMappings[0].size: must be greater than 0'
  b=$(host_bundle setfcap ".mounts += [$bind] | .process.capabilities.bounding += [\"CAP_SETFCAP\"]")
  refused "$b" t7 '.process.capabilities: CAP_SETFCAP with the read-write idmapped bind on /x'
  # Read-only, nothing can be written through it: CAP_SETFCAP is fine.
  edit_config "$b" '(.mounts[] | select(.destination == "/x") | .options) += ["ro"]'
  run -0 $H run --rm --bundle "$b" t8 -- true
}

@test "refused: a filesystem the kernel cannot idmap (ramfs): 125 naming it and the fix, nothing left" {
  mkdir "$TEST_ROOT/ram"
  mount -t ramfs ramfs "$TEST_ROOT/ram"
  MOUNTED+=("$TEST_ROOT/ram")
  run -125 $H run --rm -v "$TEST_ROOT/ram:/x:idmap" ram -- true
  echo "$output"
  [[ "$output" == *"run ram: mount $TEST_ROOT/ram on /x: idmap: $TEST_ROOT/ram (or a mount under it) is on ramfs, which this kernel cannot idmap"*"drop idmap"* ]]
  [ -z "$(ls -A "$STATE" 2>/dev/null)" ]
  [ -z "$(ls -A "$DATA/sandboxes" 2>/dev/null)" ]
}

# ---- attacks from inside -----------------------------------------------------------

# Each way to put a mode on a file, with S_ISUID or S_ISGID: what it got.
setid_probe='
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def name(e): return errno.errorcode.get(e, str(e))
def call(label, f):
    try:
        f(); print(label, "ok")
    except OSError as e:
        print(label, name(e.errno))
def sc(label, nr, *args):
    r = libc.syscall(nr, *args)
    print(label, "ok" if r >= 0 else name(ctypes.get_errno()))
open("plain", "w").close()
call("chmod-u+s", lambda: os.chmod("plain", 0o4755))
call("chmod-g+s", lambda: os.chmod("plain", 0o2755))
call("fchmod-u+s", lambda: os.fchmod(os.open("plain", os.O_RDONLY), 0o4755))
call("open-creat-u+s", lambda: os.open("c1", os.O_CREAT | os.O_WRONLY, 0o4755))
call("open-tmpfile-g+s", lambda: os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o2755))
call("mknod-u+s", lambda: os.mknod("n1", 0o104755))
how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o4755, 0)
sc("openat2", 437, -100, b"c2", how, len(how))
sc("fchmodat2", 452, -100, b"plain", 0o4755, 0)
sc("io_uring_setup", 425, 4, ctypes.create_string_buffer(120))
call("chmod-0755", lambda: os.chmod("plain", 0o755))
'

@test "attack: no set-id file through a writable idmapped bind (chmod, open, mknod refused; openat2, fchmodat2, io_uring ENOSYS), in run and in exec" {
  d=$(pwd_dir)
  printf '%s' "$setid_probe" > "$d/probe.py"
  run -0 $H run --rm -v "$d:/work:idmap" -w /work sid -- python3 probe.py
  echo "$output"
  [ "${lines[0]}" = "chmod-u+s EPERM" ]
  [ "${lines[1]}" = "chmod-g+s EPERM" ]
  [ "${lines[2]}" = "fchmod-u+s EPERM" ]
  [ "${lines[3]}" = "open-creat-u+s EPERM" ]
  [ "${lines[4]}" = "open-tmpfile-g+s EPERM" ]
  [ "${lines[5]}" = "mknod-u+s EPERM" ]
  [ "${lines[6]}" = "openat2 ENOSYS" ]
  [ "${lines[7]}" = "fchmodat2 ENOSYS" ]
  # (hako's own filter refuses io_uring with EPERM before this one.)
  [ "${lines[8]}" = "io_uring_setup EPERM" ]
  # Modes without the set-id bits are the sandbox's to set.
  [ "${lines[9]}" = "chmod-0755 ok" ]
  [ "$(find "$d" -perm /6000 | wc -l)" = 0 ]
  [ "$(stat -c %u:%a "$d/plain")" = 0:755 ]
  # An exec into the sandbox is held the same way.
  $H run -d -v "$d:/work:idmap" sidx -- sleep 60
  run -1 $H exec sidx -- chmod u+s /work/plain
  [[ "$output" == *"Operation not permitted"* ]]
  [ "$(find "$d" -perm /6000 | wc -l)" = 0 ]
  $H delete --force sidx
  # A bundle without hako's seccomp filter is held all the same.
  b=$(host_bundle noseccomp 'del(.linux.seccomp)
    | .mounts += [{"destination": "/work", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"]}]')
  set_args "$b" python3 /work/probe.py
  run -0 $H run --rm --bundle "$b" sid3
  echo "$output"
  [ "${lines[0]}" = "chmod-u+s EPERM" ]
  [ "${lines[6]}" = "openat2 ENOSYS" ]
  [ "${lines[8]}" = "io_uring_setup ENOSYS" ]
  [ "$(find "$d" -perm /6000 | wc -l)" = 0 ]
  # Control: without an idmapped bind the same sandbox may (its files are
  # host uid 1000000000's, nobody's privilege).
  chmod 777 "$d"
  run -0 $H run --rm -v "$d:/work" -w /work sid2 -- python3 -c 'import os; open("x","w").close(); os.chmod("x", 0o4755); print(oct(os.stat("x").st_mode & 0o7777))'
  [ "$output" = 0o4755 ]
  [ "$(stat -c %u "$d/x")" = 1000000000 ]
}

@test "attack: a set-id program of the host's in an idmapped bind runs without its privilege inside (nosuid, whatever the config asks)" {
  d=$(pwd_dir)
  chmod 755 "$d"
  cp /usr/bin/id "$d/suid-id"
  chmod 4755 "$d/suid-id"
  # noNewPrivileges off (so no Landlock) and "suid" asked for: only the
  # mount's nosuid is left to stop it.
  b=$(host_bundle suid '.process.noNewPrivileges = false | del(.sandbox.landlock)
    | .process.user.uid = 1000 | .process.user.gid = 1000
    | .mounts += [{"destination": "/x", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap", "suid"]}]')
  set_args "$b" sh -c 'stat -c %u:%a /x/suid-id; /x/suid-id -u; grep " /x " /proc/self/mountinfo'
  run -0 $H run --rm --bundle "$b" suid
  echo "$output"
  [ "${lines[0]}" = 0:4755 ]
  [ "${lines[1]}" = 1000 ]
  [[ "${lines[2]}" == *" /x rw,nosuid,nodev,"* ]]
}

@test "attack: a read-only host mount stays read-only through an idmapped bind, even for a root with CAP_SYS_ADMIN (the clone keeps its lock)" {
  d=$(pwd_dir)
  echo keep > "$d/f"
  mount --bind "$d" "$d"
  MOUNTED+=("$d")
  mount -o remount,bind,ro "$d"
  w=$(pwd_dir)
  chmod 777 "$w"
  # No seccomp and no Landlock (which refuses every mount): only the lock
  # is left to stop the remount; /y, a plain bind, shows one goes through.
  b=$(host_bundle lock 'del(.linux.seccomp) | del(.sandbox.landlock)
    | .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])
    | .mounts += [{"destination": "/x", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"]},
                  {"destination": "/y", "type": "bind", "source": "'"$w"'", "options": ["rbind"]}]')
  set_args "$b" sh -c 'mount -o remount,bind,ro /y && echo control; echo 1 > /x/f; mount -o remount,bind,rw /x && echo remounted; echo 2 > /x/f; cat /x/f'
  run $H run --rm --bundle "$b" lock
  echo "$output"
  [ "${lines[0]}" = control ]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" != *remounted* ]]
  [ "$(cat "$d/f")" = keep ]
}

@test "attack: the bind reaches nothing outside SRC — .., symlinks planted in it, a destination through a symlink" {
  d=$(pwd_dir)
  mkdir "$TEST_ROOT/outside"
  echo TOPSECRET > "$TEST_ROOT/outside/secret"
  ln -s "$TEST_ROOT/outside/secret" "$d/abs"
  ln -s ../outside/secret "$d/rel"
  run -0 $H run --rm -v "$d:/work:idmap" -w /work out -- sh -c \
    'cat abs rel ../outside/secret /work/../outside/secret 2>&1; ln -s / root; ls root/ | grep -c hako-it; true'
  echo "$output"
  [[ "$output" != *TOPSECRET* ]]
  [ "$(echo "$output" | grep -c 'No such file')" = 4 ]
  [ "${lines[4]}" = 0 ]
  # The destination is resolved inside the sandbox's root: a bundle's
  # rootfs whose /evil points out of it gets the bind within it.
  b="$TEST_ROOT/bundle-evil"
  mkdir -p "$b"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  ln -s "../../../../../..$TEST_ROOT/outside" "$b/rootfs/evil"
  (cd "$b" && $HAKO spec >/dev/null)
  edit_config "$b" '.root.readonly = false | .mounts += [{"destination": "/evil/x", "type": "bind", "source": "'"$d"'", "options": ["rbind", "idmap"]}]'
  set_args "$b" sh -c 'echo in > /evil/x/landed'
  run -0 $H run --rm --bundle "$b" evil
  [ ! -e "$TEST_ROOT/outside/x" ]
  [ "$(cat "$d/landed")" = in ]
  [ -d "$b/rootfs$TEST_ROOT/outside/x" ]
}
