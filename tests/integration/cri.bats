#!/usr/bin/env bats
# Kubernetes through containerd's CRI: a CRI client (tests/cri/cri_client.py,
# Debian's python3-grpcio and grpc_tools on tests/cri/cri.proto) drives the
# kubelet's calls against a containerd of the test's own with the `hako`
# runtime handler (docs/kubernetes.md): pods with host networking and with
# a loopback-only CNI network, two containers a pod, exec, stats, update,
# logs, stop and remove; hako's org.hako.* annotations; the allowlist pod;
# what a pod's annotations may widen only with node.json's consent.
#
# Each test starts its containerd with containerd.bash, as containerd.bats
# and tests/conformance/critest.sh do (private socket,
# root, state; CRI on, its CNI config dir, netns under its state dir), and
# imports the local pause image (tests/fixtures/pause.c) and busybox into
# k8s.io: nothing is pulled.  The shim calls hako through a wrapper that adds
# the test's --data-root; hako's state root is the shim's Root/k8s.io.  The
# teardown checks that nothing is left: hako state, shims, mounts, netns,
# cgroups of containers, processes.

load helpers
load containerd

PY=/usr/bin/python3

setup_file () {
  hako_setup_file
  command -v containerd >/dev/null && [ -x /usr/lib/cni/loopback ] || return 0
  $PY -c 'import grpc, grpc_tools' 2>/dev/null || return 0
  "$fixtures/images.sh" busybox "$BATS_FILE_TMPDIR/img" >/dev/null
  "$fixtures/images.sh" pause "$BATS_FILE_TMPDIR/pause" >/dev/null
}

setup () {
  for t in containerd ctr containerd-shim-runc-v2; do
    command -v $t >/dev/null || skip "$t is not installed (Debian package containerd)"
  done
  [ -x /usr/lib/cni/loopback ] || skip "no /usr/lib/cni/loopback (Debian package containernetworking-plugins)"
  $PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "no python3 grpc (Debian python3-grpcio, python3-grpc-tools)"
  hako_setup
  CT="$TEST_ROOT/ctrd"
  ctrd_prepare
  STATE="$TEST_ROOT/runc/k8s.io"
  H="$HAKO --root $STATE --data-root $DATA"
  CG="hako-cri-${TEST_ROOT##*.}"
  export CRI_CGROUP="/$CG" CRI_LOGS="$CT/logs" CRI_IMAGE=hako.test/busybox:latest
  NETNS_BEFORE=$(ls /var/run/netns 2>/dev/null | sort)
  printf '#!/bin/sh\nexec %s --data-root %s "$@"\n' "$HAKO" "$DATA" > "$CT/hako"
  chmod 755 "$CT/hako"
  ctrd_cri_config "$CT/hako" "$TEST_ROOT/runc"
  ctrd_start
  K image import --base-name hako.test/busybox "$BATS_FILE_TMPDIR/img/oci.tar" >/dev/null
  K image import --base-name hako.local/pause "$BATS_FILE_TMPDIR/pause/oci.tar" >/dev/null
}

K () { timeout -s KILL 60 ctr --address "$ADDR" -n k8s.io "$@"; }
CRI () { timeout -s KILL 300 $PY "$BATS_TEST_DIRNAME/../cri/cri_client.py" "$ADDR" "$@"; }

# node.json for the shim's hako: the JSON given, through --node-config (the
# wrapper is read at each call, so the next pod sees it).
node_config () {
  echo "$1" > "$CT/node.json"
  printf '#!/bin/sh\nexec %s --data-root %s --node-config %s "$@"\n' "$HAKO" "$DATA" "$CT/node.json" > "$CT/hako"
}

