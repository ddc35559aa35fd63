// Helpers shared by the test suites: scratch directories, running real
// clang-22, and small corpora made on the spot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::testing {

// The first bytes of raw LLVM bitcode: stand-in modules of fake compilers
// start with them, since corpora refuse .bc files without them.
inline const std::string kBitcodeSignature("BC\xC0\xDE", 4);

// A fresh directory under the test temp dir, removed when the object dies.
class ScratchDirectory {
public:
  ScratchDirectory();
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

// Runs a program with arguments, waits, returns its exit code (-1 if it could
// not start or died by a signal). Output goes to the test log.
int runProgram(const std::string& program, const std::vector<std::string>& arguments);

std::string clangPath();
// A corpus built by a recipe: $MLGO_CORPORA_DIR/<name>/corpus (CTest sets the
// variable to build/corpora), else corpora/<name>/corpus.
std::filesystem::path realCorpusDirectory(const std::string& name);

// Run-file step scalars that legitimately differ between identical runs:
// timings, and the counts of how jobs were answered — replayed, a
// decision-cache hit, or compiled (two jobs with the same sequence in flight
// at once are both compiled; which one teaches the store or the cache first
// depends on scheduling). Everything else must be equal.
bool isSchedulingDependentScalar(const std::string& name);
std::string llvmTool(const std::string& name);

void writeText(const std::filesystem::path& file, const std::string& text);

// Compiles C source (`extension` ".cpp": C++) with clang-22 at -Oz into an
// object that embeds its bitcode and -cc1 command line, as a training build
// does.
void compileWithEmbeddedBitcode(const std::string& source, const std::filesystem::path& object,
                                const std::string& extension = ".c");

} // namespace mlgo::testing
