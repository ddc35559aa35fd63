#include "mlgo/support/StateArchive.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo {
namespace {

TEST(StateArchive, StoresValuesExactly) {
  StateArchive archive;
  archive.setInteger("step", 42);
  archive.setVector("point", std::vector<double>{0.1, -0.0, 1e-300, std::nextafter(1.0, 2.0)});
  archive.setReal("radius", 0.3);
  EXPECT_EQ(*archive.integer("step"), 42);
  std::vector<double> point = *archive.vector("point");
  ASSERT_EQ(point.size(), 4u);
  EXPECT_EQ(point[3], std::nextafter(1.0, 2.0));
  EXPECT_TRUE(std::signbit(point[1]));
  EXPECT_EQ(*archive.real("radius"), 0.3);
  Expected<std::vector<double>> sized = archive.vector("point", 4);
  ASSERT_TRUE(sized);
  EXPECT_EQ((*sized)[0], 0.1);
  EXPECT_EQ(archive.realOr("radius", 7), 0.3);
  EXPECT_EQ(archive.realOr("missing", 7), 7);
  EXPECT_EQ(archive.realOr("point", 7), 7); // not a scalar
}

TEST(StateArchive, MissingAndMismatchedFieldsNameTheField) {
  StateArchive archive;
  archive.setVector("point", std::vector<double>{1, 2, 3});
  archive.setInteger("flag", 2);
  Expected<int64_t> step = archive.integer("step");
  ASSERT_FALSE(step);
  EXPECT_NE(step.error().message.find("\"step\""), std::string::npos) << step.error().message;
  Expected<std::vector<double>> point = archive.vector("point", 4);
  ASSERT_FALSE(point);
  EXPECT_NE(point.error().message.find("\"point\": expected 4 values, got 3"), std::string::npos)
      << point.error().message;
  Expected<double> radius = archive.real("point");
  ASSERT_FALSE(radius);
  Expected<bool> flag = archive.flag("flag");
  ASSERT_FALSE(flag);
  EXPECT_NE(flag.error().message.find("\"flag\""), std::string::npos);
}

} // namespace
} // namespace mlgo
