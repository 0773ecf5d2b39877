#!/usr/bin/env bats
# snapshot --image (an image sandbox's writable layer committed as a new OCI
# layer and named in the image store) and image export (an OCI layout).

load helpers
bats_require_minimum_version 1.5.0

setup_file () {
  hako_setup_file
  image_fixtures
}
setup () {
  hako_setup
  import_busybox
}
teardown () { hako_teardown; }

# A running image sandbox ID whose writable layer holds: a new file with a
# hardlink and a symlink, a whiteout (/etc/hako-image of the image deleted)
# and an opaque directory (/srv, whose image file /srv/data is gone, made
# again with a file of its own).
image_sandbox () {
  $H run --detach --image busybox "$1" -- sleep 1000
  $H exec "$1" sh -c 'mkdir -p /opt && echo mine > /opt/mine && ln /opt/mine /opt/hard &&
    ln -s /opt/mine /opt/link && rm /etc/hako-image && rm -rf /srv && mkdir /srv &&
    echo only > /srv/only'
}

# The committed layer's tar listing (names only) of image NAME.
layer_names () {
  local d
  d=$(jq -r --arg n "$1" '.images[] | select(.name == $n) | .layers[-1].digest' "$DATA/images/names.json")
  tar -tzf "$DATA/images/blobs/sha256/${d#sha256:}" 2>/dev/null || tar -tf "$DATA/images/blobs/sha256/${d#sha256:}"
}

@test "snapshot --image: run --image of it sees the writes; a deleted file stays deleted; an opaque dir hides the image's" {
  image_sandbox src
  run -0 $H snapshot --image snap:v1 src
  [[ "$output" == "snap:v1 sha256:"* ]]
  # The source carries on, thawed.
  [ "$($H state src | jq -r .status)" = running ]
  $H exec src true
  # An ordinary image: listed, verified, three layers (the image's two + ours).
  $H image ls -q | grep -qx snap:v1
  [ "$($H image inspect snap:v1 | jq '.layers | length')" = 3 ]
  $H image verify
  # OCI whiteouts in the layer, overlay's own xattrs nowhere.
  names=$(layer_names snap:v1)
  echo "$names" | grep -qx 'etc/.wh.hako-image'
  echo "$names" | grep -qx 'srv/.wh..wh..opq'
  echo "$names" | grep -qx 'opt/mine'
  # The sandbox runs in a user namespace (its root is host uid 1000000000):
  # the layer records the sandbox's ids, root's file as 0, uid 1000's as 1000.
  $H exec --user 1000:1000 src sh -c 'echo u > /tmp/user'
  run -0 $H snapshot --image snap:ids src
  d=$(jq -r '.images[] | select(.name == "snap:ids") | .layers[-1].digest' "$DATA/images/names.json")
  run -0 tar -tvzf "$DATA/images/blobs/sha256/${d#sha256:}"
  # (opt/mine and opt/hard are one file: whichever the directory lists
  # first is the file, the other a hard link to it.)
  echo "$output" | grep -E ' 0/0 .* opt/mine( link to opt/hard)?$'
  echo "$output" | grep -E ' 1000/1000 .* tmp/user$'
  ! echo "$output" | grep -q '1000000' || false
  run -0 $H run --rm --image snap:ids rid -- stat -c '%u %g' /opt/mine /tmp/user
  [ "${lines[0]}" = "0 0" ]
  [ "${lines[1]}" = "1000 1000" ]
  $H image rm snap:ids >/dev/null
  # The image's config: the base's process, one more diff_id and history entry.
  [ "$($H image inspect snap:v1 | jq -r '.cmd | join(" ")')" = "$($H image inspect busybox | jq -r '.cmd | join(" ")')" ]
  cfg=$(jq -r '.images[] | select(.name == "snap:v1") | .config' "$DATA/images/names.json")
  jq -e '(.rootfs.diff_ids | length) == 3 and (.history[-1].created_by | test("snapshot --image snap:v1 src"))' \
    "$DATA/images/blobs/sha256/${cfg#sha256:}"
  # A sandbox of the new image.
  run -0 $H run --rm --image snap:v1 r1 -- sh -c 'cat /opt/mine /opt/hard; readlink /opt/link;
    cat /srv/only; ls /srv; [ ! -e /etc/hako-image ] && echo gone; [ -s /etc/passwd ] && echo passwd;
    [ "$(stat -c %i /opt/mine)" = "$(stat -c %i /opt/hard)" ] && echo linked'
  [ "${lines[0]}" = mine ]
  [ "${lines[1]}" = mine ]
  [ "${lines[2]}" = /opt/mine ]
  [ "${lines[3]}" = only ]
  [ "${lines[4]}" = only ]   # ls /srv: the image's /srv/data is hidden
  [ "${lines[5]}" = gone ]
  [ "${lines[6]}" = passwd ]
  [ "${lines[7]}" = linked ]
  # The image's own users of it are unaffected.
  $H run --rm --image busybox r2 -- cat /etc/hako-image /srv/data >/dev/null
}

