# shellcheck shell=bash
# Shared machinery of the corpus recipes; sourced, never run.
#
# A recipe sets RECIPE_NAME, RECIPE_SUMMARY and RECIPE_EXPECTED, defines
#   recipe_fetch   download into $DOWNLOAD_DIR (use fetch_apt_source / fetch_npm)
#                  and set SOURCE_ARCHIVE
#   recipe_build   build in $OBJDIR (already holds the unpacked SOURCE_ARCHIVE),
#                  every C or C++ file with $CC $MLGO_CFLAGS or $CXX $MLGO_CXXFLAGS,
#                  one object per source file
#   recipe_prune   optional: delete objects that merge other objects (ld -r)
# and ends with `run_recipe "$@"`. A recipe may also declare a benchmark (a
# program built from the code base and a workload it runs; docs/run-cost.md):
#   recipe_benchmark_link    in $OBJDIR after recipe_build: link the
#                            program(s) with $CC / $CXX $MLGO_CFLAGS (our own
#                            drivers live in corpus/benchmarks/NAME/)
#   recipe_benchmark_input DIR SCALE
#                            write the workload into DIR, the same bytes on
#                            every machine (SCALE: tiny for tests, full)
#   recipe_benchmark_run DIR run the workload in DIR (the working directory),
#                            each program started as `bench_exec PROGRAM …`;
#                            what it prints is the output every build of the
#                            benchmark must reproduce
#
# Layout, all under $MLGO_BUILD_DIR/corpora:
#   _downloads/NAME/          cached downloads (.complete marks a finished one)
#   NAME/build/               unpacked and built source = OBJDIR handed to
#                             `mlgo-corpus extract`; the module M is $OBJDIR/M
#   NAME/corpus/              the extracted corpus (corpus_description.json, *.bc, *.cmd)
#   NAME/build.log            output of fetch, configure and make
#   NAME/build.stamp          the build finished (a later run only extracts)
#   NAME/corpus.stamp         the whole recipe finished (a later run is "cached")

RECIPES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$RECIPES_DIR/../.." && pwd)"

# Flags every C or C++ file of every corpus is compiled with. -fembed-bitcode=all
# puts the optimisation-ready bitcode (.llvmbc) and the -cc1 command (.llvmcmd)
# into each object; -w keeps old code bases quiet under a new clang. C++ gets
# the same flags so that C and C++ corpora are optimised alike.
# MLGO_RECIPE_CFLAGS replaces them for a --build-only build that is timed
# rather than extracted (bench/deploy/build-once.sh: plain -Oz, no bitcode).
MLGO_CFLAGS="${MLGO_RECIPE_CFLAGS:--Oz -Xclang -fembed-bitcode=all -w}"
MLGO_CXXFLAGS="$MLGO_CFLAGS"

log() { echo "$RECIPE_NAME: $*"; }
die() {
  echo "$RECIPE_NAME: error: $*" >&2
  exit 1
}

