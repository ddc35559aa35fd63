// The pass-pipeline task's action and policy file, without a compiler: the
// description, the checks that need no LLVM, and an exact file round trip.
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/PolicyLocation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>

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

// A choice between -Oz and structured() over the module features, unscaled
// (mean 0, scale 1), with no examples yet.
PipelineChoice unscaledChoice(size_t neighbours) {
  PipelineChoice choice;
  choice.pipelines = {PassPipeline{}, structured()};
  choice.features = moduleFeatureNames();
  choice.mean.assign(choice.features.size(), 0.0);
  choice.scale.assign(choice.features.size(), 1.0);
  choice.neighbours = neighbours;
  return choice;
}

// The choice written in a pipeline policy file and read back (nothing on
// an error, which the test's assertion then reports).
std::optional<PipelineChoice> roundTrip(const PipelineChoice& choice, PolicyEncoding encoding) {
  PipelinePolicy policy(PassPipeline{}, nullptr, std::make_shared<PipelineChoice>(choice));
  Expected<std::string> bytes = policyToBytes(policy, encoding);
  if (!bytes) {
    ADD_FAILURE() << bytes.error().message;
    return std::nullopt;
  }
  Expected<std::unique_ptr<Policy>> back = policyFromJson(*bytes, "choice.policy");
  if (!back) {
    ADD_FAILURE() << back.error().message;
    return std::nullopt;
  }
  const auto* read = dynamic_cast<const PipelinePolicy*>(back->get());
  if (!read || !read->choice())
    return std::nullopt;
  return *read->choice();
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

// Pass parameters: described, checked, sorted by canonical(), and written
// to the file and read back (an object by pass name); not beside added
// passes where -Oz's text has no place for them or a replacement; not in
// a choice.
TEST(PassPipeline, PassParametersAreAnActionAroundOz) {
  PassPipeline tuned;
  tuned.skipped = {{"LICMPass", PipelinePhase::Late}};
  tuned.parameters = {{"licm", "no-allowspeculation"}, {"gvn", "no-load-pre;no-pre"}};
  EXPECT_FALSE(tuned.neutral());
  EXPECT_EQ(tuned.describe(),
            "-Oz -LICMPass@late licm<no-allowspeculation> gvn<no-load-pre;no-pre>");
  EXPECT_TRUE(tuned.validate());
  const PassPipeline sorted = tuned.canonical();
  ASSERT_EQ(sorted.parameters.size(), 2u);
  EXPECT_EQ(sorted.parameters[0].first, "gvn");
  auto refusal = [](PassPipeline pipeline) {
    Status status = pipeline.validate();
    return status ? std::string() : status.error().message;
  };
  PassPipeline added = tuned;
  added.additions = {{ExtensionPoint::OptimizerLast, "mergefunc"},
                     {ExtensionPoint::ScalarOptimizerLate, "gvn-hoist"}};
  EXPECT_TRUE(added.validate());
  added.additions.push_back({ExtensionPoint::Peephole, "instsimplify"});
  EXPECT_NE(refusal(added).find("peephole beside pass parameters"), std::string::npos);
  PassPipeline replaced;
  replaced.parameters = tuned.parameters;
  replaced.replacement = "default<Oz>";
  EXPECT_NE(refusal(replaced).find("no replacement beside them"), std::string::npos);
  PassPipeline badName = tuned;
  badName.parameters = {{"GVNPass", ""}};
  EXPECT_NE(refusal(badName).find("opt's syntax"), std::string::npos);
  PassPipeline delimiter = tuned;
  delimiter.parameters = {{"gvn", "no-pre>,licm<"}};
  EXPECT_NE(refusal(delimiter).find("delimiter"), std::string::npos);
  PassPipeline twice = tuned;
  twice.parameters.push_back({"gvn", "no-pre"});
  EXPECT_NE(refusal(twice).find("given twice"), std::string::npos);

  PipelinePolicy policy(sorted);
  Expected<std::string> json = policyToJson(policy);
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_NE(json->find("\"parameters\""), std::string::npos) << *json;
  Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*json, "tuned.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->pipeline(), sorted);
  EXPECT_FALSE(policyFromJson(
      R"({"format": "mlgo-es-policy", "version": 2, "kind": "pipeline",
          "pipeline": {"parameters": {"gvn": 3}}})",
      "number.json"));
  EXPECT_TRUE(makePipelinePolicy(sorted, makeConstantPolicy(0)))
      << "an inliner policy decides beside pass parameters";
  PipelineChoice choice;
  choice.pipelines = {PassPipeline{}, sorted};
  choice.features = moduleFeatureNames(0);
  choice.mean.assign(choice.features.size(), 0.0);
  choice.scale.assign(choice.features.size(), 1.0);
  choice.examples = {{std::vector<double>(choice.features.size(), 0.0), 1, {}}};
  // A choice may hold pass parameters (its text is parsed before the
  // module is seen and run only if chosen) and keeps them through its file;
  // a replacement it still refuses.
  ASSERT_TRUE(choice.validate()) << choice.validate().error().message;
  PipelinePolicy choosing(PassPipeline{}, nullptr, std::make_shared<PipelineChoice>(choice));
  Expected<std::string> choiceJson = policyToJson(choosing);
  ASSERT_TRUE(choiceJson) << choiceJson.error().message;
  Expected<std::unique_ptr<Policy>> choiceBack = policyFromJson(*choiceJson, "choice.json");
  ASSERT_TRUE(choiceBack) << choiceBack.error().message;
  const auto* backChoice = dynamic_cast<const PipelinePolicy*>(choiceBack->get());
  ASSERT_NE(backChoice, nullptr);
  ASSERT_TRUE(backChoice->choice());
  EXPECT_EQ(backChoice->choice()->pipelines.at(1), sorted);
  choice.pipelines[0].replacement = "default<Os>";
  Status withReplacement = choice.validate();
  ASSERT_FALSE(withReplacement);
  EXPECT_NE(withReplacement.error().message.find("not replacements"), std::string::npos);
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

