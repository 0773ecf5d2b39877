#!/usr/bin/env bats
# images: verified import of OCI layouts and archives, the content store,
# hostile layers refused or contained, sandboxes from images.

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
  export MKTAR=${MKTAR:-$(dirname "$HAKO")/tests/helpers/mktar}
}
setup () {
  hako_setup
  # Every import needs a trust policy; the tests of trust write their own.
  accept_policy
  H_IMPORT="$H image import --policy $TEST_ROOT/accept.json"
  mkdir -p "$TEST_ROOT/canary"
  echo untouched > "$TEST_ROOT/canary/canary"
}
teardown () {
  # The fixture's key generation and signing start gpg-agents: stop them.
  local g
  for g in "${GA:-}" "${GB:-}" "${GS:-}"; do
    [ -n "$g" ] && gpgconf --homedir "$g" --kill all 2>/dev/null
  done
  hako_teardown
}

# The canary directory holds exactly what it held, and nothing appeared at
# the host paths the attacks aim at.
host_untouched () {
  [ "$(ls -A "$TEST_ROOT/canary")" = canary ]
  [ "$(cat "$TEST_ROOT/canary/canary")" = untouched ]
}

# No temporary blob, layer or extraction directory left in the store.
store_clean () {
  [ -z "$(find "$DATA/images" -name '.tmp-*' -o -name 'import-*' | head -1)" ]
}

blob_of () { echo "$DATA/images/blobs/sha256/${1#sha256:}"; }

# hostile ATTACK: build that attack's layout.
hostile () {
  [ -x "$MKTAR" ] || skip "tests/helpers/mktar not built (make check builds it)"
  "$fixtures/hostile-layers.sh" "$TEST_ROOT/hostile" "$TEST_ROOT/canary" "$1" >/dev/null
  echo "$TEST_ROOT/hostile/$1/layout"
}

@test "import of an OCI layout: ls, inspect with the config, verify" {
  run -0 $H_IMPORT "$IMG/layout:latest" --name busybox
  [ "$output" = "busybox:latest" ]
  run -0 $H image ls -q
  [ "$output" = "busybox:latest" ]
  run -0 $H image inspect busybox
  [ "$(echo "$output" | jq -r '.env[1]')" = GREETING=hi ]
  [ "$(echo "$output" | jq -r '.layers | length')" = 2 ]
  [ "$(echo "$output" | jq -r '.workingDir')" = /srv ]
  run -0 $H image verify
  [[ "$output" == "4 blobs verified" ]]
  layer=$(echo "$($H image inspect busybox)" | jq -r '.layers[1].diff_id')
  [ -f "$DATA/images/layers/${layer#sha256:}/etc/hako-image" ]
  store_clean
}

@test "import of zstd layers, an oci-archive and a docker-archive" {
  run -0 $H_IMPORT "$IMG/layout-zstd" --name bz
  run -0 $H_IMPORT "$IMG/oci.tar" --name bo
  run -0 $H_IMPORT "$IMG/docker.tar"
  [ "$output" = "busybox-docker:latest" ]
  # The same layers whatever the source: one unpacked copy of each.
  [ "$(ls "$DATA/images/layers" | wc -l)" = 2 ]
  run -0 $H image inspect busybox-docker
  [ "$(echo "$output" | jq -r '.cmd[0]')" = sh ]
  run -0 $H image verify
  store_clean
}

@test "import of a legacy docker-archive whose repeated layers are symlinks to their first copy" {
  L=$IMG/layers
  "$fixtures/images.sh" docker-legacy "$TEST_ROOT/legacy.tar" $L/base.tar $L/top.tar $L/base.tar $L/top.tar
  [ "$(tar tvf "$TEST_ROOT/legacy.tar" | grep -c '^l.*layer.tar -> ../')" = 2 ]
  run -0 $H_IMPORT "$TEST_ROOT/legacy.tar"
  [ "$output" = "busybox-legacy:latest" ]
  run -0 $H image inspect busybox-legacy
  [ "$(echo "$output" | jq -r '[.layers[].diff_id] | length, (unique | length)' | xargs)" = "4 2" ]
  [ "$(ls "$DATA/images/layers" | wc -l)" = 2 ]
  run -0 $H image verify
  # A layer twice in the stack is mounted once, at its topmost place.
  run -0 $H run --rm --image busybox-legacy l1 -- cat /etc/hako-image
  [ "$output" = "from the top layer" ]
  store_clean
}

# run_docker_archive NAME ARCHIVE: import ARCHIVE as NAME and run it.
run_docker_archive () {
  run -0 $H_IMPORT "$2" --name "$1"
  [ "$output" = "$1:latest" ]
  run -0 $H image inspect "$1"
  [ "$(echo "$output" | jq -r '.layers | length')" = 2 ]
  run -0 $H run --rm --image "$1" "run-$1" -- cat /etc/hako-image
  [ -n "$output" ]
  store_clean
}

@test "import of what podman save writes: layer.tar symlinks to the top-level <digest>.tar that manifest.json names" {
  command -v podman >/dev/null || skip "podman is not installed (Debian package podman)"
  local P="podman --root $TEST_ROOT/podman --runroot $TEST_ROOT/podman-run --tmpdir $TEST_ROOT/podman-tmp --storage-driver vfs"
  local id
  id=$($P load -q -i "$IMG/oci.tar" >/dev/null && $P images -q | head -1)
  [ -n "$id" ]
  $P tag "$id" localhost/busybox:podman
  $P save -o "$TEST_ROOT/podman.tar" localhost/busybox:podman
  $P save --format oci-archive -o "$TEST_ROOT/podman-oci.tar" localhost/busybox:podman
  $P rmi -a -f >/dev/null 2>&1 || true
  [ "$(tar tvf "$TEST_ROOT/podman.tar" | grep -Ec '^l.*/layer.tar -> \.\./[0-9a-f]{64}\.tar$')" = 2 ]
  run_docker_archive podman "$TEST_ROOT/podman.tar"
  run_docker_archive podman-oci "$TEST_ROOT/podman-oci.tar"
}

