#!/usr/bin/env bats
# hako cp: files and trees between a sandbox (running or stopped) and the
# host, or a tar stream; the sandbox's side acts with its credentials, and
# nothing of the sandbox's (a symlink, a "..", a device) reaches the host.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

box () {
  $H run -d --profile host "$1" -- sleep 300
}

# The tree the sandbox-side tests copy out: modes, a symlink, an old mtime.
make_tree () {
  $H exec "$1" sh -c 'mkdir -p /work/d/sub && echo hi > /work/d/a && echo deep > /work/d/sub/b &&
    chmod 750 /work/d/sub && chmod 600 /work/d/a && ln -s a /work/d/lnk && touch -d 2020-01-02 /work/d/a'
}

@test "cp out: a tree keeps modes, symlinks, mtimes; into a directory, as a new name, SRC/., and -" {
  box co
  make_tree co
  out=$TEST_ROOT/out
  mkdir "$out"
  $H cp co:/work/d "$out"
  [ "$(stat -c '%a %Y' "$out/d/a")" = "600 $(date -d 2020-01-02 +%s)" ]
  [ "$(stat -c %a "$out/d/sub")" = 750 ]
  [ "$(readlink "$out/d/lnk")" = a ]
  [ "$(cat "$out/d/sub/b")" = deep ]
  # owned by the caller without -a
  [ "$(stat -c %u "$out/d/a")" = "$(id -u)" ]
  $H cp co:/work/d "$out/copy"
  [ "$(cat "$out/copy/a")" = hi ]
  $H cp co:/work/d/a "$out/file"
  [ "$(cat "$out/file")" = hi ]
  $H cp co:/work/d/. "$out/contents"
  [ -f "$out/contents/a" ]
  [ -d "$out/contents/sub" ]
  $H cp co:/work/d - | tar tf - | sort > "$TEST_ROOT/list"
  [ "$(echo $(cat "$TEST_ROOT/list"))" = "d/ d/a d/lnk d/sub/ d/sub/b" ]
  # -a: the sandbox's ids mapped to the host's (root inside is the map's first host id)
  host0=$($H state co >/dev/null; jq -r '.linux.uidMappings[0].hostID // 0' "$STATE/co/config.json")
  $H cp -a co:/work/d "$out/kept"
  [ "$(stat -c %u "$out/kept/a")" = "$host0" ]
}

@test "cp in: a host tree, a file, SRC/., a tar stream on -; owners are the sandbox's or the tar's with -a" {
  box ci
  src=$TEST_ROOT/src
  mkdir -p "$src/tree/x"
  echo one > "$src/tree/f"
  chmod 640 "$src/tree/f"
  ln -s f "$src/tree/lnk"
  touch -d 2021-03-04 "$src/tree/x"
  $H cp "$src/tree" ci:/work/
  run -0 $H exec ci stat -c '%n %a %u' /work/tree/f /work/tree/lnk
  [ "${lines[0]}" = "/work/tree/f 640 0" ]
  [ "$($H exec ci readlink /work/tree/lnk)" = f ]
  [ "$($H exec ci stat -c %Y /work/tree/x)" = "$(date -d 2021-03-04 +%s)" ]
  $H cp "$src/tree/f" ci:/work/renamed
  [ "$($H exec ci cat /work/renamed)" = one ]
  $H cp "$src/tree/." ci:/work/contents
  [ "$($H exec ci ls /work/contents | tr '\n' ' ')" = "f lnk x " ]
  tar cf - -C "$src" tree | $H cp - ci:/tmp
  [ "$($H exec ci cat /tmp/tree/f)" = one ]
  # a stream goes into a directory that exists
  run -125 sh -c "tar cf - -C '$src' tree | $H cp - ci:/nonexistent"
  [[ "$output" == *"no such directory"* ]]
  # -a keeps the tar's owner, as the sandbox's id: only where the sandbox's
  # own root could chown (the host profile's has no CAP_CHOWN), and a
  # refused copy leaves nothing half-made
  run -125 sh -c "tar cf - --owner=1234 --group=1234 -C '$src' tree | $H cp -a - ci:/work/contents"
  [[ "$output" == *"to 1234:1234: Operation not permitted"* ]]
  run $H exec ci ls /work/contents/tree
  [ "$status" -ne 0 ]
  tar cf - --owner=0 --group=0 -C "$src" tree | $H cp -a - ci:/work/contents
  [ "$($H exec ci stat -c %u:%g /work/contents/tree/f)" = 0:0 ]
}

