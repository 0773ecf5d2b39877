#!/usr/bin/env bats
# exec: one more command in a running sandbox — its exit status, its output
# (capped, or as one JSON object), its timeout, its user, and the isolation
# it shares with the sandbox's own process.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

# start_box ID [BUNDLE]: a running sandbox whose process just waits.
start_box () {
  local b=${2:-$(new_bundle "$1")}
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" "$1"
}

box_pid () { $H state "$1" | jq -r .pid; }

# tree_of PID: the exec cgroup (hako-exec-...) a process of an attached
# exec's tree is in, as the host sees it; empty when the exec has none and
# a subreaper holds its tree (a host without cgroup2: runtime/exec_tree.h).
tree_of () { grep -o 'hako-exec-[0-9a-f-]*' "/proc/$1/cgroup" || true; }

# box_procs ID: "PID PPID CMDLINE " of every process in the sandbox's pid
# namespace, as the host sees them (the command line ends with a space, so
# "sleep 100 " does not match the sandbox's own "sleep 1000 ").
box_procs () {
  local want p
  want=$(readlink "/proc/$(box_pid "$1")/ns/pid")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$want" ] || continue
    set -- $(cut -d' ' -f4 "$p/stat" 2>/dev/null) x
    echo "${p#/proc/} $1 $(tr '\0' ' ' < "$p/cmdline" 2>/dev/null)"
  done
}

@test "exec: the command's output and its own exit status; 128+N for a signal" {
  start_box e1
  run --separate-stderr $H exec e1 -- sh -c 'echo out; echo err >&2; exit 3'
  [ "$status" -eq 3 ]
  [ "$output" = out ]
  [ "$stderr" = err ]
  run $H exec e1 sh -c 'kill -9 $$'
  [ "$status" -eq 137 ]
  run $H exec e1 true
  [ "$status" -eq 0 ]
}

@test "exec: 127 for a command not found, 126 for one not executable, 125 only for hako" {
  start_box e2
  run -127 $H exec e2 no-such-command
  [[ "$output" == *"no-such-command"*"not found"* ]]
  run $H exec e2 /etc/passwd
  [ "$status" -eq 126 ]
  run $H exec e2 /etc
  [ "$status" -eq 126 ]
  run $H exec e2 sh -c 'exit 125'
  [ "$status" -eq 125 ]
  [ -z "$output" ]
}

@test "exec --json: exit 3, SIGKILL, not found and not executable" {
  start_box j
  run --separate-stderr $H exec --json j -- sh -c 'echo out; echo err >&2; exit 3'
  [ "$status" -eq 3 ]
  [ -z "$stderr" ]
  echo "$output" | jq -e '.exit_code == 3 and .signal == null and .reason == "exited"
    and .timed_out == false and .stdout == "out\n" and .stderr == "err\n"
    and .stdout_truncated == false and .stderr_truncated == false
    and (.duration_ms | type == "number")'
  [ "$(echo "$output" | wc -l)" -eq 1 ]
  run $H exec --json j -- sh -c 'kill -9 $$'
  [ "$status" -eq 137 ]
  echo "$output" | jq -e '.exit_code == 137 and .signal == 9 and .reason == "signaled" and .timed_out == false'
  run -127 $H exec --json j no-such-command
  echo "$output" | jq -e '.exit_code == 127 and .reason == "exited" and (.stderr == "" and .error.kind == "not_found" and (.error.message | test("not found")))'
  run $H exec --json j /etc/passwd
  [ "$status" -eq 126 ]
  echo "$output" | jq -e '.exit_code == 126 and .reason == "exited"'
}

@test "exec --json: bytes that are not UTF-8 and control characters keep the JSON valid" {
  start_box u8
  run $H exec --json u8 -- sh -c 'printf "caf\303\251 \377\376 \000\001\033[0m \"q\" \\\\ \342\200\250"'
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '.stdout == "café \ufffd\ufffd \u0000\u0001\u001b[0m \"q\" \\ \u2028"'
}

