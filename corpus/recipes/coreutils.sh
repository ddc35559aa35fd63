#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU coreutils 9.1 (Debian's upstream tarball): the objects of every program
# and of gnulib's libcoreutils.a. configure runs at -O0 (its hundreds of test
# compiles are faster); make then builds every object with our flags.
set -euo pipefail
RECIPE_NAME=coreutils
RECIPE_SUMMARY="GNU coreutils 9.1 from 'apt-get source coreutils': program and gnulib objects."
RECIPE_EXPECTED=405
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source coreutils "coreutils_9.1.orig.tar.xz"
}

recipe_build() {
  gnu_configure_make
}

run_recipe "$@"