// A choice among pipelines (the module-level policy): nearest examples
// vote, the file round-trips exactly, and one from another feature set or
// with a replacement among its pipelines is refused by name.
TEST(PassPipeline, AChoiceVotesAndRoundTrips) {
  auto choice = std::make_shared<PipelineChoice>();
  choice->pipelines = {PassPipeline{}, structured()};
  choice->features = moduleFeatureNames();
  const size_t n = choice->features.size();
  choice->mean.assign(n, 1.0);
  choice->scale.assign(n, 2.0);
  choice->neighbours = 3;
  std::vector<double> near(n, 0.0), far(n, 0.0);
  far[0] = 10;
  // Two examples of pipeline 1 near the origin, one of pipeline 0 there too
  // but farther, and two of pipeline 0 far away.
  near[1] = 0.1;
  choice->examples = {
      {near, 1, {}}, {std::vector<double>(n, 0.0), 1, {}}, {far, 0, {}}, {far, 0, {}}};
  near[1] = 0.5;
  choice->examples.push_back({near, 0, {}});
  ASSERT_TRUE(choice->validate());
  EXPECT_EQ(choice->choose(std::vector<double>(n, 1.0)), 1u); // scaled: the origin
  std::vector<double> farPoint(n, 1.0);
  farPoint[0] = 21; // scaled 10
  EXPECT_EQ(choice->choose(farPoint), 0u);

  choice->agreement = 0.5;
  PipelinePolicy policy(PassPipeline{}, nullptr, choice);
  Expected<std::string> json = policyToJson(policy);
  ASSERT_TRUE(json) << json.error().message;
  Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*json, "choice.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
  ASSERT_TRUE(back && back->choice());
  EXPECT_EQ(back->choice()->pipelines, choice->pipelines);
  EXPECT_EQ(back->choice()->examples.size(), 5u);
  EXPECT_EQ(back->choice()->agreement, 0.5);
  EXPECT_EQ(*policyToJson(*back), *json);

  // Costs and a margin round-trip too, and the cost vote reads them.
  PipelineChoice costed = *choice;
  costed.agreement = 0;
  costed.margin = 0.01;
  for (PipelineChoice::Example& example : costed.examples)
    example.costs = {0, example.pipeline == 1 ? -0.02 : 0.5};
  ASSERT_TRUE(costed.validate());
  EXPECT_EQ(costed.choose(farPoint), 0u);
  PipelinePolicy costedPolicy(PassPipeline{}, nullptr, std::make_shared<PipelineChoice>(costed));
  Expected<std::string> costedJson = policyToJson(costedPolicy);
  ASSERT_TRUE(costedJson) << costedJson.error().message;
  Expected<std::unique_ptr<Policy>> costedBack = policyFromJson(*costedJson, "costed.json");
  ASSERT_TRUE(costedBack) << costedBack.error().message;
  const auto* costedChoice = dynamic_cast<const PipelinePolicy*>(costedBack->get())->choice().get();
  EXPECT_EQ(costedChoice->margin, 0.01);
  EXPECT_TRUE(std::isinf(costedChoice->maxDistance)) << "no max_distance: no novelty guard";
  // The novelty guard round-trips; a point far from every example keeps
  // the fallback under it even where the vote would give it another
  // pipeline.
  PipelineChoice guarded = costed;
  guarded.margin = 0;
  for (PipelineChoice::Example& example : guarded.examples)
    example.costs = {0, -0.02};
  std::vector<double> novel(n, 1.0);
  novel[1] = 41; // scaled 20: 20 from the origin's examples, more from the far ones
  EXPECT_EQ(guarded.choose(novel), 1u);
  guarded.maxDistance = 2.5;
  EXPECT_EQ(guarded.choose(novel), 0u);
  EXPECT_EQ(guarded.choose(std::vector<double>(n, 1.0)), 1u);
  PipelinePolicy guardedPolicy(PassPipeline{}, nullptr, std::make_shared<PipelineChoice>(guarded));
  Expected<std::string> guardedJson = policyToJson(guardedPolicy);
  ASSERT_TRUE(guardedJson) << guardedJson.error().message;
  Expected<std::unique_ptr<Policy>> guardedBack = policyFromJson(*guardedJson, "guarded.json");
  ASSERT_TRUE(guardedBack) << guardedBack.error().message;
  EXPECT_EQ(dynamic_cast<const PipelinePolicy*>(guardedBack->get())->choice()->maxDistance, 2.5);
  guarded.maxDistance = 0;
  EXPECT_FALSE(guarded.validate()) << "max_distance must be positive";
  EXPECT_EQ(costedChoice->examples[2].costs, costed.examples[2].costs);
  EXPECT_EQ(*policyToJson(*costedBack->get()), *costedJson);
  // The examples are written as base64 columns; files written before, with
  // an object per example in decimal numbers, read the same.
  EXPECT_NE(costedJson->find("\"encoding\": \"float64-le-base64\""), std::string::npos);
  std::string oldStyle = "[";
  for (size_t e = 0; e < costed.examples.size(); ++e) {
    std::string features, costs;
    for (double v : costed.examples[e].features)
      features += (features.empty() ? "" : ",") + std::to_string(v);
    for (double v : costed.examples[e].costs)
      costs += (costs.empty() ? "" : ",") + std::to_string(v);
    oldStyle += std::string(e ? "," : "") +
                "{\"pipeline\":" + std::to_string(costed.examples[e].pipeline) + ",\"features\":[" +
                features + "],\"costs\":[" + costs + "]}";
  }
  oldStyle += "]";
  std::string oldJson = *costedJson;
  const size_t from = oldJson.find("\"examples\": {");
  ASSERT_NE(from, std::string::npos);
  const size_t to = oldJson.find('}', from);
  oldJson.replace(from, to + 1 - from, "\"examples\": " + oldStyle);
  Expected<std::unique_ptr<Policy>> oldBack = policyFromJson(oldJson, "old.json");
  ASSERT_TRUE(oldBack) << oldBack.error().message << "\n" << oldJson;
  EXPECT_EQ(*policyToJson(*oldBack->get()), *costedJson);
  // A column of the wrong length names itself.
  std::string shortJson = *costedJson;
  const size_t data = shortJson.find("\"features\": \"", shortJson.find("\"examples\": {"));
  shortJson.erase(data + 14, 12); // 9 bytes of base64 fewer: not the examples' doubles
  Expected<std::unique_ptr<Policy>> broken = policyFromJson(shortJson, "short.json");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("choice.examples.features"), std::string::npos)
      << broken.error().message;
  costed.margin = -1;
  EXPECT_FALSE(costed.validate());

  // A forced alternative: every module gets it, it round-trips, and one
  // out of range is refused; forcedAlternatives gives one per pipeline.
  PipelineChoice forced = choice->forcedTo(1);
  EXPECT_EQ(forced.choose(farPoint), 1u);
  PipelinePolicy forcedPolicy(PassPipeline{}, nullptr, std::make_shared<PipelineChoice>(forced));
  Expected<std::string> forcedJson = policyToJson(forcedPolicy);
  ASSERT_TRUE(forcedJson) << forcedJson.error().message;
  Expected<std::unique_ptr<Policy>> forcedBack = policyFromJson(*forcedJson, "forced.json");
  ASSERT_TRUE(forcedBack) << forcedBack.error().message;
  EXPECT_EQ(dynamic_cast<const PipelinePolicy*>(forcedBack->get())->choice()->forced, 1u);
  EXPECT_FALSE(choice->forcedTo(2).validate());
  const auto alternatives = forcedAlternatives(policy);
  ASSERT_EQ(alternatives.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(alternatives[p]->choice()->choose(std::vector<double>(n, 1.0)), p);
    EXPECT_EQ(alternatives[p]->choice()->choose(farPoint), p);
  }
  EXPECT_TRUE(forcedAlternatives(PipelinePolicy(structured())).empty());

  // An IR2Vec vocabulary travels inside the file; its features end with
  // the embedding's names, and a choice without them is refused.
  PipelineChoice embedded = *choice;
  embedded.agreement = 0;
  embedded.embedding = Ir2VecVocabulary{{"Add", "IntegerTy"}, {{0.5, -1}, {0.25, 2}}, {}};
  embedded.features = moduleFeatureNames(2);
  embedded.mean.assign(n + 2, 0.0);
  embedded.scale.assign(n + 2, 1.0);
  for (PipelineChoice::Example& example : embedded.examples)
    example.features.resize(n + 2, 0.0);
  ASSERT_TRUE(embedded.validate()) << embedded.validate().error().message;
  EXPECT_EQ(embedded.features.back(), "ir2vec_1");
  PipelinePolicy embeddedPolicy(PassPipeline{}, nullptr,
                                std::make_shared<PipelineChoice>(embedded));
  Expected<std::string> embeddedJson = policyToJson(embeddedPolicy);
  ASSERT_TRUE(embeddedJson) << embeddedJson.error().message;
  Expected<std::unique_ptr<Policy>> embeddedBack = policyFromJson(*embeddedJson, "embedded.json");
  ASSERT_TRUE(embeddedBack) << embeddedBack.error().message;
  const auto* embeddedChoice =
      dynamic_cast<const PipelinePolicy*>(embeddedBack->get())->choice().get();
  ASSERT_TRUE(embeddedChoice->embedding);
  EXPECT_EQ(embeddedChoice->embedding->entities, (std::vector<std::string>{"Add", "IntegerTy"}));
  EXPECT_EQ(embeddedChoice->embedding->embeddings, embedded.embedding->embeddings);
  EXPECT_EQ(*policyToJson(*embeddedBack->get()), *embeddedJson);
  PipelineChoice unnamed = embedded;
  unnamed.features = moduleFeatureNames();
  EXPECT_FALSE(unnamed.validate()) << "an embedding the features do not name";

  PipelineChoice renamed = *choice;
  renamed.features[0] = "something_else";
  EXPECT_FALSE(renamed.validate());
  PipelineChoice replacing = *choice;
  replacing.pipelines[0].replacement = "default<Os>";
  EXPECT_FALSE(replacing.validate());
  std::string text = *json;
  text.replace(text.find("\"neighbours\": 3"), 15, "\"neighbours\": 0");
  Expected<std::unique_ptr<Policy>> bad = policyFromJson(text, "choice.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("choice.json: choice.neighbours"), std::string::npos)
      << bad.error().message;
}

