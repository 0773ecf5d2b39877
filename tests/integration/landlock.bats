#!/usr/bin/env bats
# Landlock, attacked from inside: each test is a thing untrusted code tries
# that the sandbox.landlock rules must stop, with a control that shows the
# attempt would have worked without them.  Network tests use 127.0.0.1 only.

load helpers

# A static probe, mounted read-only at /tools: one precise syscall, and the
# errno name it got ("ok" on success), so a test tells Landlock's EACCES or
# EPERM apart from a connection refused or a missing file.
probe_source='
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int report (int r)
{
  printf ("%s\n", r == 0 ? "ok" : strerrorname_np (errno));
  return r == 0 ? 0 : 1;
}

int main (int argc, char **argv)
{
  if (argc != 3)
    return 2;
  const char *op = argv[1];
  if (strcmp (op, "kill") == 0)
    return report (kill (atoi (argv[2]), 0));
  if (strcmp (op, "truncate") == 0)
    return report (truncate (argv[2], 0));
  if (strncmp (op, "abstract-", 9) == 0)
    {
      struct sockaddr_un a = { .sun_family = AF_UNIX };
      snprintf (a.sun_path + 1, sizeof a.sun_path - 1, "%s", argv[2]);
      socklen_t len = offsetof (struct sockaddr_un, sun_path) + 1 + strlen (argv[2]);
      int s = socket (AF_UNIX, SOCK_STREAM, 0);
      if (strcmp (op, "abstract-connect") == 0)
        return report (connect (s, (struct sockaddr *) &a, len));
      if (bind (s, (struct sockaddr *) &a, len) < 0 || listen (s, 8) < 0)
        return report (-1);
      printf ("listening\n");
      fflush (stdout);
      for (;;)
        close (accept (s, NULL, NULL));
    }
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (atoi (argv[2])),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int s = socket (AF_INET, SOCK_STREAM, 0);
  setsockopt (s, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof (int));
  if (strcmp (op, "connect") == 0)
    return report (connect (s, (struct sockaddr *) &a, sizeof a));
  if (strcmp (op, "bind") == 0)
    return report (bind (s, (struct sockaddr *) &a, sizeof a));
  if (bind (s, (struct sockaddr *) &a, sizeof a) < 0 || listen (s, 8) < 0)
    return report (-1);
  printf ("listening\n");
  fflush (stdout);
  for (;;)
    close (accept (s, NULL, NULL));
}
'

setup_file () {
  hako_setup_file
  export TOOLS="$BATS_FILE_TMPDIR/tools"
  mkdir -p "$TOOLS"
  printf '%s' "$probe_source" > "$TOOLS/probe.c"
  gcc -static -O1 -o "$TOOLS/probe" "$TOOLS/probe.c"
}
setup () {
  hako_setup
  BG_PIDS=""
}
teardown () {
  local p
  for p in $BG_PIDS; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  hako_teardown
}

# ll_bundle NAME LANDLOCK-JSON [SCRIPT]: a busybox bundle with a tmpfs /tmp,
# the probe at /tools and the given sandbox.landlock; SCRIPT runs under sh -c.
ll_bundle () {
  local b
  b=$(new_bundle "$1")
  edit_config "$b" ".mounts += [{\"destination\": \"/tmp\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},
      {\"destination\": \"/tools\", \"type\": \"bind\", \"source\": \"$TOOLS\", \"options\": [\"rbind\", \"ro\"]}]
    | .sandbox.landlock = $2"
  # set_args takes one argument a line: the script becomes one line.
  [ -z "${3:-}" ] || set_args "$b" sh -c "${3//$'\n'/;}"
  echo "$b"
}

# The explicit rules of most tests: the whole root readable and runnable,
# only /tmp writable.
ROOT_RX_TMP_W='{"read": ["/"], "exec": ["/"], "write": ["/tmp"]}'

# host_data: a host directory the sandbox gets as a read-write bind at /data.
host_data () {
  mkdir -p "$TEST_ROOT/data-dir"
  echo original > "$TEST_ROOT/data-dir/file"
  echo '| .mounts += [{"destination": "/data", "type": "bind", "source": "'"$TEST_ROOT/data-dir"'", "options": ["rbind", "rw"]}]'
}

@test "landlock: a write under a read-write bind the rules do not grant fails with EACCES, though root inside" {
  b=$(ll_bundle wbind "$ROOT_RX_TMP_W" 'id -u; echo x > /data/new; echo y > /tmp/ok && echo tmp-ok')
  edit_config "$b" ". $(host_data)"
  run $H run --rm --bundle "$b" wbind
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [[ "$output" == *"/data/new: Permission denied"* ]]
  [[ "$output" == *"tmp-ok"* ]]
  [ ! -e "$TEST_ROOT/data-dir/new" ]
  # Control: without Landlock the same bind is writable.
  edit_config "$b" 'del(.sandbox.landlock)'
  run $H run --rm --bundle "$b" wbind2
  [ -e "$TEST_ROOT/data-dir/new" ]
}

@test "landlock: a path granted read only cannot be modified in any way, though its mount is read-write" {
  script='cd /data
    cat file
    echo x >> file; echo append=$?
    /tools/probe truncate file; echo truncate=$?
    rm file; echo unlink=$?
    mkdir d; echo mkdir=$?
    ln -s file l; echo symlink=$?
    ln file h; echo link=$?
    mkfifo f; echo mkfifo=$?
    mv file /tmp/stolen; echo rename-out=$?
    cp file /tmp/copy && echo copy-to-tmp-ok'
  b=$(ll_bundle ronly '{"read": ["/"], "exec": ["/"], "write": ["/tmp"]}' "$script")
  edit_config "$b" ". $(host_data)"
  run $H run --rm --bundle "$b" ronly
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = original ]
  for op in append truncate unlink mkdir symlink link mkfifo rename-out; do
    [[ "$output" == *"$op=1"* ]] || { echo "$op was not refused"; return 1; }
  done
  [[ "$output" == *"copy-to-tmp-ok"* ]]
  [ "$(cat "$TEST_ROOT/data-dir/file")" = original ]
  [ "$(ls "$TEST_ROOT/data-dir")" = file ]
}