usage() {
  cat <<EOF
Usage: $(basename "$0") [--force] [--build-only] [--opt-level O2] [--verbose] [--help]

$RECIPE_SUMMARY

Builds every C or C++ file with clang-22 and '$MLGO_CFLAGS', then extracts
the embedded bitcode and commands into an MLGO corpus (about $RECIPE_EXPECTED modules):
  \$MLGO_BUILD_DIR/corpora/$RECIPE_NAME/build    source and objects (the object of module M is build/M)
  \$MLGO_BUILD_DIR/corpora/$RECIPE_NAME/corpus   corpus_description.json, <module>.bc, <module>.cmd
Downloads are cached in \$MLGO_BUILD_DIR/corpora/_downloads. A finished run is
not repeated. The last line printed is 'corpus: <dir> (<N> modules)'.

Options:
  --force       rebuild and re-extract even if a finished corpus exists
  --build-only  build the objects but do not extract (no mlgo-corpus needed)
  --verbose     also show the build output (always in <work dir>/build.log)
  --launcher MLGO_CC
                build with a compiler launcher instead of plain clang-22: make
                builds get CC=MLGO_CC and CXX=<its directory>/mlgo-c++, CMake
                builds CMAKE_<LANG>_COMPILER_LAUNCHER=MLGO_CC (the policy comes
                from MLGO_POLICY); needs --work-dir, implies --build-only
  --work-dir DIR
                build in DIR/build instead of \$MLGO_BUILD_DIR/corpora/$RECIPE_NAME
  --opt-level O2
                the -O2 flavour (register-allocation tasks): every file with -O2
                instead of -Oz, in \$MLGO_BUILD_DIR/corpora/$RECIPE_NAME-O2
  --benchmark   build the recipe's benchmark program in --work-dir (as
                --build-only, with '-Oz -w' or MLGO_RECIPE_CFLAGS, through
                --launcher if given) and link it; a finished one is kept
  --benchmark-input DIR
                write the benchmark's workload into DIR (--workload tiny|full,
                default full); needs no build
  --benchmark-run DIR
                run the benchmark built in --work-dir on the workload in DIR,
                each program under \$MLGO_BENCH_EXEC (e.g. valgrind …); prints
                the benchmark's output
  --help        show this help

Environment:
  MLGO_BUILD_DIR  build directory (default: <repo>/build; now: $MLGO_BUILD_DIR)
  MLGO_CORPUS     extraction tool (default: \$MLGO_BUILD_DIR/apps/mlgo-corpus)
  MLGO_JOBS       parallel make jobs (default: 2)
  LLVM_BINDIR     where clang, clang++ and llvm-ar live (default: llvm-config-22 --bindir)
EOF
}

# --- tools and paths -------------------------------------------------------

setup_environment() {
  MLGO_BUILD_DIR="$(realpath -m "${MLGO_BUILD_DIR:-$REPO_ROOT/build}")"
  MLGO_CORPUS="${MLGO_CORPUS:-$MLGO_BUILD_DIR/apps/mlgo-corpus}"
  # shellcheck disable=SC2034  # used by the recipes
  JOBS="${MLGO_JOBS:-2}"

  CORPORA_DIR="$MLGO_BUILD_DIR/corpora"
  DOWNLOAD_DIR="$CORPORA_DIR/_downloads/$RECIPE_NAME"
  set_work_dir "$CORPORA_DIR/$RECIPE_NAME"
}

set_work_dir() {
  WORK_DIR="$1"
  OBJDIR="$WORK_DIR/build"
  CORPUSDIR="$WORK_DIR/corpus"
  LOG_FILE="$WORK_DIR/build.log"
  BUILD_STAMP="$WORK_DIR/build.stamp"
  CORPUS_STAMP="$WORK_DIR/corpus.stamp"
}

setup_toolchain() {
  if [ -z "${LLVM_BINDIR:-}" ]; then
    LLVM_BINDIR="$(llvm-config-22 --bindir 2>/dev/null || echo /usr/lib/llvm-22/bin)"
  fi
  CLANG="$LLVM_BINDIR/clang"
  CLANGXX="$LLVM_BINDIR/clang++"
  CC="$CLANG"
  CXX="$CLANGXX"
  AR="$LLVM_BINDIR/llvm-ar"
  NM="$LLVM_BINDIR/llvm-nm"
  RANLIB="$LLVM_BINDIR/llvm-ranlib"
  OBJCOPY="$LLVM_BINDIR/llvm-objcopy"
  local tool
  for tool in "$CC" "$CXX" "$AR" "$NM" "$RANLIB" "$OBJCOPY"; do
    [ -x "$tool" ] || die "$tool not found; install clang-22 and llvm-22 (scripts/setup.sh)"
  done
  "$CC" --version | head -n1 | grep -q 'version 22\.' ||
    die "$CC is not clang 22 ($("$CC" --version | head -n1)); set LLVM_BINDIR"
  if [ -n "$LAUNCHER" ]; then
    CC="$LAUNCHER"
    CXX="$(dirname "$LAUNCHER")/mlgo-c++"
    [ -x "$CXX" ] || die "$CXX not found beside the launcher"
  fi
  command -v python3 >/dev/null || die "python3 not found"
  export CC CXX AR NM RANLIB
}

