#!/usr/bin/env bats
# Rootless: an ordinary user, made for these tests and removed after them,
# runs sandboxes with no privileges of its own — a single-id map written by
# hako, wider maps through newuidmap/newgidmap and /etc/subuid, state under
# $XDG_RUNTIME_DIR/hako, no cgroups unless one is delegated.

load helpers
bats_require_minimum_version 1.5.0

RL_USER=hakorl
RL_SUB_BASE=200000000   # the user's /etc/subuid and /etc/subgid range
RL_SUB_SIZE=65536

# Live processes of the test user, by pid (none may outlive a test).  A
# zombie is not counted: on hosts whose pid 1 does not reap, a killed
# sandbox process lingers as one.
rl_pids () {
  ps -o pid=,stat= -u "$RL_USER" 2>/dev/null | awk '$2 !~ /^Z/ {print $1}'
}

rl_remove_user () {
  local p
  for p in $(rl_pids); do kill -9 "$p" 2>/dev/null || true; done
  if id "$RL_USER" >/dev/null 2>&1; then userdel -f "$RL_USER" >/dev/null 2>&1 || true; fi
  # userdel drops the user's subordinate ranges; make sure, whatever it did.
  sed -i "/^$RL_USER:/d" /etc/subuid /etc/subgid 2>/dev/null || true
}

setup_file () {
  hako_setup_file
  rl_remove_user   # a run killed before its teardown_file
  useradd -M -d /nonexistent -s /bin/sh -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 "$RL_USER"
  usermod --add-subuids "$RL_SUB_BASE-$((RL_SUB_BASE + RL_SUB_SIZE - 1))" \
          --add-subgids "$RL_SUB_BASE-$((RL_SUB_BASE + RL_SUB_SIZE - 1))" "$RL_USER"
  export RL_UID=$(id -u "$RL_USER") RL_GID=$(id -g "$RL_USER")
}

teardown_file () {
  rl_remove_user
}

setup () {
  hako_setup
  if ! runuser -u "$RL_USER" -- unshare -U -r true 2>/dev/null; then
    skip "an ordinary user cannot create a user namespace on this host (see hako doctor)"
  fi
  RL_DIR="$TEST_ROOT/rl"
  XDG="$RL_DIR/xdg"
  mkdir -p "$XDG" "$RL_DIR/home" "$RL_DIR/data" "$RL_DIR/bundle"
  cp -a "$BUNDLE_DIR/rootfs" "$RL_DIR/bundle/rootfs"
  chown -R "$RL_USER:" "$RL_DIR"
  chmod 755 "$RL_DIR"
  chmod 700 "$XDG"
  # As the user, with its own runtime dir and home, no --root: the defaults.
  R="runuser -u $RL_USER -- env -C $RL_DIR/bundle XDG_RUNTIME_DIR=$XDG HOME=$RL_DIR/home $HAKO"
}