@test "exec --timeout: the command and every process it started die, nothing else" {
  start_box t
  pid=$(box_pid t)
  start=$(cut -d' ' -f22 "/proc/$pid/stat")
  run $H exec --json --timeout 1s t -- sh -c 'sleep 100 & setsid sleep 200 & sleep 300'
  [ "$status" -eq 124 ]
  echo "$output" | jq -e '.exit_code == 124 and .reason == "timeout" and .timed_out == true and .signal == 9'
  echo "$output" | jq -e '.duration_ms >= 1000'  # how soon after: timing.bats
  run box_procs t
  [[ "$output" != *"sleep 100 "* && "$output" != *"sleep 200 "* && "$output" != *"sleep 300 "* ]]
  # The sandbox's own process is untouched: same pid, same start time.
  [ "$(cut -d' ' -f22 "/proc/$pid/stat")" = "$start" ]
  [ "$($H state t | jq -r .status)" = running ]
  # The daemon's double fork escapes nothing either.
  run $H exec --timeout 500ms t -- sh -c 'sh -c "setsid sh -c \"sleep 201 & sleep 202\" &" ; sleep 301'
  [ "$status" -eq 124 ]
  run box_procs t
  [[ "$output" != *"sleep 20"* && "$output" != *"sleep 301"* ]]
}

@test "exec --timeout: a command that ends in time returns at once, leaving nothing behind" {
  start_box tq
  SECONDS=0
  run $H exec --json --timeout 30s tq -- sh -c 'sleep 401 & setsid sleep 402 & echo done'
  [ "$SECONDS" -lt 5 ]
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '.reason == "exited" and .timed_out == false and .stdout == "done\n"'
  run box_procs tq
  [[ "$output" != *"sleep 40"* ]]
}

@test "exec without a timeout: a background job keeps running after exec returns" {
  start_box bg
  SECONDS=0
  run $H exec bg -- sh -c 'sleep 501 </dev/null >/dev/null 2>&1 & setsid sleep 502 </dev/null >/dev/null 2>&1 & echo started'
  [ "$SECONDS" -lt 5 ]
  [ "$status" -eq 0 ]
  [ "$output" = started ]
  # Even when the job holds the captured pipes: exec returns when the command does.
  SECONDS=0
  run $H exec --json bg -- sh -c 'sleep 503 & echo started'
  [ "$SECONDS" -lt 5 ]
  echo "$output" | jq -e '.stdout == "started\n"'
  sleep 0.2
  run box_procs bg
  pid=$(box_pid bg)
  # Adopted by the sandbox's init, as any orphan in it.
  echo "$output" | grep -E "^[0-9]+ $pid sleep 501"
  echo "$output" | grep -E "^[0-9]+ $pid sleep 502"
  echo "$output" | grep -E "^[0-9]+ $pid sleep 503"
}

@test "exec --max-output: a 200 MB flood returns in seconds, exactly the cap, hako stays small" {
  start_box mo
  SECONDS=0
  run --separate-stderr $H exec --max-output 1000 mo -- sh -c 'yes | head -c 200000000'
  [ "$SECONDS" -lt 30 ]
  [ "$status" -eq 0 ]
  [ "${#output}" -eq 999 ] # bats drops the final newline: 1000 bytes of "y\n"
  [[ "$stderr" == *"stdout truncated after 1000 bytes"* ]]
  "$HAKO" --root "$STATE" --data-root "$DATA" exec --max-output 1000 mo -- sh -c 'yes | head -c 200000000' \
    > "$TEST_ROOT/out" 2>/dev/null
  [ "$(wc -c < "$TEST_ROOT/out")" -eq 1000 ]
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$TEST_ROOT/rss" "$HAKO" --root "$STATE" --data-root "$DATA" \
      exec --json --max-output 1000 mo -- sh -c 'yes | head -c 200000000; yes | head -c 5000000 >&2' \
      > "$TEST_ROOT/json"
    jq -e '(.stdout | length) == 1000 and .stdout_truncated == true
      and (.stderr | length) == 1000 and .stderr_truncated == true' "$TEST_ROOT/json"
    # Past the cap hako drops what it reads: a few MiB resident, where
    # keeping the flood would be 200 MB.
    peak_rss_below 16384 "$TEST_ROOT/rss"
  fi
  run $H exec --json --max-output 1000 mo -- echo short
  echo "$output" | jq -e '.stdout == "short\n" and .stdout_truncated == false'
}