// Who inlines in each alternative: heuristic_inliner round-trips with the
// policy's inliner, and is refused without one or out of order.
// The confirm model, a second opinion on the cost vote: the vote's winner
// runs only where the linear model also predicts it cheaper than the
// fallback; the weights round-trip (text and blob form), and a model of the
// wrong shape, or one without costs to confirm, is refused by name.
TEST(PassPipeline, AConfirmModelCanOverruleTheCostVote) {
  PipelineChoice choice = unscaledChoice(2);
  const size_t n = choice.features.size();
  std::vector<double> at(n, 0.0);
  choice.examples = {{at, 1, {0, -0.05}}, {at, 1, {0, -0.03}}};
  ASSERT_TRUE(choice.validate());
  std::vector<double> low(n, 0.0), high(n, 0.0);
  low[0] = -1;
  high[0] = 1;
  EXPECT_EQ(choice.choose(low), 1u);
  EXPECT_EQ(choice.choose(high), 1u);
  // Predicted change of pipeline 1: 0.02 * feature 0 - 0.01 (intercept).
  choice.confirm.assign((n + 1) * 2, 0.0);
  choice.confirm[0 * 2 + 1] = 0.02;
  choice.confirm[n * 2 + 1] = -0.01;
  ASSERT_TRUE(choice.validate()) << choice.validate().error().message;
  EXPECT_EQ(choice.choose(low), 1u);  // predicted -0.03: confirmed
  EXPECT_EQ(choice.choose(high), 0u); // predicted +0.01: the fallback
  for (PolicyEncoding encoding : {PolicyEncoding::Text, PolicyEncoding::Blobs}) {
    const std::optional<PipelineChoice> read = roundTrip(choice, encoding);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->confirm, choice.confirm);
    EXPECT_EQ(read->choose(high), 0u);
  }
  PipelineChoice wrongShape = choice;
  wrongShape.confirm.pop_back();
  ASSERT_FALSE(wrongShape.validate());
  EXPECT_NE(wrongShape.validate().error().message.find("confirm"), std::string::npos);
  PipelineChoice labelsOnly = choice;
  for (PipelineChoice::Example& example : labelsOnly.examples)
    example.costs.clear();
  ASSERT_FALSE(labelsOnly.validate());
  EXPECT_NE(labelsOnly.validate().error().message.find("costs"), std::string::npos);
}