@test "landlock: a program written to a writable directory cannot be executed there" {
  b=$(ll_bundle noexec '{"read": ["/"], "exec": ["/bin", "/tools"], "write": ["/tmp"]}' \
        'cp /bin/busybox /tmp/bb && /tmp/bb true; echo tmp-exec=$?; /bin/busybox true; echo bin-exec=$?')
  run $H run --rm --bundle "$b" noexec
  [ "$status" -eq 0 ]
  [[ "$output" == *"tmp-exec=126"* ]]
  [[ "$output" == *"bin-exec=0"* ]]
}

@test "landlock: a TCP connect to a port not granted fails with EACCES (loopback only)" {
  b=$(ll_bundle tcpc '{"tcp_connect": [4443]}' \
        ': > /tmp/l; /tools/probe listen 18080 > /tmp/l & for i in $(seq 600); do grep -q listening /tmp/l && break; sleep 0.05; done; cat /tmp/l; /tools/probe connect 18080; /tools/probe connect 4443; true')
  run $H run --rm --bundle "$b" tcpc
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = listening ]
  [ "${lines[1]}" = EACCES ]       # a listener is there: only Landlock says no
  [ "${lines[2]}" = ECONNREFUSED ] # granted: reaches the (empty) port
  # Control: without the rule the same connect succeeds.
  edit_config "$b" 'del(.sandbox.landlock)'
  run $H run --rm --bundle "$b" tcpc2
  [ "${lines[1]}" = ok ]
}

@test "landlock: binding a TCP port not granted fails with EACCES (loopback only)" {
  b=$(ll_bundle tcpb '{"tcp_bind": [18081]}' '/tools/probe bind 18081; /tools/probe bind 18082; true')
  run $H run --rm --bundle "$b" tcpb
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = ok ]
  [ "${lines[1]}" = EACCES ]
}

@test "landlock scoped: a signal to a process outside the sandbox fails with EPERM" {
  sleep 1000 & victim=$!
  BG_PIDS="$victim"
  # No pid namespace: the host's processes are visible, and root inside has
  # CAP_KILL, so only the Landlock scope stands in the way.
  b=$(ll_bundle sig '{"scoped": true}' "/tools/probe kill $victim; sh -c 'sleep 5' & /tools/probe kill \$!; kill \$!")
  edit_config "$b" '.linux.namespaces |= map(select(.type != "pid"))'
  run $H run --rm --bundle "$b" sig
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EPERM ]
  [ "${lines[1]}" = ok ]  # its own processes it may signal
  kill -0 "$victim"
  edit_config "$b" '.sandbox.landlock.scoped = false'
  run $H run --rm --bundle "$b" sig2
  [ "${lines[0]}" = ok ]
}

@test "landlock scoped: an abstract unix socket created outside cannot be connected to" {
  name="hako-ll-$$-$RANDOM"
  # The file exists before the first look: the background job opens it only
  # once it runs, and a grep before that would print "No such file".
  : > "$TEST_ROOT/listener"
  "$TOOLS/probe" abstract-listen "$name" > "$TEST_ROOT/listener" & BG_PIDS=$!
  for i in $(seq 50); do grep -q listening "$TEST_ROOT/listener" && break; sleep 0.1; done
  # The host's network namespace, so the host's abstract socket namespace.
  b=$(ll_bundle abs '{"scoped": true}' \
        "/tools/probe abstract-connect $name; : > /tmp/l; /tools/probe abstract-listen in-$name > /tmp/l & for i in \$(seq 600); do grep -q listening /tmp/l && break; sleep 0.05; done; cat /tmp/l; /tools/probe abstract-connect in-$name")
  edit_config "$b" '.sandbox.network.mode = "host"'
  run $H run --rm --bundle "$b" abs
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EPERM ]
  [ "${lines[1]}" = listening ]
  [ "${lines[2]}" = ok ]  # a socket of its own it may use
  edit_config "$b" '.sandbox.landlock.scoped = false'
  run $H run --rm --bundle "$b" abs2
  [ "${lines[0]}" = ok ]
}

