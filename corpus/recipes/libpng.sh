#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libpng 1.6.39 (Debian's upstream tarball, pinned): every object of the
# static libpng16 as its configure/make build makes it, with the x86 SSE2
# filter code (on by default in its CMake build); no pngfix, png-fix-itxt or
# tests. Needs zlib.h (zlib1g-dev, which scripts/setup.sh installs).
set -euo pipefail
RECIPE_NAME=libpng
RECIPE_SUMMARY="libpng 1.6.39 from 'apt-get source libpng1.6=1.6.39-2+deb12u5': the static library's objects."
RECIPE_EXPECTED=17
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libpng1.6=1.6.39-2+deb12u5 "libpng1.6_1.6.39.orig.tar.*"
}

recipe_build() {
  # --disable-shared: libtool then compiles every source once (no PIC copies).
  # configure 1.6.39 adds the MIPS and POWER sources on every CPU unless told
  # not to; on x86-64 they compile to empty modules.
  log "configure --disable-shared --enable-intel-sse"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS="$MLGO_CFLAGS" \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking \
    --enable-intel-sse --disable-mips-msa --disable-powerpc-vsx
  log "make libpng16.la"
  run_make -j"$JOBS" libpng16.la
}

run_recipe "$@"
