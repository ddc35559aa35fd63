#!/usr/bin/env bash
# Installs every Debian package mlgo-es needs. Idempotent: safe to run on every
# build and in CI. Needs root (or sudo) on Debian 12 (bookworm).
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Corpus recipes fetch real code with `apt-get source`, which needs deb-src.
SRC_LIST=/etc/apt/sources.list.d/mlgo-es-src.sources
if [ ! -f "$SRC_LIST" ]; then
  echo "setup: adding deb-src entries ($SRC_LIST)"
  $SUDO tee "$SRC_LIST" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  NEED_UPDATE=1
fi

PACKAGES=(
  # toolchain and build
  build-essential cmake ninja-build ccache pkg-config git dpkg-dev
  # LLVM 22: clang for the evaluator, libLLVM/libclang-cpp for the library side
  clang-22 llvm-22 llvm-22-dev llvm-22-tools libclang-22-dev libclang-cpp22-dev
  lld-22 zlib1g-dev libzstd-dev libxml2-dev libedit-dev libffi-dev libncurses-dev
  # numerics, parallelism, results, CLI, tests
  libeigen3-dev libtbb-dev libhdf5-dev libcli11-dev libtomlplusplus-dev
  librandom123-dev libgtest-dev libgmock-dev libbenchmark-dev
  # training across machines (MLGO_WITH_MPI)
  libopenmpi-dev openmpi-bin
  # analysis and plots
  python3 python3-h5py python3-matplotlib python3-numpy
  # corpus recipes
  xz-utils bzip2 perl autoconf automake libtool libevent-dev
  unicode-data python3-six # re2: its generated Unicode tables
  # tests: per-process CPU time (tests/cluster)
  time
  # the run-cost measure (docs/run-cost.md): cachegrind
  valgrind
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ] || [ "${NEED_UPDATE:-0}" = 1 ]; then
  echo "setup: installing ${missing[*]:-(none; refreshing package lists)}"
  $SUDO apt-get update -q
  if [ "${#missing[@]}" -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi

# The SQLite recipe uses `npm pack`; machines of this kind ship Node.js with npm.
if ! command -v npm >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
