#!/bin/bash
# tests/bench/images.sh: image import + unpack, and create --image, timed.
#
# Builds (untimed) a 2-layer OCI layout of ~200 MB from this host's /usr
# (layer 1: /usr/lib/python3*, layer 2: /usr/libexec and /usr/share/perl;
# gzip), then times with hyperfine, in one run:
#   hako   image import LAYOUT into an empty store (full verification: blob
#          sizes and sha256, diff_ids, safe unpack of both layers)
#   umoci  umoci unpack --image LAYOUT:bench BUNDLE (if umoci is installed)
#   tar    tar -xzf of both layers into one directory (no verification)
# and prints the medians with their ratios to hako's; then the time of
# `hako create --image` for the busybox image and for the ~200 MB one (the
# same, if creating costs nothing per byte of image; the large one has busybox
# under its two layers so that its process can start).
#
# Not part of `make bench` (it builds 200 MB of fixtures).  Environment: HAKO,
# RUNS (default 5).  Needs root, hyperfine, gzip, jq.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-5}
HAKO=${HAKO:-$here/../../hako}
command -v hyperfine >/dev/null || { echo "images.sh: hyperfine not installed" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "images.sh: needs root" >&2; exit 1; }

work=$(mktemp -d /tmp/hako-bench-images.XXXXXX)
# An image sandbox's root is host uid 1000000000, which must reach its
# state dir under here.
chmod 711 "$work"
trap 'for id in small large; do $HAKO --root $work/state --data-root $work/data delete --force $id >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT
H="$HAKO --root $work/state --data-root $work/data"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$work/policy.json"

echo "== building the fixtures (untimed)"
tar --sort=name --owner=0 --group=0 --numeric-owner -C / -cf "$work/l1.tar" usr/lib/python3 usr/lib/python3.11
tar --sort=name --owner=0 --group=0 --numeric-owner -C / -cf "$work/l2.tar" usr/libexec usr/share/perl
du -sh "$work/l1.tar" "$work/l2.tar"
CMD_JSON='["true"]' TAG=bench "$here/../fixtures/images.sh" layout "$work/layout" gzip "$work/l1.tar" "$work/l2.tar"
blobs=$(jq -r '.manifests[0].digest' "$work/layout/index.json")
mapfile -t gz < <(jq -r '.layers[].digest | sub("sha256:"; "")' "$work/layout/blobs/sha256/${blobs#sha256:}")
"$here/../fixtures/images.sh" busybox "$work/busybox" >/dev/null
# For create: busybox under the same two layers, so its process can start.
CMD_JSON='["true"]' "$here/../fixtures/images.sh" layout "$work/large" gzip \
  "$work/busybox/layers/base.tar" "$work/l1.tar" "$work/l2.tar"
rm -f "$work/l1.tar" "$work/l2.tar"

cmds=(--command-name hako --prepare "rm -rf $work/data" "$H image import --policy $work/policy.json $work/layout --name large")
if command -v umoci >/dev/null; then
  cmds+=(--command-name umoci --prepare "rm -rf $work/umoci" "umoci unpack --image $work/layout:bench $work/umoci")
else
  echo "umoci not installed: skipped"
fi
cmds+=(--command-name tar --prepare "rm -rf $work/tar; mkdir $work/tar"
       "tar -xzf $work/layout/blobs/sha256/${gz[0]} -C $work/tar && tar -xzf $work/layout/blobs/sha256/${gz[1]} -C $work/tar")
echo "== import + unpack of the ~200 MB 2-layer image"
hyperfine --runs "$RUNS" --warmup 1 --export-json "$work/import.json" "${cmds[@]}" >/dev/null
jq -r '.results as $r | ($r[] | select(.command == "hako") | .median) as $h
       | $r[] | "\(.command)\t\(.median * 1000 | floor) ms\t\(.median / $h * 100 | floor / 100)x hako"' "$work/import.json"

echo "== create --image: small (busybox, ~2 MB) vs large (~200 MB)"
$H image import --policy "$work/policy.json" "$work/large" --name large >/dev/null
$H image import --policy "$work/policy.json" "$work/busybox/layout" --name small >/dev/null
# Made once first, so every timed run's prepare has one to delete.
$H create --image small small && $H create --image large large
hyperfine -N --runs "$((RUNS * 4))" --warmup 2 --export-json "$work/create.json" \
  --command-name small --prepare "$H delete --force small" "$H create --image small small" \
  --command-name large --prepare "$H delete --force large" "$H create --image large large" >/dev/null
jq -r '.results[] | "\(.command)\t\(.median * 1000 * 10 | floor / 10) ms (min \(.min * 1000 * 10 | floor / 10))"' "$work/create.json"
