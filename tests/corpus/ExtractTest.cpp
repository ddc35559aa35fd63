#include "mlgo/corpus/Extract.h"
#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/ObjectSections.h"
#include "mlgo/corpus/Stats.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fs = std::filesystem;

namespace mlgo::corpus {
namespace {

using mlgo::testing::compileWithEmbeddedBitcode;
using mlgo::testing::ScratchDirectory;
using mlgo::testing::writeText;

const char* kCallerSource = "static int twice(int x) { return 2 * x; }\n"
                            "int api(int y) { return twice(y) + twice(y + 1); }\n";
const char* kLeafSource = "int leaf(int x) { return x ^ 3; }\n";

// A build tree: two good objects (one in a subdirectory), one without
// embedded bitcode, one corrupt file named .o, one unrelated file.
void makeBuildTree(const fs::path& build) {
  compileWithEmbeddedBitcode(kCallerSource, build / "src/caller.o");
  compileWithEmbeddedBitcode(kLeafSource, build / "leaf.o");
  fs::path plain = build / "plain.c";
  writeText(plain, kLeafSource);
  ASSERT_EQ(
      mlgo::testing::runProgram(mlgo::testing::clangPath(),
                                {"-Oz", "-c", plain.string(), "-o", (build / "plain.o").string()}),
      0);
  writeText(build / "corrupt.o", "this is not an ELF file");
  writeText(build / "notes.txt", "ignored");
}

TEST(Extract, FindsObjectsRecursivelyWithRelativeNames) {
  ScratchDirectory dir;
  makeBuildTree(dir / "build");
  Expected<std::vector<ObjectInput>> objects = findObjectsInDirectory(dir / "build");
  ASSERT_TRUE(objects) << objects.error().message;
  std::vector<std::string> names;
  for (const ObjectInput& o : *objects)
    names.push_back(o.moduleName);
  EXPECT_EQ(names, (std::vector<std::string>{"corrupt.o", "leaf.o", "plain.o", "src/caller.o"}));
}

TEST(Extract, WritesModulesAndCountsTheRest) {
  ScratchDirectory dir;
  makeBuildTree(dir / "build");
  Expected<std::vector<ObjectInput>> objects = findObjectsInDirectory(dir / "build");
  ASSERT_TRUE(objects);
  ExtractOptions options;
  options.threads = 2;
  Expected<ExtractSummary> summary = extractCorpus(*objects, dir / "corpus", options);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->objectsScanned, 4u);
  EXPECT_EQ(summary->modules, (std::vector<std::string>{"leaf.o", "src/caller.o"}));
  ASSERT_EQ(summary->withoutEmbeddedBitcode.size(), 1u);
  EXPECT_EQ(summary->withoutEmbeddedBitcode[0].filename(), "plain.o");
  ASSERT_EQ(summary->skipped.size(), 1u);
  EXPECT_EQ(summary->skipped[0].object.filename(), "corrupt.o");
  EXPECT_NE(summary->skipped[0].reason.find("corrupt.o"), std::string::npos);

  Expected<Corpus> corpus = Corpus::load(dir / "corpus");
  ASSERT_TRUE(corpus) << corpus.error().message;
  const ModuleSpec* caller = corpus->find("src/caller.o");
  ASSERT_NE(caller, nullptr);
  EXPECT_EQ(caller->storedCommand.front(), "-cc1");
  EXPECT_NE(std::find(caller->storedCommand.begin(), caller->storedCommand.end(), "-Oz"),
            caller->storedCommand.end());
  // The .bc is exactly the object's .llvmbc section.
  Expected<std::optional<std::string>> section =
      readObjectSection(dir / "build/src/caller.o", ".llvmbc");
  ASSERT_TRUE(section);
  ASSERT_TRUE(section->has_value());
  EXPECT_EQ(caller->bitcodeBytes, (*section)->size());