@test "exec --user: by name from the sandbox's /etc/passwd and /etc/group, or by number" {
  start_box us
  run $H exec --user nobody us id
  [ "$status" -eq 0 ]
  [ "$output" = "uid=65534(nobody) gid=65534(nogroup)" ]
  run $H exec --user nobody:root us id
  [ "$output" = "uid=65534(nobody) gid=0(root)" ]
  run $H exec --user 1234:55 us -- sh -c 'id -u; id -g'
  [ "$(echo $output)" = "1234 55" ]
  run $H exec --user nobody us -- sh -c 'echo $HOME'
  [ "$output" = /nonexistent ]
  # The host has a "daemon" user; the busybox sandbox does not.
  run $H exec --user daemon us id
  [ "$status" -eq 125 ]
  [[ "$output" == *'user "daemon": no such user in the sandbox'* ]]
  run $H exec --user nobody:nosuch us id
  [ "$status" -eq 125 ]
}

@test "exec --user: /etc/passwd is read inside the sandbox's root, never through a symlink to the host" {
  b=$(new_bundle link)
  rm "$b/rootfs"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  # An absolute link: on the host it would reach $TEST_ROOT/hostpasswd.
  echo "evil:x:4242:4242::/:/bin/sh" > "$TEST_ROOT/hostpasswd"
  mkdir -p "$b/rootfs/$TEST_ROOT"
  echo "inside:x:4343:4343::/:/bin/sh" > "$b/rootfs/$TEST_ROOT/hostpasswd"
  ln -sf "$TEST_ROOT/hostpasswd" "$b/rootfs/etc/passwd"
  start_box link "$b"
  run $H exec --user evil link id -u
  [ "$status" -eq 125 ]
  run $H exec --user inside link id -u
  [ "$status" -eq 0 ]
  [ "$output" = 4343 ]
}

@test "exec into a stopped or a missing sandbox: 125 with a clear message (a created one takes it, as runc's)" {
  b=$(new_bundle st)
  set_args "$b" true
  $H run --bundle "$b" st
  run $H exec st true
  [ "$status" -eq 125 ]
  [[ "$output" == *"container not running"* ]]
  $H create --bundle "$b" cr
  run -0 $H exec cr true
  run $H exec nosuch true
  [ "$status" -eq 125 ]
  [[ "$output" == *"sandbox nosuch does not exist"* ]]
}