// The median vote: a pipeline wins only where neighbours carrying half the
// weight gained, so one neighbour's large gain does not carry a module whose
// other neighbours lost, and two small gains beat one large loss; the vote
// round-trips (text and blob form), and a median without costs or an
// unknown vote is refused by name.
TEST(PassPipeline, AMedianVoteNeedsHalfTheNeighboursToGain) {
  PipelineChoice choice = unscaledChoice(3);
  const size_t n = choice.features.size();
  std::vector<double> left(n, 0.0), right(n, 0.0);
  left[0] = -1;
  right[0] = 1;
  // Left: one large gain, two small losses (mean -0.09, median +0.01).
  // Right: two small gains, one large loss (mean +0.09, median -0.01).
  choice.examples = {{left, 1, {0, -0.30}},  {left, 0, {0, 0.01}},   {left, 0, {0, 0.02}},
                     {right, 1, {0, -0.01}}, {right, 1, {0, -0.02}}, {right, 0, {0, 0.30}}};
  ASSERT_TRUE(choice.validate());
  EXPECT_EQ(choice.choose(left), 1u);
  EXPECT_EQ(choice.choose(right), 0u);
  choice.vote = PipelineChoice::CostVote::Median;
  ASSERT_TRUE(choice.validate());
  EXPECT_EQ(choice.choose(left), 0u);
  EXPECT_EQ(choice.choose(right), 1u);
  choice.margin = 0.015; // the median gain (0.01) is within the margin
  EXPECT_EQ(choice.choose(right), 0u);
  choice.margin = 0;
  PipelinePolicy policy(PassPipeline{}, nullptr, std::make_shared<PipelineChoice>(choice));
  for (PolicyEncoding encoding : {PolicyEncoding::Text, PolicyEncoding::Blobs}) {
    const std::optional<PipelineChoice> read = roundTrip(choice, encoding);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->vote, PipelineChoice::CostVote::Median);
    EXPECT_EQ(read->choose(left), 0u);
    EXPECT_EQ(read->choose(right), 1u);
    Expected<std::string> bytes = policyToBytes(policy, encoding);
    ASSERT_TRUE(bytes) << bytes.error().message;
    const size_t field = bytes->find(R"("vote")");
    ASSERT_NE(field, std::string::npos);
    std::string unknown = *bytes;
    unknown.replace(unknown.find(R"("median")", field), 8, R"("mode")");
    Expected<std::unique_ptr<Policy>> refused = policyFromJson(unknown, "median.policy");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("choice.vote"), std::string::npos)
        << refused.error().message;
  }
  PipelineChoice labelsOnly = choice;
  for (PipelineChoice::Example& example : labelsOnly.examples)
    example.costs.clear();
  ASSERT_FALSE(labelsOnly.validate());
  EXPECT_NE(labelsOnly.validate().error().message.find("vote"), std::string::npos);
}

