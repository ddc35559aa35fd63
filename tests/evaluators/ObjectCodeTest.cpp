// The evaluators' object measure lists the code in COMDAT groups: an inline
// function that two C++ objects emit is one group in both, with its bytes;
// a static function and a C object have none.
#include "mlgo/evaluators/ObjectCode.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <fstream>

namespace mlgo::evaluators {
namespace {

namespace fs = std::filesystem;

CodeMeasure compiled(const fs::path& directory, const std::string& name, const std::string& source,
                     const std::string& language) {
  std::ofstream(directory / (name + ".src")) << source;
  const fs::path object = directory / (name + ".o");
  EXPECT_EQ(mlgo::testing::runProgram(mlgo::testing::clangPath(),
                                      {"-x", language, "-Oz", "-c", "-o", object.string(),
                                       (directory / (name + ".src")).string()}),
            0);
  Expected<CodeMeasure> measure = measureCode(object, {".text", ".text."});
  EXPECT_TRUE(measure) << measure.error().message;
  return measure ? *measure : CodeMeasure{};
}

TEST(ObjectCode, ComdatGroupsAreListedWithTheirBytes) {
  mlgo::testing::ScratchDirectory scratch;
  const std::string scale = "int scale(int x) { return x * 3 + (x >> 2) - 7; }\n";
  const CodeMeasure one = compiled(scratch.path(), "one",
                                   "inline " + scale +
                                       "int (*use)(int) = scale;\n"
                                       "int twice(int x) { return 2 * x + 1; }\n",
                                   "c++");
  const CodeMeasure two =
      compiled(scratch.path(), "two", "inline " + scale + "int (*other)(int) = scale;\n", "c++");
  const CodeMeasure alone =
      compiled(scratch.path(), "alone", "static " + scale + "int (*use)(int) = scale;\n", "c++");
  const CodeMeasure c = compiled(scratch.path(), "c", scale, "c");
  ASSERT_EQ(one.comdat.size(), 1u);
  ASSERT_EQ(two.comdat.size(), 1u);
  // The same function is the same group in both objects, of the same size;
  // two's only code is that group, one also has twice() outside it.
  EXPECT_EQ(one.comdat[0].group, two.comdat[0].group);
  EXPECT_EQ(two.comdat[0].bytes, two.bytes);
  EXPECT_EQ(one.comdat[0].bytes, two.bytes);
  EXPECT_GT(one.bytes, one.comdat[0].bytes);
  EXPECT_TRUE(alone.comdat.empty());
  EXPECT_GT(alone.bytes, 0u);
  EXPECT_TRUE(c.comdat.empty());
}

} // namespace
} // namespace mlgo::evaluators