@test "import of what skopeo copy ... docker-archive: writes" {
  command -v skopeo >/dev/null || skip "skopeo is not installed (Debian package skopeo)"
  skopeo copy -q "oci:$IMG/layout:latest" "docker-archive:$TEST_ROOT/skopeo.tar:busybox:skopeo"
  [ "$(tar tvf "$TEST_ROOT/skopeo.tar" | grep -Ec '^l.*/layer.tar -> \.\./[0-9a-f]{64}\.tar$')" = 2 ]
  run_docker_archive skopeo "$TEST_ROOT/skopeo.tar"
}

@test "import of a Docker 25+ docker-archive: an OCI layout (blobs/sha256, index.json) beside manifest.json" {
  local d=$TEST_ROOT/docker25
  mkdir -p "$d"
  cp -r "$IMG/layout/." "$d/"
  # Docker's manifest.json names the OCI blobs; its index.json names the image.
  local man cfg
  man=$(jq -r '.manifests[0].digest' "$d/index.json")
  cfg=$(jq -r '.config.digest' "$d/blobs/sha256/${man#sha256:}")
  jq -c --arg c "blobs/sha256/${cfg#sha256:}" \
    '[{Config:$c, RepoTags:["busybox-docker25:latest"], Layers:[.layers[].digest | "blobs/sha256/" + ltrimstr("sha256:")]}]' \
    "$d/blobs/sha256/${man#sha256:}" > "$d/manifest.json"
  jq '.manifests[0].annotations["io.containerd.image.name"] = "docker.io/library/busybox-docker25:latest"' \
    "$d/index.json" > "$d/i" && mv "$d/i" "$d/index.json"
  tar -C "$d" -cf "$TEST_ROOT/docker25.tar" .
  run_docker_archive docker25 "$TEST_ROOT/docker25.tar"
}

@test "hostile: a podman-style layer.tar symlink to a member manifest.json does not name as a layer is refused" {
  command -v skopeo >/dev/null || skip "skopeo is not installed (Debian package skopeo)"
  skopeo copy -q "oci:$IMG/layout:latest" "docker-archive:$TEST_ROOT/sk.tar:busybox:skopeo"
  local d=$TEST_ROOT/sk
  mkdir -p "$d"
  tar -C "$d" -xf "$TEST_ROOT/sk.tar"
  local link cfg
  link=$(find "$d" -name layer.tar -type l | head -1)
  cfg=$(jq -r '.[0].Config' "$d/manifest.json")
  for target in "../$cfg" ../repositories ../manifest.json /etc/shadow "$TEST_ROOT/canary/canary"; do
    ln -sfn "$target" "$link"
    # The manifest names the link, so the link is what import reads.
    jq --arg l "${link#$d/}" '.[0].Layers[0] = $l' "$d/manifest.json" > "$d/m" && mv "$d/m" "$d/manifest.json"
    tar -C "$d" -cf "$TEST_ROOT/bad.tar" .
    run -125 $H_IMPORT "$TEST_ROOT/bad.tar" --name bad
    [[ "$output" == *"is a symlink to \"$target\", which is not a layer that manifest.json names"* ]]
  done
  store_clean
  host_untouched
}

@test "hostile: a legacy docker-archive's layer.tar symlink to a host file or a non-layer member is refused" {
  L=$IMG/layers
  for target in /etc/shadow ../../../../../etc/shadow "$TEST_ROOT/canary/canary" ../manifest.json ../repositories \
                layer.tar ../nosuch/layer.tar; do
    LINK_TARGET=$target "$fixtures/images.sh" docker-legacy "$TEST_ROOT/bad.tar" $L/base.tar $L/top.tar $L/base.tar
    run -125 $H_IMPORT "$TEST_ROOT/bad.tar" --name bad
    [[ "$output" == *"/layer.tar is a symlink to \"$target\", which is not a layer that manifest.json names"* ]]
  done
  # To another layer.tar of the archive, but not the layer the config names:
  # the diff_id check refuses it.
  first_top=$(tar tf "$TEST_ROOT/bad.tar" | grep -v '^l' | grep layer.tar | while read -r m; do
    [ "$(tar xOf "$TEST_ROOT/bad.tar" "$m" | sha256sum | cut -d' ' -f1)" = "$(sha256sum < $L/top.tar | cut -d' ' -f1)" ] \
      && echo "$m"; done | head -1)
  [ -n "$first_top" ]
  LINK_TARGET=../$(basename "$(dirname "$first_top")")/layer.tar \
    "$fixtures/images.sh" docker-legacy "$TEST_ROOT/bad.tar" $L/base.tar $L/top.tar $L/base.tar
  run -125 $H_IMPORT "$TEST_ROOT/bad.tar" --name bad
  [[ "$output" == *"layer 3 of 3"*"diff_id mismatch"* ]]
  run -125 $H image inspect bad
  store_clean
  host_untouched
}