@test "exec: the same capabilities and no_new_privs as the sandbox's process" {
  start_box caps
  pid=$(box_pid caps)
  want=$(grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' "/proc/$pid/status")
  run $H exec caps grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status
  [ "$status" -eq 0 ]
  [ "$output" = "$want" ]
  [[ "$output" == *"NoNewPrivs:"*"1"* ]]
  # And its namespaces, all of them.
  run $H exec caps sh -c 'for n in mnt pid net ipc uts; do readlink /proc/self/ns/$n; done'
  for n in mnt pid net ipc uts; do
    [[ "$output" == *"$(readlink "/proc/$pid/ns/$n")"* ]]
  done
}

@test "exec: no host file descriptor reaches the command" {
  start_box fd
  exec 7</etc/hostname 8>"$TEST_ROOT/leak"
  run $H exec fd ls /proc/self/fd
  exec 7<&- 8>&-
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "exec --env and --cwd: set and override; a cwd must exist inside" {
  start_box env
  run $H exec --env FOO=bar --env PATH=/bin --cwd /etc env -- sh -c 'echo $FOO $PATH; pwd'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "bar /bin" ]
  [ "${lines[1]}" = /etc ]
  run $H exec --cwd /nonexistent env pwd
  [ "$status" -eq 125 ]
  run $H exec --cwd relative env pwd
  [ "$status" -eq 125 ]
  run $H exec --env NOEQUALS env true
  [ "$status" -eq 125 ]
}

@test "exec --detach --pid-file: returns at once, the file holds the command's host pid" {
  start_box det
  SECONDS=0
  $H exec --detach --pid-file "$TEST_ROOT/pid" det sleep 601 </dev/null >/dev/null 2>&1
  [ "$SECONDS" -lt 5 ]
  pid=$(cat "$TEST_ROOT/pid")
  [ "$(tr '\0' ' ' < "/proc/$pid/cmdline")" = "sleep 601 " ]
  [ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink "/proc/$(box_pid det)/ns/pid")" ]
  run -127 $H exec --detach det no-such-command
  # runc's detached exec (a --pid-file) has no timeout; a kept process
  # (procs.bats) has
  run $H exec --detach --pid-file "$TEST_ROOT/pid2" --timeout 1s det true
  [ "$status" -eq 125 ]
}

@test "exec: signals sent to hako reach the command" {
  start_box sig
  $H exec sig sleep 701 & runner=$!
  for i in $(seq 50); do box_procs sig | grep -q "sleep 701" && break; sleep 0.1; done
  kill -TERM $runner
  wait $runner || st=$?
  [ "$st" -eq 143 ]
}

@test "exec: the helper in the sandbox is not dumpable and shows no host paths (CVE-2019-5736 class)" {
  start_box hide
  $H exec --timeout 20s hide sleep 702 & runner=$!
  for i in $(seq 50); do box_procs hide | grep -q "sleep 702" && break; sleep 0.1; done
  cmd=$(box_procs hide | awk '/sleep 702 / { print $1 }')
  tree=$(tree_of "$cmd")
  run $H exec hide sh -c 'for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline; echo; readlink $p/exe; done'
  kill -TERM $runner
  wait $runner || true
  # With a cgroup of its own, the tree has no helper in the sandbox at all
  # (runtime/exec_tree.h); else its subreaper is there, hako-exec.
  if [ -n "$tree" ]; then
    [[ "$output" != *"hako-exec"* ]]
  else
    [[ "$output" == *"hako-exec"* ]]
  fi
  [[ "$output" != *"$STATE"* ]]
  [[ "$output" != *"$HAKO"* ]]
}

# The subreaper has hako's credentials and every capability in the
# sandbox's user namespace, outside the command's seccomp filter and
# Landlock domain.  Attack: root in a sandbox whose spec grants
# CAP_SYS_PTRACE and sets no Landlock reads its fds or memory, or
# attaches to it.  It must fail because the subreaper's memory is a fork of
# hako's, owned by the host's user namespace (a program it executed would
# own memory of the sandbox's namespace, and this would succeed:
# docs/benchmarks.md, "Why the subreaper stays a fork of hako").
@test "exec: the helper is out of reach of root in the sandbox even with CAP_SYS_PTRACE and no Landlock" {
  local b="$TEST_ROOT/bundle-ptrace"
  mkdir -p "$b"
  $H spec --profile host --bundle "$b" >/dev/null
  edit_config "$b" '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"]) | del(.sandbox.landlock)'
  $H run --detach --bundle "$b" pt
  $H exec --timeout 30s pt sleep 703 & runner=$!
  for i in $(seq 50); do box_procs pt | grep -q "sleep 703" && break; sleep 0.1; done
  run $H exec pt sh -c '
    grep CapEff /proc/self/status
    for p in /proc/[0-9]*; do
      case "$(tr "\0" " " < $p/cmdline)" in hako-exec*) ;; *) continue ;; esac
      echo "helper ${p#/proc/}"
      head -c 1 $p/environ > /dev/null 2>&1 && echo "read: environ"
      ls $p/fd > /dev/null 2>&1 && echo "read: fd"
      head -c 1 $p/mem > /dev/null 2>&1 && echo "read: mem"
    done'
  cmd=$(box_procs pt | awk '/sleep 703 / { print $1 }')
  tree=$(tree_of "$cmd")
  parent=$(awk '{ print $4 }' "/proc/$cmd/stat")
  kill -TERM $runner
  wait $runner || true
  echo "$output"
  # The probe ran with CAP_SYS_PTRACE (bit 19) and found the helper, or
  # (a tree with a cgroup of its own) no helper there is to find: the
  # command's parent is the hako exec client itself, outside the sandbox's
  # pid namespace.
  caps=$(echo "$output" | awk '/CapEff/ {print $2}')
  [ $(( 0x$caps >> 19 & 1 )) = 1 ]
  if [ -n "$tree" ]; then
    [[ "$output" != *"helper "* ]]
    [ "$parent" = "$runner" ]
  else
    [[ "$output" == *"helper "* ]]
  fi
  [[ "$output" != *"read: "* ]]
}

