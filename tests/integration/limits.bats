#!/usr/bin/env bats
# limits: ps, update, events and admission on this host's cgroup layout.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

v2_host () { [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; }

# cgfile CONTROLLER-FILE ID: the file in the sandbox's cgroup of this host.
cgfile () {
  local f=$1
  if v2_host; then
    case $f in
      memory.limit_in_bytes) f=memory.max ;;
    esac
    echo "/sys/fs/cgroup/$(cgroup_parent)/$2/$f"
  else
    echo "/sys/fs/cgroup/${f%%.*}/$(cgroup_parent)/$2/$f"
  fi
}

# limited ID MEMORY PIDS [ARGS...]: a bundle with those limits (0: none).
limited () {
  local id=$1 mem=$2 pids=$3 b
  shift 3
  b=$(new_bundle "$id")
  [ "$mem" = 0 ] || edit_config "$b" ".linux.resources.memory = {\"limit\": $mem}"
  [ "$pids" = 0 ] || edit_config "$b" ".linux.resources.pids = {\"limit\": $pids}"
  [ $# -eq 0 ] || set_args "$b" "$@"
  echo "$b"
}

hog () { echo "x=\$(head -c $1 /dev/zero | tr '\\0' a); echo survived"; }

# ---- ps ----------------------------------------------------------------------

@test "ps: the sandbox's processes as a table and as JSON" {
  b=$(limited p 0 0 sh -c 'sleep 1000 & exec sleep 1001')
  $H run --detach --bundle "$b" p
  pid=$($H state p | jq -r .pid)
  for i in $(seq 50); do [ "$($H ps --format json p | jq length)" -ge 2 ] && break; sleep 0.1; done
  run $H ps p
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == UID*PID*PPID*CMD ]]
  [[ "$output" == *"sleep 1001"* ]]
  [[ "$output" == *"sleep 1000"* ]]
  # json is runc's: the pids only, as containerd's shim parses it.
  run $H ps --format json p
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -c 'map(type)')" = '["number","number"]' ]
  [ "$(echo "$output" | jq "index($pid) != null")" = true ]
  run $H ps --format json-full p
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq length)" -eq 2 ]
  [ "$(echo "$output" | jq -r "map(select(.pid == $pid))[0].command")" = "sleep 1001" ]
  [ "$(echo "$output" | jq -r "map(select(.ppid == $pid))[0].command")" = "sleep 1000" ]
  [ "$(echo "$output" | jq -r '.[0].user')" = root ]
  [ "$(echo "$output" | jq -r "map(select(.pid == $pid))[0].ns_pid")" = 1 ]
}

@test "ps: works on a paused sandbox; a stopped one has no processes, a missing one is 125" {
  b=$(limited pp 0 0 sleep 1000)
  $H run --detach --bundle "$b" pp
  $H pause pp
  run $H ps --format json-full pp
  [ "$status" -eq 0 ]
  # Listed while frozen (its state letter depends on the freezer: v1 D or
  # T, cgroup2 S, stopped in get_signal).
  [ "$(echo "$output" | jq -r '.[0].command')" = "sleep 1000" ]
  [ "$(echo "$output" | jq -r '.[0].pid')" = "$($H state pp | jq .pid)" ]
  $H resume pp
  $H kill pp KILL
  wait_status pp stopped
  # A stopped one has none, as runc's ps.
  run -0 $H ps --format json pp
  [ "$output" = "[]" ]
  run $H ps nosuch
  [ "$status" -eq 125 ]
  run $H ps --format yaml pp
  [ "$status" -eq 125 ]
}

# ---- update ------------------------------------------------------------------

@test "update: a lower memory limit is in force at once, and saved for a restart" {
  b=$(limited um 268435456 0 sleep 1000)
  $H run --detach --bundle "$b" um
  run $H exec um -- sh -c "$(hog 60000000)"
  [ "$status" -eq 0 ]
  [ "$output" = survived ]
  $H update --memory 32M um
  [ "$(cat "$(cgfile memory.limit_in_bytes um)")" = 33554432 ]
  [ "$(jq .linux.resources.memory.limit "$STATE/um/config.json")" = 33554432 ]
  # Everything else in the frozen config is as it was.
  [ "$(jq -c .process.args "$STATE/um/config.json")" = '["sleep","1000"]' ]
  run $H exec um -- sh -c "$(hog 60000000)"
  [ "$status" -eq 137 ]
  [[ "$output" != *survived* ]]
}

