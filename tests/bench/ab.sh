#!/bin/sh
# tests/bench/ab.sh A B [RUNS]: `run --rm /bin/true` (and with EXEC=1, `exec
# true`) of two hako binaries, interleaved run by run (A, B, A, B, ...) so a
# loaded machine's drift moves both alike; prints each median and B/A.
# For a before/after ratio of one change on a busy machine.  Needs root.
set -u
here=$(cd "$(dirname "$0")" && pwd)
A=$1 B=$2 RUNS=${3:-40}
tmp=$(mktemp -d "${TMPDIR:-/tmp}"/hako-ab.XXXXXX) || exit 1
chmod 711 "$tmp"
mkdir -p "$tmp/s" && mount -t tmpfs -o size=64m,mode=700 hako-ab "$tmp/s" || exit 1
trap '$A --root $tmp/s/r --data-root $tmp/s/d delete --force ab-box > /dev/null 2>&1; umount "$tmp/s"; rm -rf "$tmp"' EXIT INT TERM
"$here/../fixtures/make-bundle.sh" "$tmp/bundle" runc > /dev/null || exit 1
now () { date +%s%N; }
median () { sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
one () { # BIN: ms of one run
  t0=$(now)
  $1 --root "$tmp/s/r" --data-root "$tmp/s/d" run --rm --bundle "$tmp/bundle" ab || exit 1
  t1=$(now)
  echo "$(((t1 - t0) / 1000))" | awk '{ print $1 / 1000 }'
}
i=0
while [ $i -lt "$RUNS" ]; do
  one "$A" >> "$tmp/a"
  one "$B" >> "$tmp/b"
  i=$((i + 1))
done
ma=$(median < "$tmp/a") mb=$(median < "$tmp/b")
echo "run /bin/true: A $ma ms, B $mb ms, B/A $(echo "$mb $ma" | awk '{ printf "%.3f", $1 / $2 }') ($RUNS each, interleaved; load $(cut -d' ' -f1-3 /proc/loadavg))"
if [ "${EXEC:-0}" = 1 ]; then
  cp -r "$tmp/bundle" "$tmp/box"
  jq '.process.args = ["sleep", "1000"]' "$tmp/bundle/config.json" > "$tmp/box/config.json"
  $A --root "$tmp/s/r" --data-root "$tmp/s/d" run --detach --bundle "$tmp/box" ab-box || exit 1
  : > "$tmp/a"; : > "$tmp/b"
  i=0
  while [ $i -lt "$RUNS" ]; do
    for bin in "$A" "$B"; do
      t0=$(now); $bin --root "$tmp/s/r" --data-root "$tmp/s/d" exec ab-box true || exit 1; t1=$(now)
      echo "$(((t1 - t0) / 1000))" | awk '{ print $1 / 1000 }' >> "$tmp/$([ "$bin" = "$A" ] && echo a || echo b)"
    done
    i=$((i + 1))
  done
  ma=$(median < "$tmp/a") mb=$(median < "$tmp/b")
  echo "exec true: A $ma ms, B $mb ms, B/A $(echo "$mb $ma" | awk '{ printf "%.3f", $1 / $2 }')"
fi