# Regression: a timed exec's subreaper and its joiner both report on one
# socket; the subreaper's message once overtook the joiner's and the exec
# failed with "the process entering sandbox ... died" (1 in ~15 under load).
# Four workers, timed and untimed execs side by side, for 4 s.
@test "exec: concurrent timed and untimed execs all succeed" {
  start_box conc
  local w until=$((SECONDS + 4))
  for w in 1 2 3 4; do
    (
      n=0
      while [ $SECONDS -lt $until ]; do
        if [ $((w % 2)) = 1 ]; then t="--timeout 20s"; else t=""; fi
        out=$($H exec $t conc echo "w$w" 2>&1) && [ "$out" = "w$w" ] || echo "worker $w: $out" >> "$TEST_ROOT/failed"
        n=$((n + 1))
      done
      echo $n >> "$TEST_ROOT/count"
    ) &
  done
  wait
  local total=$(($(paste -sd+ "$TEST_ROOT/count")))
  echo "execs: $total"
  [ "$total" -ge 8 ]
  [ ! -e "$TEST_ROOT/failed" ] || { cat "$TEST_ROOT/failed"; false; }
}

@test "exec: commands killed from inside while they start leave hako whole (they run in its memory)" {
  # Until its execve the command shares hako's memory (exec_enter.c): a
  # SIGKILL from the sandbox at any instruction must cost only that command.
  start_box storm
  $H exec --detach storm sh -c 'while :; do kill -9 -1 2>/dev/null; done'
  local i st bad=
  for i in $(seq 100); do
    st=0
    timeout 10 $H exec storm true 2>/dev/null || st=$?
    case $st in 0|137) ;; *) bad="$bad $st" ;; esac
  done
  $H kill storm KILL
  wait_status storm stopped
  [ -z "$bad" ]
}

@test "exec in the host profile and in a user namespace" {
  cd "$TEST_ROOT"
  $H run --detach hostbox -- sleep 1000
  run $H exec hostbox -- sh -c 'test -d /work && id -u'
  [ "$status" -eq 0 ]
  [ "$output" = 0 ]
  b=$(new_bundle userns)
  rm "$b/rootfs"
  cp -a "$BUNDLE_DIR/rootfs" "$b/rootfs"
  chown -R 100000:100000 "$b/rootfs"
  chmod 755 "$TEST_ROOT" "$b"
  edit_config "$b" '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .mounts |= map(select(.type != "cgroup")) | .mounts |= map(if .destination == "/sys" then {"destination": "/sys", "type": "bind", "source": "/sys", "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]} else . end)'
  start_box userns "$b"
  run $H exec --user nobody userns -- sh -c 'id -u; cat /proc/self/uid_map | tr -s " "'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 65534 ]
  [[ "${lines[1]}" == *"0 100000 65536"* ]]
  run $H exec --json --timeout 500ms userns -- sh -c 'setsid sleep 801 & sleep 802'
  echo "$output" | jq -e '.reason == "timeout"'
  run box_procs userns
  [[ "$output" != *"sleep 80"* ]]
}

