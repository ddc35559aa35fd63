#include "mlgo/corpus/Merge.h"
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace mlgo::corpus {
namespace {

using mlgo::testing::ScratchDirectory;
using mlgo::testing::writeText;

void makeCorpus(const fs::path& dir, const std::vector<std::string>& names,
                const std::string& extraJson = "") {
  std::string modules;
  for (const std::string& n : names) {
    modules += (modules.empty() ? "\"" : ", \"") + n + "\"";
    writeText(dir / (n + ".bc"), mlgo::testing::kBitcodeSignature + n);
    writeText(dir / (n + ".cmd"), std::string("-cc1\0-Oz\0-DNAME=", 16) + n);
  }
  writeText(dir / "corpus_description.json",
            "{\"has_thinlto\": false, \"modules\": [" + modules + "]" + extraJson + "}");
}

TEST(Merge, PrefixesNamesAndKeepsFiles) {
  ScratchDirectory dir;
  makeCorpus(dir / "zlib/corpus", {"adler32.o", "sub/inflate.o"});
  makeCorpus(dir / "lua", {"lapi.o"});
  Expected<MergeSummary> summary =
      mergeCorpora({{dir / "zlib/corpus", ""}, {dir / "lua", "L"}}, dir / "merged");
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->corpora, 2u);
  EXPECT_EQ(summary->modules, 3u);
  Expected<Corpus> merged = Corpus::load(dir / "merged");
  ASSERT_TRUE(merged) << merged.error().message;
  std::vector<std::string> names;
  for (const ModuleSpec& m : merged->modules())
    names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"zlib/adler32.o", "zlib/sub/inflate.o", "L/lapi.o"}));
  const ModuleSpec* inflate = merged->find("zlib/sub/inflate.o");
  ASSERT_NE(inflate, nullptr);
  EXPECT_EQ(inflate->storedCommand.back(), "-DNAME=sub/inflate.o");
  Expected<std::string> bitcode = readFileBytes(inflate->bitcode);
  ASSERT_TRUE(bitcode);
  EXPECT_EQ(*bitcode, mlgo::testing::kBitcodeSignature + "sub/inflate.o");
}

TEST(Merge, GlobalOverrideBecomesPerModuleCommand) {
  ScratchDirectory dir;
  makeCorpus(dir / "a", {"x.o"}, R"(, "global_command_override": ["-cc1", "-Os"])");
  makeCorpus(dir / "b", {"y.o"});
  ASSERT_TRUE(mergeCorpora({{dir / "a", ""}, {dir / "b", ""}}, dir / "m"));
  Expected<Corpus> merged = Corpus::load(dir / "m");
  ASSERT_TRUE(merged);
  EXPECT_FALSE(merged->description().globalCommandOverride);
  EXPECT_EQ(merged->find("a/x.o")->storedCommand, (std::vector<std::string>{"-cc1", "-Os"}));
  EXPECT_EQ(merged->find("b/y.o")->storedCommand.back(), "-DNAME=y.o");
}

TEST(Merge, RejectsPrefixCollisionsAndBadInputs) {
  ScratchDirectory dir;
  makeCorpus(dir / "one/corpus", {"x.o"});
  makeCorpus(dir / "two/one", {"y.o"});
  Expected<MergeSummary> collision =
      mergeCorpora({{dir / "one/corpus", ""}, {dir / "two/one", ""}}, dir / "m");
  ASSERT_FALSE(collision);
  EXPECT_NE(collision.error().message.find("\"one\""), std::string::npos);

  Expected<MergeSummary> missing = mergeCorpora({{dir / "nope", ""}}, dir / "m");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nope"), std::string::npos);

  makeCorpus(dir / "thin", {"t.o"});
  writeText(dir / "thin/t.o.thinlto.bc", "idx");
  writeText(dir / "thin/corpus_description.json", R"({"has_thinlto": true, "modules": ["t.o"]})");
  Expected<MergeSummary> mixed =
      mergeCorpora({{dir / "thin", ""}, {dir / "two/one", ""}}, dir / "m");
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.error().message.find("has_thinlto"), std::string::npos);
}

// The output is written module by module: never into an input, nor over a
// directory that holds anything.
TEST(Merge, RefusesOutputsThatAreInputsOrNotEmpty) {
  ScratchDirectory dir;
  makeCorpus(dir / "one/corpus", {"x.o"});
  for (const fs::path& output : {dir / "one/corpus", dir / "one/corpus/merged", dir / "one"}) {
    Expected<MergeSummary> merged = mergeCorpora({{dir / "one/corpus", ""}}, output);
    ASSERT_FALSE(merged) << output;
    EXPECT_NE(merged.error().message.find("would overwrite its input"), std::string::npos)
        << merged.error().message;
  }
  writeText(dir / "full/file", "x");
  Expected<MergeSummary> full = mergeCorpora({{dir / "one/corpus", ""}}, dir / "full");
  ASSERT_FALSE(full);
  EXPECT_NE(full.error().message.find("not empty"), std::string::npos);
  fs::create_directories(dir / "empty");
  EXPECT_TRUE(mergeCorpora({{dir / "one/corpus", ""}}, dir / "empty"));
}

TEST(Merge, DefaultPrefix) {
  EXPECT_EQ(defaultMergePrefix("/b/corpora/zlib/corpus"), "zlib");
  EXPECT_EQ(defaultMergePrefix("/b/corpora/zlib/corpus/"), "zlib");
  EXPECT_EQ(defaultMergePrefix("mine"), "mine");
}

} // namespace
} // namespace mlgo::corpus