@test "cp on a stopped sandbox, both ways" {
  box cs
  make_tree cs
  $H stop cs
  [ "$($H state cs | jq -r .status)" = stopped ]
  $H cp cs:/work/d "$TEST_ROOT/fromstopped"
  [ "$(cat "$TEST_ROOT/fromstopped/sub/b")" = deep ]
  echo new > "$TEST_ROOT/n"
  $H cp "$TEST_ROOT/n" cs:/work/d/n
  $H start cs
  [ "$($H exec cs cat /work/d/n)" = new ]
}

@test "attack: a symlink to the host's /etc/shadow is copied as a link, never read; a linked dir resolves in the root" {
  box sy
  $H exec sy sh -c 'ln -s /etc/shadow /work/l; ln -s /etc /work/etcdir'
  $H cp sy:/work/l "$TEST_ROOT/l"
  [ "$(readlink "$TEST_ROOT/l")" = /etc/shadow ]
  [ -L "$TEST_ROOT/l" ]
  # through the link: the sandbox's /etc, read with its credentials (the
  # host's shadow is not its root's to read), never hako's
  run -125 $H cp sy:/work/etcdir/shadow "$TEST_ROOT/s"
  [ ! -e "$TEST_ROOT/s" ]
  run -125 $H cp sy:/etc/shadow "$TEST_ROOT/s"
  [ ! -e "$TEST_ROOT/s" ]
  # a stopped sandbox: the helper works on the host, still inside the root
  $H exec sy sh -c 'ln -s / /work/toroot'
  $H stop sy
  echo evil > "$TEST_ROOT/e"
  target=$TEST_ROOT/host-victim
  mkdir "$target"
  # /work/toroot is "/" of the place /work is (its work dir): the host's
  # $target is not under it
  run -125 $H cp "$TEST_ROOT/e" sy:/work/toroot/"${target#/}"/x
  [ ! -e "$target/x" ]
  run -125 $H cp sy:/work/toroot/etc/passwd "$TEST_ROOT/p"
  [ ! -e "$TEST_ROOT/p" ]
  # and what does land there is inside the work dir
  $H cp "$TEST_ROOT/e" sy:/work/toroot/landed
  [ "$(cat "$($H state sy | jq -r .workdir)/landed")" = evil ]
}

@test "attack: .. in the path stays in the root; a tar with .. or a device node is refused; set-id bits cleared on the host" {
  box dd
  echo x > "$TEST_ROOT/f"
  $H cp "$TEST_ROOT/f" dd:/../../../../tmp/dotdot
  [ "$($H exec dd cat /tmp/dotdot)" = x ]
  [ ! -e /tmp/dotdot ]
  python3 - "$TEST_ROOT" <<'EOF'
import io, sys, tarfile
d = sys.argv[1]
with tarfile.open(d + "/dotdot.tar", "w") as t:
    i = tarfile.TarInfo("../../escape"); i.size = 2; t.addfile(i, io.BytesIO(b"x\n"))
with tarfile.open(d + "/dev.tar", "w") as t:
    i = tarfile.TarInfo("mem"); i.type = tarfile.CHRTYPE; i.devmajor = 1; i.devminor = 1; t.addfile(i)
with tarfile.open(d + "/link.tar", "w") as t:
    i = tarfile.TarInfo("esc"); i.type = tarfile.SYMTYPE; i.linkname = "/"; t.addfile(i)
    i = tarfile.TarInfo("esc/tmp/through"); i.size = 2; t.addfile(i, io.BytesIO(b"y\n"))
EOF
  run -125 $H cp - dd:/tmp < "$TEST_ROOT/dotdot.tar"
  [[ "$output" == *'".." component is refused'* ]]
  run -125 $H cp - dd:/tmp < "$TEST_ROOT/dev.tar"
  [[ "$output" == *"character device"* ]]
  run $H exec dd ls /tmp/mem
  [ "$status" -ne 0 ]
  # an entry through a symlink the tar made lands inside the root
  $H cp - dd:/work < "$TEST_ROOT/link.tar"
  [ "$($H exec dd cat /tmp/through)" = y ]
  [ ! -e /tmp/through ]
  # a device node of the sandbox's is not copied out
  run -125 $H cp dd:/dev/null "$TEST_ROOT/null"
  [[ "$output" == *"character device"* ]]
  [ ! -e "$TEST_ROOT/null" ]
  # a set-user-ID file of the sandbox's is not one on the host (without -a)
  $H exec dd sh -c 'echo s > /work/suid; chmod 4755 /work/suid'
  $H cp dd:/work/suid "$TEST_ROOT/suid"
  [ "$(stat -c %a "$TEST_ROOT/suid")" = 755 ]
}