// The inliner's price (round 22): an alternative that runs the policy's
// inliner must undercut the fallback by the margin plus the price, and the
// cheaper alternative with LLVM's inliner wins where the price tips it; the
// price round-trips (text and blob form), and is refused by name when
// negative, without costs, or without an inliner policy to price.
TEST(PassPipeline, AnInlinerMarginPricesThePolicysInliner) {
  auto choice = std::make_shared<PipelineChoice>(unscaledChoice(3));
  choice->pipelines.push_back(structured());
  const size_t n = choice->features.size();
  const std::vector<double> at(n, 0.0);
  choice->heuristicInliner = {0, 1}; // 2 runs the policy's inliner
  choice->examples = {{at, 2, {0, -0.02, -0.03}}};
  ASSERT_TRUE(choice->validate());
  EXPECT_EQ(choice->choose(at), 2u);
  choice->inlinerMargin = 0.015; // -0.03 + 0.015 > -0.02
  ASSERT_TRUE(choice->validate());
  EXPECT_EQ(choice->choose(at), 1u);
  choice->margin = 0.025; // neither undercuts by the margin once priced
  EXPECT_EQ(choice->choose(at), 0u);
  choice->inlinerMargin = 0;
  EXPECT_EQ(choice->choose(at), 2u) << "-0.03 undercuts a margin of 0.025 unpriced";
  choice->margin = 0;
  choice->inlinerMargin = 0.015;
  std::shared_ptr<const Policy> inliner = makeConstantPolicy(1);
  EXPECT_FALSE(makePipelinePolicy(PassPipeline{}, nullptr, choice))
      << "a price on an inliner the policy does not carry";
  Expected<std::unique_ptr<Policy>> policy = makePipelinePolicy(PassPipeline{}, inliner, choice);
  ASSERT_TRUE(policy) << policy.error().message;
  for (PolicyEncoding encoding : {PolicyEncoding::Text, PolicyEncoding::Blobs}) {
    Expected<std::string> bytes = policyToBytes(**policy, encoding);
    ASSERT_TRUE(bytes) << bytes.error().message;
    Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*bytes, "priced.policy");
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
    ASSERT_TRUE(back && back->choice());
    EXPECT_EQ(back->choice()->inlinerMargin, 0.015);
    EXPECT_EQ(back->choice()->choose(at), 1u);
    std::string negative = *bytes;
    const size_t field = negative.find(R"("inliner_margin")");
    ASSERT_NE(field, std::string::npos);
    size_t value = negative.find(':', field) + 1;
    while (negative[value] == ' ')
      ++value;
    negative.insert(value, "-");
    Expected<std::unique_ptr<Policy>> refused = policyFromJson(negative, "priced.policy");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("inliner_margin"), std::string::npos)
        << refused.error().message;
  }
  PipelineChoice labelsOnly = *choice;
  for (PipelineChoice::Example& example : labelsOnly.examples)
    example.costs.clear();
  ASSERT_FALSE(labelsOnly.validate());
  EXPECT_NE(labelsOnly.validate().error().message.find("inliner_margin"), std::string::npos);
}

