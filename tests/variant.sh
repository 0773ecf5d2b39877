#!/bin/sh
# Compile everything below cmd/ (what libhako.a holds) once more, with other
# flags, into OUT/libvariant.a — for the fuzz targets (clang + libFuzzer) and
# the sanitizer slice of `make check` (ASan + UBSan).  It works whether the
# main build is in the source tree or not, which a second configure would not.
#   variant.sh SRCDIR BUILDDIR OUT CC FLAGS...
# BUILDDIR holds config.h.  FLAGS go to every compile; prints the build log
# on failure.
set -u
src=$1 build=$2 out=$3 cc=$4
shift 4
mkdir -p "$out"
VARIANT_CC=$cc VARIANT_FLAGS="-std=gnu11 -g -I$src -I$build -include config.h -DHAKO_VERSION=\"variant\"
  -DHAKO_INIT_PATH=\"$build/init/hako-init\" $*"
export VARIANT_CC VARIANT_FLAGS
# The init's bytes (init/blob.c) come from the main build's init/hako-init.
for c in "$src"/lib/*.c "$src"/oci/*.c "$src"/oci/*/*.c "$src"/runtime/*.c "$src"/runtime/*/*.c "$src"/images/*.c "$src"/init/blob.c; do
  [ -e "$c" ] || continue
  echo "$c $out/$(basename "$(dirname "$c")")_$(basename "$c" .c).o"
done > "$out/sources"
if ! xargs -n 2 -P "$(nproc)" sh -c '$VARIANT_CC $VARIANT_FLAGS -c "$0" -o "$1"' \
     < "$out/sources" > "$out/build.log" 2>&1; then
  cat "$out/build.log"
  exit 1
fi
rm -f "$out/libvariant.a"
ar rcs "$out/libvariant.a" $(awk '{print $2}' "$out/sources")
