#!/usr/bin/env bats
# What runc v1.1.5's own integration suite (tests/conformance/runc-bats.sh,
# docs/conformance.md) needs of hako, each tested here without the suite.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "runc_compat: spec --profile runc writes runc spec's default config, which runs" {
  mkdir "$TEST_ROOT/rs"
  run -0 $H spec --profile runc --bundle "$TEST_ROOT/rs"
  c=$TEST_ROOT/rs/config.json
  [ "$(jq -r .process.terminal "$c")" = true ]
  [ "$(jq -r .hostname "$c")" = runc ]
  [ "$(jq -r '[.linux.namespaces[].type] | join(",")' "$c")" = pid,network,ipc,uts,mount ]
  [ "$(jq -r '.linux.uidMappings // "none"' "$c")" = none ]
  [ "$(jq -r '.process.capabilities.ambient | length' "$c")" = 3 ]
  [ "$(jq -c .linux.resources "$c")" = '{"devices":[{"allow":false,"access":"rwm"}]}' ]
  [ "$(jq -r '.sandbox // "none"' "$c")" = none ]
  # It runs as it is, with the busybox rootfs and no terminal asked for.
  ln -s "$BUNDLE_DIR/rootfs" "$TEST_ROOT/rs/rootfs"
  edit_config "$TEST_ROOT/rs" '.process.terminal = false | .process.args = ["hostname"]'
  run -0 $H run --bundle "$TEST_ROOT/rs" rs
  [ "$output" = runc ]
  $H delete --force rs
  # runc spec --rootless's is not written: refused, nothing written.
  mkdir "$TEST_ROOT/rl"
  run -125 $H spec --profile runc --rootless --bundle "$TEST_ROOT/rl"
  [[ "$output" == *"runc profile"*"--rootless"* ]]
  [ ! -e "$TEST_ROOT/rl/config.json" ]
}

@test "runc_compat: exec has a terminal only with -t, not from process.terminal; exec -d needs no console socket" {
  b=$(new_bundle et)
  set_args "$b" sleep 100
  edit_config "$b" '.process.terminal = true'
  recv=$TEST_ROOT/recv.sock
  # The sandbox's own process has its terminal through a console socket.
  python3 -c '
import socket, sys, array
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.recvmsg(1024, 64)' "$recv" & lst=$!
  for i in $(seq 50); do [ -S "$recv" ] && break; sleep 0.1; done
  $H run -d --console-socket "$recv" --bundle "$b" et
  wait $lst
  run -0 $H exec et sh -c 'test -t 1 || echo notty'
  [ "$output" = notty ]   # no "\r": not a terminal
  run -0 $H exec -d et sleep 1
  $H delete --force et
}