@test "a second import reads nothing again" {
  $H_IMPORT "$IMG/layout" --name a
  blob=$(blob_of "$($H image inspect a | jq -r '.layers[0].digest')")
  before=$(stat -c '%i %Y' "$blob" "$DATA"/images/layers/*)
  run -0 $H_IMPORT "$IMG/layout" --name b
  [ "$(stat -c '%i %Y' "$blob" "$DATA"/images/layers/*)" = "$before" ]  # how fast: timing.bats
}

@test "a flipped byte in a layer blob is refused, naming the blob; nothing half-made stays" {
  cp -a "$IMG/layout" "$TEST_ROOT/bad"
  m=$(jq -r '.manifests[0].digest' "$TEST_ROOT/bad/index.json")
  l=$(jq -r '.layers[1].digest' "$TEST_ROOT/bad/blobs/sha256/${m#sha256:}")
  printf '\x00' | dd of="$TEST_ROOT/bad/blobs/sha256/${l#sha256:}" bs=1 seek=40 conv=notrunc 2>/dev/null
  run -125 $H_IMPORT "$TEST_ROOT/bad" --name bad
  [[ "$output" == *"blob ${l:0:19}..: sha256 mismatch"* ]]
  [ ! -e "$(blob_of "$l")" ]
  run -0 $H image ls -q
  [ -z "$output" ]
  store_clean
}

@test "gzip layers: two members, and a cut stream, the same with igzip and with zlib (HAKO_INFLATE=zlib)" {
  local base="$IMG/layers/base.tar" top="$IMG/layers/top.tar" inflate
  "$fixtures/images.sh" layout "$TEST_ROOT/members" gzip-members "$base" "$top"
  "$fixtures/images.sh" layout "$TEST_ROOT/cut" gzip-cut "$base" "$top"
  # hako opens libisal.so.2 for gzip when it was built with it; zlib otherwise
  # and with HAKO_INFLATE=zlib.  Both inflaters must agree.
  for inflate in default zlib; do
    rm -rf "$DATA/images"
    HAKO_INFLATE=$inflate run -0 $H_IMPORT "$TEST_ROOT/members" --name m
    run -0 $H image verify
    run -0 $H run --rm --image m m1 -- cat /etc/hako-image
    HAKO_INFLATE=$inflate run -125 $H_IMPORT "$TEST_ROOT/cut" --name c
    echo "$inflate: $output"
    [[ "$output" == *"layer"* ]]
    [[ "$output" != *"sha256 mismatch"* ]] # the blob is what its descriptor says; its content is not whole
    run -0 $H image ls -q
    [ "$output" = m:latest ]
    store_clean
  done
}

@test "a flipped byte in the config or a manifest is refused, naming the blob" {
  cp -a "$IMG/layout" "$TEST_ROOT/bad"
  m=$(jq -r '.manifests[0].digest' "$TEST_ROOT/bad/index.json")
  c=$(jq -r '.config.digest' "$TEST_ROOT/bad/blobs/sha256/${m#sha256:}")
  sed -i 's/GREETING=hi/GREETING=ho/' "$TEST_ROOT/bad/blobs/sha256/${c#sha256:}"
  run -125 $H_IMPORT "$TEST_ROOT/bad" --name bad
  [[ "$output" == *"blob ${c:0:19}..: sha256 mismatch"* ]]
  cp -a "$IMG/layout/." "$TEST_ROOT/bad/"
  sed -i 's/"size":256/"size":257/' "$TEST_ROOT/bad/blobs/sha256/${m#sha256:}"
  run -125 $H_IMPORT "$TEST_ROOT/bad" --name bad
  [[ "$output" == *"blob ${m:0:19}..: sha256 mismatch"* ]]
}

@test "a wrong size in a descriptor is refused with both sizes" {
  cp -a "$IMG/layout" "$TEST_ROOT/bad"
  jq -c '.manifests[0].size += 1' "$IMG/layout/index.json" > "$TEST_ROOT/bad/index.json"
  run -125 $H_IMPORT "$TEST_ROOT/bad" --name bad
  [[ "$output" == *"descriptor says"* ]]
}

@test "a wrong diff_id is refused and the layer is not kept" {
  tar_top="$IMG/layers/top.tar"
  DIFF_IDS_JSON="[\"sha256:$(sha256sum "$IMG/layers/base.tar" | cut -d' ' -f1)\",\"sha256:$(printf '1%.0s' $(seq 64))\"]" \
    "$fixtures/images.sh" layout "$TEST_ROOT/bad" gzip "$IMG/layers/base.tar" "$tar_top"
  run -125 $H_IMPORT "$TEST_ROOT/bad" --name bad
  [[ "$output" == *"diff_id mismatch"* ]]
  [ ! -e "$DATA/images/layers/$(printf '1%.0s' $(seq 64))" ]
  store_clean
}

@test "a manifest whose mediaType differs from its descriptor's is refused" {
  cp -a "$IMG/layout" "$TEST_ROOT/bad"
  jq -c '.manifests[0].mediaType = "application/vnd.oci.image.index.v1+json"' "$IMG/layout/index.json" \
    > "$TEST_ROOT/bad/index.json"
  run -125 $H_IMPORT "$TEST_ROOT/bad" --name bad
  [[ "$output" == *"mediaType"* ]]
}

@test "image verify finds a damaged blob in the store" {
  $H_IMPORT "$IMG/layout" --name busybox
  l=$($H image inspect busybox | jq -r '.layers[0].digest')
  printf '\x01' | dd of="$(blob_of "$l")" bs=1 seek=100 conv=notrunc 2>/dev/null
  run -125 $H image verify
  [[ "$output" == *"blob ${l:0:19}"*"damaged"* ]]
}

@test "image rm removes the name and the blobs and layers nobody else needs" {
  $H_IMPORT "$IMG/layout" --name a
  $H_IMPORT "$IMG/layout-zstd" --name b
  run -0 $H image rm a
  run -0 $H image ls -q
  [ "$output" = "b:latest" ]
  # b shares the unpacked layers (same diff_ids), not the gzip blobs.
  [ "$(ls "$DATA/images/layers" | wc -l)" = 2 ]
  run -0 $H image verify
  run -0 $H image rm b
  [ -z "$(ls "$DATA/images/layers")" ]
  [ -z "$(ls "$DATA/images/blobs/sha256")" ]
  run -125 $H image rm b
  [[ "$output" == *"not found"* ]]
}

# ---- hostile layers ---------------------------------------------------------

@test "hostile: an absolute path lands inside the layer" {
  l=$(hostile abs)
  run -0 $H_IMPORT "$l" --name abs
  host_untouched
  [ -f "$DATA"/images/layers/*/"$TEST_ROOT/canary/abs" ]
}

