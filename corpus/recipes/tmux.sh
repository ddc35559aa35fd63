#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# tmux 3.3a (Debian's upstream tarball): every object of the tmux program,
# with its compat/ replacements, from configure/make. It links libevent and
# ncurses (libevent-dev, libncurses-dev: scripts/setup.sh).
set -euo pipefail
RECIPE_NAME=tmux
RECIPE_SUMMARY="tmux 3.3a from 'apt-get source tmux': the terminal multiplexer's objects (needs libevent and ncurses)."
RECIPE_EXPECTED=143
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source tmux "tmux_3.3a.orig.tar.*"
}

recipe_build() {
  log "configure"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS="$MLGO_CFLAGS" --disable-dependency-tracking
  log "make"
  run_make -j"$JOBS"
}

run_recipe "$@"