@test "landlock derive: read-only mounts get read and execute, read-write mounts write, nothing else" {
  b=$(new_bundle derive)
  rm -f "$b/config.json"
  $HAKO spec --bundle "$b"
  mkdir -p "$TEST_ROOT/ro-dir"
  echo ro > "$TEST_ROOT/ro-dir/file"
  edit_config "$b" ".process.args = [\"sh\", \"-c\", \"cat /ro/file; echo x > /ro/x; echo ro=\$?; echo y > /data/y; echo data=\$?; echo z > /dev/shm/z; echo shm=\$?; echo n > /dev/null; echo null=\$?; grep NoNewPrivs /proc/self/status\"]
    | .mounts += [{\"destination\": \"/ro\", \"type\": \"bind\", \"source\": \"$TEST_ROOT/ro-dir\", \"options\": [\"rbind\", \"ro\"]}]
    $(host_data)"
  [ "$(jq -c .sandbox.landlock "$b/config.json")" = '{"derive":true,"scoped":true,"required":true}' ]
  # The profile's root is host uid 1000000000 (binds are not idmapped): the
  # read-write directory must be its, as for any bind a user namespace writes.
  chown -R 1000000000:1000000000 "$TEST_ROOT/data-dir"
  run $H run --rm --bundle "$b" derive
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = ro ]
  [[ "$output" == *"ro=1"* ]]
  [[ "$output" == *"data=0"* ]]
  [[ "$output" == *"shm=0"* ]]
  [[ "$output" == *"null=0"* ]]
  [[ "$output" == *"NoNewPrivs:"*"1"* ]]
  [ "$(cat "$TEST_ROOT/data-dir/y")" = y ]
}

@test "landlock derive: even with CAP_SYS_ADMIN, a read-only mount cannot be remounted read-write and written" {
  mkdir -p "$TEST_ROOT/ro-dir"
  b=$(ll_bundle remount '{"derive": true}' \
        'mount -o remount,bind,rw /ro && echo remounted; echo x > /ro/x && echo wrote; echo end')
  # CAP_SYS_ADMIN and no seccomp filter: only Landlock, which refuses every
  # mount change to a process it confines, stands in the way.
  edit_config "$b" '.mounts += [{"destination": "/ro", "type": "bind", "source": "'"$TEST_ROOT/ro-dir"'", "options": ["rbind", "ro"]}]
    | .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
  run $H run --rm --bundle "$b" remount
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = end ]  # it ran, and tried both
  [[ "$output" != *"remounted"* ]]
  [[ "$output" != *"wrote"* ]]
  [ ! -e "$TEST_ROOT/ro-dir/x" ]
  # Control: without Landlock the same process remounts and writes.
  edit_config "$b" 'del(.sandbox.landlock)'
  run $H run --rm --bundle "$b" remount2
  [[ "$output" == *"remounted"* ]]
  [ -e "$TEST_ROOT/ro-dir/x" ]
}

@test "landlock derive, host profile: /work and /tmp writable, /usr read and execute, /proc not writable" {
  cd "$TEST_ROOT"
  run $H run --rm hostll -- sh -c '
    echo w > /work/f && echo work-ok
    echo t > /tmp/f && echo tmp-ok
    /usr/bin/env true && echo usr-exec-ok
    cp /usr/bin/true /tmp/t && /tmp/t && echo tmp-exec-ok
    echo 500 > /proc/self/oom_score_adj || echo proc-refused
    echo e >&2'
  [ "$status" -eq 0 ]
  for w in work-ok tmp-ok usr-exec-ok tmp-exec-ok proc-refused; do
    [[ "$output" == *"$w"* ]] || { echo "missing $w"; return 1; }
  done
  [[ "$output" == *"oom_score_adj: Permission denied"* ]]
}

@test "landlock: a listed path that does not exist fails create, naming it, and leaves nothing behind" {
  b=$(ll_bundle missing '{"read": ["/", "/no/such/dir"]}')
  run $H run --rm --bundle "$b" missing
  [ "$status" -eq 125 ]
  [[ "$output" == *"sandbox.landlock.read: /no/such/dir: No such file or directory"* ]]
  [ ! -e "$STATE/missing" ]
}

@test "landlock implies no_new_privs, whatever process.noNewPrivileges says" {
  b=$(ll_bundle nnp "$ROOT_RX_TMP_W" 'grep NoNewPrivs /proc/self/status')
  edit_config "$b" '.process.noNewPrivileges = false'
  run $H run --rm --bundle "$b" nnp
  [ "$status" -eq 0 ]
  [[ "$output" == *"NoNewPrivs:"*"1"* ]]
}
