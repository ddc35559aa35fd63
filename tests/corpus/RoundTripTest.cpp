// Round trip on real corpora built by the recipes: every module recompiled
// from its .bc + .cmd with clang-22 must give an object whose .text is
// byte-identical to the object of the original build.
#include "TestSupport.h"
#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/ObjectSections.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace fs = std::filesystem;

namespace mlgo::corpus {
namespace {

fs::path corporaDirectory() {
  const char* dir = std::getenv("MLGO_CORPORA_DIR");
  return dir ? fs::path(dir) : fs::path("corpora");
}

class CorpusRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRoundTrip, RecompiledTextIsByteIdentical) {
  const fs::path root = corporaDirectory() / GetParam();
  Expected<Corpus> corpus = Corpus::load(root / "corpus");
  ASSERT_TRUE(corpus) << corpus.error().message << " (run corpus/recipes/" << GetParam()
                      << ".sh, or ctest which runs it as a fixture)";
  mlgo::testing::ScratchDirectory scratch;
  size_t identical = 0;
  for (const ModuleSpec& module : corpus->modules()) {
    SCOPED_TRACE("module " + module.name);
    fs::path object = scratch / (std::to_string(identical) + ".o");
    Expected<std::vector<std::string>> command = buildCompileCommand(module, {}, object);
    ASSERT_TRUE(command) << command.error().message;
    ASSERT_EQ(mlgo::testing::runProgram(mlgo::testing::clangPath(), *command), 0);

    Expected<std::optional<std::string>> original =
        readObjectSection(root / "build" / module.name, ".text");
    ASSERT_TRUE(original) << original.error().message;
    Expected<std::optional<std::string>> rebuilt = readObjectSection(object, ".text");
    ASSERT_TRUE(rebuilt) << rebuilt.error().message;
    ASSERT_TRUE(original->has_value() && rebuilt->has_value());
    // The recompilation must not embed the bitcode again.
    Expected<std::optional<std::string>> embedded = readObjectSection(object, ".llvmbc");
    ASSERT_TRUE(embedded);
    EXPECT_FALSE(embedded->has_value());
    EXPECT_EQ(**original, **rebuilt)
        << ".text differs (" << (*original)->size() << " vs " << (*rebuilt)->size() << " bytes)";
    if (**original == **rebuilt)
      ++identical;
  }
  std::printf("%s: %zu/%zu modules byte-identical\n", GetParam().c_str(), identical,
              corpus->size());
  EXPECT_EQ(identical, corpus->size());
}

INSTANTIATE_TEST_SUITE_P(Recipes, CorpusRoundTrip, ::testing::Values("zlib", "lua"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

} // namespace
} // namespace mlgo::corpus
