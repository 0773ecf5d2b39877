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

@test "install: with the default prefix, Debian's python3 imports the SDK from where make install put it" {
  [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
  prefix=$(sed -n 's/^prefix = //p' "$BUILD/Makefile")
  [ "$prefix" = /usr/local ] || skip "configured with --prefix=$prefix, not the default"
  dest=$TEST_ROOT/dest
  run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
    make -s -C "$BUILD" install DESTDIR="$dest" PYTHON3=/usr/bin/python3
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  init=$(find "$dest" -path '*/hako/__init__.py')
  site=${init%/hako/__init__.py}
  site=${site#"$dest"}
  # The directory is one /usr/bin/python3 reads (dist-packages on Debian),
  # so a plain `make install` gives `import hako` with no PYTHONPATH.
  run /usr/bin/python3 -c 'import sys; print("\n".join(sys.path))'
  printf '%s\n' "$output" | grep -qx "$site" || { echo "installed in $site; python3 reads: $output"; false; }
}
