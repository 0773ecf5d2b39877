#!/usr/bin/env bats
# The flags of run, create and spec (hako-run(8)): each written into the
# frozen config.json and seen from inside the sandbox — the host profile,
# an image and a bundle alike — and through events --stats where a limit
# shows; a bad value is 125 naming the flag and its form, with nothing made.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; image_fixtures; }
setup () { hako_setup; }
teardown () { hako_teardown; }

v2_host () { [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; }

# cg CONTROLLER FILE ID: the sandbox's cgroup file (v1 or hybrid: the v1
# controller's hierarchy; v2: the one hierarchy, FILE its v2 name).
cg () {
  if v2_host; then cat "/sys/fs/cgroup/$(cgroup_parent)/$3/$2"
  else cat "/sys/fs/cgroup/$1/$(cgroup_parent)/$3/$2"; fi
}

# A directory a sandbox in a user namespace (an unprivileged host id) may write.
shared_dir () {
  mkdir -p "$TEST_ROOT/$1"
  chmod 777 "$TEST_ROOT/$1"
  echo "$TEST_ROOT/$1"
}

@test "spec: every flag is written into config.json (host profile)" {
  local v t
  v=$(shared_dir vol)
  mkdir "$TEST_ROOT/sp"
  run -0 $H spec --profile host -b "$TEST_ROOT/sp" --memory 1g --memory-swap 2g --cpus 1.5 \
    --pids-limit 10 -e A=b -e PATH=/bin --env-file <(printf 'C=d\n') -w /tmp -u 1000:100 --hostname h1 \
    --read-only --tmpfs /t:size=1m -v "$v:/v:ro" --timeout 30s --disk 100m --network none
  t="$TEST_ROOT/sp/config.json"
  [ "$(jq -c .sandbox.limits "$t")" = '{"disk":"100m","timeout":"30s"}' ]
  [ "$(jq -c .linux.resources.memory "$t")" = '{"limit":1073741824,"swap":2147483648}' ]
  [ "$(jq -c .linux.resources.cpu "$t")" = '{"quota":150000,"period":100000}' ]
  [ "$(jq -c .linux.resources.pids "$t")" = '{"limit":10}' ]
  # PATH replaced where it was, the rest appended in order.
  [ "$(jq -c .process.env "$t")" = '["PATH=/bin","HOME=/work","TERM=xterm","A=b","C=d"]' ]
  [ "$(jq -r .process.cwd "$t")" = /tmp ]
  [ "$(jq -c .process.user "$t")" = '{"uid":1000,"gid":100}' ]
  [ "$(jq -r .hostname "$t")" = h1 ]
  [ "$(jq -r .root.readonly "$t")" = true ]
  [ "$(jq -r .sandbox.network.mode "$t")" = none ]
  [ "$(jq -c '.mounts[] | select(.destination == "/t")' "$t")" = \
    '{"destination":"/t","type":"tmpfs","source":"tmpfs","options":["rw","noexec","nosuid","nodev","mode=1777","size=1048576"]}' ]
  [ "$(jq -c '.mounts[] | select(.destination == "/v")' "$t")" = \
    "{\"destination\":\"/v\",\"type\":\"bind\",\"source\":\"$v\",\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\"]}" ]
  # What the flags did not name is as the profile wrote it.
  mkdir "$TEST_ROOT/plain"
  $H spec --profile host -b "$TEST_ROOT/plain"
  diff <(jq -S 'del(.sandbox.limits, .linux.resources.memory, .linux.resources.cpu, .linux.resources.pids,
                    .process.env, .process.cwd, .process.user, .hostname, .root.readonly, .sandbox.network,
                    .mounts)' "$t") \
       <(jq -S 'del(.linux.resources.memory, .linux.resources.pids, .process.env, .process.cwd, .process.user,
                    .hostname, .root.readonly, .sandbox.network, .mounts)' "$TEST_ROOT/plain/config.json")
  [ "$(jq -c '[.mounts[] | select(.destination != "/t" and .destination != "/v")]' "$t")" = \
    "$(jq -c .mounts "$TEST_ROOT/plain/config.json")" ]
}

@test "spec --timeout 30s writes sandbox.limits.timeout; create and run take the same flag" {
  mkdir "$TEST_ROOT/sp"
  run -0 $H spec --profile host -b "$TEST_ROOT/sp" --timeout 30s
  [ "$(jq -r .sandbox.limits.timeout "$TEST_ROOT/sp/config.json")" = 30s ]
  mkdir "$TEST_ROOT/sp2"
  run -0 $H spec -b "$TEST_ROOT/sp2" --timeout 1.5
  [ "$(jq -r .sandbox.limits.timeout "$TEST_ROOT/sp2/config.json")" = 1.5 ]
  # Enforcing it is sandbox.limits.timeout's (hako-spec(5)): a hako that
  # cannot yet refuses it, never runs without it.
  run $H run --rm --timeout 30s --profile host t -- true
  if [ "$status" -ne 0 ]; then
    [ "$status" -eq 125 ]
    [[ "$output" == *"sandbox.limits"* ]]
  fi
}

@test "spec -u NAME: resolved in the image's /etc/passwd, and in a bundle's rootfs" {
  import_busybox
  mkdir "$TEST_ROOT/si"
  run -0 $H spec --image busybox -b "$TEST_ROOT/si" -u nobody
  [ "$(jq -c .process.user "$TEST_ROOT/si/config.json")" = '{"uid":65534,"gid":65534}' ]
  # The user has an entry: HOME is its home, as exec -u gives it.
  jq -e '.process.env | index("HOME=/nonexistent")' "$TEST_ROOT/si/config.json"
  mkdir "$TEST_ROOT/sb"
  ln -s "$BUNDLE_DIR/rootfs" "$TEST_ROOT/sb/rootfs"
  run -0 $H spec -b "$TEST_ROOT/sb" -u nobody:root
  [ "$(jq -c .process.user "$TEST_ROOT/sb/config.json")" = '{"uid":65534,"gid":0}' ]
  # A name the sandbox does not have is refused, nothing written.
  mkdir "$TEST_ROOT/sn"
  ln -s "$BUNDLE_DIR/rootfs" "$TEST_ROOT/sn/rootfs"
  run $H spec -b "$TEST_ROOT/sn" -u nosuchuser
  [ "$status" -eq 125 ]
  [[ "$output" == *'--user nosuchuser: user "nosuchuser": no such user in the sandbox'* ]]
  [ ! -e "$TEST_ROOT/sn/config.json" ]
}

@test "--memory: the cgroup's limit, and events --stats reports it" {
  $H run -d --memory 64m --profile host m -- sleep 1000
  if v2_host; then [ "$(cg memory memory.max m)" = 67108864 ]
  else [ "$(cg memory memory.limit_in_bytes m)" = 67108864 ]; fi
  run -0 $H events --stats m
  [ "$(echo "$output" | jq .data.memory.usage.limit)" = 67108864 ]
  [ "$(jq .linux.resources.memory.limit "$STATE/m/config.json")" = 67108864 ]
}

@test "--memory-swap: memory + swap, as docker: the cgroup's swap limit; below --memory is refused" {
  if v2_host; then
    grep -qw memory /sys/fs/cgroup/cgroup.controllers || skip "no memory controller"
  elif [ ! -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ]; then
    skip "swap accounting is off (swapaccount=1)"
  fi
  $H run -d --memory 64m --memory-swap 128m --profile host s -- sleep 1000
  # v2 keeps swap alone (memory.swap.max = swap - memory); v1 the sum.
  if v2_host; then [ "$(cg memory memory.swap.max s)" = 67108864 ]
  else [ "$(cg memory memory.memsw.limit_in_bytes s)" = 134217728 ]; fi
  run -0 $H events --stats s
  [ "$(echo "$output" | jq .data.memory.swap.limit)" = 134217728 ]
  run $H run --memory 64m --memory-swap 32m --profile host s2 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--memory-swap 33554432: below the memory limit (67108864)"* ]]
  [ ! -e "$STATE/s2" ]
}

@test "--cpus 0.5: a CFS quota of 50 ms in 100 ms" {
  $H run -d --cpus 0.5 --profile host c -- sleep 1000
  if v2_host; then [ "$(cg cpu cpu.max c)" = "50000 100000" ]
  else
    [ "$(cg cpu cpu.cfs_quota_us c)" = 50000 ]
    [ "$(cg cpu cpu.cfs_period_us c)" = 100000 ]
  fi
}

@test "--pids-limit: pids.max, and events --stats reports it; a fork past it fails inside" {
  $H run -d --pids-limit 7 --profile host p -- sleep 1000
  [ "$(cg pids pids.max p)" = 7 ]
  run -0 $H events --stats p
  [ "$(echo "$output" | jq .data.pids.limit)" = 7 ]
  # pid 1 (init), sleep, and this exec's sh: 10 more cannot all start.
  run $H exec p -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 5 & done; wait'
  [[ "$output" == *"fork"* || "$output" == *"Resource temporarily unavailable"* ]]
}

@test "-e and --env-file: set, replace in place, the last one wins; K alone takes hako's value" {
  printf '# a comment\n\nB=from-file\n  C=spaced\r\nA=file-a\n' > "$TEST_ROOT/env"
  HAKO_FLAGS_T=inherited run -0 $H run --rm --profile host -e A=1 -e TERM=dumb -e A=2 \
    --env-file "$TEST_ROOT/env" -e HAKO_FLAGS_T -e UNSET_IN_HAKO_T e -- sh -c 'env | sort'
  has () { printf '%s\n' "${lines[@]}" | grep -qxF "$1"; }
  has A=file-a
  has B=from-file
  has C=spaced
  has HAKO_FLAGS_T=inherited
  has TERM=dumb
  has HOME=/work
  [ "$(printf '%s\n' "${lines[@]}" | grep -c '^A=')" = 1 ]
  [[ "$output" != *UNSET_IN_HAKO_T* ]]
}

@test "-v: a host directory bound read-write and read-only; the write is seen on the host" {
  local v
  v=$(shared_dir vol)
  echo hello > "$v/in"
  run -0 $H run --rm --profile host -v "$v:/data" -v "$v:/ro:ro" b -- sh -c \
    'cat /data/in; echo out > /data/out; grep " /ro " /proc/self/mountinfo; echo x > /ro/x || echo refused'
  [[ "$output" == *hello* ]]
  [[ "$output" == *refused* ]]
  # Field 6, the mount's own options: read-only.
  echo "$output" | grep ' /ro ' | awk '{print $6}' | grep -q '^ro,'
  [ "$(cat "$v/out")" = out ]
  [ ! -e "$v/x" ]
}

@test "-v with a source that does not exist: 125, and nothing is made (no directory, no sandbox)" {
  run $H run --rm --profile host -v "$TEST_ROOT/nope:/data" b -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--volume \"$TEST_ROOT/nope:/data\": source $TEST_ROOT/nope: No such file or directory"* ]]
  [ ! -e "$TEST_ROOT/nope" ]
  [ ! -e "$STATE/b" ]
  run $H create --profile host -v "$TEST_ROOT/nope:/data" b
  [ "$status" -eq 125 ]
  [ ! -e "$TEST_ROOT/nope" ]
  [ ! -e "$STATE/b" ]
}