@test "update: below what the sandbox uses, the kernel's refusal is reported" {
  [ "$(wc -l < /proc/swaps)" -le 1 ] || skip "this host swaps: the kernel reclaims instead of refusing"
  v2_host && skip "cgroup v2 reclaims or OOM-kills instead of refusing"
  # 40 MB in a tmpfs: charged to the sandbox's memory cgroup at once, and
  # not reclaimable without swap (a shell variable of that size took long to
  # build on a loaded machine).
  b=$(limited busy 268435456 0 sh -c 'head -c 40000000 /dev/zero > /fill/f; sleep 1000')
  edit_config "$b" '.mounts += [{"destination": "/fill", "type": "tmpfs", "source": "tmpfs"}]'
  $H run --detach --bundle "$b" busy
  usage=$(cgfile memory.usage_in_bytes busy)
  # Until the 40 MB are really held (slow on a loaded machine).
  for i in $(seq 300); do [ "$(cat "$usage")" -gt 40000000 ] && break; sleep 0.1; done
  [ "$(cat "$usage")" -gt 40000000 ]
  run $H update --memory 8M busy
  [ "$status" -eq 125 ]
  [[ "$output" == *"cannot lower the memory limit to 8388608"* ]]
  [ "$(cat "$(cgfile memory.limit_in_bytes busy)")" = 268435456 ]
  [ "$(jq .linux.resources.memory.limit "$STATE/busy/config.json")" = 268435456 ]
}

@test "update: --pids-limit is in force" {
  b=$(limited up 0 64 sleep 1000)
  $H run --detach --bundle "$b" up
  $H update --pids-limit 5 up
  [ "$(cat "$(cgfile pids.max up)")" = 5 ]
  run $H exec up -- sh -c 'i=0; while [ $i -lt 10 ]; do sleep 100 & i=$((i+1)); done; echo started'
  [[ "$output" == *"fork"* ]]
  [ "$(cat "$(cgfile pids.current up)")" -le 5 ]
  [ "$(jq .linux.resources.pids.limit "$STATE/up/config.json")" = 5 ]
}

@test "update: -r FILE and -r - (runc's resources JSON); --cpus" {
  b=$(limited ur 134217728 64 sleep 1000)
  edit_config "$b" '.linux.resources.cpu = {"shares": 512}'
  $H run --detach --bundle "$b" ur
  echo '{"memory":{"limit":100663296},"pids":{"limit":20}}' > "$TEST_ROOT/r.json"
  $H update -r "$TEST_ROOT/r.json" ur
  [ "$(cat "$(cgfile memory.limit_in_bytes ur)")" = 100663296 ]
  [ "$(cat "$(cgfile pids.max ur)")" = 20 ]
  echo '{"pids":{"limit":30}}' | $H update -r - ur
  [ "$(cat "$(cgfile pids.max ur)")" = 30 ]
  $H update --cpus 0.5 ur
  if v2_host; then
    [ "$(cat "/sys/fs/cgroup/$(cgroup_parent)/ur/cpu.max")" = "50000 100000" ]
  else
    [ "$(cat "/sys/fs/cgroup/cpu/$(cgroup_parent)/ur/cpu.cfs_quota_us")" = 50000 ]
  fi
  run jq -c '.linux.resources | [.memory.limit, .pids.limit, .cpu.shares, .cpu.quota, .cpu.period]' "$STATE/ur/config.json"
  [ "$output" = "[100663296,30,512,50000,100000]" ]
  run $H update -r - ur <<< '{"devices":[{"allow":true}]}'
  [ "$status" -eq 125 ]
  [[ "$output" == *"devices: update cannot change it"* ]]
}

@test "update: a memory and a pids limit added to a sandbox created without any (README's command), options after the id too" {
  b=$(limited work 0 0 sleep 1000)
  $H run --detach --bundle "$b" work
  $H update --memory 256M --pids-limit 64 work
  [ "$(cat "$(cgfile memory.limit_in_bytes work)")" = 268435456 ]
  [ "$(cat "$(cgfile pids.max work)")" = 64 ]
  run jq -c '.linux.resources | [.memory.limit, .pids.limit]' "$STATE/work/config.json"
  [ "$output" = "[268435456,64]" ]
  # The options after the id, and mixed with -r.
  $H update work --memory 32M
  [ "$(cat "$(cgfile memory.limit_in_bytes work)")" = 33554432 ]
  $H update work --pids-limit 32 -r - <<< '{"memory":{"limit":50331648}}'
  [ "$(cat "$(cgfile memory.limit_in_bytes work)")" = 50331648 ]
  [ "$(cat "$(cgfile pids.max work)")" = 32 ]
  # In force for what an exec starts now.
  run $H exec work -- sh -c "$(hog 100000000)"
  [ "$status" -eq 137 ]
  [[ "$output" != *survived* ]]
  # And cpu (a cpu cgroup too, whatever the limits).
  $H update work --cpus 0.5
  if ! v2_host; then
    [ "$(cat "/sys/fs/cgroup/cpu/$(cgroup_parent)/work/cpu.cfs_quota_us")" = 50000 ]
    # v1 cpuset only for cpus/mems set at create: refused, saying why.
    run $H update work --cpuset-cpus 0
    [ "$status" -eq 125 ]
    [[ "$output" == *'no "cpuset" cgroup'*"set cpus or mems at create"* ]]
  fi
  run $H update work
  [ "$status" -eq 125 ]
  [[ "$output" == *"nothing to change"* ]]
  run $H update --memory lots work
  [ "$status" -eq 125 ]
  run $H update work other --memory 1M
  [ "$status" -eq 125 ]
  [[ "$output" == *"exactly one sandbox ID"* ]]
}

