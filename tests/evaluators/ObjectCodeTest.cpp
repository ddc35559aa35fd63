// The evaluators' object measure lists the code in COMDAT groups: an inline
// function that two C++ objects emit is one group in both, with its bytes;
// a static function and a C object have none.
#include "mlgo/evaluators/ObjectCode.h"
#include "TestSupport.h"
#include "mlgo/evaluators/LinkedCode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>

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

namespace mlgo::evaluators {
namespace {

// What a linker keeps of `objects` (code outside groups, each group's first
// copy in order): the reference the census's values are held to.
struct Object {
  uint64_t outside = 0;
  std::vector<ComdatCode> comdat; // sorted by group
  uint64_t bytes() const {
    uint64_t total = outside;
    for (const ComdatCode& code : comdat)
      total += code.bytes;
    return total;
  }
};

uint64_t linkedBytes(const std::vector<Object>& objects) {
  uint64_t total = 0;
  std::set<uint64_t> kept;
  for (const Object& object : objects) {
    total += object.outside;
    for (const ComdatCode& code : object.comdat)
      if (kept.insert(code.group).second)
        total += code.bytes;
  }
  return total;
}

// Random code bases of up to 6 modules sharing up to 5 groups whose copies
// differ in size: the baselines' values add up to the linked code, and any
// one module's other object (groups dropped, added, resized) moves the
// linked total by exactly the change of its value.
TEST(LinkedCode, OneModulesChangeMovesTheLinkedTotalByItsValue) {
  std::mt19937_64 random(20261208);
  auto someObject = [&] {
    Object object;
    object.outside = random() % 200;
    for (uint64_t group = 1; group <= 5; ++group)
      if (random() % 2)
        object.comdat.push_back({group * 0x9e3779b97f4a7c15ULL % 1000, 1 + random() % 50});
    std::ranges::sort(object.comdat, {}, &ComdatCode::group);
    return object;
  };
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<Object> baseline(1 + random() % 6);
    for (Object& object : baseline)
      object = someObject();
    std::vector<std::vector<ComdatCode>> groups;
    for (const Object& object : baseline)
      groups.push_back(object.comdat);
    const ComdatCensus census(groups);
    double sum = 0;
    for (size_t m = 0; m < baseline.size(); ++m)
      sum += census.linkedValue(m, baseline[m].bytes(), baseline[m].comdat);
    ASSERT_DOUBLE_EQ(sum, static_cast<double>(linkedBytes(baseline))) << "trial " << trial;
    const size_t m = random() % baseline.size();
    std::vector<Object> changed = baseline;
    changed[m] = someObject();
    const double before = census.linkedValue(m, baseline[m].bytes(), baseline[m].comdat);
    const double after = census.linkedValue(m, changed[m].bytes(), changed[m].comdat);
    ASSERT_DOUBLE_EQ(static_cast<double>(linkedBytes(changed)) -
                         static_cast<double>(linkedBytes(baseline)),
                     after - before)
        << "trial " << trial << ", module " << m;
  }
}

} // namespace
} // namespace mlgo::evaluators
