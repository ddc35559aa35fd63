#include "TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace mlgo::testing {

ScratchDirectory::ScratchDirectory() {
  static std::atomic<int> counter{0};
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "scratch";
  for (char& c : name)
    if (c == '/')
      c = '_';
  path_ = fs::path(::testing::TempDir()) /
          ("mlgo-" + name + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

int runProgram(const std::string& program, const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : arguments)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string clangPath() {
  return MLGO_CLANG_PATH;
}

bool isSchedulingDependentScalar(const std::string& name) {
  return name.rfind("seconds_", 0) == 0 || name == "elapsed_seconds" || name == "cache_hits" ||
         name == "cache_seconds_saved" || name == "cache_lookups" || name == "replays" ||
         name == "replay_seconds_saved" || name == "replays_verified" || name == "full_compiles";
}

std::filesystem::path realCorpusDirectory(const std::string& name) {
  const char* dir = std::getenv("MLGO_CORPORA_DIR");
  return (dir ? std::filesystem::path(dir) : std::filesystem::path("corpora")) / name / "corpus";
}

std::string llvmTool(const std::string& name) {
  return std::string(MLGO_LLVM_TOOLS_DIR) + "/" + name;
}

void writeText(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

void compileWithEmbeddedBitcode(const std::string& source, const fs::path& object,
                                const std::string& extension) {
  fs::path c = object;
  c.replace_extension(extension);
  writeText(c, source);
  fs::create_directories(object.parent_path());
  int rc = runProgram(clangPath(), {"-Oz", "-Xclang", "-fembed-bitcode=all", "-w", "-c", c.string(),
                                    "-o", object.string()});
  ASSERT_EQ(rc, 0) << "clang-22 failed on " << c;
}

} // namespace mlgo::testing
