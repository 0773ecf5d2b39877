#!/bin/bash
# tests/bench/images.sh: image import + unpack, and create --image, timed.
#
# Builds (untimed) an OCI layout of ~200 MB from this host's /usr: busybox
# (so that its process can start) under layer 1 (/usr/lib/python3*) and
# layer 2 (/usr/libexec and /usr/share/perl), gzip; then times with
# hyperfine, in one run:
#   hako   image import LAYOUT into an empty store (full verification: blob
#          sizes and sha256, diff_ids, safe unpack of every layer)
#   umoci  umoci unpack --image LAYOUT:bench BUNDLE (if umoci is installed)
#   tar    tar -xzf of every layer into one directory (no verification)
#   gunzip gunzip -c of every layer, one after the other, into sha256sum:
#          the floor (decompression and one hash, no blob hash, no disk)
# and prints the medians with their ratios to hako's; then the time of
# `hako create --image` for the busybox image and for the ~200 MB one (the
# same, if creating costs nothing per byte of image).
#
# Run by tests/bench/all.sh (`make bench`).  Environment: HAKO, RUNS
# (default 3), CREATE_RUNS (default 4 x RUNS), LAYER1 and LAYER2 (the host
# directories, relative to /, that make the two layers; defaults as above),
# BENCH_FORMAT=lines (human output to stderr; stdout gets
# `BENCH ROW TOOL VALUE UNIT [NOTE]` lines, rows import (tools hako,
# umoci, tar, gunzip), create-small,
# create-large).  Needs root, hyperfine, gzip, jq.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-3}
CREATE_RUNS=${CREATE_RUNS:-$((RUNS * 4))}
LAYER1=${LAYER1:-usr/lib/python3 usr/lib/python3.11}
LAYER2=${LAYER2:-usr/libexec usr/share/perl}
HAKO=${HAKO:-$here/../../hako}
if [ "${BENCH_FORMAT:-}" = lines ]; then exec 3>&1 1>&2; else exec 3> /dev/null; fi
emit () { printf 'BENCH %s\n' "$*" >&3; }
command -v hyperfine >/dev/null || { echo "images.sh: hyperfine not installed" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "images.sh: needs root" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}"/hako-bench-images.XXXXXX)
# An image sandbox's root is host uid 1000000000, which must reach its
# state dir under here.
chmod 711 "$work"
trap 'for id in small large; do $HAKO --root $work/state --data-root $work/data delete --force $id >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT
H="$HAKO --root $work/state --data-root $work/data"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$work/policy.json"

echo "== building the fixtures (untimed)"
# existing LIST: the paths of LIST that this host has (a layer of a missing
# directory would fail the fixture); base-files' licences if none.
existing () {
  local p out=""
  for p in $1; do [ -e "/$p" ] && out="$out $p"; done
  echo "${out:-usr/share/common-licenses}"
}
LAYER1=$(existing "$LAYER1")
LAYER2=$(existing "$LAYER2")
# shellcheck disable=SC2086 # LAYER1 and LAYER2 are lists of paths
tar --sort=name --owner=0 --group=0 --numeric-owner -C / -cf "$work/l1.tar" $LAYER1
# shellcheck disable=SC2086
tar --sort=name --owner=0 --group=0 --numeric-owner -C / -cf "$work/l2.tar" $LAYER2
du -sh "$work/l1.tar" "$work/l2.tar"
mb=$(du -cm "$work/l1.tar" "$work/l2.tar" | tail -n 1 | cut -f1)
"$here/../fixtures/images.sh" busybox "$work/busybox" >/dev/null
# busybox under the two layers, so that the large image's process can start:
# the same image is timed for import and for create.
CMD_JSON='["true"]' TAG=bench "$here/../fixtures/images.sh" layout "$work/large" gzip \
  "$work/busybox/layers/base.tar" "$work/l1.tar" "$work/l2.tar"
rm -f "$work/l1.tar" "$work/l2.tar"
blobs=$(jq -r '.manifests[0].digest' "$work/large/index.json")
untar="" gunz=""
for d in $(jq -r '.layers[].digest | sub("sha256:"; "")' "$work/large/blobs/sha256/${blobs#sha256:}"); do
  untar="$untar${untar:+ && }tar -xzf $work/large/blobs/sha256/$d -C $work/tar"
  gunz="$gunz${gunz:+ && }gunzip -c $work/large/blobs/sha256/$d | sha256sum > /dev/null"
done

# No warmup: every run starts from an empty store (prepare), so there is
# nothing to warm but the page cache, which the fixture build just filled.
cmds=(--command-name hako --prepare "rm -rf $work/data" "$H image import --policy $work/policy.json $work/large --name large")
if command -v umoci >/dev/null; then
  cmds+=(--command-name umoci --prepare "rm -rf $work/umoci" "umoci unpack --image $work/large:bench $work/umoci")
else
  echo "umoci not installed: skipped"
  emit "import umoci - - n/a (not installed)"
fi
cmds+=(--command-name tar --prepare "rm -rf $work/tar; mkdir $work/tar" "$untar")
cmds+=(--command-name gunzip --prepare : "$gunz")
echo "== import + unpack of the ~$((mb + 2)) MB 3-layer image (busybox and the two)"
hyperfine --runs "$RUNS" --warmup 0 --export-json "$work/import.json" "${cmds[@]}" >/dev/null
rm -rf "$work/umoci" "$work/tar"
jq -r '.results as $r | ($r[] | select(.command == "hako") | .median) as $h
       | $r[] | "\(.command)\t\(.median * 1000 | floor) ms\t\(.median / $h * 100 | floor / 100)x hako"' "$work/import.json"
jq -r --arg mb "$((mb + 2))" '.results[] | "BENCH import \(.command) \(.median * 1000) ms \($mb) MB, 3 gzip layers"' \
  "$work/import.json" >&3

echo "== create --image: small (busybox, ~2 MB) vs large (~$((mb + 2)) MB)"
# The last timed import left the large image in the store.
$H image inspect large >/dev/null 2>&1 || $H image import --policy "$work/policy.json" "$work/large" --name large >/dev/null
$H image import --policy "$work/policy.json" "$work/busybox/layout" --name small >/dev/null
# Made once first, so every timed run's prepare has one to delete.
$H create --image small small && $H create --image large large
hyperfine -N --runs "$CREATE_RUNS" --warmup 2 --export-json "$work/create.json" \
  --command-name small --prepare "$H delete --force small" "$H create --image small small" \
  --command-name large --prepare "$H delete --force large" "$H create --image large large" >/dev/null
jq -r '.results[] | "\(.command)\t\(.median * 1000 * 10 | floor / 10) ms (min \(.min * 1000 * 10 | floor / 10))"' "$work/create.json"
jq -r --arg mb "$((mb + 2))" '.results[] | "BENCH create-\(.command) hako \(.median * 1000) ms \(if .command == "small" then "busybox, ~2" else $mb end) MB image"' \
  "$work/create.json" >&3