TEST(PassPipeline, AChoiceSaysWhereLlvmsInlinerRuns) {
  auto choice = std::make_shared<PipelineChoice>();
  choice->pipelines = {PassPipeline{}, structured(), structured()};
  choice->features = moduleFeatureNames();
  const size_t n = choice->features.size();
  choice->mean.assign(n, 0.0);
  choice->scale.assign(n, 1.0);
  choice->examples = {{std::vector<double>(n, 0.0), 2, {}}};
  choice->heuristicInliner = {0, 1};
  ASSERT_TRUE(choice->validate());
  EXPECT_FALSE(choice->inlinerPolicyIn(0));
  EXPECT_FALSE(choice->inlinerPolicyIn(1));
  EXPECT_TRUE(choice->inlinerPolicyIn(2));
  std::shared_ptr<const Policy> inliner = makeConstantPolicy(1);
  EXPECT_FALSE(makePipelinePolicy(PassPipeline{}, nullptr, choice))
      << "a heuristic set without an inliner policy";
  Expected<std::unique_ptr<Policy>> policy = makePipelinePolicy(PassPipeline{}, inliner, choice);
  ASSERT_TRUE(policy) << policy.error().message;
  Expected<std::string> json = policyToJson(**policy);
  ASSERT_TRUE(json) << json.error().message;
  Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*json, "both.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
  ASSERT_TRUE(back && back->choice() && back->inliner());
  EXPECT_EQ(back->choice()->heuristicInliner, choice->heuristicInliner);
  EXPECT_EQ(*policyToJson(*back), *json);

  PipelineChoice unordered = *choice;
  unordered.heuristicInliner = {1, 0};
  EXPECT_FALSE(unordered.validate());
  PipelineChoice outside = *choice;
  outside.heuristicInliner = {3};
  EXPECT_FALSE(outside.validate());
}

