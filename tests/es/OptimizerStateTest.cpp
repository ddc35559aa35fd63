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

TEST(OptimizerState, ARestoredHeaderGivesDimensionAndStepOrNamesTheField) {
  StateArchive archive;
  setOptimizerHeader(archive, OptimizerKind::TrustRegionEs, 4);
  archive.setInteger("step", 17);
  Expected<OptimizerHeader> header = readOptimizerHeader(archive, OptimizerKind::TrustRegionEs);
  ASSERT_TRUE(header) << header.error().message;
  EXPECT_EQ(header->dimension, 4u);
  EXPECT_EQ(header->step, 17);
  EXPECT_FALSE(readOptimizerHeader(archive, OptimizerKind::GradientEs));

  archive.setInteger("dimension", 0);
  Expected<OptimizerHeader> empty = readOptimizerHeader(archive, OptimizerKind::TrustRegionEs);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "state field \"dimension\": must be at least 1");

  StateArchive noStep;
  setOptimizerHeader(noStep, OptimizerKind::TrustRegionEs, 4);
  Expected<OptimizerHeader> missing = readOptimizerHeader(noStep, OptimizerKind::TrustRegionEs);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("\"step\""), std::string::npos) << missing.error().message;
}

TEST(OptimizerState, SeveralVectorFieldsAreReadOrTheFirstBadOneIsNamed) {
  StateArchive archive;
  archive.setVector("mean", std::vector<double>{0.5, 0.5});
  archive.setVector("path", std::vector<double>{1, 1, 1});
  Eigen::VectorXd mean, path;
  Status status = readEigenVectors(archive, 2, {{"mean", &mean}, {"path", &path}});
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("\"path\""), std::string::npos) << status.error().message;
  EXPECT_EQ(mean, Eigen::VectorXd::Constant(2, 0.5));
  ASSERT_TRUE(readEigenVectors(archive, 2, {{"mean", &mean}}));
}

} // namespace
} // namespace mlgo::es
