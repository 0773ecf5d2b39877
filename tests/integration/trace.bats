#!/usr/bin/env bats
# trace: HAKO_TRACE=1 (or --debug) prints one "hako-trace: SECONDS PID PHASE"
# line per phase of create/start/run/exec on stderr, in the order the phases
# run, with monotonic timestamps; without it, nothing.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# in_order FILE PHASE...: every PHASE has a trace line in FILE, each later
# than the one before it, and no process's timestamps go back.  Ordered by
# timestamp: two processes' lines may reach the file in the other order (a
# timestamp is taken before its write).
in_order () {
  local file=$1 phase line last=0
  shift
  awk '/^hako-trace: / { if ($2 + 0 < t[$3]) { print "timestamp went back: " $0; exit 1 } t[$3] = $2 + 0 }' "$file"
  for phase in "$@"; do
    line=$(grep -n -m1 -F " $phase" <(grep '^hako-trace: ' "$file" | sort -s -k2,2n | sed -n "$((last + 1)),\$p") | cut -d: -f1)
    if [ -z "$line" ]; then
      echo "phase '$phase' missing, or not after the one before it"
      return 1
    fi
    last=$((last + line))
  done
}

@test "trace: run prints every phase of create and start, in order, and the command's output is untouched" {
  b=$(new_bundle t1)
  set_args "$b" echo hello
  run --separate-stderr env HAKO_TRACE=1 $H run --rm --bundle "$b" t1
  [ "$status" -eq 0 ]
  [ "$output" = hello ]
  printf '%s\n' "$stderr" > "$TEST_ROOT/trace"
  cat "$TEST_ROOT/trace"
  in_order "$TEST_ROOT/trace" main "create: plan" "state dir" "cgroup create" clone "child: wait for go" \
    "child: join namespaces" "child: mounts" "child: pivot_root" "child: user and caps" \
    "child: landlock build" "child: wait for start" created "child: landlock" "child: seccomp" "child: exec" \
    "run: exited"
  # The parent's id maps, cgroup and go come between its clone and the
  # child's go, whichever runs first meanwhile.
  in_order "$TEST_ROOT/trace" clone "id maps" "cgroup enter" "go, state creating" "child: join namespaces"
  # Every line is whole: the prefix, a timestamp, a pid, a phase.
  ! grep -v -E '^hako-trace: [0-9]+\.[0-9]{9} [0-9]+ .+$' "$TEST_ROOT/trace"
}

@test "trace: create then start trace each verb; --debug turns it on too" {
  b=$(new_bundle t2)
  set_args "$b" true
  # The created process has create's stdio (as OCI's create): files, not
  # the pipe of a `run`, which would wait for it.
  HAKO_TRACE=1 $H create --bundle "$b" t2 > /dev/null 2> "$TEST_ROOT/create"
  cat "$TEST_ROOT/create"
  in_order "$TEST_ROOT/create" "create: plan" clone "child: wait for start" created
  # The waiting process has closed its trace fd: its phases end at "wait
  # for start", and start traces its own.
  run ! grep -q "child: seccomp" "$TEST_ROOT/create"
  $H --debug start t2 2> "$TEST_ROOT/start"
  cat "$TEST_ROOT/start"
  in_order "$TEST_ROOT/start" main start released started
  wait_status t2 stopped
  $H delete t2
}

@test "trace: run --detach returns at once; its process keeps no copy of the caller's stderr" {
  b=$(new_bundle t5)
  set_args "$b" sleep 1000
  # $(...) waits for every writer of its pipe: a process holding the trace
  # fd would hang it until the sandbox ends.
  out=$(HAKO_TRACE=1 timeout 20 $H run --detach --bundle "$b" t5 2>&1)
  echo "$out"
  [[ "$out" == *"hako-trace: "*" created"* ]]
  $H delete --force t5
}

@test "trace: exec prints its phases, the joiner's and the command's, in order" {
  b=$(new_bundle t3)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" t3
  run --separate-stderr env HAKO_TRACE=1 $H exec t3 -- echo hi
  [ "$status" -eq 0 ]
  [ "$output" = hi ]
  printf '%s\n' "$stderr" > "$TEST_ROOT/exec"
  cat "$TEST_ROOT/exec"
  in_order "$TEST_ROOT/exec" main "exec: plan" "exec: channels, signals" "exec: joiner" "joiner: cgroups" \
    "joiner: setns" "joiner: clone inside" "command: setup" "command: find, terminal" "command: landlock" \
    "command: seccomp" "command: fds" "command: exec" "exec: cleanup"
  $H delete --force t3
}