  CorpusStats stats = computeCorpusStats(*corpus, 2);
  ASSERT_EQ(stats.modules.size(), 2u);
  EXPECT_EQ(stats.unreadableModules, 0u);
  // The embedded bitcode is the optimiser's input, so nothing is inlined yet:
  // leaf.o has one function and no call, caller.o two functions, two calls.
  EXPECT_EQ(stats.modules[0].definedFunctions, 1u);
  EXPECT_EQ(stats.modules[0].localCallSites, 0u);
  EXPECT_EQ(stats.modules[1].definedFunctions, 2u);
  EXPECT_EQ(stats.modules[1].localCallSites, 2u);
}

TEST(Extract, SkipsObjectsMergedWithRelocatableLink) {
  ScratchDirectory dir;
  compileWithEmbeddedBitcode(kCallerSource, dir / "parts/a.o");
  compileWithEmbeddedBitcode(kLeafSource, dir / "parts/b.o");
  fs::create_directories(dir / "merged");
  ASSERT_EQ(
      mlgo::testing::runProgram(mlgo::testing::llvmTool("ld.lld"),
                                {"-r", (dir / "parts/a.o").string(), (dir / "parts/b.o").string(),
                                 "-o", (dir / "merged/built-in.o").string()}),
      0);
  Expected<ExtractSummary> summary = extractCorpus(
      {{dir / "merged/built-in.o", "built-in.o"}, {dir / "parts/a.o", "a.o"}}, dir / "corpus", {});
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->modules, (std::vector<std::string>{"a.o"}));
  ASSERT_EQ(summary->skipped.size(), 1u);
  EXPECT_NE(summary->skipped[0].reason.find("ld -r"), std::string::npos);
}

TEST(Extract, NoBitcodeAnywhereIsAnError) {
  ScratchDirectory dir;
  writeText(dir / "x.o", "junk");
  Expected<ExtractSummary> summary = extractCorpus({{dir / "x.o", "x.o"}}, dir / "corpus", {});
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message.find("fembed-bitcode"), std::string::npos);
}

TEST(Extract, DuplicateModuleNamesAreAnError) {
  ScratchDirectory dir;
  Expected<ExtractSummary> summary =
      extractCorpus({{dir / "a/x.o", "x.o"}, {dir / "b/x.o", "x.o"}}, dir / "corpus", {});
  ASSERT_FALSE(summary);
  EXPECT_NE(summary.error().message.find("\"x.o\""), std::string::npos);
}

TEST(Extract, ReadsCompileCommandsJson) {
  ScratchDirectory dir;
  writeText(dir / "compile_commands.json", R"([
    {"directory": ")" + (dir / "build").string() +
                                               R"(", "file": "a.c",
     "arguments": ["clang", "-c", "a.c", "-o", "obj/a.o"]},
    {"directory": ")" + (dir / "build").string() +
                                               R"(", "file": "b.c",
     "command": "clang -c 'b.c' -oobj/b.o"},
    {"directory": "/elsewhere", "file": "c.c", "output": ")" +
                                               (dir / "build/obj/c.o").string() + R"("},
    {"directory": ")" + (dir / "build").string() +
                                               R"(", "file": "a.c",
     "arguments": ["clang", "-fPIC", "-c", "a.c", "-o", "obj/a.o"]}
  ])");
  Expected<std::vector<ObjectInput>> objects =
      findObjectsInCompileCommands(dir / "compile_commands.json");
  ASSERT_TRUE(objects) << objects.error().message;
  ASSERT_EQ(objects->size(), 3u);
  EXPECT_EQ((*objects)[0].object, dir / "build/obj/a.o");
  EXPECT_EQ((*objects)[0].moduleName, "build/obj/a.o");
  EXPECT_EQ((*objects)[1].moduleName, "build/obj/b.o");
  EXPECT_EQ((*objects)[2].moduleName, "build/obj/c.o");

  writeText(dir / "bad.json",
            R"([{"directory": "/x", "file": "a.c", "arguments": ["cc", "a.c"]}])");
  Expected<std::vector<ObjectInput>> bad = findObjectsInCompileCommands(dir / "bad.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("bad.json: entry 0"), std::string::npos);
}

} // namespace
} // namespace mlgo::corpus