@test "--tmpfs: a fresh tmpfs of that size, noexec by default, exec when asked" {
  run -0 $H run --rm --profile host --tmpfs /scratch:size=8m --tmpfs /x:exec,mode=700 t -- sh -c \
    'grep -E " /scratch | /x " /proc/self/mountinfo; echo data > /scratch/f && cat /scratch/f; stat -c %a /x'
  echo "$output" | grep ' /scratch ' | grep -q 'tmpfs tmpfs rw,size=8192k'
  echo "$output" | grep ' /scratch ' | awk '{print $6}' | grep -q noexec
  ! echo "$output" | grep ' /x ' | awk '{print $6}' | grep -q noexec || false
  [[ "$output" == *data* ]]
  [ "${lines[-1]}" = 700 ]
}

@test "--tmpfs over a mount the profile has (/tmp): replaces it, not mounted twice" {
  run -0 $H run --rm --profile host --tmpfs /tmp:size=4m t -- sh -c 'grep -c " /tmp " /proc/self/mountinfo; grep " /tmp " /proc/self/mountinfo'
  [ "${lines[0]}" = 1 ]
  [[ "${lines[1]}" == *"size=4096k"* ]]
}

@test "-w: the process's working directory; a relative one is refused" {
  run -0 $H run --rm --profile host -w /usr/bin w -- pwd
  [ "$output" = /usr/bin ]
  run $H run --rm --profile host -w usr w -- pwd
  [ "$status" -eq 125 ]
  [[ "$output" == *'--workdir "usr": expected an absolute path'* ]]
}

