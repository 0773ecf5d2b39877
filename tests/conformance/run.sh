#!/bin/sh
# Runs opencontainers/runtime-tools' validation suite against one runtime and
# prints a per-test table (pass, fail, skip) and the totals; docs/conformance.md
# says how to get and build the suite. Not part of `make check`: the suite is
# fetched and built by hand, and it needs root.
#
#   tests/conformance/run.sh RUNTIME_TOOLS_DIR RUNTIME [TEST...]
#
# Each test's TAP output is kept in $LOGDIR (default /tmp/conformance-<runtime
# name>/<test>.tap). A test that leaves mounts of its bundle (/tmp/ocitest*)
# in this mount namespace has them unmounted and is flagged "leaked-mounts".
set -u

usage() {
	echo "usage: $0 RUNTIME_TOOLS_DIR RUNTIME [TEST...]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
rtdir=$(cd "$1" && pwd) || usage
runtime=$2
shift 2
case $runtime in
/*) ;;
*) runtime=$(command -v "$runtime") || { echo "$0: no runtime $2" >&2; exit 2; } ;;
esac
[ -x "$runtime" ] || { echo "$0: $runtime is not executable" >&2; exit 2; }
[ -x "$rtdir/runtimetest" ] || {
	echo "$0: $rtdir/runtimetest missing: build the suite (docs/conformance.md)" >&2
	exit 2
}
timeout=${TEST_TIMEOUT:-300}
logdir=${LOGDIR:-/tmp/conformance-$(basename "$runtime")}
mkdir -p "$logdir"

if [ $# -eq 0 ]; then
	set -- $(cd "$rtdir/validation" && for t in */*.t; do dirname "$t"; done)
fi

# Mount points under the suite's bundle dirs, deepest first.
bundle_mounts() {
	awk '$5 ~ "^/tmp/ocitest" { print $5 }' /proc/self/mountinfo | sort -r
}

cd "$rtdir" || exit 2
printf '%-40s %5s %5s %5s  %s\n' test pass fail skip note
tp=0 tf=0 ts=0 tx=0 tok=0 tbad=0 tquiet=0
for t in "$@"; do
	bin=validation/$t/$t.t
	if [ ! -x "$bin" ]; then
		printf '%-40s %5s %5s %5s  %s\n' "$t" - - - "not built"
		continue
	fi
	log=$logdir/$t.tap
	RUNTIME=$runtime timeout -k 10 "$timeout" "./$bin" >"$log" 2>"$logdir/$t.err"
	rc=$?
	note=
	[ $rc -eq 0 ] || note="exit $rc"
	[ $rc -eq 124 ] && note="timeout"
	left=$(bundle_mounts)
	if [ -n "$left" ]; then
		for m in $left; do umount -l "$m" 2>/dev/null; done
		note="$note leaked-mounts"
	fi
	counts=$(awk '
		/^ok / { if (toupper($0) ~ /# SKIP/) s++; else p++ }
		/^not ok / { if (toupper($0) ~ /# SKIP/) s++; else f++ }
		/^1\.\.[0-9]+/ { split($1, a, "\\.\\."); plan = a[2] }
		END {
			n = p + f + s
			printf "%d %d %d %s", p, f, s, (plan != "" && plan != n) ? "plan " plan " ran " n : ""
		}' "$log")
	read -r p f s extra <<EOF
$counts
EOF
	printf '%-40s %5d %5d %5d  %s\n' "$t" "$p" "$f" "$s" "$note${extra:+ $extra}"
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
	[ $rc -eq 0 ] || tx=$((tx + 1))
	# Whole tests: one passes when it exits 0 with no "not ok", and fails
	# otherwise.  Some pass printing nothing: the *_fail tests check only
	# that create refuses a bad config (and exit non-zero when it does not).
	if [ $rc -ne 0 ] || [ "$f" -gt 0 ]; then
		tbad=$((tbad + 1))
	else
		tok=$((tok + 1))
		[ "$p" -gt 0 ] || tquiet=$((tquiet + 1))
	fi
done
printf '%-40s %5d %5d %5d\n' total "$tp" "$tf" "$ts"
# The suite's own count: every "ok" line (skips included) and every "not ok".
# A test that stops early (a create the runtime refused, a check it calls
# fatal) exits non-zero and may print neither.
echo "TAP: $((tp + ts)) ok (pass + skip), $tf not ok; $tx tests exited non-zero"
echo "tests: $tok passed ($tquiet of them printing no check), $tbad failed (a not ok or a non-zero exit)"
# What the runtime (or a test that stopped early) left behind, for the caller
# to judge and remove: the cgroup tests' directories, and bundles.
left=$(ls -d /sys/fs/cgroup/cgrouptest /sys/fs/cgroup/testdir /sys/fs/cgroup/*/cgrouptest \
	/sys/fs/cgroup/*/testdir /tmp/ocitest* 2>/dev/null)
[ -z "$left" ] || printf 'left behind:\n%s\n' "$left"
