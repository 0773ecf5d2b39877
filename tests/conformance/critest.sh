#!/bin/bash
# Runs kubernetes-sigs/cri-tools' critest (CRI validation) against a private
# containerd whose default runtime handler is HANDLER (hako or runc), and
# prints a per-spec table (pass, fail, skip), the totals and the failing
# specs' names.  docs/conformance.md ("critest (CRI validation)") says how to
# get and build critest; not part of `make check`: the suite is built by
# hand, and it needs root.
#
#   tests/conformance/critest.sh CRITEST HANDLER [GINKGO_FOCUS]
#
# Environment: HAKO (the hako binary, default ./hako of this tree), OUT (where
# the report, critest's and containerd's logs are kept, default
# /tmp/critest-HANDLER), CRITEST_SKIP (a regexp of more specs to skip).
#
# containerd is set up as tests/integration/cri.bats sets it up (the shared
# tests/integration/containerd.bash): its own root, state, socket, config, a
# loopback-only CNI network; the runc handler is Debian's runc with a root of
# its own.  Nothing is pulled: the images critest wants are built here from
# the busybox fixture and imported into k8s.io under critest's names, and
# every pull critest still makes goes to 127.0.0.1:1 (--registry-prefix), a
# closed loopback port, so those specs fail without a name lookup.  Skipped:
# the specs that need a pod network with a routable address and port
# mapping (a CNI bridge and portmap, which are not made here).  Everything
# is cleaned up on exit, failure included: containerd, shims, hako state,
# mounts, the netns, the pods' cgroups.
set -u

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
usage () { echo "usage: $prog CRITEST hako|runc [GINKGO_FOCUS]" >&2; exit 2; }
[ $# -ge 2 ] || usage
critest=$(readlink -f "$1") && [ -x "$critest" ] || { echo "$prog: $1: not an executable" >&2; exit 2; }
handler=$2
focus=${3:-}
case $handler in hako|runc) ;; *) usage ;; esac
hako=$(readlink -f "${HAKO:-$top/hako}")
[ -x "$hako" ] || { echo "$prog: no hako at $hako (build it, or set HAKO)" >&2; exit 2; }
for t in containerd ctr containerd-shim-runc-v2 jq; do
  command -v $t >/dev/null || { echo "$prog: $t is not installed" >&2; exit 2; }
done
[ "$handler" = runc ] && ! command -v runc >/dev/null && { echo "$prog: runc is not installed" >&2; exit 2; }
[ -x /usr/lib/cni/loopback ] || { echo "$prog: no /usr/lib/cni/loopback (containernetworking-plugins)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$prog: needs root" >&2; exit 2; }

out=${OUT:-/tmp/critest-$handler}
mkdir -p "$out"
W=$(mktemp -d /tmp/hako-critest.XXXXXX)
chmod 711 "$W"
CT=$W/ctrd
STATE=$W/runc/k8s.io
DATA=$W/data
# shellcheck source=../integration/containerd.bash
. "$top/tests/integration/containerd.bash"

