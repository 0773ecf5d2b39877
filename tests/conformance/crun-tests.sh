#!/bin/sh
# Runs crun's own python test suite (tests/test_*.py of a crun checkout) against
# one runtime and prints a per-file table (pass, fail, skip) and the totals;
# docs/conformance.md ("crun's test suite") says how to get the suite and build
# its static tests/init. Not part of `make check`: the suite is fetched by hand
# and it needs root.
#
#   tests/conformance/crun-tests.sh CRUN_DIR RUNTIME [test_X.py...]
#
# Each file's TAP output (stdout and stderr) is kept in $LOGDIR (default
# /tmp/crun-tests-<runtime name>/<file>.tap). RUN_TESTS, as crun's suite reads
# it, limits a file to the named tests.
set -u

usage() {
	echo "usage: $0 CRUN_DIR RUNTIME [test_X.py...]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
crundir=$(cd "$1" && pwd) || usage
runtime=$2
shift 2
case $runtime in
/*) ;;
*) runtime=$(command -v "$runtime") || { echo "$0: no runtime $2" >&2; exit 2; } ;;
esac
[ -x "$runtime" ] || { echo "$0: $runtime is not executable" >&2; exit 2; }
init=${INIT:-$crundir/tests/init}
[ -x "$init" ] || {
	echo "$0: $init missing: build it static (docs/conformance.md)" >&2
	exit 2
}
timeout=${TEST_TIMEOUT:-600}
logdir=${LOGDIR:-/tmp/crun-tests-$(basename "$runtime")}
mkdir -p "$logdir"

if [ $# -eq 0 ]; then
	set -- $(cd "$crundir/tests" && ls test_*.py)
fi

# The suite copies ./tests/init into each rootfs and keeps its state under
# ./.testsuite-run-PID, so it runs from the checkout's top directory.
cd "$crundir" || exit 2
printf '%-28s %5s %5s %5s  %s\n' file pass fail skip note
tp=0 tf=0 ts=0
for f in "$@"; do
	f=${f##*/}
	log=$logdir/$f.tap
	if [ ! -f "tests/$f" ]; then
		printf '%-28s %5s %5s %5s  %s\n' "$f" - - - "no such file"
		continue
	fi
	OCI_RUNTIME=$runtime INIT=$init timeout --foreground -k 10 "$timeout" \
		python3 "tests/$f" >"$log" 2>&1 </dev/null
	rc=$?
	p=$(grep -c '^ok .*#SKIP' "$log")
	s=$p
	p=$(($(grep -c '^ok ' "$log") - s))
	fl=$(grep -c '^not ok ' "$log")
	note=
	[ "$rc" -eq 124 ] && note=timeout
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | head -n 1)
	if [ -n "$plan" ] && [ $((p + s + fl)) -lt "$plan" ]; then
		note="${note:+$note,}ran $((p + s + fl)) of $plan"
	fi
	printf '%-28s %5d %5d %5d  %s\n' "$f" "$p" "$fl" "$s" "$note"
	tp=$((tp + p)) tf=$((tf + fl)) ts=$((ts + s))
done
printf '%-28s %5d %5d %5d\n' total "$tp" "$tf" "$ts"
echo "logs: $logdir"