@test "exec: --help, and usage errors exit 125" {
  run $H exec --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"Usage: hako exec"* ]]
  run $H exec
  [ "$status" -eq 125 ]
  run $H exec box
  [ "$status" -eq 125 ]
  run $H exec --timeout soon box true
  [ "$status" -eq 125 ]
  run $H exec --max-output lots box true
  [ "$status" -eq 125 ]
  run $H exec --tty --json box true
  [ "$status" -eq 125 ]
  [[ "$output" == *"--tty cannot be combined"* ]]
  run $H exec --preserve-fds 5000 box true
  [ "$status" -eq 125 ]
  [[ "$output" == *"expected a count of fds"* ]]
  run $H exec ../x true
  [ "$status" -eq 125 ]
  [[ "$output" == *"invalid sandbox id"* ]]
}

@test "exec: the sandbox's Landlock rules and seccomp filter hold for the command too" {
  mkdir -p "$TEST_ROOT/data-dir"
  b=$(new_bundle ll)
  edit_config "$b" '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"},
      {"destination": "/data", "type": "bind", "source": "'"$TEST_ROOT/data-dir"'", "options": ["rbind", "rw"]}]
    | .sandbox.landlock = {"read": ["/"], "exec": ["/"], "write": ["/tmp"]}
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"],
        "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]}'
  start_box ll "$b"
  run $H exec ll sh -c 'echo x > /data/new; echo y > /tmp/ok && echo tmp-ok; mkdir /tmp/d; grep ^Seccomp: /proc/self/status'
  [ "$status" -eq 0 ]
  [[ "$output" == *"/data/new: Permission denied"* ]]
  [[ "$output" == *"tmp-ok"* ]]
  [[ "$output" == *"Function not implemented"* ]]
  [[ "$output" == *"Seccomp:"*"2"* ]]
  [ ! -e "$TEST_ROOT/data-dir/new" ]
}

@test "exec into a paused sandbox: 125, container not running" {
  $HAKO pause --help >/dev/null 2>&1 || skip "this hako has no pause"
  start_box pz
  $H pause pz
  run $H exec pz true
  [ "$status" -eq 125 ]
  [[ "$output" == *"container not running (it is paused)"* ]]
  $H resume pz
  run $H exec pz true
  [ "$status" -eq 0 ]
}

@test "exec: the command is born in the sandbox's cgroups and cgroup namespace" {
  b=$(new_bundle cg)
  edit_config "$b" '.linux.namespaces += [{"type": "cgroup"}]'
  start_box cg "$b"
  pid=$(box_pid cg)
  $H exec --detach --pid-file "$TEST_ROOT/pid" cg sleep 901 </dev/null >/dev/null 2>&1
  cmd=$(cat "$TEST_ROOT/pid")
  [ "$(cat "/proc/$cmd/cgroup")" = "$(cat "/proc/$pid/cgroup")" ]
  [ "$(readlink "/proc/$cmd/ns/cgroup")" = "$(readlink "/proc/$pid/ns/cgroup")" ]
  run $H exec --timeout 5s cg grep -c ':/$' /proc/self/cgroup
  [ "$output" = "$(wc -l < "/proc/$pid/cgroup")" ]
}