# The pods' cgroups: critest gives no cgroup parent, so containerd puts them
# under /k8s.io (cgroupfs); the ones this run made are removed at exit.
cgroups_now () { ls -d /sys/fs/cgroup/*/k8s.io/*/ /sys/fs/cgroup/unified/k8s.io/*/ 2>/dev/null | sort; }
CG_BEFORE=$(cgroups_now)
NETNS_BEFORE=$(ls /var/run/netns 2>/dev/null | sort)

cleanup () {
  local ids id p leaks
  trap - EXIT INT TERM
  ids=$(ctrd_tasks k8s.io)
  ctrd_stop k8s.io
  for id in $(ls "$STATE" 2>/dev/null); do
    CTRD_LEAKS="$CTRD_LEAKS hako-state:${id:0:12}"
    "$hako" --root "$STATE" --data-root "$DATA" delete --force "$id" >/dev/null 2>&1
  done
  for id in $(ls "$W/runc-runc/k8s.io" 2>/dev/null); do
    CTRD_LEAKS="$CTRD_LEAKS runc-state:${id:0:12}"
    runc --root "$W/runc-runc/k8s.io" delete --force "$id" >/dev/null 2>&1
  done
  ctrd_cleanup "$W" "k8s.io=$ids"
  for p in $(comm -13 <(echo "$NETNS_BEFORE") <(ls /var/run/netns 2>/dev/null | sort)); do
    CTRD_LEAKS="$CTRD_LEAKS netns:$p"
    umount "/var/run/netns/$p" 2>/dev/null
    rm -f "/var/run/netns/$p"
  done
  for p in $(comm -13 <(echo "$CG_BEFORE") <(cgroups_now) | sort -r); do
    find "$p" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  for p in /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/unified/k8s.io; do
    rmdir "$p" 2>/dev/null
  done
  cp "$CT/log" "$out/containerd.log" 2>/dev/null
  rm -rf "$W"
  leaks=$(grep -c " $W" /proc/self/mountinfo)
  [ "$leaks" = 0 ] || echo "$prog: $leaks mounts under $W are left" >&2
  [ -z "$CTRD_LEAKS" ] || echo "$prog: cleaned up after critest:$CTRD_LEAKS" >&2
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the images, from the busybox fixture ---------------------------------
img=$W/img
"$top/tests/fixtures/images.sh" busybox "$img" >/dev/null || exit 1
# A stand-in for the e2e nginx and httpd images: /usr/sbin/nginx, a script
# (so its process is named nginx and pid 1's command line says "master
# process", what the PID namespace specs look for) that writes
# /var/run/nginx.pid, logs Apache's start line and serves /www with busybox
# httpd on $PORT (80).
mkdir -p "$img/web/usr/sbin" "$img/web/www" "$img/web/var/run"
cat > "$img/web/usr/sbin/nginx" <<'EOF'
#!/bin/sh
echo $$ > /var/run/nginx.pid
# What Apache's httpd logs at start, which the multi-container log spec reads.
echo "AH00094: Command line: 'httpd -D FOREGROUND'"
trap 'kill $child 2>/dev/null; exit 0' TERM INT
httpd -f -p "${PORT:-80}" -h /www &
child=$!
wait
EOF
chmod 755 "$img/web/usr/sbin/nginx"
echo 'critest web server' > "$img/web/www/index.html"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$img/web" -cf "$img/web.tar" .

# /bin/ls a file of its own, as in the e2e busybox (whose applets are hard
# links): the MaskedPaths spec masks /bin/ls, which in the fixture is a
# symlink to /bin/busybox, and masking it would mask the shell too.
mkdir -p "$img/ls/bin"
cp "$img/rootfs/bin/busybox" "$img/ls/bin/ls"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$img/ls" -cf "$img/ls.tar" .

# image NAME TAG LAYOUT-ENV...: an oci-archive of the busybox layers (and,
# for web servers, the web layer) imported as NAME:TAG into k8s.io.
K () { timeout -s KILL 120 ctr --address "$ADDR" -n k8s.io "$@"; }
image () {
  local name=$1 tag=$2 layers=$3 d=$img/out-$RANDOM
  shift 3
  # shellcheck disable=SC2086
  env TAG="$tag" "$@" "$top/tests/fixtures/images.sh" layout "$d" gzip $layers >/dev/null || return 1
  tar -C "$d" -cf "$d.tar" . && K image import --base-name "$name" "$d.tar" >/dev/null
}

ctrd_prepare
printf '#!/bin/sh\nexec %s --data-root %s "$@"\n' "$hako" "$DATA" > "$CT/hako"
chmod 755 "$CT/hako"
ctrd_cri_config "$CT/hako" "$W/runc" "$handler"
ctrd_start || exit 1
"$top/tests/fixtures/images.sh" pause "$W/pause" >/dev/null || exit 1
K image import --base-name hako.local/pause "$W/pause/oci.tar" >/dev/null || exit 1
e2e=registry.k8s.io/e2e-test-images
base="$img/layers/base.tar $img/ls.tar"
web="$base $img/web.tar"
image $e2e/busybox 1.29-2 "$base" CMD_JSON='["sh"]' || exit 1
image $e2e/nginx 1.14-2 "$web" CMD_JSON=null ENTRYPOINT_JSON='["/usr/sbin/nginx","-g","master process"]' || exit 1
image $e2e/httpd 2.4.39-4 "$web" CMD_JSON=null ENTRYPOINT_JSON='["/usr/sbin/nginx","-g","master process"]' || exit 1
image gcr.io/k8s-staging-cri-tools/hostnet-nginx-amd64 latest "$web" CMD_JSON=null \
  ENTRYPOINT_JSON='["/usr/sbin/nginx","-g","master process"]' \
  ENV_JSON='["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","PORT=12003"]' || exit 1

# --- critest ----------------------------------------------------------------
skip='port mapping|should support network$|benchmark'
[ -n "${CRITEST_SKIP:-}" ] && skip="$skip|$CRITEST_SKIP"
args=(--runtime-endpoint "unix://$ADDR" --image-endpoint "unix://$ADDR"
  --runtime-handler "$handler" --registry-prefix 127.0.0.1:1
  --ginkgo.skip "$skip" --ginkgo.json-report "$out/report.json" --ginkgo.no-color)
[ -n "$focus" ] && args+=(--ginkgo.focus "$focus")
rm -f "$out/report.json"
echo "critest against containerd $(containerd --version | awk '{print $3}'), handler $handler; log $out/critest.log"
(cd "$W" && timeout -k 10 "${CRITEST_TIMEOUT:-3600}" "$critest" "${args[@]}") >"$out/critest.log" 2>&1
rc=$?
[ -s "$out/report.json" ] || { echo "$prog: critest exited $rc without a report:" >&2; tail -20 "$out/critest.log" >&2; exit 1; }

# --- the table ----------------------------------------------------------------
jq -r '.[].SpecReports[] | select(.LeafNodeType == "It")
  | [(if .State == "passed" then "pass" elif .State == "skipped" or .State == "pending" then "skip" else "FAIL" end),
     ((.ContainerHierarchyTexts | join(" ")) + " " + .LeafNodeText)] | @tsv' "$out/report.json" \
  | sort -k2 > "$out/table.tsv"
awk -F'\t' '{ printf "%-4s  %s\n", $1, $2 }' "$out/table.tsv"
echo
printf 'passed %d  failed %d  skipped %d  (critest exit %d)\n' \
  "$(grep -c '^pass' "$out/table.tsv")" "$(grep -c '^FAIL' "$out/table.tsv")" \
  "$(grep -c '^skip' "$out/table.tsv")" "$rc"
if grep -q '^FAIL' "$out/table.tsv"; then
  echo "failed:"
  grep '^FAIL' "$out/table.tsv" | cut -f2 | sed 's/^/  /'
fi
exit 0