@test "runc_compat: exec into a created sandbox runs the command; its process still waits for start" {
  b=$(new_bundle ec)
  set_args "$b" sh -c 'echo started > /tmp/started; sleep 100'
  edit_config "$b" '.root.readonly = false | .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
  $H create --bundle "$b" ec
  run -0 $H exec ec sh -c 'echo in-created; test -e /tmp/started || echo not-started'
  [ "$output" = "in-created
not-started" ]
  [ "$($H state ec | jq -r .status)" = created ]
  $H start ec
  wait_status ec running
  $H delete --force ec
}

@test "runc_compat: kill ID 0 checks the process; kill --all of a stopped sandbox succeeds" {
  b=$(new_bundle k0)
  set_args "$b" sleep 100
  $H run -d --bundle "$b" k0
  run -0 $H kill k0 0
  $H kill k0 KILL
  wait_status k0 stopped
  run -125 $H kill k0 0
  [[ "$output" == *"not running"* ]]
  run -0 $H kill --all k0 0
  run -0 $H kill -a k0 KILL
  run -125 $H kill k0 -1
  $H delete k0
}

@test "runc_compat: a cwd only root may enter is entered before the user switch, as runc's (run and exec)" {
  b=$(new_bundle cw)
  set_args "$b" sh -c 'pwd; id -u; sleep 100'
  # /secret: root's, 0700; the process is user 42 with no DAC capability.
  edit_config "$b" '.process.user = {"uid": 42, "gid": 42} | .process.cwd = "/secret"
    | .mounts += [{"destination": "/secret", "type": "tmpfs", "source": "tmpfs", "options": ["mode=700"]}]'
  $H run -d --bundle "$b" cw
  run -0 $H exec cw pwd
  [ "$output" = /secret ]
  run -0 $H exec --user 42 --cwd /secret cw sh -c 'pwd; ls . >/dev/null 2>&1 || echo cannot-list'
  [ "$output" = "/secret
cannot-list" ]
  # A cwd that does not exist still fails.
  run -125 $H exec --cwd /nonexistent cw true
  [[ "$output" == *"cwd /nonexistent"* ]]
  $H delete --force cw
}

@test "runc_compat: ps ID PS-ARGS prints ps(1)'s lines of the sandbox's pids; ps of a stopped sandbox is empty" {
  command -v ps >/dev/null || skip "no ps(1) on this host"
  b=$(new_bundle ps)
  set_args "$b" sleep 100
  $H run -d --bundle "$b" ps
  pid=$($H state ps | jq -r .pid)
  run -0 $H ps ps
  [[ "${lines[0]}" =~ UID\ +PID\ +PPID\ +C\ +STIME\ +TTY\ +TIME\ +CMD ]]
  [ "${#lines[@]}" -eq 2 ]
  [[ "${lines[1]}" == *" $pid "*"sleep 100"* ]]
  run -0 $H ps ps -o pid,comm
  [ "${#lines[@]}" -eq 2 ]
  [ "$(echo ${lines[1]})" = "$pid sleep" ]
  run -125 $H ps ps -o comm
  [[ "$output" == *"no PID column"* ]]
  $H kill ps KILL
  wait_status ps stopped
  run -0 $H ps --format json ps
  [ "$output" = "[]" ]
  run -0 $H ps ps
  [ "${#lines[@]}" -eq 1 ]
  $H delete ps
}

@test "runc_compat: seccomp with an errno default: a syscall newer than every rule names is ENOSYS, one it names but denies stays EPERM" {
  command -v gcc >/dev/null || skip "no gcc to build the probe"
  cat > "$TEST_ROOT/probe.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
int main (void)
{
  long a = syscall (1000, 0, 0, 0);
  int ea = errno;
  long b = syscall (SYS_getpid); /* named, allowed */
  errno = 0;
  long c = syscall (SYS_mkdir, "/x", 0);
  int ec = errno;
  printf ("%ld %d %ld %ld %d\n", a, ea, b > 0 ? 1L : 0L, c, ec);
  return 0;
}
C
  gcc -static -o "$TEST_ROOT/probe" "$TEST_ROOT/probe.c" || skip "no static libc to build the probe"
  b=$(new_bundle sc)
  set_args "$b" /probe
  # mkdir is named with an errno action; 1000 is above everything named.
  edit_config "$b" '.mounts += [{"destination": "/probe", "type": "bind", "source": "'"$TEST_ROOT/probe"'", "options": ["bind", "ro"]}]
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [{"action": "SCMP_ACT_ALLOW", "names": ["execve", "brk", "arch_prctl", "set_tid_address",
           "set_robust_list", "rseq", "prlimit64", "readlinkat", "uname", "mprotect", "getpid", "newfstatat",
           "fstat", "write", "exit_group", "exit", "mmap", "munmap", "getrandom", "readlink", "futex", "capget",
           "capset", "prctl", "close", "fcntl", "setgroups", "setresuid", "setresgid", "getdents64", "openat",
           "chdir", "getcwd", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "seccomp"]},
          {"action": "SCMP_ACT_ERRNO", "names": ["mkdir"], "errnoRet": 1}]}'
  [ "$(uname -m)" = x86_64 ] || skip "the stub is x86_64's"
  run -0 $H run --bundle "$b" sc
  # 38 is ENOSYS, 1 EPERM.
  [ "$output" = "-1 38 1 -1 1" ]
  $H delete sc
}

@test "runc_compat: unified resources on a v1 host: 'invalid configuration', the words runc's clients match" {
  [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && skip "a cgroup v2 host takes unified keys"
  b=$(new_bundle un)
  edit_config "$b" '.linux.resources.unified = {"memory.min": "131072"}'
  run -125 $H create --bundle "$b" un
  [[ "$output" == *"invalid configuration"*"memory.min"*"cgroup v2"* || "$output" == *"memory.min"*"invalid configuration"*"cgroup v2"* ]]
  [ ! -e "$STATE/un" ]
}

@test "runc_compat: the sandbox's terminal is owned by its process's user, group devpts's gid=5" {
  command -v script >/dev/null || skip "no script(1) for a terminal"
  b=$(new_bundle to)
  edit_config "$b" '.process.terminal = true | .process.user = {"uid": 1000, "gid": 100}'
  set_args "$b" sh -c 'stat -c %u:%g $(tty)'
  run script -qec "$H run --bundle $b to" /dev/null </dev/null
  [[ "$output" == *"1000:5"* ]]
  $H delete --force to
}

@test "runc_compat: a read-only /dev tmpfs gets its /dev/pts and /dev/shm first, then is read-only" {
  b=$(new_bundle rd)
  edit_config "$b" '.mounts |= map((select(.destination == "/dev") | .options += ["ro"]) // .)'
  set_args "$b" sh -c 'grep "^tmpfs /dev " /proc/mounts; test -e /dev/pts/ptmx && echo pts; touch /dev/x 2>/dev/null || echo ro'
  run -0 $H run --bundle "$b" rd
  [[ "${lines[0]}" == "tmpfs /dev tmpfs ro,"* ]]
  [ "${lines[1]}" = pts ]
  [ "${lines[2]}" = ro ]
  $H delete rd
}

@test "runc_compat: a cgroup mount on a host with v1 hierarchies shows the sandbox's directory of each, read-only" {
  [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && skip "a unified host: the cgroup2 directory alone (cgroups.bats)"
  b=$(new_bundle cv)
  edit_config "$b" '.linux.resources.pids = {"limit": 77}'
  run -0 $H run --rm --bundle "$b" cv -- sh -c 'cat /sys/fs/cgroup/pids/pids.max; cat /sys/fs/cgroup/memory/tasks | wc -l; grep " /sys/fs/cgroup" /proc/mounts'
  [ "${lines[0]}" = 77 ]   # the sandbox's own limit: its directory, not the host's root
  [ "${lines[1]}" -ge 1 ]
  mounts=$(printf '%s\n' "${lines[@]:2}")
  [[ "$mounts" == *" /sys/fs/cgroup/pids cgroup "* && "$mounts" == *" /sys/fs/cgroup/memory cgroup "* ]]
  while read -r _ _ _ opts _; do [[ "$opts" == ro,* ]]; done <<< "$mounts"
  # The attack: the sandbox's root raising its own limit, or making a cgroup
  # of its own to move into, through the mount.  Asked for writable (runc's
  # tests drop "ro"), it is still read-only.
  edit_config "$b" '(.mounts[] | select(.type == "cgroup") | .options) |= map(select(. != "ro"))'
  run -1 $H run --rm --bundle "$b" cv -- sh -c 'echo max > /sys/fs/cgroup/pids/pids.max || mkdir /sys/fs/cgroup/pids/mine || exit 1'
  [[ "$output" == *"Read-only file system"* ]]
}

@test "runc_compat: a startContainer hook runs under the sandbox's seccomp filter (run, and create + start)" {
  b=$(new_bundle sh)
  set_args "$b" /bin/true
  edit_config "$b" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"], "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_KILL"}]}
    | .hooks = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "mkdir /dev/shm/hooked"]}]}'
  run -125 $H run --rm --bundle "$b" sh
  [[ "$output" == *"error running hook: startContainer hook /bin/sh: killed by signal 31 (SIGSYS: bad system call)"* ]]
  $H delete --force sh 2>/dev/null || true
  $H create --bundle "$b" sh
  run -125 $H start sh
  [[ "$output" == *"error running hook: startContainer hook"*"bad system call"* ]]
  [ "$($H state sh | jq -r .status)" = stopped ]   # its process, which ran nothing, was killed
  $H delete --force sh
  # Without the filter's rule the same hook runs, in the sandbox.
  edit_config "$b" '.linux.seccomp.syscalls = []'
  run -0 $H run --rm --bundle "$b" sh
}