@test "hostile: a ../ escape is refused" {
  l=$(hostile dotdot)
  run -125 $H_IMPORT "$l" --name x
  [[ "$output" == *'".." component is refused'* ]]
  host_untouched
  store_clean
}

@test "hostile: a symlink to the host, then a write through it, is refused (absolute and relative)" {
  for a in symlink symlink-rel; do
    l=$(hostile $a)
    run -125 $H_IMPORT "$l" --name x
    [[ "$output" == *"esc/pwned"* ]]
    host_untouched
  done
  store_clean
}

@test "hostile: a symlink in one layer and a write through it in the next stays inside" {
  l=$(hostile cross)
  run -0 $H_IMPORT "$l" --name cross
  host_untouched
  # The second layer has a real directory where the first had the symlink.
  [ "$(ls "$DATA"/images/layers/*/esc/pwned | wc -l)" = 1 ]
}

@test "hostile: a hardlink to /etc/shadow, or through a symlink to a host file, is refused" {
  for a in hardlink hardlink-via-symlink; do
    l=$(hostile $a)
    run -125 $H_IMPORT "$l" --name x
    [[ "$output" == *"hardlink target"* ]]
    host_untouched
  done
  [ -z "$(find "$DATA/images" -samefile /etc/shadow 2>/dev/null)" ]
  store_clean
}

@test "hostile: a directory swapped for a symlink, then written through, is refused" {
  l=$(hostile swap)
  run -125 $H_IMPORT "$l" --name x
  [[ "$output" == *"d/pwned"* ]]
  host_untouched
}

@test "hostile: a device node is refused; --allow-devices as root creates it" {
  l=$(hostile device)
  run -125 $H_IMPORT "$l" --name x
  [[ "$output" == *"device nodes are refused"* ]]
  run -0 $H_IMPORT "$l" --name x --allow-devices
  [ -c "$DATA"/images/layers/*/disk ]
}

@test "hostile: a root-level opaque whiteout, a bare .wh. and .wh.. are refused" {
  for a in opaque-root bare-wh wh-dotdot; do
    l=$(hostile $a)
    run -125 $H_IMPORT "$l" --name x
    [[ "$output" == *"whiteout"* ]]
  done
  store_clean
}

@test "hostile: the root entry turned into a symlink is refused" {
  l=$(hostile root-type)
  run -125 $H_IMPORT "$l" --name x
  [[ "$output" == *"layer root must stay a directory"* ]]
}

@test "hostile: a header declaring 10 GB is refused before anything is written" {
  l=$(hostile huge)
  run -125 $H_IMPORT "$l" --name x
  [[ "$output" == *"declares 10737418240 bytes"* ]]
  store_clean
}

@test "hostile: 10 GB of zeros in 10 MB of gzip stops at the byte bound" {
  l=$(hostile bomb)
  start=$(date +%s)
  run -125 $H_IMPORT "$l" --name x --max-layer-bytes 64m
  [[ "$output" == *"larger than 67108864 bytes uncompressed"* ]]
  [ $(( $(date +%s) - start )) -lt 20 ]
  [ -z "$(ls "$DATA/images/layers")" ]
  store_clean
}

@test "hostile: too many entries and a 5000-byte path are refused" {
  l=$(hostile many)
  run -125 $H_IMPORT "$l" --name x --max-layer-entries 1000
  [[ "$output" == *"more than 1000 entries"* ]]
  l=$(hostile longpath)
  run -125 $H_IMPORT "$l" --name x
  [[ "$output" == *"entry path of 5000 bytes is longer than 4096"* ]]
  store_clean
}

@test "whiteouts become overlayfs whiteouts: a 0:0 device and an opaque directory" {
  l=$(hostile whiteouts)
  run -0 $H_IMPORT "$l" --name wh
  d=$(ls -d "$DATA"/images/layers/*)
  [ "$(stat -c '%F %t:%T' "$d/etc/passwd")" = "character special file 0:0" ]
  command -v getfattr >/dev/null || skip "getfattr not installed (Debian package attr)"
  [ "$(getfattr --only-values -n trusted.overlay.opaque "$d/srv")" = y ]
  [ -f "$d/srv/new" ]
}

# ---- sandboxes from images ----------------------------------------------------

@test "run --image: the image's Cmd, Env and WorkingDir; a command after -- replaces Cmd" {
  $H_IMPORT "$IMG/layout" --name busybox
  run -0 $H run --rm --image busybox b1
  [ "${lines[0]}" = "hello from the image" ]
  [ "${lines[1]}" = "GREETING=hi" ]
  run -0 $H run --rm --image busybox b2 -- sh -c 'pwd; echo $GREETING; cat /etc/hako-image'
  [ "$output" = "$(printf '/srv\nhi\nfrom the top layer')" ]
}

@test "run --image: the image's User is resolved in its own /etc/passwd" {
  USER_NAME=nobody CMD_JSON='["id"]' \
    "$fixtures/images.sh" layout "$TEST_ROOT/u" gzip "$IMG/layers/base.tar" >/dev/null
  $H_IMPORT "$TEST_ROOT/u" --name nobody
  run -0 $H run --rm --image nobody u1
  [[ "$output" == "uid=65534(nobody) gid=65534"* ]]
}

@test "two sandboxes of one image do not see each other's writes; delete removes the writable layer" {
  $H_IMPORT "$IMG/layout" --name busybox
  $H run --detach --image busybox w1 -- sleep 1000
  $H run --detach --image busybox w2 -- sleep 1000
  $H exec w1 -- sh -c 'echo one > /srv/mine; rm /etc/hako-image'
  run -0 $H exec w2 -- sh -c 'ls /srv; cat /etc/hako-image'
  [ "$output" = "$(printf 'data\nfrom the top layer')" ]
  run -0 $H exec w1 -- cat /srv/mine
  [ "$output" = one ]
  [ -f "$DATA/sandboxes/w1/rootfs/upper/srv/mine" ]
  # The image's own layer is untouched by w1's rm.
  [ -f "$DATA"/images/layers/*/etc/hako-image ]
  # hako's own mount namespace holds no overlay of theirs: under the test's
  # root it has each one's disk-limit data dir at most (the default limit's
  # image, hako-spec(5) DISK LIMIT).
  mounts=$(awk '{ print $5 }' /proc/self/mountinfo | grep -F "$TEST_ROOT" | grep -vxF -e "$DATA/sandboxes/w1" -e "$DATA/sandboxes/w2" || true)
  [ -z "$mounts" ]
  $H delete --force w1
  [ ! -e "$DATA/sandboxes/w1" ]
  $H delete --force w2
}

