#!/bin/sh
# Build every fuzz target with clang's libFuzzer (+ ASan/UBSan) and run each
# for a bounded time, printing TAP: one test per target, "ok" when it ran its
# time without a crash, leak or sanitizer report.  The seeds in corpus/<target>
# are copied, never written to.
#   run.sh SRCDIR BUILDDIR SECONDS
# Environment: DEP_CFLAGS / DEP_LIBS (the dependencies' flags, from make).
set -u
src=$1 build=$2 secs=$3
targets=${FUZZ_TARGETS:-"fuzz_spec fuzz_json fuzz_state fuzz_exec_result fuzz_parse fuzz_proxy_http fuzz_netrule fuzz_image_json fuzz_policy fuzz_unpack"}
n=$(echo $targets | wc -w)
echo "1..$n"
skip_all () {
  i=1; for t in $targets; do echo "ok $i - $t # skip $1"; i=$((i + 1)); done; exit 0
}
[ "$secs" -gt 0 ] 2>/dev/null || skip_all "FUZZ_SECONDS=0"
command -v clang > /dev/null || skip_all "clang not installed (Debian: clang)"
work=$(mktemp -d /tmp/hako-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' > "$work/probe.c"
clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2> /dev/null \
  || skip_all "clang cannot link libFuzzer (Debian: libclang-rt-14-dev)"

flags="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
flags="$flags ${DEP_CFLAGS:-}"
if ! "$src/tests/variant.sh" "$src" "$build" "$work/lib" clang $flags -fsanitize=fuzzer-no-link \
     > "$work/build.log" 2>&1; then
  sed 's/^/# /' "$work/build.log" | head -30
  i=1; for t in $targets; do echo "not ok $i - $t: build failed"; i=$((i + 1)); done; exit 1
fi
flags="-std=gnu11 -g -I$src -I$build -include config.h $flags"

i=1
for t in $targets; do
  bin="$work/$t"
  if ! clang $flags -fsanitize=fuzzer "$src/tests/fuzz/$t.c" "$work/lib/libvariant.a" ${DEP_LIBS:-} -o "$bin" \
       > "$work/$t.build" 2>&1; then
    sed 's/^/# /' "$work/$t.build" | head -20
    echo "not ok $i - $t: build failed"; i=$((i + 1)); continue
  fi
  mkdir -p "$work/$t.corpus"
  seeds="$src/tests/fuzz/corpus/$t"
  [ -d "$seeds" ] || seeds=""
  if (cd "$work" && "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
        -artifact_prefix="$work/$t-" -print_final_stats=1 "$work/$t.corpus" $seeds \
        > "$work/$t.log" 2>&1); then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
    echo "ok $i - $t: ${execs:-?} executions in ${secs}s, no crash"
  else
    grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$work/$t.log" | head -15 | sed 's/^/# /'
    for a in "$work/$t-"*; do
      [ -e "$a" ] && echo "# crashing input (base64): $(base64 -w0 "$a" | head -c 2000)"
    done
    echo "not ok $i - $t: crashed (reproduce: save the input above and run the target on it)"
  fi
  i=$((i + 1))
done
