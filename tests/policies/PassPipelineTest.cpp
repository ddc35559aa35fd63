// The pass-pipeline task's action and policy file, without a compiler: the
// description, the checks that need no LLVM, and an exact file round trip.
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/PolicyFile.h"

#include <gtest/gtest.h>

namespace mlgo::policies {
namespace {

PassPipeline structured() {
  PassPipeline pipeline;
  pipeline.skipped = {{"LoopRotatePass", std::nullopt}, {"SimplifyCFGPass", PipelinePhase::Late}};
  pipeline.additions = {
      {ExtensionPoint::OptimizerLast, "function(instcombine<no-verify-fixpoint>)"},
      {ExtensionPoint::Peephole, "simplifycfg"}};
  return pipeline;
}

TEST(PassPipeline, NeutralIsMinusOzAndDescriptionsNameTheChanges) {
  EXPECT_TRUE(PassPipeline{}.neutral());
  EXPECT_EQ(PassPipeline{}.describe(), "-Oz");
  EXPECT_EQ(structured().describe(),
            "-Oz -LoopRotatePass -SimplifyCFGPass@late "
            "+optimizer-last=function(instcombine<no-verify-fixpoint>) +peephole=simplifycfg");
  PassPipeline replaced;
  replaced.replacement = "default<Os>";
  EXPECT_EQ(replaced.describe(), "replace: default<Os>");
}

TEST(PassPipeline, ChecksWhatNeedsNoCompiler) {
  EXPECT_TRUE(structured().validate());
  auto refusal = [](PassPipeline pipeline) {
    Status status = pipeline.validate();
    return status ? std::string() : status.error().message;
  };
  PassPipeline inliner;
  inliner.skipped = {{"ModuleInlinerWrapperPass", std::nullopt}};
  EXPECT_NE(refusal(inliner).find("belongs to the inlining task"), std::string::npos);
  PassPipeline unknown;
  unknown.skipped = {{"LoopRotate", std::nullopt}};
  EXPECT_NE(refusal(unknown).find("not an optional pass class"), std::string::npos);
  PassPipeline twice = structured();
  twice.skipped.push_back(twice.skipped[0]);
  EXPECT_NE(refusal(twice).find("listed twice"), std::string::npos);
  PassPipeline mixed = structured();
  mixed.replacement = "default<Os>";
  EXPECT_NE(refusal(mixed).find("stands alone"), std::string::npos);
  PassPipeline empty;
  empty.additions = {{ExtensionPoint::OptimizerLast, " "}};
  EXPECT_NE(refusal(empty).find("optimizer-last: empty"), std::string::npos);

  EXPECT_FALSE(parseSkippedPass("LICMPass@middle"));
  EXPECT_EQ(parseSkippedPass("LICMPass@inliner")->phase, PipelinePhase::Inliner);
  EXPECT_FALSE(parseExtensionPoint("optimiser-last"));
  for (ExtensionPoint point : allExtensionPoints())
    EXPECT_EQ(*parseExtensionPoint(extensionPointName(point)), point);
  // The same pipeline whatever order its skips were listed in.
  PassPipeline reordered = structured();
  std::swap(reordered.skipped[0], reordered.skipped[1]);
  EXPECT_EQ(reordered.canonical(), structured().canonical());
}

TEST(PassPipeline, PolicyFileRoundTrips) {
  for (const PassPipeline& pipeline :
       {PassPipeline{}, structured(), [] {
          PassPipeline replaced;
          replaced.replacement = "function(sroa,instcombine<no-verify-fixpoint>),globaldce";
          return replaced;
        }()}) {
    PipelinePolicy policy(pipeline);
    Expected<std::string> json = policyToJson(policy);
    ASSERT_TRUE(json) << json.error().message;
    Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*json, "pipeline.json");
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->pipeline(), pipeline);
    EXPECT_TRUE(back->inputs().empty());
  }
}

TEST(PassPipeline, APipelineCarriesItsInlinerPolicy) {
  PipelinePolicy combined(structured(), makeConstantPolicy(0));
  Expected<std::string> json = policyToJson(combined);
  ASSERT_TRUE(json) << json.error().message;
  Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*json, "combined.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->pipeline(), structured());
  ASSERT_TRUE(back->inliner());
  EXPECT_EQ(back->inliner()->describe(), combined.inliner()->describe());
  EXPECT_EQ(*policyToJson(*back), *json);
  EXPECT_FALSE(makePipelinePolicy(PassPipeline{}, std::make_shared<PipelinePolicy>(structured())));
}

TEST(PassPipeline, FileErrorsNameTheField) {
  auto error = [](const std::string& pipeline) {
    Expected<std::unique_ptr<Policy>> loaded = policyFromJson(
        R"({"format":"mlgo-es-policy","version":2,"kind":"pipeline","pipeline":)" + pipeline + "}",
        "p.json");
    return loaded ? std::string() : loaded.error().message;
  };
  EXPECT_NE(error(R"({"skip":["LICMPass@middle"]})").find("p.json: pipeline.skip[0]"),
            std::string::npos);
  EXPECT_NE(error(R"({"add":[{"at":"nowhere","passes":"x"}]})").find("pipeline.add[0].at"),
            std::string::npos);
  EXPECT_NE(error(R"({"add":[{"at":"optimizer-last"}]})").find("pipeline.add[0].passes"),
            std::string::npos);
  EXPECT_NE(error(R"({"skip":["InlinerPass"]})").find("inlining task"), std::string::npos);
  EXPECT_NE(error("3").find("pipeline: must be an object"), std::string::npos);
  Expected<std::unique_ptr<Policy>> badInliner = policyFromJson(
      R"({"format":"mlgo-es-policy","version":2,"kind":"pipeline","pipeline":{},
          "inliner":{"format":"mlgo-es-policy","version":2,"kind":"nonsense"}})",
      "p.json");
  ASSERT_FALSE(badInliner);
  EXPECT_NE(badInliner.error().message.find("p.json: inliner: kind"), std::string::npos)
      << badInliner.error().message;
}

} // namespace
} // namespace mlgo::policies
