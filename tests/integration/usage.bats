#!/usr/bin/env bats
# What a command used and why it ended, as its result says (issue 36: "a
# result that says what the command used", items 7, 8, 13 and 15b): CPU
# time and peak memory of the command's own processes, 126/127's error
# kind, run --json, and the errors and states a program branches on.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# ---- CPU and memory of the command's own processes ----

@test "exec --json: a CPU-burning command reports its user CPU, a sleeping one next to none" {
  $H run -d cpu -- sleep 100
  run -0 --separate-stderr $H exec --json cpu -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'
  echo "$output"
  # A busy loop is on a CPU most of its wall time: at least a third of it
  # even on a loaded machine, counted in user mode.
  echo "$output" | jq -e '.user_cpu_us * 3 >= .duration_ms * 1000 and .user_cpu_us > 0 and .system_cpu_us >= 0'
  run -0 --separate-stderr $H exec --json cpu -- sleep 0.5
  echo "$output" | jq -e '.duration_ms >= 500 and .user_cpu_us + .system_cpu_us < 100000'
}

@test "exec --json: the CPU of the command's children counts, a background job's never" {
  $H run -d kids -- sleep 100
  # The burner is a child of the shell, reaped by it: the command's tree.
  run -0 --separate-stderr $H exec --json kids -- sh -c 'sh -c "i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); done"; true'
  echo "$output" | jq -e '.user_cpu_us * 3 >= .duration_ms * 1000'
  # A job left running when the command ends is not the command's use.
  run -0 --separate-stderr $H exec --json kids -- sh -c '(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) & exit 0'
  echo "$output" | jq -e '.user_cpu_us < 50000'
}

@test "exec --json: a command allocating 50 MiB reports a peak of at least that, a trivial one far less" {
  $H run -d mem -- sleep 100
  run -0 --separate-stderr $H exec --json mem -- sh -c 'dd if=/dev/zero of=/dev/null bs=50M count=1 2>/dev/null; echo ok'
  echo "$output"
  echo "$output" | jq -e '.stdout == "ok\n" and .peak_rss_bytes >= 50 * 1048576'
  run -0 --separate-stderr $H exec --json mem -- true
  echo "$output" | jq -e '.peak_rss_bytes > 0 and .peak_rss_bytes < 16 * 1048576'
}

@test "exec --status-fd: the result line carries the usage too" {
  $H run -d sfd -- sleep 100
  run -0 $H exec --status-fd 3 sfd -- dd if=/dev/zero of=/dev/null bs=50M count=1 3> "$TEST_ROOT/status"
  tail -1 "$TEST_ROOT/status" | jq -e '.peak_rss_bytes >= 50 * 1048576 and (.user_cpu_us | type) == "number" and (.system_cpu_us | type) == "number"'
}

# ---- 126 and 127 (item 13) ----

@test "exec --json: 127 and 126 carry an error kind, and the command's stderr holds only what it wrote" {
  $H run -d nr -- sleep 100
  run -127 --separate-stderr $H exec --json nr no-such-command
  echo "$output" | jq -e '.error.kind == "not_found" and (.error.message | test("no-such-command")) and .stderr == ""'
  run -126 --separate-stderr $H exec --json nr /etc/passwd
  echo "$output" | jq -e '(.error.kind == "permission" or .error.kind == "not_executable") and .stderr == ""'
  run -0 --separate-stderr $H exec --json nr true
  echo "$output" | jq -e '.error == null'
  # --status-fd: the result says it; hako's stderr (the command's) stays empty.
  run -127 --separate-stderr $H exec --status-fd 3 nr no-such-command 3> "$TEST_ROOT/status"
  [ "$stderr" = "" ]
  tail -1 "$TEST_ROOT/status" | jq -e '.error.kind == "not_found"'
}

# ---- run --json, and run --rm of an OOM-killed sandbox (item 13) ----

@test "run --json: the process's output, then its state as one JSON line with exitStatus and reason" {
  run -3 --separate-stderr $H run --rm --json rj -- sh -c 'echo out; exit 3'
  [ "${lines[0]}" = out ]
  echo "${lines[1]}" | jq -e '.id == "rj" and .status == "stopped" and .exitStatus == 3 and .reason == "exited"'
  [ "${#lines[@]}" -eq 2 ]
  # Kept: the same state wait --json prints.
  run -0 --separate-stderr $H run --format json rk -- true
  echo "$output" | jq -e '.exitStatus == 0 and .reason == "exited"'
  [ "$($H wait --json rk | jq -c '{exitStatus, reason}')" = '{"exitStatus":0,"reason":"exited"}' ]
  $H delete rk
  run -125 $H run -d --json rd -- true
}

