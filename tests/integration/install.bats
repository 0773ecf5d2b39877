#!/usr/bin/env bats
# make install: what it puts in a DESTDIR works on its own. The Python SDK
# is imported from the installed site-packages alone (python3 -I -S: no
# PYTHONPATH, no source tree, no other site-packages) and runs a sandbox
# with the installed hako (issue 33: an installed SDK missing _proc.py).

load helpers

setup_file () { hako_setup_file; }
setup () {
  hako_setup
  # The build tree: make check passes it; else the one that holds $HAKO.
  BUILD=${HAKO_BUILD:-$(dirname "$HAKO")}
  SRC=${HAKO_SRC:-$BATS_TEST_DIRNAME/../..}
  [ -f "$BUILD/Makefile" ] || skip "no build tree at $BUILD (HAKO_BUILD)"
}
teardown () { hako_teardown; }

@test "install: the SDK installed in a DESTDIR imports on its own and runs a sandbox" {
  dest=$TEST_ROOT/dest
  # A make of its own, not a sub-make of make check's (its jobserver and
  # command-line variables): nothing is rebuilt in a built tree.
  run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
    make -s -C "$BUILD" install DESTDIR="$dest"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  bin=$(find "$dest" -path '*/bin/hako' -type f)
  init=$(find "$dest" -path '*/hako/__init__.py')
  [ -x "$bin" ] || { find "$dest"; false; }
  [ -f "$init" ] || { find "$dest"; false; }
  site=${init%/hako/__init__.py}
  cd "$TEST_ROOT"
  run python3 -I -S - "$site" "$bin" "$STATE" "$DATA" <<'PY'
import sys
site, binary, root, data = sys.argv[1:]
sys.path.insert(0, site)
import hako
assert hako.__file__.startswith(site + "/"), hako.__file__
with hako.Sandbox.create(profile="host", hako=binary, root=root, data_root=data) as sb:
    print(sb.commands.run("echo hi").stdout, end="")
    print("running:", sb.is_running())
print("left:", hako.Sandbox.list(hako=binary, root=root, data_root=data))
PY
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$output" = "$(printf 'hi\nrunning: True\nleft: []')" ]
  # And every module of the source tree is there (the file list comes from the tree).
  for f in "$SRC"/python/hako/*.py; do
    [ -f "$site/hako/${f##*/}" ] || { echo "not installed: ${f##*/}"; false; }
  done
  [ -f "$site/hako/py.typed" ]
}