teardown () {
  local id leaks=""
  [ -z "${RL_MADE:-}" ] || rm -rf $RL_MADE
  [ -z "${RL_SERVERS:-}" ] || kill $RL_SERVERS 2>/dev/null || true
  for id in $(ls "$XDG/hako" 2>/dev/null); do
    $R delete --force "$id" >/dev/null 2>&1 || true
  done
  [ -z "$(ls -A "$XDG/hako" 2>/dev/null)" ] || leaks="$leaks state:$(ls "$XDG/hako" | tr '\n' ' ')"
  [ -z "$(rl_pids)" ] || leaks="$leaks user-processes:$(rl_pids | tr '\n' ' ')"
  local cg
  cg=$(STATE="$XDG/hako" cgroup_parent)
  ! ls -d /sys/fs/cgroup/"$cg" /sys/fs/cgroup/*/"$cg" >/dev/null 2>&1 || leaks="$leaks cgroups:$cg"
  hako_teardown || leaks="$leaks (hako_teardown)"
  if [ -n "$leaks" ]; then
    echo "leaked: $leaks" >&2
    return 1
  fi
}

# rl_config JQ: edit the user's config.json (it stays the user's).
rl_config () {
  jq "$1" "$RL_DIR/bundle/config.json" > "$RL_DIR/bundle/config.json.new"
  mv "$RL_DIR/bundle/config.json.new" "$RL_DIR/bundle/config.json"
  chown "$RL_USER:" "$RL_DIR/bundle/config.json"
}


# A mapping as podman makes it: root inside is the user, ids 1.. are the
# user's subordinate range.
rl_multi_map () {
  rl_config "(\"$RL_UID\" | tonumber) as \$u | ($RL_SUB_BASE) as \$b | ($RL_SUB_SIZE) as \$s
    | .linux.uidMappings = [{containerID: 0, hostID: \$u, size: 1}, {containerID: 1, hostID: \$b, size: \$s}]
    | (\"$RL_GID\" | tonumber) as \$g
    | .linux.gidMappings = [{containerID: 0, hostID: \$g, size: 1}, {containerID: 1, hostID: \$b, size: \$s}]"
}

@test "rootless: an ordinary user runs hako spec --rootless and hako run: root inside, one id mapped directly, state under \$XDG_RUNTIME_DIR/hako" {
  run $R spec --rootless
  [ "$status" -eq 0 ]
  jq -e --argjson u "$RL_UID" '.linux.uidMappings == [{"containerID": 0, "hostID": $u, "size": 1}]' "$RL_DIR/bundle/config.json"
  run $R run rl1 -- sh -c 'echo hello; id -u; id -g; cat /proc/self/uid_map /proc/self/setgroups | tr -s " "; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = hello ]
  [ "${lines[1]}" = 0 ]
  [ "${lines[2]}" = 0 ]
  [ "$(echo "${lines[3]}" | xargs)" = "0 $RL_UID 1" ]
  # The kernel allows an unprivileged gid map only with setgroups denied.
  [ "${lines[4]}" = deny ]
  # Network none: only lo.
  [ "${lines[5]}" = lo ]
  [ "${#lines[@]}" -eq 6 ]
  # The state went to the user's runtime dir, owned by the user.
  [ -d "$XDG/hako/rl1" ]
  [ "$(stat -c %U "$XDG/hako")" = "$RL_USER" ]
  run $R delete rl1
  [ "$status" -eq 0 ]
  [ ! -e "$XDG/hako/rl1" ]
}

@test "rootless: create, state, start, exec, kill and delete as an ordinary user, and nothing left behind" {
  $R spec --rootless
  rl_config '.process.args = ["sleep", "100"]'
  # Its process keeps create's stdout and stderr: not a pipe `run` would wait on.
  $R create rl2 </dev/null >"$TEST_ROOT/rl2.out" 2>&1
  [ "$($R state rl2 | jq -r .status)" = created ]
  pid=$($R state rl2 | jq .pid)
  [ "$(stat -c %U /proc/$pid)" = "$RL_USER" ]
  run $R start rl2
  [ "$status" -eq 0 ]
  [ "$($R state rl2 | jq -r .status)" = running ]
  run $R exec rl2 -- sh -c 'id -u; echo from-exec'
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | tr '\n' ' ')" = "0 from-exec " ]
  run $R kill rl2 KILL
  [ "$status" -eq 0 ]
  pid_gone "$pid"
  for i in $(seq 50); do [ "$($R state rl2 | jq -r .status)" = stopped ] && break; sleep 0.1; done
  run $R delete rl2
  [ "$status" -eq 0 ]
  [ -z "$(ls -A "$XDG/hako")" ]
}

@test "rootless: a multi-id mapping goes through newuidmap/newgidmap; a file chowned to uid 1000 inside is subuid base + 999 on the host" {
  command -v newuidmap >/dev/null && command -v newgidmap >/dev/null || skip "newuidmap/newgidmap not installed (Debian package uidmap)"
  $R spec --rootless
  rl_multi_map
  # /data: a directory of the user's, writable by root inside; CAP_CHOWN for
  # the chown (the profile's capabilities do not include it).
  rl_config '.mounts += [{"destination": "/data", "type": "bind", "source": "'"$RL_DIR/data"'", "options": ["rbind", "rw"]}]
    | .process.capabilities |= with_entries(.value += ["CAP_CHOWN"])'
  run $R run --rm rl3 -- sh -c 'cat /proc/self/uid_map /proc/self/gid_map | tr -s " "; touch /data/f; chown 1000:1000 /data/f; ls -n /data/f'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "${lines[0]}" | xargs)" = "0 $RL_UID 1" ]
  [ "$(echo "${lines[1]}" | xargs)" = "1 $RL_SUB_BASE $RL_SUB_SIZE" ]
  [ "$(echo "${lines[3]}" | xargs)" = "1 $RL_SUB_BASE $RL_SUB_SIZE" ]
  [ "$(stat -c %u:%g "$RL_DIR/data/f")" = "$((RL_SUB_BASE + 999)):$((RL_SUB_BASE + 999))" ]
}

@test "rootless: a mapping outside the user's /etc/subuid range is refused by newuidmap: 125 naming it, nothing left" {
  command -v newuidmap >/dev/null || skip "newuidmap not installed (Debian package uidmap)"
  $R spec --rootless
  rl_config '.linux.uidMappings = [{"containerID": 0, "hostID": '"$RL_UID"', "size": 1}, {"containerID": 1, "hostID": 100, "size": 10}]'
  run $R run --rm rl4 -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"run rl4: user namespace uid map: newuidmap"* ]]
  [ -z "$(ls -A "$XDG/hako")" ]
}

@test "rootless: -v SRC:DST:idmap is refused (only root may idmap a host file system): 125 naming the fix, nothing left; the user's files are root's inside without it" {
  $R spec --rootless
  run -125 $R run --rm -v "$RL_DIR/home:/x:idmap" rl5 -- true
  echo "$output"
  [[ "$output" == *"run rl5: .mounts["*"] (/x): an idmapped bind needs hako to run as root (rootless, the caller's own files are already the sandbox root's: drop idmap)"* ]]
  [ -z "$(ls -A "$XDG/hako")" ]
  run -0 --separate-stderr $R run --rm -v "$RL_DIR/home:/x" rl6 -- stat -c %u /x
  [ "$output" = 0 ]
  [ "$stderr" = "" ]
  # As rootless podman runs it: uid 0, but of the user's namespace.
  U="runuser -u $RL_USER -- env -C $RL_DIR/bundle XDG_RUNTIME_DIR=$XDG HOME=$RL_DIR/home unshare -U --map-root-user $HAKO"
  run -125 $U run --rm -v "$RL_DIR/home:/x:idmap" rl7 -- true
  [[ "$output" == *"an idmapped bind needs hako to run as root, not as uid 0 of a user namespace"* ]]
  [ -z "$(ls -A "$XDG/hako")" ]
}

@test "rootless: no cgroups unless delegated — it runs without one, and a limit fails create naming the controller" {
  $R spec --rootless
  run $R --debug run --rm rl5 -- true
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"not writable here"* ]]
  rl_config '.linux.resources = {"memory": {"limit": 67108864}}'
  run $R run --rm rl5 -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *memory* ]]
  [ -z "$(ls -A "$XDG/hako")" ]
}

@test "rootless without XDG_RUNTIME_DIR (runuser, cron): /run/user/UID when it is the user's, else ~/.cache/hako/run, else /tmp/hako-UID; an unsafe one is refused naming the fix" {
  $R spec --rootless
  local home="$RL_DIR/home" tmpd="/tmp/hako-$RL_UID" rund="/run/user/$RL_UID"
  [ ! -e "$tmpd" ] || skip "$tmpd exists on this host"
  [ ! -e "$rund" ] || skip "$rund exists on this host (a session of the test user?)"
  RL_MADE="$tmpd $rund"  # removed by teardown, should the test stop half-way
  NX="runuser -u $RL_USER -- env -u XDG_RUNTIME_DIR -C $RL_DIR/bundle HOME=$home $HAKO"
  # No runtime dir: a private directory in the user's own cache.
  run $NX run --rm nx1 -- id -u
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = 0 ]
  [ "$(stat -c '%a %U' "$home/.cache/hako")" = "700 $RL_USER" ]
  [ -d "$home/.cache/hako/run" ]
  [ -z "$(ls -A "$home/.cache/hako/run")" ]
  # Read-only verbs find what create made there.
  $NX run -d nx2 -- sleep 60
  [ "$($NX list -q)" = nx2 ]
  $NX delete --force nx2
  # The user's /run/user/UID, as a login would give: used when it is there.
  mkdir -m 0700 "$rund"
  chown "$RL_USER:" "$rund"
  run $NX run -d nx3 -- sleep 60
  [ "$status" -eq 0 ]
  [ -d "$rund/hako/nx3" ]
  $NX delete --force nx3
  rm -rf "$rund"
  # No home of its own (HOME=/root, passwd's /nonexistent): /tmp/hako-UID,
  # refused when someone else made it first.
  NH="runuser -u $RL_USER -- env -u XDG_RUNTIME_DIR -C $RL_DIR/bundle HOME=/root $HAKO"
  mkdir -m 0755 "$tmpd"
  run $NH run --rm nx4 -- true
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"$tmpd is not a private directory of uid $RL_UID (mode 755, owner 0)"* ]]
  [[ "$output" == *"give --data-root DIR"* ]]
  run $NH --data-root "$RL_DIR/data" run --rm nx4 -- true
  [ "$status" -eq 125 ]
  [[ "$output" == *"state root: $tmpd is not a private directory"*"set XDG_RUNTIME_DIR to a directory of yours, or give --root DIR"* ]]
  rmdir "$tmpd"
  run $NH run --rm nx5 -- id -u
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(stat -c '%a %U' "$tmpd")" = "700 $RL_USER" ]
  [ -z "$(ls -A "$tmpd/run")" ]
  [ -z "$(ls -A "$tmpd/data/sandboxes" 2>/dev/null)" ]
  rm -rf "$tmpd"
}

# rl_serve PORT TEXT: a python3 HTTP server on the host's 127.0.0.1:PORT
# serving TEXT at /, killed by teardown.
rl_serve () {
  mkdir -p "$RL_DIR/www-$1"
  echo "$2" > "$RL_DIR/www-$1/index.html"
  python3 -m http.server --bind 127.0.0.1 --directory "$RL_DIR/www-$1" "$1" >/dev/null 2>&1 3>&- &
  RL_SERVERS="${RL_SERVERS:-} $!"
  local i
  for i in $(seq 100); do
    busybox wget -q -O /dev/null "http://127.0.0.1:$1/" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the test server on 127.0.0.1:$1 did not come up" >&2
  return 1
}

@test "rootless: --network allowlist — the sandbox's process makes the proxy's socket, the proxy outside reaches an allowed loopback server of the host, another port gets 403, a direct connect finds only the sandbox's lo" {
  command -v python3 >/dev/null || skip "python3 not installed"
  $R spec --rootless
  local allowed=$((20000 + RANDOM % 20000)) other
  other=$((allowed + 1))
  rl_serve "$allowed" served-to-rootless
  rl_serve "$other" not-for-the-sandbox
  run $R run -d --network allowlist --allow "127.0.0.1:$allowed" rl6 -- sleep 60
  echo "$output"
  [ "$status" -eq 0 ]
  # The proxy is the user's, in the host's network namespace; the sandbox's
  # process is in another.
  local proxy sbx
  proxy=$(cut -d' ' -f1 "$XDG/hako/rl6/proxy.pid")
  sbx=$($R state rl6 | jq .pid)
  [ "$(stat -c %U /proc/$proxy)" = "$RL_USER" ]
  [ "$(readlink /proc/$proxy/ns/net)" = "$(readlink /proc/self/ns/net)" ]
  [ "$(readlink /proc/$sbx/ns/net)" != "$(readlink /proc/self/ns/net)" ]
  # Through the proxy (HTTP_PROXY is set inside): the allowed port answers.
  run $R exec rl6 -- wget -q -O - "http://127.0.0.1:$allowed/"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = served-to-rootless ]
  # Another port of the host's, with a server on it: refused by the proxy.
  run $R exec rl6 -- wget -q -O - "http://127.0.0.1:$other/"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *403* ]]
  [[ "$output" != *not-for-the-sandbox* ]]
  # Around the proxy: 127.0.0.1 is the sandbox's own lo, where nothing listens.
  run $R exec rl6 -- wget -Y off -q -O - "http://127.0.0.1:$allowed/"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *served-to-rootless* ]]
  # The proxy's port inside is taken by the proxy's socket: nothing else binds it.
  run $R exec rl6 -- timeout 5 nc -l -p 3128
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"in use"* ]]
  grep -q '"verdict":"allow"' "$XDG/hako/rl6/proxy.log"
  grep -q '"verdict":"deny"' "$XDG/hako/rl6/proxy.log"
  run $R delete --force rl6
  [ "$status" -eq 0 ]
  pid_gone "$proxy"
}

@test "rootless podman's case, simulated: uid 0 of the user's own user namespace (unshare -U --map-root-user), no --root, uses \$XDG_RUNTIME_DIR/hako, and without it /run/user/<the user's uid>, never /run/hako" {
  local rund="/run/user/$RL_UID"
  # As podman runs its runtime: root of a namespace whose 0 is the user.
  U="runuser -u $RL_USER -- env -C $RL_DIR/bundle XDG_RUNTIME_DIR=$XDG HOME=$RL_DIR/home unshare -U --map-root-user $HAKO"
  run $U spec --rootless
  [ "$status" -eq 0 ]
  run $U run -d us1 -- sleep 60
  echo "$output"
  [ "$status" -eq 0 ]
  [ -d "$XDG/hako/us1" ]
  [ ! -e /run/hako/us1 ]
  # Another invocation, in another such namespace (podman's cleanup from
  # conmon), finds it there.
  [ "$($U list -q)" = us1 ]
  run $U delete --force us1
  [ "$status" -eq 0 ]
  [ -z "$(ls -A "$XDG/hako")" ]
  # No XDG_RUNTIME_DIR: the user's /run/user/UID — the host uid, not 0.
  [ ! -e "$rund" ] || skip "$rund exists on this host (a session of the test user?)"
  RL_MADE="$rund"
  mkdir -m 0700 "$rund"
  chown "$RL_USER:" "$rund"
  NX="runuser -u $RL_USER -- env -u XDG_RUNTIME_DIR -C $RL_DIR/bundle HOME=$RL_DIR/home unshare -U --map-root-user $HAKO"
  run $NX run -d us2 -- sleep 60
  echo "$output"
  [ "$status" -eq 0 ]
  [ -d "$rund/hako/us2" ]
  [ "$(stat -c %U "$rund/hako")" = "$RL_USER" ]
  [ "$($NX list -q)" = us2 ]
  run $NX delete --force us2
  [ "$status" -eq 0 ]
  [ -z "$(ls -A "$rund/hako")" ]
  rm -rf "$rund"
}

# rl_page HOST:PORT: the sandbox's /etc/group as its httpd serves it there,
# fetched from the host.
rl_page () {
  timeout 10 busybox wget -Y off -q -O- "http://$1/group"
}

@test "rootless: published ports — at create and added to the running sandbox, forwarded by the user's process without capabilities; a privileged host port refused; released at delete" {
  $R spec --rootless
  local hp=$((20000 + RANDOM % 20000)) f fwd where
  run -0 $R run -d --network none -p "$hp:8000" rl7 -- httpd -f -p 127.0.0.1:8000 -h /etc
  wait_for 30 rl_page "127.0.0.1:$hp"
  [ "$(rl_page "127.0.0.1:$hp")" = "$(cat "$RL_DIR/bundle/rootfs/etc/group")" ]
  # Added while it runs: the forwarder joins its namespaces through its process.
  run -0 $R port --add "$((hp + 1)):8000" rl7
  where=$output
  [ "$where" = "127.0.0.1:$((hp + 1))" ]
  [ "$(rl_page "$where")" = "$(cat "$RL_DIR/bundle/rootfs/etc/group")" ]
  fwd=$(awk '{print $5}' "$XDG/hako/rl7/ports" | sort -u)
  [ "$(echo $fwd | wc -w)" -eq 2 ]
  for f in $fwd; do
    [ "$(stat -c %U /proc/$f)" = "$RL_USER" ]
    [ "$(awk '/^CapEff:/ {print $2}' /proc/$f/status)" = 0000000000000000 ]
  done
  if [ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" -gt 80 ]; then
    run -125 $R --log-format json port --add 80:8000 rl7
    echo "$output"
    [ "$(echo "$output" | jq -r .kind)" = permission ]
  fi
  run -0 $R delete --force rl7
  for f in $fwd; do pid_gone "$f"; done
  run ! rl_page "127.0.0.1:$hp"
}

@test "rootless: fork copies (an ordinary user has no disk image); a running sandbox with no freezer is refused, a stopped one forks" {
  $R run -d --profile host rlp -- sleep 1000
  $R exec rlp sh -c 'echo mine > /work/a'
  # Without a delegated cgroup there is no freezer: refused, as snapshot is.
  run $R fork rlp rlc
  if [ "$status" -ne 0 ]; then
    [ "$status" -eq 125 ]
    [[ "$output" == *"cannot be frozen"* ]]
    [ ! -e "$XDG/hako/rlc" ]
  else
    $R delete --force rlc
  fi
  $R stop rlp
  run -0 --separate-stderr $R fork --format json rlp rlc1 rlc2
  [ "$(echo "$output" | jq -r .mechanism)" = copy ]
  [[ "$stderr" == *"copied its writable state"* ]]
  [ "$($R exec rlc2 cat /work/a)" = mine ]
  $R exec rlc1 sh -c 'echo c1 > /work/a'
  [ "$($R exec rlc2 cat /work/a)" = mine ]
  $R delete --force rlc1 rlc2 rlp
  [ -z "$(ls -A "$XDG/hako")" ]
}
