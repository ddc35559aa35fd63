// What the evaluator must not trust or leave behind: corrupt baseline cache
// entries, scratch directories of killed processes.
#include "TestSupport.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/Process.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace mlgo::evaluators {
namespace {

namespace fs = std::filesystem;

TEST(BaselineCache, ReadsBackWhatItStored) {
  mlgo::testing::ScratchDirectory scratch;
  BaselineCache cache(scratch.path());
  std::string key = BaselineCache::key("bitcode", {"-Oz"}, "clang 22");
  Expected<std::optional<uint64_t>> missing = cache.lookup(key);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  cache.store(key, 12345);
  Expected<std::optional<uint64_t>> found = cache.lookup(key);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, 12345u);
}

// A measure other than the size has its own entry, named after it: it does
// not answer for the size, nor the size for it, and an edited value is an
// error naming its file.
TEST(BaselineCache, AMeasureHasItsOwnEntry) {
  mlgo::testing::ScratchDirectory scratch;
  BaselineCache cache(scratch.path());
  std::string key = BaselineCache::key("bitcode", {"-O2"}, "clang 22");
  cache.storeMeasure(key, Measure::RegAllocScore, 1234.5625);
  Expected<std::optional<uint64_t>> size = cache.lookup(key);
  ASSERT_TRUE(size);
  EXPECT_FALSE(*size);
  Expected<std::optional<double>> score = cache.lookupMeasure(key, Measure::RegAllocScore);
  ASSERT_TRUE(score) << score.error().message;
  EXPECT_EQ(*score, 1234.5625);
  cache.store(key, 777);
  EXPECT_EQ(*cache.lookupMeasure(key, Measure::RegAllocScore), 1234.5625);
  const std::string file = key + ".regalloc-score";
  ASSERT_TRUE(std::filesystem::exists(scratch / file));
  std::ofstream(scratch / file, std::ios::trunc) << "1234.5\n";
  Expected<std::optional<double>> edited = cache.lookupMeasure(key, Measure::RegAllocScore);
  ASSERT_FALSE(edited);
  EXPECT_NE(edited.error().message.find(file), std::string::npos);
}

// An object's COMDAT groups have their own entry: read back as stored (none
// as none, not as missing), and an edited list is an error naming its file.
TEST(BaselineCache, ComdatGroupsHaveTheirOwnEntry) {
  mlgo::testing::ScratchDirectory scratch;
  BaselineCache cache(scratch.path());
  std::string key = BaselineCache::key("bitcode", {"-Oz"}, "clang 22");
  ASSERT_TRUE(cache.lookupComdat(key));
  EXPECT_FALSE(*cache.lookupComdat(key));
  const std::vector<ComdatCode> groups = {{0x1f, 40}, {UINT64_MAX, 7}};
  cache.storeComdat(key, groups);
  Expected<std::optional<std::vector<ComdatCode>>> read = cache.lookupComdat(key);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(*read);
  EXPECT_EQ(**read, groups);
  std::string other = BaselineCache::key("c code", {"-Oz"}, "clang 22");
  cache.storeComdat(other, {});
  ASSERT_TRUE(cache.lookupComdat(other) && *cache.lookupComdat(other));
  EXPECT_TRUE((*cache.lookupComdat(other))->empty());
  std::ofstream(scratch / (key + ".comdat"), std::ios::trunc) << "1f:28 check\n";
  Expected<std::optional<std::vector<ComdatCode>>> edited = cache.lookupComdat(key);
  ASSERT_FALSE(edited);
  EXPECT_NE(edited.error().message.find(key + ".comdat"), std::string::npos);
}

// Negative, trailing garbage, an edited size, a v1 entry, another key's
// entry: each is an error naming the file, never a size.
TEST(BaselineCache, CorruptEntriesAreErrorsNotSizes) {
  mlgo::testing::ScratchDirectory scratch;
  BaselineCache cache(scratch.path());
  std::string key = BaselineCache::key("bitcode", {"-Oz"}, "clang 22");
  std::string other = BaselineCache::key("other", {"-Oz"}, "clang 22");
  cache.store(other, 777);
  std::string otherEntry;
  {
    std::ifstream in(scratch / (other + ".size"));
    std::getline(in, otherEntry);
  }
  std::string goodCheck = otherEntry.substr(otherEntry.find(' '));
  for (const std::string& content :
       {std::string("-5\n"), std::string("12abc\n"), std::string("12\n"), std::string(""),
        "778" + goodCheck + "\n", otherEntry + "\n", otherEntry}) {
    std::ofstream(scratch / (key + ".size"), std::ios::trunc) << content;
    Expected<std::optional<uint64_t>> read = cache.lookup(key);
    ASSERT_FALSE(read) << "accepted \"" << content << "\" as " << read->value_or(0);
    EXPECT_NE(read.error().message.find(key + ".size"), std::string::npos);
  }
}

// A child makes a scratch directory and dies without removing it (as
// SIGKILL does); the sweep removes it and leaves a live process's alone.
TEST(ScratchDirectory, AbandonedDirectoriesOfDeadProcessesAreRemoved) {
  mlgo::testing::ScratchDirectory scratch;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Expected<ScratchDirectory> made = ScratchDirectory::create(scratch.path(), "mlgo-job-");
    if (made)
      std::ofstream(made->path() / "module-1.o.tmp") << "x";
    _exit(made ? 0 : 1); // no destructors: the directory stays
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  Expected<ScratchDirectory> mine = ScratchDirectory::create(scratch.path(), "mlgo-worker-");
  ASSERT_TRUE(mine);
  fs::create_directory(scratch / "unrelated");
  EXPECT_EQ(removeAbandonedScratch(scratch.path()), 1u);
  EXPECT_TRUE(fs::exists(mine->path()));
  EXPECT_TRUE(fs::exists(scratch / "unrelated"));
  size_t left = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(scratch.path()))
    ++left;
  EXPECT_EQ(left, 2u);
}

} // namespace
} // namespace mlgo::evaluators