@test "run --image: the sandbox has the profiles' limits (pids 4096, memory min(4 GiB, half the RAM)) in its cgroups" {
  $H_IMPORT "$IMG/layout" --name busybox
  $H run --detach --image busybox il -- sleep 1000
  kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
  mem=$(( kb * 1024 / 2 / 1048576 * 1048576 ))
  [ "$mem" -lt 4294967296 ] || mem=4294967296
  [ "$(jq -c '.linux.resources | [.memory.limit, .pids.limit]' "$STATE/il/config.json")" = "[$mem,4096]" ]
  if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
    d=/sys/fs/cgroup/$(cgroup_parent)/il
    [ "$(cat "$d/pids.max")" = 4096 ]
    [ "$(cat "$d/memory.max")" = "$mem" ]
  else
    [ "$(cat "/sys/fs/cgroup/pids/$(cgroup_parent)/il/pids.max")" = 4096 ]
    [ "$(cat "/sys/fs/cgroup/memory/$(cgroup_parent)/il/memory.limit_in_bytes")" = "$mem" ]
  fi
}

@test "image rm is refused while a sandbox uses the image" {
  $H_IMPORT "$IMG/layout" --name busybox
  $H create --image busybox r1
  run -125 $H image rm busybox
  [[ "$output" == *"used by sandbox r1"* ]]
  $H delete r1
  run -0 $H image rm busybox
}

@test "spec --image writes the image's config; a bundle naming sandbox.image runs it" {
  $H_IMPORT "$IMG/layout" --name busybox
  mkdir "$TEST_ROOT/b"
  $H spec --image busybox --bundle "$TEST_ROOT/b"
  [ "$(jq -r .sandbox.image "$TEST_ROOT/b/config.json")" = busybox:latest ]
  [ "$(jq -r .process.cwd "$TEST_ROOT/b/config.json")" = /srv ]
  [ "$(jq -r .root.readonly "$TEST_ROOT/b/config.json")" = false ]
  set_args "$TEST_ROOT/b" cat /srv/data
  run -0 $H run --rm --bundle "$TEST_ROOT/b" s1
  [ "$output" = data ]
}

# own_layers OUT: a layout of the busybox base plus a root-only directory
# (owner 0, mode 0700) and a home of uid 1000.
own_layers () {
  mkdir -p "$TEST_ROOT/x/rootonly" "$TEST_ROOT/x/home/u"
  echo mine > "$TEST_ROOT/x/home/u/f"
  chmod 0700 "$TEST_ROOT/x/rootonly"
  tar -C "$TEST_ROOT/x" --numeric-owner --owner=0 --group=0 --mtime=@0 -cf "$TEST_ROOT/root.tar" rootonly
  tar -C "$TEST_ROOT/x" --numeric-owner --owner=1000 --group=1000 --mtime=@0 -cf "$TEST_ROOT/user.tar" home
  CMD_JSON='["sh"]' "$fixtures/images.sh" layout "$1" gzip "$IMG/layers/base.tar" \
    "$TEST_ROOT/root.tar" "$TEST_ROOT/user.tar" >/dev/null
}

@test "an image sandbox has a user namespace: the image's owners inside, unprivileged ids on the host" {
  own_layers "$TEST_ROOT/own"
  $H_IMPORT "$TEST_ROOT/own" --name own
  $H run --detach --image own u1 -- sleep 1000
  run -0 $H exec u1 -- cat /proc/self/uid_map
  [ "$(echo $output)" = "0 1000000000 65536" ]
  # uid N in the image is N inside; root inside writes where the image's root could.
  run -0 $H exec u1 -- stat -c '%u:%g %a' /home/u/f /rootonly /
  [ "$output" = "$(printf '1000:1000 644\n0:0 700\n0:0 755')" ]
  run -0 $H exec u1 -- sh -c 'echo r > /rootonly/new && echo r > /etc/new && mkdir /made && cat /home/u/f'
  [ "$output" = mine ]
  run -0 $H exec --user 1000:1000 u1 -- sh -c 'echo u > /home/u/g && cat /home/u/g'
  [ "$output" = u ]
  run ! $H exec --user 1000:1000 u1 -- sh -c 'echo u > /rootonly/nope'
  # On the host, what they wrote is owned by the ids they are there: 1000000000
  # for root, 1000001000 for 1000; the sandbox's process is not host root.
  up="$DATA/sandboxes/u1/rootfs/upper"
  [ "$(stat -c %u:%g "$up/rootonly/new" "$up/etc/new" "$up/made" "$up/home/u/g")" = \
    "$(printf '1000000000:1000000000\n1000000000:1000000000\n1000000000:1000000000\n1000001000:1000001000')" ]
  pid=$($H state u1 | jq -r .pid)
  [ "$(awk '/^Uid:/ {print $2}' /proc/$pid/status)" = 1000000000 ]
  # The store's layers keep the image's own ids, untouched.
  [ "$(stat -c %u "$DATA"/images/layers/*/home/u/f)" = 1000 ]
  [ -z "$(find "$DATA/images/layers" -name new)" ]
  $H delete --force u1
  [ ! -e "$DATA/sandboxes/u1" ]
}