@test "update: with a linux.cgroupsPath (an orchestrator's) every v1 controller has the sandbox's cgroup, so a limit can be set later" {
  v2_host && skip "on cgroup v2 every sandbox has its cgroup"
  b=$(limited cp 0 0 sleep 1000)
  name="hako-test-cp-$$-$RANDOM"
  edit_config "$b" ".linux.cgroupsPath = \"/$name/cp\""
  $H run --detach --bundle "$b" cp
  pid=$($H state cp | jq -r .pid)
  grep -qx "[0-9]*:memory:/$name/cp" "/proc/$pid/cgroup"
  grep -qx "[0-9]*:pids:/$name/cp" "/proc/$pid/cgroup"
  $H update --memory 64M --pids-limit 10 cp
  [ "$(cat "/sys/fs/cgroup/memory/$name/cp/memory.limit_in_bytes")" = 67108864 ]
  [ "$(cat "/sys/fs/cgroup/pids/$name/cp/pids.max")" = 10 ]
  # An exec joins them all.
  run $H exec cp cat /proc/self/cgroup
  [[ "$output" == *":memory:/$name/cp"* ]]
  $H delete --force cp
  for d in /sys/fs/cgroup/*/"$name"; do
    if [ -d "$d" ]; then rmdir "$d"; fi
  done
}

# ---- the profiles' default limits --------------------------------------------

@test "node.json default_memory and default_pids replace the profiles' defaults, for spec and for run --profile host" {
  echo '{"default_memory": "256M", "default_pids": 100}' > "$TEST_ROOT/node.json"
  export HAKO_NODE_CONFIG=$TEST_ROOT/node.json
  mkdir "$TEST_ROOT/s"
  $H spec --bundle "$TEST_ROOT/s"
  run jq -c '.linux.resources | [.memory.limit, .pids.limit]' "$TEST_ROOT/s/config.json"
  [ "$output" = "[268435456,100]" ]
  $H run --detach --profile host nd -- sleep 1000
  [ "$(cat "$(cgfile memory.limit_in_bytes nd)")" = 268435456 ]
  [ "$(cat "$(cgfile pids.max nd)")" = 100 ]
  echo '{"default_pids": 0}' > "$TEST_ROOT/node.json"
  run $H run --rm --profile host bad -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *".default_pids: must be a number of tasks above 0 (or -1: no limit)"* ]]
}

@test "no limit only when asked: node.json -1 makes the profiles write -1, and the sandbox's cgroups say max" {
  echo '{"default_memory": -1, "default_pids": -1}' > "$TEST_ROOT/node.json"
  export HAKO_NODE_CONFIG=$TEST_ROOT/node.json
  mkdir "$TEST_ROOT/s"
  $H spec --profile host --bundle "$TEST_ROOT/s"
  run jq -c '.linux.resources | [.memory.limit, .pids.limit]' "$TEST_ROOT/s/config.json"
  [ "$output" = "[-1,-1]" ]
  $H run --detach --bundle "$TEST_ROOT/s" nl -- sleep 1000
  [ "$(cat "$(cgfile pids.max nl)")" = max ]
  mem=$(cat "$(cgfile memory.limit_in_bytes nl)")
  [ "$mem" = max ] || [ "$mem" -gt 4611686018427387904 ]
  # Still in its own cgroups: update can set a limit later.
  $H update nl --memory 64M --pids-limit 50
  [ "$(cat "$(cgfile pids.max nl)")" = 50 ]
}

# ---- events ------------------------------------------------------------------

@test "events --stats: one JSON object in runc's shape" {
  b=$(limited es 134217728 64 sleep 1000)
  $H run --detach --bundle "$b" es
  run $H events --stats es
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .type)" = stats ]
  [ "$(echo "$output" | jq -r .id)" = es ]
  [ "$(echo "$output" | jq '.data.memory.usage.usage > 0')" = true ]
  [ "$(echo "$output" | jq .data.memory.usage.limit)" = 134217728 ]
  [ "$(echo "$output" | jq '.data.memory.raw | length > 0')" = true ]
  [ "$(echo "$output" | jq '.data.pids.current >= 1')" = true ]
  [ "$(echo "$output" | jq .data.pids.limit)" = 64 ]
  # CPU time: from cpuacct, or (hybrid, no cpu limit) the cgroup2 dir's cpu.stat.
  if [ -d /sys/fs/cgroup/unified ] || v2_host; then
    [ "$(echo "$output" | jq '.data.cpu.usage.total > 0')" = true ]
  fi
}

@test "events --stats: hako's additions — the CPUs it may use, the memory it may use, its disk limit's filesystem" {
  $H run -d --profile host --cpus 1.5 --memory 96m --disk 64m ex -- sleep 1000
  run -0 $H events --stats ex
  [ "$(echo "$output" | jq .data.cpu.limit)" = 1.5 ]
  [ "$(echo "$output" | jq .data.memory.total)" = $((96 << 20)) ]
  local used total
  used=$(echo "$output" | jq .data.disk.usage)
  total=$(echo "$output" | jq .data.disk.limit)
  # As df sees the data dir's own filesystem: writes show, the size bounds.
  [ "$total" -le $((64 << 20)) ]
  [ "$total" -ge $((48 << 20)) ]
  $H exec ex -- sh -c 'head -c 16777216 /dev/zero > /work/f && sync'
  run -0 $H events --stats ex
  [ "$(echo "$output" | jq .data.disk.usage)" -ge $((used + (15 << 20))) ]
  [ "$(echo "$output" | jq .data.disk.usage)" = "$(df -B1 --output=used "$DATA/sandboxes/ex" | tail -1 | tr -d ' ')" ]
  # The periodic lines carry them too.
  local first
  first=$(timeout 10 $H events --interval 100ms ex | head -n 1)
  [ "$(echo "$first" | jq .data.disk.limit)" = "$total" ]
  [ "$(echo "$first" | jq .data.cpu.limit)" = 1.5 ]
  # update moves the CPU figure; no disk limit, no disk object; no memory limit: the host's.
  $H update --cpus 0.25 ex
  [ "$($H events --stats ex | jq .data.cpu.limit)" = 0.25 ]
  $H run -d --profile host --disk none --memory -1 nd -- sleep 1000
  run -0 $H events --stats nd
  [ "$(echo "$output" | jq '.data | has("disk")')" = false ]
  [ "$(echo "$output" | jq .data.memory.total)" = $(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 )) ]
  [ "$(echo "$output" | jq .data.cpu.limit)" = "$(nproc)" ]
}

@test "events: an OOM kill is reported as an oom event, and the stream ends with the sandbox" {
  mkdir -p "$TEST_ROOT/out"
  b=$(limited eo 33554432 64 sh -c "while [ ! -e /out/go ]; do sleep 0.1; done; $(hog 100000000)")
  edit_config "$b" ".mounts += [{\"destination\": \"/out\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/out\", \"options\": [\"rbind\", \"ro\"]}]"
  $H run --detach --bundle "$b" eo
  timeout 60 $H events --interval 100ms eo > "$TEST_ROOT/events" &
  ev=$!
  # The first stats line: the OOM watch is in place.
  for i in $(seq 100); do [ -s "$TEST_ROOT/events" ] && break; sleep 0.1; done
  touch "$TEST_ROOT/out/go"
  wait $ev
  grep -qx '{"type":"oom","id":"eo"}' "$TEST_ROOT/events"
  [ "$(grep -c '"type":"oom"' "$TEST_ROOT/events")" -ge 1 ]
}

@test "events --interval: stats lines until the sandbox's process exits" {
  b=$(limited ei 67108864 0 sleep 1)
  $H run --detach --bundle "$b" ei
  run timeout 10 $H events --interval 200ms ei
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -ge 2 ]
  for l in "${lines[@]}"; do [ "$(echo "$l" | jq -r .type)" = stats ]; done
  run $H events ei
  [ "$status" -eq 125 ]
}

# ---- admission ---------------------------------------------------------------

node () { echo "$1" > "$TEST_ROOT/node.json"; }

@test "admission: 256 MiB pool: two 128 MiB sandboxes fit, a third is refused until one is deleted" {
  node '{"memory_pool": "256M", "overcommit": 1}'
  A="$H --node-config $TEST_ROOT/node.json"
  b=$(limited a 134217728 0 sleep 1000)
  $A create --bundle "$b" a1
  $A create --bundle "$b" a2
  run $A create --bundle "$b" a3
  [ "$status" -eq 125 ]
  [[ "$output" == *"create a3: admission: not enough memory"*"requested 134217728 (128 MiB)"*"reserved by live sandboxes 268435456 (256 MiB)"*"pool 268435456 (256 MiB) x overcommit 1 = 268435456 (256 MiB)"* ]]
  [ ! -e "$STATE/a3" ]
  # A paused sandbox keeps its reservation.
  $A start a1
  $A pause a1
  run $A create --bundle "$b" a3
  [ "$status" -eq 125 ]
  $A resume a1
  $A delete --force a1
  $A create --bundle "$b" a3
  # Overcommit 1.5: room for one more.
  node '{"memory_pool": 268435456, "overcommit": 1.5}'
  $A create --bundle "$b" a4
  run $A create --bundle "$b" a5
  [ "$status" -eq 125 ]
}

@test "admission: a stopped sandbox releases its reservation" {
  node '{"memory_pool": "256M"}'
  export HAKO_NODE_CONFIG=$TEST_ROOT/node.json
  b=$(limited s 134217728 0 sleep 1000)
  $H create --bundle "$b" s1
  $H run --detach --bundle "$b" s2
  run $H create --bundle "$b" s3
  [ "$status" -eq 125 ]
  $H kill s2 KILL
  wait_status s2 stopped
  $H create --bundle "$b" s3
}

@test "admission: require_memory_limit refuses a sandbox without a limit" {
  node '{"require_memory_limit": true}'
  A="$H --node-config $TEST_ROOT/node.json"
  run $A create --bundle "$(limited nol 0 0)" nol
  [ "$status" -eq 125 ]
  [[ "$output" == *"create nol: admission: this node requires a memory limit"* ]]
  [ ! -e "$STATE/nol" ]
  $A create --bundle "$(limited withl 67108864 0)" withl
}

@test "admission: a malformed node config is 125 naming the field; a missing default one is no admission" {
  node '{"memory_pool": "lots"}'
  run $H --node-config "$TEST_ROOT/node.json" create --bundle "$(limited m 0 0)" m
  [ "$status" -eq 125 ]
  [[ "$output" == *"$TEST_ROOT/node.json: .memory_pool:"* ]]
  node '{"overcommit": 1, "memory_pool": 1, "swap_pool": 2}'
  run $H --node-config "$TEST_ROOT/node.json" create --bundle "$(limited m 0 0)" m
  [ "$status" -eq 125 ]
  [[ "$output" == *".swap_pool: unknown field"* ]]
  run $H --node-config "$TEST_ROOT/missing.json" create --bundle "$(limited m 0 0)" m
  [ "$status" -eq 125 ]
  [[ "$output" == *"missing.json"* ]]
  [ ! -e /etc/hako/node.json ] || skip "this host has a node config"
  $H create --bundle "$(limited m 0 0)" m
}

@test "admission: 8 concurrent creates against a pool for 3 admit exactly 3" {
  node '{"memory_pool": "384M", "overcommit": 1}'
  A="$H --node-config $TEST_ROOT/node.json"
  b=$(limited c 134217728 0 sleep 1000)
  for i in 1 2 3 4 5 6 7 8; do
    ( rc=0; $A create --bundle "$b" "c$i" > "$TEST_ROOT/c$i.out" 2>&1 || rc=$?; echo $rc > "$TEST_ROOT/c$i.rc" ) &
  done
  wait
  [ "$(cat "$TEST_ROOT"/c*.rc | grep -cx 0)" -eq 3 ]
  [ "$(cat "$TEST_ROOT"/c*.rc | grep -cx 125)" -eq 5 ]
  [ "$(ls "$STATE" | wc -l)" -eq 3 ]
  grep -l "not enough memory" "$TEST_ROOT"/c*.out | wc -l | grep -qx 5
}

@test "admission: update cannot raise a limit past the pool" {
  node '{"memory_pool": "256M"}'
  A="$H --node-config $TEST_ROOT/node.json"
  b=$(limited u 134217728 0 sleep 1000)
  $A create --bundle "$b" u1
  $A create --bundle "$b" u2
  run $A update --memory 200M u1
  [ "$status" -eq 125 ]
  [[ "$output" == *"not enough memory"* ]]
  [ "$(cat "$(cgfile memory.limit_in_bytes u1)")" = 134217728 ]
  $A update --memory 64M u1
  $A create --bundle "$(limited u3 67108864 0)" u3
}
