#include "mlgo/es/OptimizerState.h"

#include <gtest/gtest.h>

namespace mlgo::es {
namespace {

TEST(OptimizerState, HeaderGuardsKindAndDimension) {
  StateArchive archive;
  setOptimizerHeader(archive, OptimizerKind::SepCmaEs, 5);
  EXPECT_TRUE(checkOptimizerHeader(archive, OptimizerKind::SepCmaEs, 5));
  Status wrongKind = checkOptimizerHeader(archive, OptimizerKind::GradientEs, 5);
  ASSERT_FALSE(wrongKind);
  EXPECT_NE(wrongKind.error().message.find("sep-cma-es"), std::string::npos)
      << wrongKind.error().message;
  Status wrongSize = checkOptimizerHeader(archive, OptimizerKind::SepCmaEs, 6);
  ASSERT_FALSE(wrongSize);
  EXPECT_NE(wrongSize.error().message.find("\"dimension\""), std::string::npos);
}

TEST(OptimizerState, EigenVectorsRoundTripAndCheckTheirSize) {
  StateArchive archive;
  Eigen::VectorXd point(3);
  point << 0.1, -0.0, 1e-300;
  archive.setVector("point", point);
  Expected<Eigen::VectorXd> sized = eigenVector(archive, "point", 3);
  ASSERT_TRUE(sized);
  EXPECT_EQ((*sized)[0], 0.1);
  EXPECT_TRUE(std::signbit((*sized)[1]));
  Expected<Eigen::VectorXd> wrong = eigenVector(archive, "point", 4);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("\"point\": expected 4 values, got 3"), std::string::npos)
      << wrong.error().message;
}

} // namespace
} // namespace mlgo::es