@test "spec --image writes a user namespace; a config whose maps leave the image's / unmapped is refused" {
  $H_IMPORT "$IMG/layout" --name busybox
  mkdir "$TEST_ROOT/b"
  $H spec --image busybox --bundle "$TEST_ROOT/b"
  [ "$(jq -r '.linux.namespaces | map(.type) | index("user") != null' "$TEST_ROOT/b/config.json")" = true ]
  [ "$(jq -c '.linux.uidMappings' "$TEST_ROOT/b/config.json")" = '[{"containerID":0,"hostID":1000000000,"size":65536}]' ]
  edit_config "$TEST_ROOT/b" '.linux.uidMappings = [{"containerID":1,"hostID":1000000000,"size":65535}]'
  run -125 $H create --bundle "$TEST_ROOT/b" n1
  [[ "$output" == *"the image's / is owned by 0:0, which .linux.uidMappings and .linux.gidMappings do not both map"* ]]
  [ ! -e "$STATE/n1" ]
  [ ! -e "$DATA/sandboxes/n1" ]
}

@test "an unknown image is refused and leaves nothing" {
  run -125 $H run --image nosuch x1
  [[ "$output" == *"image nosuch:latest not found"* ]]
  [ ! -e "$STATE/x1" ]
}

@test "stop and start keep the writable layer" {
  $HAKO stop --help >/dev/null 2>&1 || skip "this hako has no stop verb (lifecycle branch not merged)"
  $H_IMPORT "$IMG/layout" --name busybox
  $H run --detach --image busybox k1 -- sleep 1000
  $H exec k1 -- sh -c 'echo kept > /srv/kept'
  $H stop k1
  $H start k1
  run -0 $H exec k1 -- cat /srv/kept
  [ "$output" = kept ]
}

# ---- trust: policy and signatures --------------------------------------------

# trust_setup: a trusted key A, an untrusted key B, a policy requiring A's
# signature, and the layout's manifest digest in $DIGEST.
trust_setup () {
  command -v gpg >/dev/null || skip "gpg not installed (Debian package gnupg)"
  export GA="$TEST_ROOT/gpg-a" GB="$TEST_ROOT/gpg-b"
  "$fixtures/images.sh" gpgkey "$GA" a@example.org >/dev/null 2>&1
  "$fixtures/images.sh" gpgkey "$GB" b@example.org >/dev/null 2>&1
  DIGEST=$(jq -r '.manifests[0].digest' "$IMG/layout/index.json")
  cat > "$TEST_ROOT/signed.json" <<JSON
{"default": [{"type": "reject"}],
 "transports": {"docker": {"busybox": [{"type": "signedBy", "keyType": "GPGKeys",
                                        "keyPath": "$GA/pub.gpg"}]}}}
JSON
  HS="$H image import --policy $TEST_ROOT/signed.json"
}

sign_as () {  # sign_as GNUPGHOME EMAIL IDENTITY OUT [clear|uncompressed]
  "$fixtures/images.sh" sign "$1" "$2" "${DIGEST}" "$3" "$4" ${5:-} 2>/dev/null
}

@test "trust: no policy file refuses, saying how to write one; reject refuses" {
  run -125 $H image import --policy "$TEST_ROOT/none.json" "$IMG/layout" --name busybox
  [[ "$output" == *"no trust policy at $TEST_ROOT/none.json"*"insecureAcceptAnything"* ]]
  echo '{"default": [{"type": "reject"}]}' > "$TEST_ROOT/reject.json"
  run -125 $H image import --policy "$TEST_ROOT/reject.json" "$IMG/layout" --name busybox
  [[ "$output" == *"the trust policy rejects busybox:latest (scope default)"* ]]
  echo '{"default": [{"type": "insecureAcceptAnything", "typo": 1}]}' > "$TEST_ROOT/bad.json"
  run -125 $H image import --policy "$TEST_ROOT/bad.json" "$IMG/layout" --name busybox
  [[ "$output" == *'.default[0].typo: unknown key'* ]]
  [ -z "$(ls "$DATA/images/layers")" ]
}

@test "trust: a signature by the trusted key is accepted (file and lookaside directory)" {
  trust_setup
  sign_as "$GA" a@example.org busybox:latest "$TEST_ROOT/sig"
  run -0 $HS --signature "$TEST_ROOT/sig" "$IMG/layout" --name busybox
  mkdir -p "$TEST_ROOT/look/busybox@sha256=${DIGEST#sha256:}"
  sign_as "$GB" b@example.org busybox:latest "$TEST_ROOT/look/busybox@sha256=${DIGEST#sha256:}/signature-1"
  cp "$TEST_ROOT/sig" "$TEST_ROOT/look/busybox@sha256=${DIGEST#sha256:}/signature-2"
  run -0 $HS --signature-dir "$TEST_ROOT/look" "$IMG/oci.tar" --name busybox
}