@test "exec, put and get reach a sandbox whose process is not dumpable (an execute-only binary)" {
  # Such a process is out of ptrace's reach from its own user namespace, and
  # exec once joined its cgroup namespace through the pidfd, which asks for
  # that reach: every exec failed with EPERM.  Every sandbox's process is
  # like this between start and its execve, so an exec right after
  # `run --detach` failed too, now and then (seen in CI under load).
  chmod 755 "$TEST_ROOT"
  cp /bin/sleep "$TEST_ROOT/xsleep"
  chmod 111 "$TEST_ROOT/xsleep"
  $H run --detach -v "$TEST_ROOT:/opt/x" nodump -- /opt/x/xsleep 1000
  pid=$(box_pid nodump)
  # Not dumpable: its /proc files are the host root's, not its own uid's.
  [ "$(stat -c %u "/proc/$pid/status")" = 0 ]
  [ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")" != 0 ]
  [ "$(readlink "/proc/$pid/ns/cgroup")" != "$(readlink /proc/self/ns/cgroup)" ]
  run $H exec nodump -- sh -c 'echo in; grep -c ":/$" /proc/self/cgroup'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = in ]
  [ "${lines[1]}" = "$(wc -l < "/proc/$pid/cgroup")" ]
  echo data | $H put nodump /tmp/f
  run $H get nodump /tmp/f
  [ "$status" -eq 0 ]
  [ "$output" = data ]
}

@test "exec: a command running in hako's memory allocates nothing (hk_no_alloc aborts an allocation there)" {
  [ "$(uname -m)" = x86_64 ] || skip "the shared-memory clone3 trampoline is x86_64 only"
  start_box noalloc
  # --detach: no subreaper, so the command runs in hako's memory until its
  # execve (runtime/exec/exec_enter.c clone_running), with the guard set.
  run $H exec --detach noalloc true
  [ "$status" -eq 0 ]
  # The test hook allocates once in the command before its setup: the
  # guard aborts it, saying so on the caller's stderr (a detached exec
  # has returned by then, so its status does not tell).
  run env HAKO_TEST_ALLOC_IN_COMMAND=1 $H exec --detach noalloc true
  if [ -n "${HAKO_EXEC_FORKS:-}" ]; then
    # The ASan build forks the command (SHARE_MEMORY 0): it may allocate.
    # The UBSan-only build does not (tests/run.sh's shared-memory slice).
    [[ "$output" != *"hk_no_alloc"* ]]
  else
    [[ "$output" == *"hk_no_alloc"* ]]
  fi
}

@test "exec: an attached command's tree has a cgroup of its own below the sandbox's; ps lists it; it goes with the exec, or with the sandbox" {
  b=$(new_bundle tr)
  edit_config "$b" '.linux.namespaces |= (map(select(.type != "cgroup")) + [{"type": "cgroup"}])'
  start_box tr "$b"
  pid=$(box_pid tr)
  v2=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
  [ -n "$v2" ] || skip "no cgroup2 hierarchy: a subreaper holds the tree"
  dir=$(stat -f -c %T /sys/fs/cgroup/unified > /dev/null 2>&1 && echo /sys/fs/cgroup/unified || echo /sys/fs/cgroup)$v2
  # Seen from inside, the tree's cgroup is the root of a namespace of its own.
  run $H exec tr sh -c 'cat /proc/self/cgroup'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx '0::/'
  $H exec tr sh -c 'echo ready; sleep 1601' > "$TEST_ROOT/out" 2>&1 & runner=$!
  for i in $(seq 100); do box_procs tr | grep -q "sleep 1601 " && break; sleep 0.1; done
  cmd=$(box_procs tr | awk '/sleep 1601 / { print $1 }')
  tree=$(tree_of "$cmd")
  [ -n "$tree" ]
  [ -d "$dir/$tree" ]
  # hako ps counts the tree's processes as the sandbox's.
  $H ps --format json tr | jq -e --argjson c "$cmd" 'index($c) != null'
  kill -TERM $runner
  wait $runner || true
  # The exec over, its cgroup is gone.
  wait_for 10 test ! -d "$dir/$tree"
  # An untimed command's background job keeps its cgroup while it runs; the
  # sandbox's delete takes both.
  $H exec tr sh -c 'setsid sleep 1602 > /dev/null 2>&1 < /dev/null &'
  job=$(box_procs tr | awk '/sleep 1602 / { print $1 }')
  left=$(tree_of "$job")
  [ -n "$left" ]
  [ -d "$dir/$left" ]
  $H delete --force tr
  [ ! -d "$dir" ]
  pid_gone "$job"
}