teardown () {
  [ -n "${CT:-}" ] || return 0
  local leaks ids id p d
  for p in ${HTTPD_PIDS:-}; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  ids=$(ctrd_tasks k8s.io)
  # What a failed test left, through CRI's own store: tasks and containers.
  ctrd_stop k8s.io
  leaks=$CTRD_LEAKS
  for id in $(ls "$STATE" 2>/dev/null); do
    leaks="$leaks state:${id:0:12}"
    $H delete --force "$id" >/dev/null 2>&1
  done
  CTRD_LEAKS=""
  ctrd_cleanup "$TEST_ROOT" "k8s.io=$ids"
  leaks="$leaks$CTRD_LEAKS"
  for p in $(comm -13 <(echo "$NETNS_BEFORE") <(ls /var/run/netns 2>/dev/null | sort)); do
    leaks="$leaks netns:$p"
    umount "/var/run/netns/$p" 2>/dev/null
    rm -f "/var/run/netns/$p"
  done
  # The pods' cgroup parents are made by the runtime, as by runc (the
  # kubelet's, on a node); a container's own cgroup below them is a leak.
  for d in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/unified/"$CG"; do
    [ -d "$d" ] || continue
    for p in $(find "$d" -mindepth 2 -type d | sort -r); do
      leaks="$leaks cgroup:${p#/sys/fs/cgroup/}"
      rmdir "$p" 2>/dev/null
    done
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  if [ -n "$leaks" ]; then
    echo "containerd left:$leaks" >&2
    tail -30 "$CT/log" >&2
  fi
  hako_teardown || return 1
  [ -z "$leaks" ]
}

@test "CRI: a host-network pod, the kubelet's sequence, nothing left" {
  run CRI pod host
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"ok: RemovePodSandbox: the pod is gone"* ]]
}

@test "CRI: a loopback-only pod (CNI loopback), the kubelet's sequence, nothing left" {
  run CRI pod loopback
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"loopback pod: its only interface is lo"* ]]
  [[ "$output" == *"ok: RemovePodSandbox: the pod is gone"* ]]
}

# Two HTTP servers on the host's loopback, A and B, for the allowlist pods.
start_servers () {
  local base=$((20000 + RANDOM % 20000)) i
  PORT_A=$base PORT_B=$((base + 1))
  mkdir -p "$CT/www-a" "$CT/www-b"
  echo served-by-A > "$CT/www-a/index.html"
  echo served-by-B > "$CT/www-b/index.html"
  busybox httpd -f -p "127.0.0.1:$PORT_A" -h "$CT/www-a" 3>&- &
  HTTPD_PIDS="$HTTPD_PIDS $!"
  busybox httpd -f -p "127.0.0.1:$PORT_B" -h "$CT/www-b" 3>&- &
  HTTPD_PIDS="$HTTPD_PIDS $!"
  for i in $(seq 50); do
    busybox wget -q -O /dev/null "http://127.0.0.1:$PORT_A/" 2>/dev/null \
      && busybox wget -q -O /dev/null "http://127.0.0.1:$PORT_B/" 2>/dev/null && break
    sleep 0.1
  done
}

@test "CRI: org.hako.network allowlist on a pod reaches the allowed loopback server through the proxy, nothing else" {
  start_servers
  # The node's loopback from a pod's allow-list needs the node's consent.
  node_config "{\"annotations\":{\"allow\":{\"org.hako.allow\":[\"127.0.0.1:$PORT_A\"]}}}"
  # A's port only.  The pod's container joins the pause container's netns,
  # where the pod's proxy listens (docs/kubernetes.md, The allow-list).
  CHECK="echo proxy=\$HTTP_PROXY; ls /sys/class/net | tr '\n' ' '; echo;
    wget -q -O- http://127.0.0.1:$PORT_A/ 2>&1; echo allowed=\$?;
    wget -q -O- http://127.0.0.1:$PORT_B/ 2>&1; echo other-port=\$?;
    wget -Y off -q -O- http://127.0.0.1:$PORT_A/ 2>&1; echo direct=\$?;
    wget -q -O- http://192.0.2.1/ 2>&1; echo outside=\$?" \
    run CRI run org.hako.network=allowlist org.hako.allow=127.0.0.1:$PORT_A --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"proxy=http://127.0.0.1:3128"* ]]
  [[ "$output" == *"served-by-A"*"allowed=0"* ]]
  [[ "$output" != *"served-by-B"* ]]
  [[ "$output" == *"other-port=1"* ]]
  [[ "$output" == *"direct=1"* ]]
  [[ "$output" == *"outside=1"* ]]
  [[ "$output" == *"exec exit code: 0"* ]]
  # The same with a host-network pod: the pause container and the
  # container each get a netns of their own and a proxy of their own.
  CRI_NETWORK=host CHECK="wget -q -O- http://127.0.0.1:$PORT_A/ 2>&1; echo allowed=\$?;
    wget -q -O- http://127.0.0.1:$PORT_B/ 2>&1; echo other-port=\$?;
    ls /sys/class/net | tr '\n' ' '" \
    run CRI run org.hako.network=allowlist org.hako.allow=127.0.0.1:$PORT_A --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"served-by-A"*"allowed=0"* ]]
  [[ "$output" == *"other-port=1"* ]]
  [[ "$output" == *"lo "* ]]
  [[ "$output" != *"eth"* ]]
}