@test "cp: usage errors are 125 and name the mistake" {
  run -125 $H cp a b
  [[ "$output" == *"must be ID:PATH"* ]]
  run -125 $H cp x:/a y:/b
  [[ "$output" == *"one side is the host"* ]]
  run -125 $H cp x:rel "$TEST_ROOT/o"
  [[ "$output" == *"must be absolute"* ]]
  run -125 --separate-stderr $H --log-format json cp nosuch:/a "$TEST_ROOT/o"
  echo "$stderr" | jq -e '.kind == "not_found" and .verb == "cp"'
}

# bind_box ID: a host-profile sandbox with $TEST_ROOT/bind at /data, a
# directory its root may write (as a -v bind of the user's would be), and
# $TEST_ROOT/victim, root's and 0700, which the sandbox must never reach.
bind_box () {
  bind=$TEST_ROOT/bind victim=$TEST_ROOT/victim
  mkdir -m 777 "$bind"
  mkdir -m 700 "$victim"
  $H run -d --profile host -v "$bind:/data" "$1" -- sleep 300
}

# victim_untouched: nothing of the sandbox's in $victim, its mode and owner kept.
victim_untouched () {
  [ -z "$(ls -A "$victim")" ] || { ls -la "$victim" | head -n 5; false; }
  [ "$(stat -c %a:%u:%g "$victim")" = 700:0:0 ]
}

# The sandbox, in a loop: every new directory in /data swapped (renameat2
# RENAME_EXCHANGE) for a symlink to the host's $victim the moment it
# appears, each name once.  It says it is ready in /data/.ready and stops at
# /data/.stop.
SWAPPER='
import ctypes, os, stat, sys, time
libc = ctypes.CDLL(None, use_errno=True)
d = "/data"
os.symlink(sys.argv[1], d + "/evil")
open(d + "/.ready", "w").close()
seen = {"evil"}
end = time.time() + 120
while time.time() < end and not os.path.exists(d + "/.stop"):
    for n in os.listdir(d):
        if n in seen:
            continue
        try:
            st = os.lstat(d + "/" + n)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            seen.add(n)
            if libc.renameat2(-100, (d + "/" + n).encode(), -100, (d + "/evil").encode(), 2) == 0:
                with open(d + "/.swapped", "a") as f:
                    f.write(n + "\n")
'