@test "trust: unsigned, untrusted key, clear-signed, tampered, wrong identity, wrong digest are refused" {
  trust_setup
  run -125 $HS "$IMG/layout" --name busybox
  [[ "$output" == *"requires a signature for busybox:latest: none found"* ]]
  sign_as "$GB" b@example.org busybox:latest "$TEST_ROOT/untrusted"
  run -125 $HS --signature "$TEST_ROOT/untrusted" "$IMG/layout" --name busybox
  [[ "$output" == *"which the policy does not trust"* ]]
  sign_as "$GA" a@example.org busybox:latest "$TEST_ROOT/clear" clear
  run -125 $HS --signature "$TEST_ROOT/clear" "$IMG/layout" --name busybox
  [[ "$output" == *"clear-signed signatures are refused"* ]]
  sign_as "$GA" a@example.org busybox:latest "$TEST_ROOT/plain" uncompressed
  LC_ALL=C sed 's/busybox:latest/busyboy:latest/' "$TEST_ROOT/plain" > "$TEST_ROOT/tampered"
  run -125 $HS --signature "$TEST_ROOT/tampered" "$IMG/layout" --name busybox
  [[ "$output" == *"bad signature"* ]]
  sign_as "$GA" a@example.org other:latest "$TEST_ROOT/other"
  run -125 $HS --signature "$TEST_ROOT/other" "$IMG/layout" --name busybox
  [[ "$output" == *'signature identity "other:latest" does not match busybox:latest'* ]]
  DIGEST="sha256:$(printf '2%.0s' $(seq 64))" sign_as "$GA" a@example.org busybox:latest "$TEST_ROOT/digest"
  run -125 $HS --signature "$TEST_ROOT/digest" "$IMG/layout" --name busybox
  [[ "$output" == *"signature is for manifest sha256:22222222"* ]]
  # Nothing of the refused image was unpacked.
  [ -z "$(ls "$DATA/images/layers")" ]
  run -0 $H image ls -q
  [ -z "$output" ]
}

@test "trust: a payload with an unknown critical key or a duplicate key is refused" {
  trust_setup
  PAYLOAD="{\"critical\":{\"type\":\"atomic container signature\",\"image\":{\"docker-manifest-digest\":\"$DIGEST\"},\"identity\":{\"docker-reference\":\"busybox:latest\"},\"extra\":1}}" \
    sign_as "$GA" a@example.org busybox:latest "$TEST_ROOT/extra"
  run -125 $HS --signature "$TEST_ROOT/extra" "$IMG/layout" --name busybox
  [[ "$output" == *"critical.extra: unknown key"* ]]
  PAYLOAD="{\"critical\":{\"type\":\"atomic container signature\",\"image\":{\"docker-manifest-digest\":\"$DIGEST\"},\"identity\":{\"docker-reference\":\"busybox:latest\",\"docker-reference\":\"busybox:latest\"}}}" \
    sign_as "$GA" a@example.org busybox:latest "$TEST_ROOT/dup"
  run -125 $HS --signature "$TEST_ROOT/dup" "$IMG/layout" --name busybox
  [[ "$output" == *"given twice"* ]]
}

@test "trust: a docker-archive cannot satisfy signedBy; other scopes follow the default" {
  trust_setup
  run -125 $HS "$IMG/docker.tar" --name busybox
  [[ "$output" == *"docker-archive has no manifest a signature could name"* ]]
  run -125 $HS "$IMG/docker.tar" --name other
  [[ "$output" == *"rejects other:latest (scope default)"* ]]
}

@test "concurrent imports of images sharing layers all succeed, with one copy of each layer" {
  for i in 1 2 3 4; do
    $H_IMPORT "$IMG/layout" --name "c$i" > "$TEST_ROOT/out$i" 2>&1 &
  done
  $H_IMPORT "$IMG/layout-zstd" --name c5 > "$TEST_ROOT/out5" 2>&1 &
  wait
  cat "$TEST_ROOT"/out*
  run -0 $H image ls -q
  [ "$(echo "$output" | wc -l)" = 5 ]
  [ "$(ls "$DATA/images/layers" | wc -l)" = 2 ]
  run -0 $H image verify
  store_clean
}

@test "the store and a sandbox's writable layer are closed to other host users" {
  $H_IMPORT "$IMG/layout" --name busybox
  [ "$(stat -c %a "$DATA/images")" = 700 ]
  $H create --image busybox p1
  [ "$(stat -c %a "$DATA/sandboxes/p1/rootfs")" = 700 ]
  $H delete p1
}

@test "a sandbox keeps its layers when its image's name is re-pointed and another image is removed" {
  $H_IMPORT "$IMG/layout" --name busybox
  $H create --image busybox g1
  # busybox now names a one-layer image; the sandbox still uses the old top layer.
  CMD_JSON='["true"]' "$fixtures/images.sh" layout "$TEST_ROOT/one" gzip "$IMG/layers/base.tar" >/dev/null
  $H_IMPORT "$TEST_ROOT/one" --name busybox
  $H_IMPORT "$IMG/layout-zstd" --name other
  run -0 $H image rm other
  top=$(sha256sum "$IMG/layers/top.tar" | cut -d' ' -f1)
  [ -d "$DATA/images/layers/$top" ]
  $H start g1
  $H delete --force g1
}

@test "trust: keyData, a signing subkey mapped to its primary, matchRepository" {
  trust_setup
  export GS="$TEST_ROOT/gpg-s"
  fpr=$("$fixtures/images.sh" gpgkey "$GS" s@example.org 2>/dev/null)
  gpg --homedir "$GS" --batch --quiet --passphrase '' --quick-add-key "$fpr" ed25519 sign never 2>/dev/null
  gpg --homedir "$GS" --batch --export s@example.org > "$GS/pub.gpg"
  # Signed by the newest signing subkey, not the primary.
  sign_as "$GS" s@example.org busybox:v1 "$TEST_ROOT/sub"
  issuer=$(gpg --homedir "$GS" --batch --list-packets "$TEST_ROOT/sub" 2>/dev/null \
             | sed -n 's/.*issuer fpr v4 \([0-9A-F]*\).*/\1/p' | head -1)
  [ -n "$issuer" ]
  [ "$issuer" != "$fpr" ]
  cat > "$TEST_ROOT/repo.json" <<JSON
{"default": [{"type": "signedBy", "keyType": "GPGKeys", "keyData": "$(base64 -w0 "$GS/pub.gpg")",
              "signedIdentity": {"type": "matchRepository"}}]}
JSON
  run -0 $H image import --policy "$TEST_ROOT/repo.json" --signature "$TEST_ROOT/sub" "$IMG/layout" --name busybox:v2
  run -125 $H image import --policy "$TEST_ROOT/repo.json" --signature "$TEST_ROOT/sub" "$IMG/layout" --name other:v1
  [[ "$output" == *'does not match other:v1'* ]]
}