memory_controller () {
  [ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null
}

@test "run --rm of a sandbox the OOM killer ended under a shell: says oom before the state is gone" {
  memory_controller || skip "no memory cgroup controller: nothing counts OOM kills"
  run -137 --separate-stderr $H run --rm --memory 32m om -- sh -c 'head -c 200m /dev/zero | tail > /dev/null'
  echo "$stderr"
  [[ "$stderr" == *"run om: the sandbox's process ended with 137 by the out-of-memory killer"* ]]
  run -137 --separate-stderr $H run --rm --json --memory 32m om -- sh -c 'head -c 200m /dev/zero | tail > /dev/null'
  echo "$output" | jq -e '.reason == "oom" and .exitStatus == 137 and .oomKills >= 1'
  run -0 $H list -q
  [ "$output" = "" ]
}

# ---- process.oomScoreAdj without CAP_SYS_RESOURCE (item 7) ----

@test "oomScoreAdj -998 where hako lacks CAP_SYS_RESOURCE: 125 naming restrict_oom_score_adj" {
  # This machine's root has no CAP_SYS_RESOURCE, as containerd in a nested node.
  capsh --has-p=cap_sys_resource 2>/dev/null && skip "hako has CAP_SYS_RESOURCE here: -998 is allowed"
  [ "$(cat /proc/self/oom_score_adj)" -gt -998 ] || skip "already at -998 or lower"
  jq '.process.oomScoreAdj = -998 | .process.args = ["true"]' "$BUNDLE_DIR/config.json" > "$TEST_ROOT/c.json"
  run -125 --separate-stderr $H run --rm --bundle "$BUNDLE_DIR" --config "$TEST_ROOT/c.json" osa
  echo "$stderr"
  [[ "$stderr" == *"set oom_score_adj -998: Permission denied"* ]]
  [[ "$stderr" == *"restrict_oom_score_adj = true"* ]]
  [ -z "$(ls "$STATE")" ]
}

# ---- a host node the sandbox's user namespace cannot open (item 8) ----

@test "--device of a 0600 node owned by unmapped root: a warning naming the fix; a 0666 one none" {
  mknod "$TEST_ROOT/n600" c 1 3
  chmod 600 "$TEST_ROOT/n600"
  mknod "$TEST_ROOT/n666" c 1 3
  chmod 666 "$TEST_ROOT/n666"
  run -2 --separate-stderr $H run --rm --device "$TEST_ROOT/n600" d6 -- sh -c "echo x > $TEST_ROOT/n600"
  echo "$stderr"
  [[ "$stderr" == *"--device $TEST_ROOT/n600: the host node is mode 0600, owned by uid 0 and gid 0, which the sandbox's user namespace does not map"* ]]
  [[ "$stderr" == *"chmod 0666 $TEST_ROOT/n600"* ]]
  run -0 --separate-stderr $H run --rm --device "$TEST_ROOT/n666" d7 -- sh -c "echo x > $TEST_ROOT/n666"
  [ "$stderr" = "" ]
  # Owned by the id the sandbox's root is: usable, no warning.
  uid=$($H run --rm um -- cat /proc/self/uid_map | awk '$1 == 0 { print $2 }')
  [ -n "$uid" ]
  chown "$uid" "$TEST_ROOT/n600"
  run -0 --separate-stderr $H run --rm --device "$TEST_ROOT/n600" d8 -- sh -c "echo x > $TEST_ROOT/n600"
  [ "$stderr" = "" ]
}

# ---- the sandbox's state right after exec said it died with it (item 15b) ----

@test "exec killed at the sandbox's deadline: hako state says stopped as soon as exec returns (20 rounds)" {
  # Not i: bats's run uses that name.  The sandbox holds 100 processes:
  # its init dies only once the kernel has reaped them all, after the
  # command's end has reached exec (the window the race was in).
  local round bad=0
  for round in $(seq 20); do
    $H run -d --timeout 1s dl$round -- sh -c 'for n in $(seq 100); do sleep 100 & done; wait'
    # state straight after exec returns: nothing in between.
    rc=0
    out=$($H exec --json dl$round -- sleep 5) || rc=$?
    st=$($H state dl$round | jq -r '.status + " " + (.reason // "")')
    [ "$rc" -eq 137 ]
    [ "$(echo "$out" | jq -r .reason)" = sandbox_timeout ]
    [ "$st" = "stopped timeout" ] || { echo "round $round: state $st"; bad=$((bad + 1)); }
    $H delete dl$round
  done
  [ "$bad" -eq 0 ]
}

# ---- the sandbox's own process: wait --json and run --json ----

@test "wait --json and run --json: what the sandbox's process and what it reaped used" {
  $H run -d ow -- sh -c 'dd if=/dev/zero of=/dev/null bs=50M count=1 2>/dev/null; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'
  run -0 --separate-stderr $H wait --json ow
  echo "$output" | jq -e '.exitStatus == 0 and .userCpuUs > 0 and .systemCpuUs >= 0 and .peakRssBytes >= 50 * 1048576'
  $H delete ow
  run -0 --separate-stderr $H run --rm --json oj -- true
  echo "$output" | jq -e '.peakRssBytes > 0 and .peakRssBytes < 16 * 1048576 and (.userCpuUs | type) == "number"'
}