@test "runc_compat: update --memory -1 after a finite --memory-swap lifts both on v1 (memsw first), as runc's update" {
  [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] && skip "cgroup v2: memory.max and memory.swap.max are apart"
  d=/sys/fs/cgroup/memory/$(cgroup_parent)/um
  b=$(new_bundle um)
  set_args "$b" sleep 100
  edit_config "$b" '.linux.resources.memory = {"limit": 33554432}'
  $H run -d --bundle "$b" um
  [ -e "$d/memory.memsw.limit_in_bytes" ] || { $H delete --force um; skip "swap accounting is off (swapaccount=1)"; }
  unlimited=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
  run -0 $H update um --memory-swap 96468992
  [ "$(cat "$d/memory.memsw.limit_in_bytes")" = 96468992 ]
  run -0 $H update um --memory -1
  [ "$(cat "$d/memory.limit_in_bytes")" = "$unlimited" ]
  [ "$(cat "$d/memory.memsw.limit_in_bytes")" = "$unlimited" ]
  # Lowering both again: the limit first, then memory+swap.
  run -0 $H update um --memory 33554432 --memory-swap 67108864
  [ "$(cat "$d/memory.limit_in_bytes")" = 33554432 ]
  [ "$(cat "$d/memory.memsw.limit_in_bytes")" = 67108864 ]
  $H delete --force um
}

@test "runc_compat: update -r takes runc's capitalised keys ({\"PIDS\": {\"Limit\": N}}), refuses two spellings of one field" {
  if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then d=/sys/fs/cgroup/$(cgroup_parent)/uk
  else d=/sys/fs/cgroup/pids/$(cgroup_parent)/uk; fi
  b=$(new_bundle uk)
  set_args "$b" sleep 100
  edit_config "$b" '.linux.resources.pids = {"limit": 50}'
  $H run -d --bundle "$b" uk
  # runc's Go decoder matches field names ignoring case; so does update -r.
  run -0 $H update -r - uk <<< '{"PIDS": {"Limit": 77}}'
  [ "$(cat "$d/pids.max")" = 77 ]
  run -0 $H update -r - uk <<< '{"pids": {"limit": 78}}'
  [ "$(cat "$d/pids.max")" = 78 ]
  # Two spellings of one field: which one wins would be a guess.
  run -125 $H update -r - uk <<< '{"pids": {"limit": 79}, "Pids": {"limit": 80}}'
  [[ "$output" == *'"pids" and "Pids" name the same field'* ]]
  [ "$(cat "$d/pids.max")" = 78 ]
  $H delete --force uk
}