@test "CRI: a bad org.hako.* annotation fails the container's create (StartContainer) with hako's reason" {
  run CRI create-fails org.hako.network=open 'annotation org.hako.network="open": .sandbox.network.mode: unknown mode'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.allow=pypi.org 'annotation org.hako.allow: needs org.hako.network: allowlist'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.network=allowlist org.hako.allow=a.org,,b.org '.sandbox.network.allow[1]: must not be empty'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.networks=none 'annotation org.hako.networks: unknown'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.read=etc '.sandbox.landlock.read[0]: must be an absolute path'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.tcp-connect=http 'annotation org.hako.landlock.tcp-connect: "http" is not a port number'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.tcp-bind=65536 '.sandbox.landlock.tcp_bind[0]'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.scoped=yes 'annotation org.hako.landlock.scoped: must be "true" or "false"'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.required=1 'annotation org.hako.landlock.required: must be "true" or "false"'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.derive=no 'annotation org.hako.landlock.derive: must be "true" or "false"'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.write=tmp '.sandbox.landlock.write[0]: must be an absolute path'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.landlock.exec=bin '.sandbox.landlock.exec[0]: must be an absolute path'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.timeout=soon '.sandbox.limits.timeout: must be a positive duration'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.max-output=lots '.sandbox.limits.max_output: must be a number of bytes'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.disk=1m '.sandbox.limits.disk: must be at least 16m'
  echo "$output"; [ "$status" -eq 0 ]
}

@test "CRI: org.hako.network none, and Landlock, by container annotation" {
  # none: the container leaves the pod's netns for one of its own (lo only).
  CRI_CONTAINER_ANNOTATIONS="org.hako.network=none" \
    CHECK='readlink /proc/self/ns/net; readlink /proc/1/ns/net; ls /sys/class/net' \
    run CRI run --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"lo"* ]]
  # host needs the node's consent: the next test.
  # Landlock: writes outside /tmp are refused; reads everywhere; exec from /bin.
  $H doctor --json | jq -e '.checks.landlock.available' >/dev/null || skip "no Landlock on this kernel"
  CRI_CONTAINER_ANNOTATIONS="org.hako.landlock.read=/ org.hako.landlock.write=/tmp,/dev/null org.hako.landlock.exec=/bin" \
    CHECK='echo x > /tmp/ok && echo tmp-ok; echo x > /etc/nope 2>&1; echo etc=$?; cat /etc/hako-image' \
    run CRI run --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"tmp-ok"* ]]
  [[ "$output" == *"etc=1"* ]]
  [[ "$output" == *"from the top layer"* ]]
}

# Annotations are untrusted (docs/kubernetes.md, What a pod may not set): a
# pod author who may not have hostNetwork must not get the node's netns by
# annotation, nor reach the node's loopback, link-local or private
# addresses through the proxy (which runs in the node's netns), nor lift
# the node's default_disk.  Each is refused, naming the node setting, unless
# node.json's annotations.allow lists the value.