@test "trace: off by default and with HAKO_TRACE=0; with --preserve-fds the trace fd never reaches the sandbox" {
  b=$(new_bundle t4)
  set_args "$b" true
  run --separate-stderr $H run --rm --bundle "$b" t4
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  run --separate-stderr env HAKO_TRACE=0 $H run --rm --bundle "$b" t4
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  # The sandbox lists its open fds: 0-2 and the one preserved fd, nothing
  # of the trace's (a dup of hako's stderr, above them).
  set_args "$b" ls /proc/self/fd
  run --separate-stderr env HAKO_TRACE=1 $H run --rm --preserve-fds 1 --bundle "$b" t4 3< /dev/null
  [ "$status" -eq 0 ]
  echo "$output"
  [ "$(echo $output)" = "0 1 2 3 4" ] # 4: ls's own directory fd
}

# trace_total FILE: the first line's pid (hako's own process), then the sum
# of its phases, each from a line of that pid to its next (as phases.sh
# counts them), then its last line's time less its first's, in ms.
trace_total () {
  awk '$1 != "hako-trace:" { next }
       main == "" { main = $3 }
       $3 == main { if (last != "") sum += ($2 - last) * 1000; else first = $2; last = $2 }
       END { printf "%s %.3f %.3f\n", main, sum, (last - first) * 1000 }' "$1"
}

# monotonic: CLOCK_MONOTONIC in seconds, the trace's clock.
monotonic () { python3 -c 'import time; print("%.9f" % time.monotonic())'; }

@test "trace: a run's lines cover the whole process, from its fork (process start) to its exit, --rm's delete included; its phases sum to its own wall time" {
  b=$(new_bundle t6)
  set_args "$b" true
  t0=$(monotonic)
  run --separate-stderr env HAKO_TRACE=1 $H run --rm --bundle "$b" t6
  t1=$(monotonic)
  [ "$status" -eq 0 ]
  printf '%s\n' "$stderr" > "$TEST_ROOT/trace"
  cat "$TEST_ROOT/trace"
  main=$(awk 'NR == 1 { print $3 }' "$TEST_ROOT/trace")
  # hako's own lines: the first is the fork's, the last its exit, with
  # --rm's delete between "run: exited" and it.
  grep " $main " "$TEST_ROOT/trace" > "$TEST_ROOT/main"
  [ "$(head -n 1 "$TEST_ROOT/main" | cut -d' ' -f4-)" = "process start" ]
  [ "$(tail -n 1 "$TEST_ROOT/main" | cut -d' ' -f4-)" = exit ]
  in_order "$TEST_ROOT/trace" "process start" main "run: exited" "delete: lock, state" "delete: cgroups" \
    "delete: done" exit
  # The start is the fork's time, not earlier than the test's clock before
  # it; the exit is before the test's clock after it.
  start=$(awk 'NR == 1 { print $2 }' "$TEST_ROOT/main")
  end=$(awk 'END { print $2 }' "$TEST_ROOT/main")
  awk -v a="$t0" -v s="$start" -v e="$end" -v b="$t1" 'BEGIN { exit !(a <= s && s <= e && e <= b) }'
  # The phases of hako's process, added up, are its wall time from the
  # fork to the exit (within rounding: 0.01 ms).
  read -r pid sum total < <(trace_total "$TEST_ROOT/trace")
  echo "pid $pid: phases $sum ms, wall $total ms"
  [ "$pid" = "$main" ]
  awk -v s="$sum" -v t="$total" 'BEGIN { d = s - t; exit !(t > 0 && d < 0.01 && d > -0.01) }'
}

@test "trace: create, start, exec and delete each trace from the fork to the exit" {
  b=$(new_bundle t7)
  set_args "$b" sleep 1000
  HAKO_TRACE=1 $H create --bundle "$b" t7 > /dev/null 2> "$TEST_ROOT/create"
  HAKO_TRACE=1 $H start t7 2> "$TEST_ROOT/start"
  run --separate-stderr env HAKO_TRACE=1 $H exec t7 -- true
  [ "$status" -eq 0 ]
  printf '%s\n' "$stderr" > "$TEST_ROOT/exec"
  HAKO_TRACE=1 $H delete --force t7 2> "$TEST_ROOT/delete"
  for verb in create start exec delete; do
    cat "$TEST_ROOT/$verb"
    main=$(awk 'NR == 1 { print $3 }' "$TEST_ROOT/$verb")
    [ "$(grep " $main " "$TEST_ROOT/$verb" | head -n 1 | cut -d' ' -f4-)" = "process start" ]
    [ "$(grep " $main " "$TEST_ROOT/$verb" | tail -n 1 | cut -d' ' -f4-)" = exit ]
    read -r pid sum total < <(trace_total "$TEST_ROOT/$verb")
    awk -v s="$sum" -v t="$total" 'BEGIN { d = s - t; exit !(t > 0 && d < 0.01 && d > -0.01) }'
  done
  in_order "$TEST_ROOT/delete" "process start" main "delete: kill" "delete: cgroups" "delete: done" exit
}