@test "-u: UID:GID on the host profile, a name from the image's /etc/passwd, and from a bundle's" {
  run -0 $H run --rm --profile host -u 1234:4321 u -- sh -c 'id -u; id -g'
  [ "$output" = $'1234\n4321' ]
  import_busybox
  run -0 $H run --rm --image busybox -u nobody u -- sh -c 'id -u; id -g; echo $HOME'
  [ "$output" = $'65534\n65534\n/nonexistent' ]
  run -0 $H run --rm --bundle "$BUNDLE_DIR" -u nobody u -- id -u
  [ "$output" = 65534 ]
  run $H run --rm --image busybox -u nosuchuser u -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *'--user nosuchuser: user "nosuchuser": no such user in the sandbox'* ]]
  [ ! -e "$STATE/u" ]
}

@test "--hostname: the sandbox's; a bad one is refused" {
  run -0 $H run --rm --profile host --hostname box-1.test h -- hostname
  [ "$output" = box-1.test ]
  run $H run --rm --profile host --hostname 'bad_name' h -- hostname
  [ "$status" -eq 125 ]
  [[ "$output" == *"--hostname \"bad_name\": expected 1-64 letters, digits, '-' and '.'"* ]]
}

@test "--read-only: / is mounted read-only; mounts (/tmp, -v, --tmpfs) keep their mode" {
  run -0 $H run --rm --profile host --read-only --tmpfs /scratch r -- sh -c \
    'grep " / / " /proc/self/mountinfo; touch /nope || echo refused; touch /tmp/ok /scratch/ok && echo writable'
  echo "${lines[0]}" | awk '{print $6}' | grep -q '^ro,'
  [[ "$output" == *refused* ]]
  [[ "$output" == *writable* ]]
  import_busybox
  run -0 $H run --rm --image busybox --read-only r -- sh -c 'touch /etc/nope || echo refused'
  [[ "$output" == *refused* ]]
}