// Every shipped policy loads, and a shipped pipeline policy's choice reads
// the features this build computes (a change to the features must come with
// a retrained policy).
TEST(PassPipeline, EveryShippedPolicyLoads) {
  size_t pipelines = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shippedPolicyDirectory())) {
    if (entry.path().extension() != ".json" && entry.path().extension() != ".policy")
      continue;
    Expected<std::unique_ptr<Policy>> loaded = loadPolicy(entry.path());
    ASSERT_TRUE(loaded) << loaded.error().message;
    if (entry.path().filename().string().find("pipeline") == std::string::npos)
      continue;
    const auto* pipeline = dynamic_cast<const PipelinePolicy*>(loaded->get());
    ASSERT_NE(pipeline, nullptr) << entry.path() << ": not a pipeline policy";
    if (pipeline->choice()) {
      EXPECT_TRUE(pipeline->choice()->validate()) << entry.path();
    }
    ++pipelines;
  }
  EXPECT_GE(pipelines, 1u);
}

// The gated inliners (issue 33, bench/inlining-gate.sh) change only who
// inlines: -Oz's pipeline in both alternatives, LLVM's inliner in the
// first, the policy's in the second, by the median vote.
TEST(PassPipeline, TheGatedInlinersChangeOnlyWhoInlines) {
  for (const char* name : {"inlining-oz-gated", "inlining-oz-small-gated"}) {
    Expected<std::filesystem::path> path = shippedPolicy(name);
    ASSERT_TRUE(path) << path.error().message;
    Expected<std::unique_ptr<Policy>> loaded = loadPolicy(*path);
    ASSERT_TRUE(loaded) << loaded.error().message;
    const auto* gated = dynamic_cast<const PipelinePolicy*>(loaded->get());
    ASSERT_TRUE(gated && gated->choice() && gated->inliner()) << name;
    EXPECT_TRUE(gated->pipeline().neutral()) << name;
    const PipelineChoice& choice = *gated->choice();
    ASSERT_EQ(choice.pipelines.size(), 2u) << name;
    EXPECT_TRUE(choice.pipelines[0].neutral() && choice.pipelines[1].neutral()) << name;
    EXPECT_FALSE(choice.inlinerPolicyIn(0)) << name;
    EXPECT_TRUE(choice.inlinerPolicyIn(1)) << name;
    EXPECT_EQ(choice.vote, PipelineChoice::CostVote::Median) << name;
    EXPECT_TRUE(choice.validate()) << name;
  }
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