@test "snapshot --image of a snapshot's image; --compression none: the blob is the tar (digest = diff_id); a stopped sandbox commits too" {
  image_sandbox src
  $H snapshot --image snap:v1 src >/dev/null
  $H run --detach --image snap:v1 s2 -- sleep 1000
  $H exec s2 sh -c 'echo two > /opt/two; rm /opt/link'
  $H stop s2
  $H snapshot --compression none --image snap:v2 s2 >/dev/null
  [ "$($H image inspect snap:v2 | jq '.layers | length')" = 4 ]
  [ "$($H image inspect snap:v2 | jq -r '.layers[-1] | .digest == .diff_id')" = true ]
  [ "$($H image inspect snap:v2 | jq -r '.layers[-1].mediaType')" = application/vnd.oci.image.layer.v1.tar ]
  layer_names snap:v2 | grep -qx 'opt/.wh.link'
  run -0 $H run --rm --image snap:v2 r -- sh -c 'cat /opt/two /opt/mine; [ ! -e /opt/link ] && echo nolink'
  [ "$output" = "$(printf 'two\nmine\nnolink')" ]
  $H image verify
}

@test "image export: an OCI layout umoci unpacks and skopeo inspects; a second export adds to it; it imports back" {
  command -v umoci >/dev/null || skip "umoci is not installed"
  image_sandbox src
  $H snapshot --image snap:v1 src >/dev/null
  run -0 $H image export snap:v1 "$TEST_ROOT/oci"
  [ "$output" = "$TEST_ROOT/oci:v1" ]
  jq -e '.imageLayoutVersion == "1.0.0"' "$TEST_ROOT/oci/oci-layout"
  umoci unpack --image "$TEST_ROOT/oci:v1" "$TEST_ROOT/unpacked" >/dev/null
  r="$TEST_ROOT/unpacked/rootfs"
  [ "$(cat "$r/opt/mine")" = mine ]
  [ "$(ls "$r/srv")" = only ]
  [ ! -e "$r/etc/hako-image" ]
  [ -s "$r/etc/passwd" ]
  if command -v skopeo >/dev/null; then
    [ "$(skopeo inspect "oci:$TEST_ROOT/oci:v1" | jq '.Layers | length')" = 3 ]
  fi
  # Another image into the same layout: both tags, the shared blobs once.
  $H image export busybox "$TEST_ROOT/oci" >/dev/null
  [ "$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"]] | sort | join(",")' "$TEST_ROOT/oci/index.json")" = latest,v1 ]
  [ "$(ls "$TEST_ROOT/oci/blobs/sha256" | wc -l)" = 7 ]
  # The same tag again replaces its entry.
  $H image export snap:v1 "$TEST_ROOT/oci" >/dev/null
  [ "$(jq '.manifests | length' "$TEST_ROOT/oci/index.json")" = 2 ]
  # hako reads it back as it reads any layout.
  $H image import --policy "$TEST_ROOT/accept.json" "$TEST_ROOT/oci:v1" --name back:v1 >/dev/null
  [ "$($H image inspect back:v1 | jq -r .manifest)" = "$($H image inspect snap:v1 | jq -r .manifest)" ]
}