check_extractor() {
  [ -x "$MLGO_CORPUS" ] ||
    die "$MLGO_CORPUS not found: build the project first (cmake --build build), or set MLGO_CORPUS"
}

# Runs a command with its output appended to the log; on failure shows the end
# of the log and stops.
run_logged() {
  echo "+ $*" >>"$LOG_FILE"
  local status=0
  if [ "$VERBOSE" = 1 ]; then
    "$@" 2>&1 | tee -a "$LOG_FILE" || status=$?
  else
    "$@" >>"$LOG_FILE" 2>&1 || status=$?
  fi
  if [ "$status" -ne 0 ]; then
    echo "$RECIPE_NAME: command failed (exit $status): $*" >&2
    echo "$RECIPE_NAME: last lines of $LOG_FILE:" >&2
    tail -n 25 "$LOG_FILE" | sed "s/^/  | /" >&2
    exit 1
  fi
}

# Heavy work (compiles) runs at lower priority: the machine is shared.
run_make() { run_logged nice -n 10 make "$@"; }

# gnu_configure_make [CONFIGURE-FLAG...]: a GNU package with gnulib
# (coreutils, findutils, diffutils): configure at -O0 (its hundreds of test
# compiles are faster; FORCE_UNSAFE_CONFIGURE lets it run as root), then make
# builds every object with our flags.
gnu_configure_make() {
  log "configure (CFLAGS=-O0, about a minute)"
  run_logged nice -n 10 env FORCE_UNSAFE_CONFIGURE=1 \
    ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-dependency-tracking "$@"
  log "make -j$JOBS (a few minutes)"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

# cmake_configure [-DOPTION=VALUE...]: configures the CMake project in the
# current directory (OBJDIR) into the fixed build directory _b (fixed, so that
# module names are stable), for `run_make -C _b TARGET...`. The empty build
# type keeps CMake from appending -O2/-O3 to our flags, and the per-type
# flags are emptied for projects that pick a build type of their own when none
# is given (libwebp, libarchive and ZeroMQ choose Release: -O3); static
# libraries and no tests, unless the recipe's options say otherwise.
cmake_configure() {
  command -v cmake >/dev/null || die "cmake not found (scripts/setup.sh installs it)"
  local launch=() no_type_flags=() type language
  for type in RELEASE RELWITHDEBINFO MINSIZEREL DEBUG; do
    for language in C CXX; do no_type_flags+=("-DCMAKE_${language}_FLAGS_${type}="); done
  done
  [ -z "$LAUNCHER" ] ||
    launch=(-DCMAKE_C_COMPILER_LAUNCHER="$LAUNCHER" -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER")
  run_logged nice -n 10 cmake -S . -B _b -G 'Unix Makefiles' \
    -DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="$CLANGXX" "${launch[@]}" \
    -DCMAKE_AR="$AR" -DCMAKE_RANLIB="$RANLIB" \
    -DCMAKE_C_FLAGS="$MLGO_CFLAGS" -DCMAKE_CXX_FLAGS="$MLGO_CXXFLAGS" \
    -DCMAKE_BUILD_TYPE= -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF "${no_type_flags[@]}" "$@"
}

# --- downloads -------------------------------------------------------------

# fetch_apt_source PACKAGE[=VERSION] ARCHIVE_GLOB
# Downloads a Debian source package (needs deb-src entries: scripts/setup.sh)
# and sets SOURCE_ARCHIVE to the one file matching ARCHIVE_GLOB, normally the
# upstream tarball (*.orig.tar.*) so that Debian's patches play no part.
fetch_apt_source() {
  local spec="$1" glob="$2"
  if [ ! -f "$DOWNLOAD_DIR/.complete" ]; then
    log "downloading Debian source package $spec"
    rm -rf "$DOWNLOAD_DIR"
    mkdir -p "$DOWNLOAD_DIR"
    local status=0
    (cd "$DOWNLOAD_DIR" && apt-get source --download-only -q "$spec") >>"$LOG_FILE" 2>&1 || status=$?
    if [ "$status" -ne 0 ] && [[ "$spec" != *=* ]]; then
      # The newest version may be listed but missing from the mirror (a
      # security update whose pool is not reachable): try the others, newest
      # first. Recipes use the upstream tarball, the same in every revision.
      local version
      for version in $(apt-cache showsrc "$spec" 2>/dev/null | sed -n 's/^Version: //p' |
        sort -u -r -V); do
        log "retrying with $spec=$version"
        # A failed attempt may have left its upstream tarball behind: start
        # clean so that the archive glob matches one file.
        find "$DOWNLOAD_DIR" -mindepth 1 -delete
        status=0
        (cd "$DOWNLOAD_DIR" && apt-get source --download-only -q "$spec=$version") \
          >>"$LOG_FILE" 2>&1 || status=$?
        [ "$status" -ne 0 ] || break
      done
    fi
    if [ "$status" -ne 0 ]; then
      tail -n 5 "$LOG_FILE" | sed "s/^/  | /" >&2
      die "apt-get source $spec failed; deb-src entries and a fresh 'apt-get update' are needed (scripts/setup.sh does both)"
    fi
    touch "$DOWNLOAD_DIR/.complete"
  else
    log "using cached download of $spec"
  fi
  set_source_archive "$glob"
}

# fetch_npm PACKAGE@VERSION: sets SOURCE_ARCHIVE to the packed tarball.
fetch_npm() {
  local spec="$1"
  command -v npm >/dev/null || die "npm not found (scripts/setup.sh installs it)"
  if [ ! -f "$DOWNLOAD_DIR/.complete" ]; then
    log "downloading npm package $spec"
    rm -rf "$DOWNLOAD_DIR"
    mkdir -p "$DOWNLOAD_DIR"
    run_logged npm pack --silent --pack-destination "$DOWNLOAD_DIR" "$spec"
    touch "$DOWNLOAD_DIR/.complete"
  else
    log "using cached download of $spec"
  fi
  set_source_archive "*.tgz"
}

set_source_archive() {
  local glob="$1" matches=()
  shopt -s nullglob
  # shellcheck disable=SC2206  # the glob must expand here
  matches=("$DOWNLOAD_DIR"/$glob)
  shopt -u nullglob
  [ "${#matches[@]}" -eq 1 ] ||
    die "expected one file matching $glob in $DOWNLOAD_DIR, found ${#matches[@]} (delete the directory to download again)"
  SOURCE_ARCHIVE="${matches[0]}"
}

# Unpacks SOURCE_ARCHIVE into OBJDIR, dropping its top-level directory.
unpack_source() {
  log "unpacking $(basename "$SOURCE_ARCHIVE")"
  mkdir -p "$OBJDIR"
  run_logged tar -xf "$SOURCE_ARCHIVE" -C "$OBJDIR" --strip-components=1 --no-same-owner
}

# --- objects ---------------------------------------------------------------

# Lists the ELF files under a directory as "<kind> <path>", kind being
#   module   relocatable object with .llvmbc and .llvmcmd (what the corpus is made of)
#   foreign  relocatable object without embedded bitcode (host compiler, assembly)
#   linked   executable or shared library carrying .llvmbc/.llvmcmd of its inputs
#   other    anything else (plain executables, ...)
# Archives are not ELF files and are not listed.
scan_elf_files() {
  python3 - "$1" <<'PY'
import os, struct, sys

def sections(f, head):
    bits64 = head[4] == 2
    end = "<" if head[5] == 1 else ">"
    if bits64:
        e_type, = struct.unpack_from(end + "H", head, 16)
        shoff, = struct.unpack_from(end + "Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", head, 0x3A)
    else:
        e_type, = struct.unpack_from(end + "H", head, 16)
        shoff, = struct.unpack_from(end + "I", head, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", head, 0x2E)
    if shoff == 0 or shnum == 0:
        return e_type, set()
    f.seek(shoff)
    table = f.read(shentsize * shnum)
    def header(i):
        if bits64:
            name, _, _, _, off, size = struct.unpack_from(end + "IIQQQQ", table, i * shentsize)
        else:
            name, _, _, _, off, size = struct.unpack_from(end + "IIIIII", table, i * shentsize)
        return name, off, size
    _, stroff, strsize = header(shstrndx)
    f.seek(stroff)
    strtab = f.read(strsize)
    names = set()
    for i in range(shnum):
        name = header(i)[0]
        names.add(strtab[name:strtab.index(b"\0", name)].decode("latin-1"))
    return e_type, names

for root, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(files):
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF":
                continue
            try:
                e_type, names = sections(f, head)
            except (struct.error, ValueError):
                continue
        embedded = ".llvmbc" in names or ".llvmcmd" in names
        if e_type == 1:
            kind = "module" if {".llvmbc", ".llvmcmd"} <= names else ("foreign" if not embedded else "partial")
        elif e_type in (2, 3) and embedded:
            kind = "linked"
        else:
            kind = "other"
        print(kind, path)
PY
}

# Leaves in OBJDIR only relocatable objects that are corpus modules: deletes
# objects without embedded bitcode (host tools built by gcc, assembly) and
# strips the concatenated .llvmbc/.llvmcmd of linked executables, which are
# not modules.
prune_objdir() {
  local kind path modules=0 foreign=0 linked=0
  while read -r kind path; do
    case "$kind" in
      module) modules=$((modules + 1)) ;;
      foreign)
        echo "prune: delete object without bitcode: $path" >>"$LOG_FILE"
        rm -f "$path"
        foreign=$((foreign + 1))
        ;;
      linked)
        echo "prune: strip embedded bitcode from linked file: $path" >>"$LOG_FILE"
        run_logged "$OBJCOPY" --remove-section=.llvmbc --remove-section=.llvmcmd "$path"
        linked=$((linked + 1))
        ;;
      partial) die "$path has only one of .llvmbc/.llvmcmd" ;;
    esac
  done < <(scan_elf_files "$OBJDIR")
  [ "$foreign" -eq 0 ] || log "deleted $foreign objects without embedded bitcode (host tools; listed in build.log)"
  [ "$linked" -eq 0 ] || log "stripped embedded bitcode from $linked linked executables"
  [ "$modules" -gt 0 ] || die "no objects with embedded bitcode in $OBJDIR"
  log "objects with embedded bitcode: $modules"
}