@test "a bundle: the flags override its config.json, which stays as it was" {
  local b sum
  b=$(new_bundle fl)
  sum=$(sha256sum "$b/config.json")
  run -0 $H run --rm --bundle "$b" -e X=y --hostname bb -w /etc --memory 48m k -- sh -c 'echo $X; hostname; pwd'
  [ "$output" = $'y\nbb\n/etc' ]
  [ "$(sha256sum "$b/config.json")" = "$sum" ]
}

@test "create: the frozen config.json has the flags, and start runs with them" {
  local v
  v=$(shared_dir vol)
  $H create --profile host --memory 96m --pids-limit 50 -e MSG=hi -v "$v:/out" -w /out c
  [ "$(jq .linux.resources.memory.limit "$STATE/c/config.json")" = 100663296 ]
  [ "$(jq .linux.resources.pids.limit "$STATE/c/config.json")" = 50 ]
  jq -e '.process.env | index("MSG=hi")' "$STATE/c/config.json"
  $H start c
  [ "$(cg pids pids.max c)" = 50 ]
  $H exec c -- sh -c 'echo $MSG > msg; pwd > where'
  [ "$(cat "$v/msg")" = hi ]
  [ "$(cat "$v/where")" = /out ]
  run -0 $H events --stats c
  [ "$(echo "$output" | jq .data.memory.usage.limit)" = 100663296 ]
}

