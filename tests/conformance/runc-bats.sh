#!/bin/bash
# Runs runc v1.1.5's own integration suite (tests/integration/*.bats, the 27
# files that test a runtime rather than runc's internals) against one runtime
# and prints a per-file table (pass, fail, skip) and the totals;
# docs/conformance.md ("runc's integration suite") says how to get the suite,
# its busybox image and recvtty. Not part of `make check`: the suite is fetched
# by hand and it needs root.
#
#   tests/conformance/runc-bats.sh [--runc-spec|--spec-profile P] RUNC_CHECKOUT RUNTIME [FILE...]
#
# --runc-spec: `spec` is answered by runc's own default config (runc from
#   $SPEC_RUNC, default `runc` in PATH) and every other verb goes to RUNTIME,
#   through a wrapper script; this measures the runtime apart from its spec.
# --spec-profile P: `spec` is answered by `RUNTIME spec --profile P` (hako's
#   "runc" profile is runc's default config).
#
# Each file runs under script(1), so that the terminal tests have a tty, and
# under `timeout --foreground` (a background timeout would stop them on
# SIGTTOU), for at most $TEST_TIMEOUT seconds (default 600): a test that
# fails before its own recvtty gets a connection leaves that recvtty holding
# bats's output (update.bats "minimal transition rules" on a runtime that
# refuses its config): once every test of the file has reported, a recvtty
# still running is killed, so the file ends then, not at the timeout.
# The TAP output of each file is kept in $LOGDIR (default
# /tmp/runc-bats-<runtime name>[-runcspec]/<file>.tap).
set -u

files_default="start_hello state pause start start_detached create delete tty
dev no_pivot root cwd mask seccomp exec kill list ps update hooks mounts userns
run spec version help cgroups"

usage() {
	echo "usage: $0 [--runc-spec|--spec-profile P] RUNC_CHECKOUT RUNTIME [FILE...]" >&2
	exit 2
}
runc_spec= spec_profile=
case ${1:-} in
--runc-spec)
	runc_spec=1
	shift
	;;
--spec-profile)
	spec_profile=${2:-}
	[ -n "$spec_profile" ] || usage
	shift 2
	;;
esac
[ $# -ge 2 ] || usage
runcdir=$(cd "$1" && pwd) || usage
runtime=$2
shift 2
case $runtime in
/*) ;;
*) runtime=$(command -v "$runtime") || {
	echo "$0: no runtime $2" >&2
	exit 2
} ;;
esac
[ -x "$runtime" ] || {
	echo "$0: $runtime is not executable" >&2
	exit 2
}
runtime=$(readlink -f "$runtime")
itest=$runcdir/tests/integration
for need in "$itest/helpers.bash" "$itest/testdata/busybox-amd64.tar.xz" \
	"$runcdir/contrib/cmd/recvtty/recvtty"; do
	[ -e "$need" ] || {
		echo "$0: $need missing (docs/conformance.md)" >&2
		exit 2
	}
done
for tool in bats script jq gawk; do
	command -v "$tool" >/dev/null || {
		echo "$0: $tool is needed" >&2
		exit 2
	}
done
timeout=${TEST_TIMEOUT:-600}
name=$(basename "$runtime")
logdir=${LOGDIR:-/tmp/runc-bats-$name${runc_spec:+-runcspec}${spec_profile:+-profile-$spec_profile}}
mkdir -p "$logdir"

rt=$runtime
if [ -n "$runc_spec$spec_profile" ]; then
	if [ -n "$runc_spec" ]; then
		specrunc=$(command -v "${SPEC_RUNC:-runc}") || {
			echo "$0: --runc-spec needs runc (SPEC_RUNC)" >&2
			exit 2
		}
		spec_exec="exec \"$specrunc\" \"\$@\""
	else
		# The verb and its options, with --profile P after "spec".
		spec_exec="exec \"$runtime\" \"\${args[@]:0:\$i}\" spec --profile $(printf %q "$spec_profile") \"\${args[@]:\$((i + 1))}\""
	fi
	rt=$logdir/runtime-wrapper
	# The suite calls "$RUNC" [--root DIR] [global options] VERB ...; the
	# first word that is not a global option (or its value) is the verb.
	cat >"$rt" <<EOF
#!/bin/bash
args=("\$@")
i=0
while [ \$i -lt \${#args[@]} ]; do
	case \${args[\$i]} in
	--root|--log|--log-format|--criu|--rootless) i=\$((i + 2)) ;;
	-*) i=\$((i + 1)) ;;
	spec) $spec_exec ;;
	*) break ;;
	esac
done
exec "$runtime" "\$@"
EOF
	chmod +x "$rt"
fi

[ $# -eq 0 ] && set -- $files_default

printf '%-16s %5s %5s %5s  %s\n' file pass fail skip note
tp=0 tf=0 ts=0
for f in "$@"; do
	bats_file=$itest/$f.bats
	if [ ! -f "$bats_file" ]; then
		printf '%-16s %5s %5s %5s  %s\n' "$f" - - - "no such file"
		continue
	fi
	log=$logdir/$f.tap
	cmd="cd $(printf %q "$itest") && RUNC=$(printf %q "$rt") timeout --foreground -k 10 $timeout bats --tap $(printf %q "$bats_file") >$(printf %q "$log") 2>&1; echo \$? >$(printf %q "$log.rc")"
	script -qec "$cmd" /dev/null </dev/null >/dev/null 2>&1 &
	pid=$!
	# Every test has reported, yet bats has not ended: a recvtty left by a
	# test that failed before connecting to it holds bats's output open.
	# End it rather than wait for the timeout.
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" 2>/dev/null | head -n 1)
		done_n=$(grep -c -E '^(not )?ok [0-9]+' "$log" 2>/dev/null)
		if [ -n "$plan" ] && [ "${done_n:-0}" -ge "$plan" ]; then
			sleep 5
			kill -0 "$pid" 2>/dev/null && pkill -x recvtty
		fi
	done
	wait "$pid"
	rc=$(cat "$log.rc" 2>/dev/null || echo '?')
	# TAP: "ok N name", "ok N name # skip reason", "not ok N name".
	p=$(grep -c -E '^ok [0-9]+' "$log" | tr -d ' ')
	s=$(grep -c -E '^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]' "$log" | tr -d ' ')
	x=$(grep -c -E '^not ok [0-9]+' "$log" | tr -d ' ')
	p=$((p - s))
	note=
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || note="exit $rc"
	[ "$rc" = 124 ] && note=timeout
	printf '%-16s %5d %5d %5d  %s\n' "$f" "$p" "$x" "$s" "$note"
	tp=$((tp + p)) tf=$((tf + x)) ts=$((ts + s))
done
printf '%-16s %5d %5d %5d\n' total "$tp" "$tf" "$ts"