@test "snapshot --image refusals exit 125 and leave the store as it was; export refuses a directory that is not a layout" {
  image_sandbox src
  store_listing () { (cd "$DATA/images" && find . | sort; cat names.json); }
  before=$(store_listing)
  run -125 $H snapshot --image 'bad name' src
  [[ "$output" == *"hako: snapshot src: image name \"bad name\""* ]]
  run -125 $H snapshot --image snap:v1 nosuch
  [[ "$output" == *"sandbox nosuch does not exist"* ]]
  # A sandbox not made from an image.
  b=$(new_bundle bun)
  set_args "$b" sleep 1000
  $H run --detach --bundle "$b" bun
  run -125 $H snapshot --image snap:v1 bun
  [[ "$output" == *"sandbox bun was not made from an image"* ]]
  [ "$($H state bun | jq -r .status)" = running ]
  # A layer the store refuses (a device node planted in the writable layer):
  # nothing of the half-made commit stays, the sandbox is thawed.
  # (Owned by the sandbox's root, host uid 1000000000, as its own files are.)
  mknod "$DATA/sandboxes/src/rootfs/upper/opt/null" c 1 3
  chown 1000000000:1000000000 "$DATA/sandboxes/src/rootfs/upper/opt/null"
  run -125 $H snapshot --image snap:v1 src
  [[ "$output" == *"opt/null: device nodes are refused"* ]]
  [ "$($H state src | jq -r .status)" = running ]
  [ "$(store_listing)" = "$before" ]
  rm "$DATA/sandboxes/src/rootfs/upper/opt/null"
  # A file whose owner the sandbox has no id for (host root's, planted from
  # outside): refused, never recorded as some other id.
  echo x > "$DATA/sandboxes/src/rootfs/upper/opt/hosts-root"
  run -125 $H snapshot --image snap:v1 src
  [[ "$output" == *"opt/hosts-root: owner 0:0 is outside the sandbox's id maps"* ]]
  [ "$(store_listing)" = "$before" ]
  rm "$DATA/sandboxes/src/rootfs/upper/opt/hosts-root"
  # Usage errors.
  run -125 $H snapshot --image snap:v1 --compression lz4 src
  run -125 $H snapshot --image snap:v1 src extra
  [ "$(store_listing)" = "$before" ]
  # export: not a layout, not empty: untouched.
  mkdir "$TEST_ROOT/mine"
  echo keep > "$TEST_ROOT/mine/file"
  run -125 $H image export busybox "$TEST_ROOT/mine"
  [[ "$output" == *"is not empty and not an OCI image layout"* ]]
  [ "$(ls "$TEST_ROOT/mine")" = file ]
  run -125 $H image export nosuch:v1 "$TEST_ROOT/new"
  [ ! -e "$TEST_ROOT/new" ]
  # A damaged blob in the store is not exported; the new directory goes again.
  d=$($H image inspect busybox | jq -r '.layers[0].digest')
  printf X | dd of="$DATA/images/blobs/sha256/${d#sha256:}" bs=1 seek=100 conv=notrunc 2>/dev/null
  run -125 $H image export busybox "$TEST_ROOT/new"
  [[ "$output" == *"is damaged"* ]]
  [ ! -e "$TEST_ROOT/new" ]
  mkdir "$TEST_ROOT/empty"
  run -125 $H image export busybox "$TEST_ROOT/empty"
  [ -z "$(ls -A "$TEST_ROOT/empty")" ]
}

@test "snapshot --image while a writer appends: whole lines in the image; SIGTERM while frozen names nothing, leaves no temp file" {
  $H run --detach --image busybox w -- sh -c \
    'mkdir -p /opt; i=0; while :; do echo "line $i $i $i $i $i $i $i $i" >> /opt/log; i=$((i+1)); done'
  log="$DATA/sandboxes/w/rootfs/upper/opt/log"
  for i in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
  sleep 0.3
  $H snapshot --image snap:w w >/dev/null
  # Each line of the committed copy was written by one write(2): none torn.
  $H run --rm --image snap:w chk -- sh -c '[ -s /opt/log ] && ! grep -vE "^line ([0-9]+)( \1){7}$" /opt/log'
  [ "$($H state w | jq -r .status)" = running ]
  store_listing () { (cd "$DATA/images" && find . | sort; cat names.json); }
  before=$(store_listing)
  HAKO_TEST_STALL=snapshot-frozen $H snapshot --image snap:late w & snapper=$!
  for i in $(seq 50); do [ -e "$STATE/w/stalled" ] && break; sleep 0.1; done
  [ -e "$STATE/w/stalled" ]
  a=$(stat -c %s "$log"); sleep 0.3; b=$(stat -c %s "$log")
  [ "$a" = "$b" ]
  kill -TERM $snapper
  wait $snapper || true   # 125, or ended by the SIGTERM let through after the undo
  rm -f "$STATE/w/stalled"
  [ "$(store_listing)" = "$before" ]
  [ "$($H state w | jq -r .status)" = running ]
  a=$(stat -c %s "$log")
  for i in $(seq 50); do [ "$(stat -c %s "$log")" -gt "$a" ] && break; sleep 0.1; done
  [ "$(stat -c %s "$log")" -gt "$a" ]
}

@test "snapshot --image of a sandbox that changed nothing is refused, naming why; nothing is stored" {
  $H run --detach --image busybox idle -- sleep 1000
  before=$($H image ls -q | sort)
  run -125 --separate-stderr $H snapshot --image idle:v1 idle
  [[ "$stderr" == *"sandbox idle's writable layer is empty"*"nothing to commit"* ]]
  [ "$($H image ls -q | sort)" = "$before" ]
  # The sandbox was thawed and carries on; after a write the commit works.
  [ "$($H state idle | jq -r .status)" = running ]
  $H exec idle sh -c 'echo x > /srv/new'
  run -0 $H snapshot --image idle:v1 idle
  [ "$($H image inspect idle:v1 | jq '.layers | length')" = 3 ]
}