@test "bad values: 125, naming the flag and the form it takes, for run, create and spec alike" {
  local verb
  check () {
    local want=$1; shift
    run $H "$@"
    echo "$*: $status $output" >&2
    [ "$status" -eq 125 ]
    [[ "$output" == *"$want"* ]]
  }
  for verb in run create spec; do
    local tail=(x)
    [ $verb = spec ] && tail=()
    check '--memory "12q": expected bytes or a k/m/g suffix' $verb --memory 12q "${tail[@]}"
    check '--memory-swap "1x": expected bytes or a k/m/g suffix' $verb --memory-swap 1x "${tail[@]}"
    check '--cpus "0": expected a number of CPUs from 0.01' $verb --cpus 0 "${tail[@]}"
    check '--cpus "inf": expected a number of CPUs' $verb --cpus inf "${tail[@]}"
    check '--pids-limit "0": expected a number of processes' $verb --pids-limit 0 "${tail[@]}"
    check '--env "=x": expected NAME=VALUE or NAME' $verb -e =x "${tail[@]}"
    check "--env-file: open $TEST_ROOT/none: No such file" $verb --env-file "$TEST_ROOT/none" "${tail[@]}"
    check '--volume "/tmp:rel": destination "rel"' $verb -v /tmp:rel "${tail[@]}"
    check '--volume "/tmp:/x:rx": unknown option "rx"' $verb -v /tmp:/x:rx "${tail[@]}"
    check '--volume "/tmp:/x:ro,rw": a second "rw"' $verb -v /tmp:/x:ro,rw "${tail[@]}"
    check '--volume "/tmp:/x:idmap,ridmap": a second "ridmap"' $verb -v /tmp:/x:idmap,ridmap "${tail[@]}"
    check '--volume "/tmp:/x:": nothing after the last' $verb -v /tmp:/x: "${tail[@]}"
    check '--volume "/tmp:/x:idmap=uids=0-1-10": "idmap=uids=0-1-10": a mapping of its own is written in a config' \
      $verb -v /tmp:/x:idmap=uids=0-1-10 "${tail[@]}"
    check '--volume "/tmp": expected SRC:DST[:ro|rw]' $verb -v /tmp "${tail[@]}"
    check '--tmpfs "/x:size=zz": "size=zz"' $verb --tmpfs /x:size=zz "${tail[@]}"
    check '--tmpfs "/": destination "/"' $verb --tmpfs / "${tail[@]}"
    check '--tmpfs "/t": /t is the destination of an earlier -v or --tmpfs' $verb -v /tmp:/t/ --tmpfs /t "${tail[@]}"
    check '--workdir "rel": expected an absolute path' $verb -w rel "${tail[@]}"
    check '--user ":5": expected NAME|UID[:GROUP|GID]' $verb -u :5 "${tail[@]}"
    check '--hostname "a b": expected 1-64 letters' $verb --hostname 'a b' "${tail[@]}"
    check '--timeout "5x": expected a duration ("500ms", "30s", "5m", "1h") or a number of seconds' \
      $verb --timeout 5x "${tail[@]}"
  done
  printf 'GOOD=1\n=bad\n' > "$TEST_ROOT/env"
  check "--env-file $TEST_ROOT/env:2: expected NAME=VALUE or NAME" run --env-file "$TEST_ROOT/env" x
  # The error is a usage error: kind invalid_argument.
  run --separate-stderr $H --log-format json run --memory 12q x
  [ "$(echo "$stderr" | jq -r .kind)" = invalid_argument ]
  [ -z "$(ls -A "$STATE" 2>/dev/null)" ]
}
