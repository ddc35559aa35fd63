#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Git 2.39.5 (Debian's upstream tarball): every object of the git program
# (libgit.a, xdiff, reftable and the builtins) from its own Makefile, without
# configure; no curl, expat, OpenSSL, gettext, Perl, Python or Tcl/Tk, so
# that only zlib (scripts/setup.sh) is needed.
set -euo pipefail
RECIPE_NAME=git
RECIPE_SUMMARY="Git 2.39.5 from 'apt-get source git': the git program's objects (libgit, xdiff, reftable, builtins)."
RECIPE_EXPECTED=396
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source git "git_2.39.5.orig.tar.*"
}

recipe_build() {
  log "make git (about 5 minutes)"
  run_make -j"$JOBS" CC="$CC" AR="$AR" CFLAGS="$MLGO_CFLAGS" NO_CURL=1 NO_EXPAT=1 \
    NO_OPENSSL=1 NO_GETTEXT=1 NO_PERL=1 NO_PYTHON=1 NO_TCLTK=1 git
}

run_recipe "$@"