@test "attack: cp out to a new name in a dir the sandbox writes; it swaps the new top dir for a symlink mid-copy" {
  bind_box rx
  $H exec rx sh -c 'mkdir -p /work/t/sub && cd /work/t && i=0; while [ $i -lt 2000 ]; do echo $i > f$i; i=$((i+1)); done; chmod 755 /work/t'
  $H exec rx python3 -c "$SWAPPER" "$victim" 3>&- &
  swapper=$!
  for i in $(seq 100); do [ -e "$bind/.ready" ] && break; sleep 0.1; done
  [ -e "$bind/.ready" ]
  run $H cp -a rx:/work/t "$bind/new"
  touch "$bind/.stop"
  wait $swapper
  echo "$output"
  # Nothing went through the link: the root-only directory is as it was
  # (not filled, chmod'ed to 755, nor given to the sandbox's root by -a).
  victim_untouched
  # The copy was made through fds the swap does not move: all of it, in
  # the bind, under whichever name the sandbox left it.
  [ "$status" -eq 0 ]
  [ "$(find "$bind" -type f -name 'f*' | wc -l)" = 2000 ]
  # and the swap did happen, to the directory the copy was being made in
  cat "$bind/.swapped"
  grep -q '^\.hako-cp-' "$bind/.swapped"
}

@test "attack: a symlink the sandbox planted at or on the way to the destination is not followed" {
  bind_box pl
  $H exec pl sh -c "mkdir -p /work/d && echo hi > /work/d/a && ln -s '$victim' /data/out && ln -s '$victim' /data/sub"
  # onto a link to a directory: refused, naming it
  run -125 $H cp pl:/work/d "$bind/out"
  [[ "$output" == *"out is a symlink to a directory: not followed"* ]]
  run -125 $H cp pl:/work/d/a "$bind/out"
  # a link on the way: refused
  run -125 $H cp pl:/work/d/a "$bind/sub/a"
  [[ "$output" == *"a symlink on the way is not followed"* ]]
  run -125 $H cp pl:/work/d "$bind/sub/"
  victim_untouched
  # a file onto a link to a file replaces the link, as it would a file; a
  # directory onto it is refused
  echo secret > "$TEST_ROOT/secret"
  chmod 600 "$TEST_ROOT/secret"
  $H exec pl ln -s "$TEST_ROOT/secret" /data/lf
  run -125 $H cp pl:/work/d "$bind/lf"
  [[ "$output" == *"cannot overwrite a symlink with a directory"* ]]
  $H cp pl:/work/d/a "$bind/lf"
  [ -f "$bind/lf" ]
  [ ! -L "$bind/lf" ]
  [ "$(cat "$bind/lf")" = hi ]
  [ "$(cat "$TEST_ROOT/secret")" = secret ]
  [ "$(stat -c %a:%u "$TEST_ROOT/secret")" = 600:0 ]
  victim_untouched
  # nothing half-made is left in the bind
  [ "$(cd "$bind" && echo .hako-cp-*)" = ".hako-cp-*" ]
}

@test "attack: cp out of a sparse file keeps its holes; a copy over its bound fails and leaves nothing" {
  box sp
  $H exec sp sh -c 'truncate -s 1G /work/sp && dd if=/dev/urandom of=/work/sp bs=1M count=1 seek=512 conv=notrunc 2>/dev/null'
  mkdir "$TEST_ROOT/out"
  $H cp sp:/work/sp "$TEST_ROOT/out/sp"
  [ "$(stat -c %s "$TEST_ROOT/out/sp")" = 1073741824 ]
  # 1 MiB of data on the host, not 1 GiB of zeros
  [ "$(du -k "$TEST_ROOT/out/sp" | cut -f1)" -lt 4096 ]
  [ "$($H exec sp sha256sum /work/sp | cut -d' ' -f1)" = "$(sha256sum < "$TEST_ROOT/out/sp" | cut -d' ' -f1)" ]
  # and as a tar stream, a sparse entry GNU tar writes back sparse
  mkdir "$TEST_ROOT/tar"
  $H cp sp:/work/sp - | tar -xSf - -C "$TEST_ROOT/tar"
  [ "$(du -k "$TEST_ROOT/tar/sp" | cut -f1)" -lt 4096 ]
  cmp "$TEST_ROOT/tar/sp" "$TEST_ROOT/out/sp"
  # --max-bytes counts data, not holes; over it: 125, and nothing written
  run -125 $H cp --max-bytes 512k sp:/work/sp "$TEST_ROOT/out/sp2"
  [[ "$output" == *"more than 524288 bytes of data"*"--max-bytes"* ]]
  $H exec sp sh -c 'mkdir /work/t && for i in 1 2 3 4 5 6 7 8; do head -c 200000 /dev/urandom > /work/t/f$i; done'
  run -125 $H cp --max-bytes 1m sp:/work/t "$TEST_ROOT/out/t"
  run -125 $H cp --max-bytes 1m sp:/work/t/. "$TEST_ROOT/out"
  [ "$(ls -A "$TEST_ROOT/out")" = sp ]
  $H cp --max-bytes 2m sp:/work/t/. "$TEST_ROOT/out"
  [ "$(ls "$TEST_ROOT/out" | wc -l)" = 9 ]
  run -125 $H cp --max-bytes lots sp:/work/sp "$TEST_ROOT/x"
  [[ "$output" == *"--max-bytes \"lots\""* ]]
}