@test "an image of 100 layers runs, each layer's file visible" {
  [ -x "$MKTAR" ] || skip "tests/helpers/mktar not built (make check builds it)"
  local tars=("$IMG/layers/base.tar") i
  for i in $(seq 99); do
    echo "file layers/$i x" | "$MKTAR" > "$TEST_ROOT/l$i.tar"
    tars+=("$TEST_ROOT/l$i.tar")
  done
  CMD_JSON='["sh","-c","ls /layers | wc -l"]' "$fixtures/images.sh" layout "$TEST_ROOT/many" none "${tars[@]}" >/dev/null
  $H_IMPORT "$TEST_ROOT/many" --name many
  run -0 $H run --rm --image many m1
  [ "$output" = 99 ]
}

@test "image rm does not wait for a foreground run: it refuses at once" {
  $H_IMPORT "$IMG/layout" --name busybox
  $H run --image busybox f1 -- sleep 30 &
  wait_status f1 running
  run -125 timeout 5 $H image rm busybox
  [[ "$output" == *"used by sandbox f1"* ]]
  $H kill f1 KILL
  wait
  $H delete f1
}

@test "a second import of an oci-archive copies nothing out of it again" {
  $H_IMPORT "$IMG/oci.tar" --name a
  before=$(stat -c '%i %Y' "$DATA"/images/blobs/sha256/* "$DATA"/images/layers/*)
  if command -v strace >/dev/null; then
    strace -f -e trace=openat -o "$TEST_ROOT/trace" $H_IMPORT "$IMG/oci.tar" --name b
    # index.json was extracted; no blob was: each came from the store.
    grep -q '"index.json", O_WRONLY|O_CREAT' "$TEST_ROOT/trace"
    run ! grep -q '"blobs%sha256%[0-9a-f]*", O_WRONLY|O_CREAT' "$TEST_ROOT/trace"
  else
    $H_IMPORT "$IMG/oci.tar" --name b
  fi
  [ "$(stat -c '%i %Y' "$DATA"/images/blobs/sha256/* "$DATA"/images/layers/*)" = "$before" ]
  run -0 $H image verify
}

@test "import on a terminal shows per-layer progress on stderr; a pipe or --quiet shows none" {
  command -v script >/dev/null || skip "script(1) (bsdutils) is not installed"
  # script gives the import a pty for stdout and stderr; stderr alone goes
  # to a file through the inner redirection, so both cases are seen.
  script -qec "$H_IMPORT $IMG/layout --name busybox" /dev/null > "$TEST_ROOT/tty.out"
  tr '\r' '\n' < "$TEST_ROOT/tty.out" > "$TEST_ROOT/tty.lines"
  # One updating line: carriage returns and erase-line, no newline per update.
  grep -q $'\r\033\[K' "$TEST_ROOT/tty.out"
  grep -Eq '^.\[Klayer [12]/2 [0-9a-f]{12}: [0-9.]+ [KM]?i?B / [0-9.]+ [KM]?i?B, .*/s \([0-2]/2 done\)$' \
    "$TEST_ROOT/tty.lines"
  grep -q 'layer 2/2 .*(2/2 done)\|layer 1/2 .*(2/2 done)' "$TEST_ROOT/tty.lines"
  grep -Eq '^.\[K2 layers, [0-9.]+ [KM]iB in [0-9.]+ s \(.*/s\)$' "$TEST_ROOT/tty.lines"
  grep -qx 'busybox:latest' "$TEST_ROOT/tty.lines"
  # The same again: nothing is unpacked, and the summary says so, not "0 B/s".
  script -qec "$H_IMPORT $IMG/layout --name busybox" /dev/null > "$TEST_ROOT/again.out"
  tr '\r' '\n' < "$TEST_ROOT/again.out" > "$TEST_ROOT/again.lines"
  grep -Eq '^.\[K2 layers, [0-9.]+ [KM]iB: already in the store$' "$TEST_ROOT/again.lines"
  run -1 grep -q ' 0 B/s' "$TEST_ROOT/again.lines"
  # --quiet on the same terminal: only the name.
  script -qec "$H_IMPORT -q $IMG/docker.tar --name quiet" /dev/null > "$TEST_ROOT/quiet.out"
  [ "$(tr -d '\r' < "$TEST_ROOT/quiet.out")" = "quiet:latest" ]
  # stderr a file (stdout the terminal): nothing on stderr.
  script -qec "$H_IMPORT $IMG/oci.tar --name piped 2>$TEST_ROOT/err" /dev/null > "$TEST_ROOT/piped.out"
  [ ! -s "$TEST_ROOT/err" ]
  [ "$(tr -d '\r' < "$TEST_ROOT/piped.out")" = "piped:latest" ]
}

@test "import --format json prints the image's name, digest and layers" {
  run -0 --separate-stderr $H_IMPORT --format json "$IMG/docker.tar" --name js
  [ -z "$stderr" ]
  [ "$(echo "$output" | jq -r .name)" = js:latest ]
  echo "$output" | jq -e '.digest | test("^sha256:[0-9a-f]{64}$")'
  [ "$(echo "$output" | jq -r .digest)" = "$(echo "$output" | jq -r .manifest)" ]
  [ "$(echo "$output" | jq '.layers | length')" = 2 ]
  echo "$output" | jq -e '.layers | all(has("digest") and has("diff_id") and has("size"))'
  [ "$(echo "$output" | jq -r .digest)" = "$($H image ls --format json | jq -r '.[] | select(.name == "js:latest") | .manifest')" ]
}