count_modules() {
  python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["modules"]))' \
    "$CORPUSDIR/corpus_description.json"
}

# --- benchmarks ------------------------------------------------------------

BENCHMARKS_DIR="$REPO_ROOT/corpus/benchmarks"

# Links the benchmark in OBJDIR once per build (benchmark.stamp).
benchmark_link() {
  local stamp="$WORK_DIR/benchmark.stamp"
  if [ ! -f "$stamp" ] || [ "$BUILD_STAMP" -nt "$stamp" ]; then
    log "linking the benchmark"
    (
      cd "$OBJDIR" || exit 1
      recipe_benchmark_link
    )
    echo "$RECIPE_NAME benchmark linked $(date -u +%FT%TZ)" >"$stamp"
  fi
  echo "benchmark: $OBJDIR"
}

# bench_exec PROGRAM ARGS…: a benchmark's program, under $MLGO_BENCH_EXEC
# (word-split: a measuring tool and its flags) when set.
bench_exec() {
  # shellcheck disable=SC2086  # a command and its flags
  ${MLGO_BENCH_EXEC:-} "$@"
}

# Runs the benchmark built in OBJDIR on the workload in DIR (its working
# directory), with the toolchain's environment; what it prints is the output.
benchmark_run() {
  local dir="$1"
  [ -f "$WORK_DIR/benchmark.stamp" ] || die "no benchmark built in $WORK_DIR (--benchmark first)"
  [ -d "$dir" ] || die "--benchmark-run $dir: no such directory (--benchmark-input makes it)"
  cd "$dir" || exit 1
  recipe_benchmark_run "$dir"
  exit 0
}