@test "CRI: a pod's org.hako.network host is refused without node.json's consent; with it, the node's netns" {
  local want='annotation org.hako.network="host": it puts the container in the node'"'"'s network namespace'
  local hint='"annotations": {"allow": {"org.hako.network": ["host"]}}'
  # On the pod: the pause container (the whole pod's netns) is refused.
  run CRI pod-fails org.hako.network=host "$want"
  echo "$output"; [ "$status" -eq 0 ]
  run CRI pod-fails org.hako.network=host "$hint"
  echo "$output"; [ "$status" -eq 0 ]
  # On one container of a loopback pod: its create is refused.
  run CRI create-fails org.hako.network=host "$want"
  echo "$output"; [ "$status" -eq 0 ]
  # A node.json that consents to other values consents to none of this.
  node_config '{"annotations":{"allow":{"org.hako.network":["none"]}}}'
  run CRI pod-fails org.hako.network=host "$want"
  echo "$output"; [ "$status" -eq 0 ]
  # With the node's consent: the container runs in the node's netns.
  node_config '{"annotations":{"allow":{"org.hako.network":["host"]}}}'
  CRI_CONTAINER_ANNOTATIONS="org.hako.network=host" CHECK='readlink /proc/self/ns/net' run CRI run --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$(readlink /proc/self/ns/net)"* ]]
}

@test "CRI: org.hako.allow naming the node's loopback, link-local or a private address is refused without node.json's consent" {
  start_servers
  local e
  for e in "127.0.0.1:$PORT_A" "[::1]:$PORT_A" 169.254.169.254:80 10.0.0.1:443 192.168.0.0/16; do
    run CRI pod-fails org.hako.network=allowlist "org.hako.allow=pypi.org,$e" \
      "annotation org.hako.allow: entry \"$e\": a "
    echo "$output"; [ "$status" -eq 0 ]
  done
  run CRI pod-fails org.hako.network=allowlist org.hako.allow=169.254.169.254 'a link-local address (the cloud'"'"'s metadata service'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI pod-fails org.hako.network=allowlist org.hako.allow=127.0.0.1:$PORT_A \
    "\"annotations\": {\"allow\": {\"org.hako.allow\": [\"127.0.0.1:$PORT_A\"]}}"
  echo "$output"; [ "$status" -eq 0 ]
  # Consent to A's port is not consent to B's.
  node_config "{\"annotations\":{\"allow\":{\"org.hako.allow\":[\"127.0.0.1:$PORT_A\"]}}}"
  run CRI pod-fails org.hako.network=allowlist org.hako.allow=127.0.0.1:$PORT_B "entry \"127.0.0.1:$PORT_B\""
  echo "$output"; [ "$status" -eq 0 ]
  # A name that resolves to the node's loopback (localhost, /etc/hosts) is
  # no way round: the pod is made, the proxy refuses it at connect time.
  CHECK="wget -q -O- http://localhost:$PORT_A/ 2>&1; echo by-name=\$?" \
    run CRI run org.hako.network=allowlist org.hako.allow=localhost:$PORT_A --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"by-name=1"* ]]
  [[ "$output" != *"served-by-A"* ]]
}

@test "CRI: org.hako.disk -1 or above node.json's default_disk is refused without its consent" {
  node_config '{"default_disk":"64M"}'
  run CRI pod-fails org.hako.disk=-1 'annotation org.hako.disk="-1": it lifts the node'"'"'s default_disk'
  echo "$output"; [ "$status" -eq 0 ]
  run CRI create-fails org.hako.disk=1g 'annotation org.hako.disk="1g": it is more than the node'"'"'s default_disk'
  echo "$output"; [ "$status" -eq 0 ]
  # With the node's consent to -1 (and to nothing else), the pod runs.
  node_config '{"default_disk":"64M","annotations":{"allow":{"org.hako.disk":["-1"]}}}'
  CHECK='echo in-pod' run CRI run org.hako.disk=-1 --
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"in-pod"*"exec exit code: 0"* ]]
  run CRI pod-fails org.hako.disk=1g 'it is more than the node'"'"'s default_disk'
  echo "$output"; [ "$status" -eq 0 ]
}
