#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU gzip 1.12 (Debian's upstream tarball of gzip, C): every object of the
# gzip program (the LZ77 deflate compressor with its hash chains and lazy
# matching in C, the Huffman tree builder and bit output, the inflate
# decoder, the decoders of the old pack, compress (LZW) and SCO LZH
# formats and of single-member zip files, CRC-32, the command line and file
# handling) and of its gnulib library (libgzip: directory, descriptor and
# file-name helpers, the safer open/dup wrappers, vasnprintf, time stamps,
# yes/no, xalloc); not the longest_match assembly; the shell-script
# programs (zcat, zgrep, ...) have no objects.
set -euo pipefail
RECIPE_NAME=gzip
RECIPE_SUMMARY="GNU gzip 1.12 from 'apt-get source gzip' (C): the gzip program's and its gnulib library's objects."
RECIPE_EXPECTED=64
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source gzip "gzip_1.12.orig.tar.xz" # not its .asc
}

recipe_build() {
  # configure would assemble lib/match.c (x86 assembly behind the C
  # preprocessor) for longest_match: an object without bitcode in place of
  # deflate.c's C version. Its cache variable says there is no assembler.
  gnu_configure_make gzip_cv_assembler=no
}

run_recipe "$@"