# A deterministic workload file (corpus/benchmarks/workload.py): KIND is
# text, binary or mixed, BYTES its size, SEED the stream.
workload_file() {
  python3 "$BENCHMARKS_DIR/workload.py" "$@"
}

# --- the recipe ------------------------------------------------------------

run_recipe() {
  FORCE=0
  BUILD_ONLY=0
  VERBOSE=0
  LAUNCHER=""
  local work_dir="" opt_level="" benchmark="" benchmark_dir="" workload=full
  BENCHMARK_BUILD=""
  setup_environment
  while [ $# -gt 0 ]; do
    case "$1" in
      --force) FORCE=1 ;;
      --launcher)
        [ $# -ge 2 ] || die "--launcher needs the path of mlgo-cc"
        LAUNCHER="$(realpath "$2")"
        [ -x "$LAUNCHER" ] || die "--launcher $2: not an executable"
        shift
        ;;
      --work-dir)
        [ $# -ge 2 ] || die "--work-dir needs a directory"
        work_dir="$(realpath -m "$2")"
        shift
        ;;
      --opt-level)
        [ $# -ge 2 ] || die "--opt-level needs a level (Oz or O2)"
        case "$2" in
          Oz) ;;
          O2 | O3 | Os | O1)
            # Its own corpus beside the -Oz one; downloads are shared.
            opt_level="$2"
            set_work_dir "$CORPORA_DIR/$RECIPE_NAME-$2"
            ;;
          *) die "--opt-level $2: expected Oz, Os, O1, O2 or O3" ;;
        esac
        shift
        ;;
      --benchmark) benchmark=build ;;
      --benchmark-input | --benchmark-run)
        [ $# -ge 2 ] || die "$1 needs a directory"
        benchmark="${1#--benchmark-}"
        benchmark_dir="$(realpath -m "$2")"
        shift
        ;;
      --workload)
        [ $# -ge 2 ] || die "--workload needs tiny or full"
        case "$2" in tiny | full) workload="$2" ;; *) die "--workload $2: expected tiny or full" ;; esac
        shift
        ;;
      --build-only) BUILD_ONLY=1 ;;
      --verbose | -v) VERBOSE=1 ;;
      --help | -h)
        usage
        exit 0
        ;;
      *)
        usage >&2
        die "unknown argument: $1"
        ;;
    esac
    shift
  done
  [ -z "$work_dir" ] || set_work_dir "$work_dir"
  if [ -n "$benchmark" ]; then
    declare -F recipe_benchmark_link >/dev/null || die "this recipe declares no benchmark"
    # A program to run, not a corpus: no embedded bitcode unless asked for.
    [ -n "${MLGO_RECIPE_CFLAGS:-}" ] || MLGO_CFLAGS="-Oz -w"
    [ "$benchmark" = input ] || [ -n "$work_dir" ] || die "--benchmark${benchmark_dir:+-$benchmark} needs --work-dir"
  fi
  if [ -n "$opt_level" ]; then
    MLGO_CFLAGS="${MLGO_CFLAGS/-Oz/-$opt_level}"
  fi
  MLGO_CXXFLAGS="$MLGO_CFLAGS"
  case "$benchmark" in
    input)
      mkdir -p "$benchmark_dir"
      recipe_benchmark_input "$benchmark_dir" "$workload"
      exit 0
      ;;
    run) benchmark_run "$benchmark_dir" ;;
    build)
      BUILD_ONLY=1
      # Recipes may make a benchmark build deterministic (lua.sh: a fixed
      # string-hash seed instead of one from the clock).
      BENCHMARK_BUILD=1
      ;;
  esac
  if [ -n "$LAUNCHER" ]; then
    # Never in place of the corpus build: its objects are not the corpus's.
    [ -n "$work_dir" ] || die "--launcher needs --work-dir"
    BUILD_ONLY=1
  fi

  mkdir -p "$WORK_DIR"
  trap 'status=$?; [ "$status" -eq 0 ] || echo "$RECIPE_NAME: FAILED (exit $status); log: $LOG_FILE" >&2' EXIT
  # One run per recipe at a time (tests may start the same recipe in parallel).
  exec 9>"$WORK_DIR/.lock"
  if ! flock -n 9; then
    log "waiting for another run of this recipe to finish"
    flock 9
  fi

  if [ "$FORCE" = 0 ] && [ "$BUILD_ONLY" = 0 ] && [ -f "$CORPUS_STAMP" ] &&
    [ -f "$CORPUSDIR/corpus_description.json" ]; then
    log "cached"
    echo "corpus: $CORPUSDIR ($(count_modules) modules)"
    exit 0
  fi

  setup_toolchain
  [ "$BUILD_ONLY" = 1 ] || check_extractor

  local start=$SECONDS
  rm -f "$CORPUS_STAMP"
  if [ "$FORCE" = 1 ]; then
    rm -f "$BUILD_STAMP"
  fi

  if [ -f "$BUILD_STAMP" ] && [ -d "$OBJDIR" ]; then
    log "using the finished build in $OBJDIR"
  else
    rm -f "$BUILD_STAMP"
    rm -rf "$OBJDIR" "$CORPUSDIR"
    : >"$LOG_FILE"
    recipe_fetch
    unpack_source
    log "building with $CC ($MLGO_CFLAGS), log: $LOG_FILE"
    (
      cd "$OBJDIR" || exit 1
      recipe_build
    )
    if declare -F recipe_prune >/dev/null; then
      (
        cd "$OBJDIR" || exit 1
        recipe_prune
      )
    fi
    # Objects without embedded bitcode are pruned, unless the flags made none
    # (MLGO_RECIPE_CFLAGS: a timed build, nothing to extract; a benchmark).
    [ -n "${MLGO_RECIPE_CFLAGS:-}" ] || [ -n "$benchmark" ] || prune_objdir
    echo "$RECIPE_NAME built $(date -u +%FT%TZ) with $("$CC" --version | head -n1)" >"$BUILD_STAMP"
    log "build finished in $((SECONDS - start)) s"
  fi

  if [ "$benchmark" = build ]; then
    benchmark_link
    exit 0
  fi
  if [ "$BUILD_ONLY" = 1 ]; then
    echo "objects: $OBJDIR"
    exit 0
  fi

  log "extracting the corpus with $MLGO_CORPUS"
  rm -rf "$CORPUSDIR"
  run_logged "$MLGO_CORPUS" extract "$OBJDIR" --output "$CORPUSDIR"
  [ -f "$CORPUSDIR/corpus_description.json" ] ||
    die "$MLGO_CORPUS wrote no $CORPUSDIR/corpus_description.json"
  local modules
  modules="$(count_modules)"
  [ "$modules" -gt 0 ] || die "the corpus in $CORPUSDIR has no modules"
  echo "$RECIPE_NAME corpus of $modules modules, $(date -u +%FT%TZ)" >"$CORPUS_STAMP"
  log "done in $((SECONDS - start)) s"
  echo "corpus: $CORPUSDIR ($modules modules)"
}