@test "attack: the default bound of cp out is the sandbox's disk limit" {
  m=$($H doctor --format json | jq -r '.checks.disk_limit.mechanism')
  [ "$m" != none ] || skip "no disk limit on this host (doctor: $m)"
  mkdir -m 777 "$TEST_ROOT/bind"
  head -c 65M /dev/urandom > "$TEST_ROOT/bind/big"
  $H run -d --profile host --disk 64m -v "$TEST_ROOT/bind:/data" dk -- sleep 300
  run -125 $H cp dk:/data/big "$TEST_ROOT/big"
  [[ "$output" == *"the sandbox's disk limit"* ]]
  [ ! -e "$TEST_ROOT/big" ]
  [ "$(cd "$TEST_ROOT" && echo .hako-cp-*)" = ".hako-cp-*" ]
  $H cp --max-bytes 66m dk:/data/big "$TEST_ROOT/big"
  cmp "$TEST_ROOT/bind/big" "$TEST_ROOT/big"
}

@test "attack: a failed copy out of several entries into an existing directory leaves none of them" {
  box pt
  # /tmp is a tmpfs, which lists the newest first: ten files, then a fifo
  # (which cp refuses), then ten more, so the copy fails half-way.
  $H exec pt sh -c 'mkdir /tmp/t && cd /tmp/t && for i in 0 1 2 3 4 5 6 7 8 9; do echo $i > a$i; done && mkfifo fifo &&
    for i in 0 1 2 3 4 5 6 7 8 9; do echo $i > b$i; done'
  mkdir "$TEST_ROOT/out"
  echo mine > "$TEST_ROOT/out/kept"
  run -125 $H cp pt:/tmp/t/. "$TEST_ROOT/out"
  [[ "$output" == *"a fifo"* ]]
  [ "$(ls -A "$TEST_ROOT/out")" = kept ]
  run -125 $H cp pt:/tmp/t "$TEST_ROOT/new"
  [ ! -e "$TEST_ROOT/new" ]
  [ "$(cd "$TEST_ROOT" && echo .hako-cp-*)" = ".hako-cp-*" ]
}

@test "attack: cp -a out clears set-user-ID and set-group-ID bits unless --keep-setid" {
  box su
  $H exec su sh -c 'echo s > /work/suid && chmod 6755 /work/suid && mkdir /work/sd && chmod 2775 /work/sd'
  $H cp -a su:/work/suid "$TEST_ROOT/suid"
  [ "$(stat -c %a "$TEST_ROOT/suid")" = 755 ]
  $H cp -a su:/work/sd "$TEST_ROOT/sd"
  [ "$(stat -c %a "$TEST_ROOT/sd")" = 775 ]
  $H cp -a --keep-setid su:/work/suid "$TEST_ROOT/suid2"
  [ "$(stat -c %a "$TEST_ROOT/suid2")" = 6755 ]
  run -125 $H cp --keep-setid su:/work/suid "$TEST_ROOT/suid3"
  [[ "$output" == *"--keep-setid goes with -a"* ]]
  [ ! -e "$TEST_ROOT/suid3" ]
}
