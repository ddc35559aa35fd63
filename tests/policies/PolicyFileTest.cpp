#include "mlgo/policies/PolicyFile.h"

#include "mlgo/policies/Ensemble.h"
#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/policies/PassPipeline.h"

#include "PoliciesTestSupport.h"

#include <gtest/gtest.h>

#include <array>
#include <charconv>

#include <cmath>
#include <cstring>
#include <limits>

namespace mlgo::policies {
namespace {

using testing::inlinerHeader;
using testing::integerVocabulary;
using testing::randomStates;
using testing::ScratchDirectory;
using testing::writeText;

MlpPolicy inlinerMlp(const MlpOptions& options = testing::inlinerMlpOptions(), uint64_t seed = 1) {
  ChannelHeader header = inlinerHeader();
  Vocabulary vocabulary = integerVocabulary(header, 50);
  // Boundaries that only print exactly with 17 digits.
  EXPECT_TRUE(vocabulary.set("threshold", {0.1, 1.0 / 3, 2.0 / 3, 225.00000000000003}));
  Expected<std::shared_ptr<const MlpStructure>> structure =
      MlpStructure::create(header.features, vocabulary, options);
  EXPECT_TRUE(structure) << (structure ? "" : structure.error().message);
  MlpPolicy policy = MlpPolicy::initialised(structure.take(), seed);
  // Values a %g-style writer would damage: -0.0, a subnormal, integers, and
  // non-zero biases.
  std::vector<double> theta(policy.parameters().begin(), policy.parameters().end());
  theta[0] = -0.0;
  theta[1] = 4.9406564584124654e-324;
  theta[2] = -3.0;
  theta[3] = 1e300;
  theta.back() = 0.125;
  theta[theta.size() - 2] = -1.0 / 7;
  policy.setParameters(theta);
  return policy;
}

TEST(PolicyFile, MlpRoundTripIsBitExact) {
  for (bool withSqrt : {false, true}) {
    MlpOptions options = testing::inlinerMlpOptions();
    options.withSqrt = withSqrt;
    options.activation = withSqrt ? Activation::Tanh : Activation::Relu;
    options.hiddenLayers = withSqrt ? std::vector<int>{16} : std::vector<int>{64, 64};
    options.excludedFeatures = {"inlining_default", "callee_users"};
    MlpPolicy original = inlinerMlp(options);

    ScratchDirectory dir;
    ASSERT_TRUE(savePolicy(original, dir / "policy.json"));
    Expected<MlpPolicy> loaded = loadMlpPolicy(dir / "policy.json");
    ASSERT_TRUE(loaded) << loaded.error().message;

    ASSERT_EQ(loaded->parameterCount(), original.parameterCount());
    EXPECT_EQ(std::memcmp(loaded->parameters().data(), original.parameters().data(),
                          original.parameterCount() * sizeof(double)),
              0);
    EXPECT_TRUE(std::signbit(loaded->parameters()[0]));
    EXPECT_EQ(loaded->inputs(), original.inputs());
    EXPECT_EQ(loaded->structure()->vocabulary(), original.structure()->vocabulary());
    const MlpOptions& back = loaded->structure()->options();
    EXPECT_EQ(back.hiddenLayers, options.hiddenLayers);
    EXPECT_EQ(back.activation, options.activation);
    EXPECT_EQ(back.actions, options.actions);
    EXPECT_EQ(back.withSqrt, options.withSqrt);
    EXPECT_EQ(back.excludedFeatures, options.excludedFeatures);
    EXPECT_EQ(loaded->describe(), original.describe());

    RandomStream a(5), b(5);
    for (const auto& state : randomStates(500, original.structure()->featureCount(), 8)) {
      for (DecisionMode mode : {DecisionMode::Deterministic, DecisionMode::Sampling}) {
        Decision x = original.decide(state, mode, a);
        Decision y = loaded->decide(state, mode, b);
        ASSERT_EQ(x.advice, y.advice);
        ASSERT_EQ(std::memcmp(&x.logProbability, &y.logProbability, sizeof(double)), 0);
      }
    }

    // Saving the loaded policy again gives the same bytes.
    Expected<std::string> first = policyToJson(original);
    Expected<std::string> second = policyToJson(*loaded);
    ASSERT_TRUE(first && second);
    EXPECT_EQ(*first, *second);
  }
}

TEST(PolicyFile, ResidualMlpRoundTrips) {
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {8};
  options.residualMargin = 1.25;
  MlpPolicy original = inlinerMlp(options);
  ScratchDirectory dir;
  ASSERT_TRUE(savePolicy(original, dir / "policy.json"));
  Expected<MlpPolicy> loaded = loadMlpPolicy(dir / "policy.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->structure()->options().residualMargin, 1.25);
  EXPECT_EQ(loaded->structure()->options().residualFeature, "inlining_default");
  EXPECT_EQ(loaded->inputs(), original.inputs());
  EXPECT_EQ(loaded->describe(), original.describe());
  Expected<std::string> first = policyToJson(original);
  Expected<std::string> second = policyToJson(*loaded);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first, *second);
  EXPECT_NE(first->find("\"residual\""), std::string::npos);
  EXPECT_EQ(first->find("\"kept\""), std::string::npos); // both ways: as files were
  // Kept decisions survive the file.
  Expected<MlpPolicy> oneWay = withResidualMargin(original, 1.25, std::vector<int>{1});
  ASSERT_TRUE(oneWay) << oneWay.error().message;
  ASSERT_TRUE(savePolicy(*oneWay, dir / "one-way.json"));
  Expected<MlpPolicy> oneWayLoaded = loadMlpPolicy(dir / "one-way.json");
  ASSERT_TRUE(oneWayLoaded) << oneWayLoaded.error().message;
  EXPECT_EQ(oneWayLoaded->structure()->options().residualKept, std::vector<int>{1});
  EXPECT_EQ(oneWayLoaded->describe(), oneWay->describe());
  // A kept value that is no decision is refused, naming the policy file.
  Expected<std::string> text = policyToJson(*oneWay);
  ASSERT_TRUE(text);
  const size_t kept = text->find("\"kept\"");
  ASSERT_NE(kept, std::string::npos);
  text->replace(text->find('1', kept), 1, "7");
  writeText(dir / "bad-kept.json", *text);
  Expected<MlpPolicy> refused = loadMlpPolicy(dir / "bad-kept.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("bad-kept.json"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("residualKept"), std::string::npos)
      << refused.error().message;
  // A plain MLP's file has no residual entry (files stay as they were).
  Expected<std::string> plain = policyToJson(inlinerMlp(testing::inlinerMlpOptions()));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->find("\"residual\""), std::string::npos);
}

TEST(PolicyFile, HeuristicAndConstantRoundTrip) {
  ScratchDirectory dir;
  ASSERT_TRUE(savePolicy(*makeHeuristicEchoPolicy("is_multiple_blocks"), dir / "h.json"));
  Expected<std::unique_ptr<Policy>> heuristic = loadPolicy(dir / "h.json");
  ASSERT_TRUE(heuristic) << heuristic.error().message;
  EXPECT_EQ((*heuristic)->describe(), "heuristic");
  EXPECT_EQ((*heuristic)->inputs(), makeHeuristicEchoPolicy("is_multiple_blocks")->inputs());

  ASSERT_TRUE(savePolicy(*makeConstantPolicy(1), dir / "c.json"));
  Expected<std::unique_ptr<Policy>> constant = loadPolicy(dir / "c.json");
  ASSERT_TRUE(constant) << constant.error().message;
  RandomStream rng(1);
  EXPECT_EQ((*constant)->decide({}, DecisionMode::Deterministic, rng).advice, 1);
  EXPECT_EQ((*constant)->describe(), "constant(1)");

  Expected<MlpPolicy> notMlp = loadMlpPolicy(dir / "c.json");
  ASSERT_FALSE(notMlp);
  EXPECT_EQ(notMlp.error().message,
            (dir / "c.json").string() + ": kind: is \"constant(1)\", expected an mlp policy");
}

TEST(PolicyFile, LoadedMlpBindsToClangsHeaderOrSaysWhyNot) {
  ScratchDirectory dir;
  ASSERT_TRUE(savePolicy(inlinerMlp(), dir / "policy.json"));
  Expected<std::unique_ptr<Policy>> policy = loadPolicy(dir / "policy.json");
  ASSERT_TRUE(policy) << policy.error().message;

  ChannelHeader header = inlinerHeader();
  Expected<std::vector<size_t>> binding = bindPolicyInputs(**policy, header);
  ASSERT_TRUE(binding) << binding.error().message;
  ASSERT_EQ(binding->size(), 38u);
  for (size_t i = 0; i < 38; ++i)
    EXPECT_EQ((*binding)[i], i);

  ChannelHeader floatUsers = header;
  floatUsers.features[35].type = TensorType::Float;
  binding = bindPolicyInputs(**policy, floatUsers);
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().message,
            "policy feature \"callee_users\" is int64_t[1] but clang sends float[1]");

  ChannelHeader older = header;
  older.features.erase(older.features.begin() + 2); // load_elimination
  binding = bindPolicyInputs(**policy, older);
  ASSERT_FALSE(binding);
  EXPECT_EQ(binding.error().message,
            "policy feature \"load_elimination\" (int64_t[1]) is missing from clang's header");
}

TEST(PolicyFile, WritesTheDocumentedFormat) {
  Expected<std::string> text = policyToJson(inlinerMlp());
  ASSERT_TRUE(text);
  for (const char* needle :
       {"\"format\": \"mlgo-es-policy\"", "\"version\": 3", "\"kind\": \"mlp\"",
        "\"activation\": \"relu\"", "\"actions\": 2", "\"x^2\"", "\"inlining_default\"",
        "\"vocabulary\": {", "\"values\": \"", "\"counts\": [", "\"parameters\": {",
        "\"encoding\": \"float64-le-base64\"", "\"data\": \""})
    EXPECT_NE(text->find(needle), std::string::npos) << needle;
}

TEST(PolicyFile, RefusesPoliciesItCannotRepresent) {
  class Custom : public Policy {
  public:
    std::string describe() const override { return "custom"; }
    const std::vector<TensorSpec>& inputs() const override { return inputs_; }
    Decision decide(FeatureValues, DecisionMode, RandomStream&) const override { return {}; }
    std::vector<TensorSpec> inputs_;
  };
  ScratchDirectory dir;
  Status custom = savePolicy(Custom{}, dir / "x.json");
  ASSERT_FALSE(custom);
  EXPECT_EQ(custom.error().message, (dir / "x.json").string() +
                                        ": cannot save policy \"custom\": only heuristic, "
                                        "constant, mlp, flip-set and pipeline policies have "
                                        "a file format");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.json"));

  MlpPolicy diverged = inlinerMlp();
  std::vector<double> theta(diverged.parameters().begin(), diverged.parameters().end());
  theta[7] = std::numeric_limits<double>::quiet_NaN();
  diverged.setParameters(theta);
  Expected<std::string> nan = policyToJson(diverged);
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().message,
            "cannot save policy \"mlp[64,64] relu\": parameter 7 is not finite");
}

// A valid small mlp file, edited into invalid ones.
std::string smallMlpJson() {
  Vocabulary vocabulary;
  EXPECT_TRUE(vocabulary.set("a", {0, 1, 2}));
  EXPECT_TRUE(vocabulary.set("b", {5}));
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {2};
  Expected<std::shared_ptr<const MlpStructure>> structure =
      MlpStructure::create({{"a", TensorType::Int64, {1}, 0},
                            {"b", TensorType::Int64, {1}, 0},
                            {"inlining_default", TensorType::Int64, {1}, 0}},
                           vocabulary, options);
  EXPECT_TRUE(structure);
  Expected<std::string> text = policyToJson(MlpPolicy::initialised(structure.take(), 3));
  EXPECT_TRUE(text);
  return *text;
}

struct BadPolicyEdit {
  const char* name;
  const char* from; // must occur in the valid file
  const char* to;
  const char* error; // after "<file>: "
  friend void PrintTo(const BadPolicyEdit& edit, std::ostream* os) { *os << edit.name; }
};

class BadPolicyFile : public ::testing::TestWithParam<BadPolicyEdit> {};

TEST_P(BadPolicyFile, IsRejectedNamingFileAndField) {
  const BadPolicyEdit& edit = GetParam();
  std::string text = smallMlpJson();
  Expected<std::unique_ptr<Policy>> valid = policyFromJson(text, "valid.json");
  ASSERT_TRUE(valid) << valid.error().message;
  size_t at = text.find(edit.from);
  ASSERT_NE(at, std::string::npos) << edit.from << " not in:\n" << text;
  text.replace(at, std::strlen(edit.from), edit.to);

  ScratchDirectory dir;
  writeText(dir / "bad.json", text);
  Expected<std::unique_ptr<Policy>> policy = loadPolicy(dir / "bad.json");
  ASSERT_FALSE(policy) << text;
  EXPECT_EQ(policy.error().message, (dir / "bad.json").string() + ": " + edit.error);
}

INSTANTIATE_TEST_SUITE_P(
    Edits, BadPolicyFile,
    ::testing::Values(
        BadPolicyEdit{"format", "\"mlgo-es-policy\"", "\"tflite\"",
                      "format: is \"tflite\", expected \"mlgo-es-policy\""},
        BadPolicyEdit{"newer", "\"version\": 3", "\"version\": 5",
                      "version: 5 is newer than this build of mlgo-es reads (4); update mlgo-es"},
        BadPolicyEdit{"versionType", "\"version\": 3", "\"version\": \"3\"",
                      "version: must be an integer"},
        BadPolicyEdit{"noVersion", "\"version\": 3,", "", "version: missing"},
        BadPolicyEdit{"kind", "\"kind\": \"mlp\"", "\"kind\": \"xgboost\"",
                      "kind: unknown policy kind \"xgboost\" (expected heuristic, constant, "
                      "mlp, flip-set or pipeline)"},
        BadPolicyEdit{"inputType", "\"int64_t\"", "\"int128_t\"",
                      "inputs[0].type: unknown tensor type \"int128_t\""},
        BadPolicyEdit{"activation", "\"relu\"", "\"sigmoid\"",
                      "architecture.activation: unknown activation \"sigmoid\" (expected relu or "
                      "tanh)"},
        BadPolicyEdit{"layers", "\"hidden_layers\": [\n   2", "\"hidden_layers\": [\n   0",
                      "architecture.hidden_layers[0]: must be a positive integer"},
        BadPolicyEdit{"actions", "\"actions\": 2", "\"actions\": 1",
                      "architecture.actions: must be at least 2 (got 1)"},
        BadPolicyEdit{"expansions", "\"x^2\"", "\"x^3\"",
                      "architecture.expansions: must be [\"x\", \"x^2\"] or [\"x\", \"x^2\", "
                      "\"sqrt(x)\"]"},
        BadPolicyEdit{"excludedInput", "\"excluded_features\": [\n   \"inlining_default\"",
                      "\"excluded_features\": [\n   \"b\"",
                      "inputs[1]: \"b\" is also in architecture.excluded_features"},
        // [0, 1, 2] and [0, -1, 2] as float64-le-base64.
        BadPolicyEdit{"unsorted", "AAAAAAAAAAAAAAAAAADwPwAAAAAAAABA",
                      "AAAAAAAAAAAAAAAAAADwvwAAAAAAAABA",
                      "vocabulary.a: vocabulary feature \"a\": boundary 1 (-1) is smaller than "
                      "the one before (0)"},
        BadPolicyEdit{"vocabularyNumber", "\"values\": \"AAAAAAAAFEA=\"", "\"values\": [\"5\"]",
                      "vocabulary.b.values[0]: must be a finite number"},
        BadPolicyEdit{"vocabularyNotFinite", "AAAAAAAAFEA=", "AAAAAAAA+H8=",
                      "vocabulary.b.values[0]: must be a finite number"},
        BadPolicyEdit{"vocabularyBase64", "AAAAAAAAFEA=", "!AAAAAAAFEA=",
                      "vocabulary.b.values: invalid base64: Invalid Base64 character 0x21 at "
                      "index 0"},
        BadPolicyEdit{"vocabularyCount", "\"counts\": [1, 1, 1]", "\"counts\": [1, 0, 1]",
                      "vocabulary.a.counts[1]: must be a positive integer"},
        BadPolicyEdit{"vocabularyLengths", "\"counts\": [1, 1, 1]", "\"counts\": [1, 1]",
                      "vocabulary.a: values and counts differ in length"},
        BadPolicyEdit{"strayVocabulary", "\"b\": {", "\"c\": {",
                      "vocabulary.c: is not one of the policy's inputs"},
        BadPolicyEdit{"missingVocabulary", "\"vocabulary\": {\n  \"a\"",
                      "\"vocabulary\": {\n  \"zzz\": [1.0], \"a\"",
                      "vocabulary.zzz: is not one of the policy's inputs"},
        BadPolicyEdit{"parameterCount", "\"parameters\": {", "\"parameters\": [0.5], \"x\": {",
                      "parameters: has 1 values but the architecture needs 16"},
        BadPolicyEdit{"parameterEncoding", "\"float64-le-base64\"", "\"float32-le-base64\"",
                      "parameters.encoding: \"float32-le-base64\" is not float64-le-base64 or "
                      "float64-le-blob"},
        BadPolicyEdit{"parameterBytes", "\"data\": \"", "\"data\": \"AAAA",
                      "parameters.data: 131 bytes is not a whole number of doubles"},
        BadPolicyEdit{"parameterBase64", "\"data\": \"", "\"data\": \"!AAA",
                      "parameters.data: invalid base64: Invalid Base64 character 0x21 at index 0"},
        BadPolicyEdit{"noParameters", "\"parameters\"", "\"weights\"", "parameters: missing"}),
    [](const auto& info) { return std::string(info.param.name); });

// Files of version 1 (plain arrays of decimal numbers: the policies shipped
// before version 2) still load, to the same policy.
TEST(PolicyFile, ReadsVersionOneFiles) {
  const std::string current = smallMlpJson();
  Expected<std::unique_ptr<Policy>> expected = policyFromJson(current, "v2.json");
  ASSERT_TRUE(expected) << expected.error().message;
  const auto& mlp = dynamic_cast<const MlpPolicy&>(**expected);
  std::string v1 = current.substr(0, current.find("\"vocabulary\""));
  const size_t version = v1.find("\"version\": 3");
  ASSERT_NE(version, std::string::npos);
  v1.replace(version, std::strlen("\"version\": 3"), "\"version\": 1");
  v1 += "\"vocabulary\": {\"a\": [0.0, 1.0, 2.0], \"b\": [5.0]}, \"parameters\": [";
  for (size_t i = 0; i < mlp.parameterCount(); ++i) {
    std::array<char, 64> number;
    auto [end, ec] =
        std::to_chars(number.data(), number.data() + number.size(), mlp.parameters()[i]);
    v1 += (i ? ", " : "") + std::string(number.data(), end);
  }
  v1 += "]}";
  Expected<std::unique_ptr<Policy>> old = policyFromJson(v1, "v1.json");
  ASSERT_TRUE(old) << old.error().message << "\n" << v1;
  EXPECT_EQ(policyToJson(**old).hasValue() ? *policyToJson(**old) : "", current);
}

// Version 2 wrote a vocabulary's values as decimal numbers: such files
// still load, to the same policy.
TEST(PolicyFile, ReadsVersionTwoVocabularies) {
  const std::string current = smallMlpJson();
  std::string v2 = current;
  for (auto [from, to] : {std::pair{"\"version\": 3", "\"version\": 2"},
                          std::pair{"\"AAAAAAAAAAAAAAAAAADwPwAAAAAAAABA\"", "[0.0, 1.0, 2.0]"},
                          std::pair{"\"AAAAAAAAFEA=\"", "[5.0]"}}) {
    const size_t at = v2.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in:\n" << current;
    v2.replace(at, std::strlen(from), to);
  }
  Expected<std::unique_ptr<Policy>> old = policyFromJson(v2, "v2.json");
  ASSERT_TRUE(old) << old.error().message << "\n" << v2;
  EXPECT_EQ(policyToJson(**old).hasValue() ? *policyToJson(**old) : "", current);
}

TEST(PolicyFile, RejectsOtherBadFiles) {
  ScratchDirectory dir;
  Expected<std::unique_ptr<Policy>> missing = loadPolicy(dir / "none.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, (dir / "none.json").string() + ": no such file");

  Expected<std::unique_ptr<Policy>> notJson = policyFromJson("{\"format\": ", "p.json");
  ASSERT_FALSE(notJson);
  EXPECT_EQ(notJson.error().message.rfind("p.json: invalid JSON: ", 0), 0u);

  Expected<std::unique_ptr<Policy>> array = policyFromJson("[]", "p.json");
  ASSERT_FALSE(array);
  EXPECT_EQ(array.error().message, "p.json: top level must be a JSON object");

  // An input without a vocabulary entry.
  std::string text = smallMlpJson();
  size_t at = text.find("\"b\": {");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, std::strlen("\"b\": {"), "\"a2\": {");
  Expected<std::unique_ptr<Policy>> stray = policyFromJson(text, "p.json");
  ASSERT_FALSE(stray);
  EXPECT_EQ(stray.error().message, "p.json: vocabulary.a2: is not one of the policy's inputs");

  // A bad parameter value with the right count (a version 1 array).
  text = smallMlpJson();
  at = text.find("\"parameters\": {");
  ASSERT_NE(at, std::string::npos);
  size_t end = text.find('}', at);
  std::string values = "[true";
  for (int i = 1; i < 16; ++i)
    values += ", 0.5";
  text.replace(at, end + 1 - at, "\"parameters\": " + values + "]");
  Expected<std::unique_ptr<Policy>> badValue = policyFromJson(text, "p.json");
  ASSERT_FALSE(badValue);
  EXPECT_EQ(badValue.error().message, "p.json: parameters[0]: must be a finite number");
  // An infinite one, encoded: +inf and 15 zeros, little-endian.
  text = smallMlpJson();
  at = text.find("\"data\": \"") + std::strlen("\"data\": \"");
  text.replace(at, text.find('"', at) - at, "AAAAAAAA8H8" + std::string(160, 'A') + "=");
  Expected<std::unique_ptr<Policy>> infinite = policyFromJson(text, "p.json");
  ASSERT_FALSE(infinite);
  EXPECT_EQ(infinite.error().message, "p.json: parameters.data[0]: must be a finite number");

  const char* heuristicWithFloat =
      R"({"format":"mlgo-es-policy","version":1,"kind":"heuristic",)"
      R"("inputs":[{"name":"inlining_default","port":0,"shape":[1],"type":"float"}]})";
  Expected<std::unique_ptr<Policy>> heuristic = policyFromJson(heuristicWithFloat, "h.json");
  ASSERT_FALSE(heuristic);
  EXPECT_EQ(heuristic.error().message,
            "h.json: inputs[0]: the heuristic's feature must be int64_t[1], not float[1]");

  const char* constantWithoutAdvice =
      R"({"format":"mlgo-es-policy","version":1,"kind":"constant","inputs":[]})";
  Expected<std::unique_ptr<Policy>> constant = policyFromJson(constantWithoutAdvice, "c.json");
  ASSERT_FALSE(constant);
  EXPECT_EQ(constant.error().message, "c.json: advice: missing");

  // A vocabulary entry missing for an input is MlpStructure's error.
  const char* noVocabulary =
      R"({"format":"mlgo-es-policy","version":1,"kind":"mlp",)"
      R"("inputs":[{"name":"a","port":0,"shape":[1],"type":"int64_t"}],)"
      R"("architecture":{"hidden_layers":[],"activation":"relu","actions":2,)"
      R"("expansions":["x","x^2"],"excluded_features":[]},"vocabulary":{},"parameters":[]})";
  Expected<std::unique_ptr<Policy>> mlp = policyFromJson(noVocabulary, "m.json");
  ASSERT_FALSE(mlp);
  EXPECT_EQ(mlp.error().message,
            "m.json: mlp input \"a\" (int64_t[1]) has no vocabulary entry; only float vectors "
            "such as embeddings are passed through unnormalised");
}

// The blob form (version 4): the same policy as the text form, its runs of
// doubles raw after the JSON head; a file whose blob area is cut short or
// a blob reference in a text file is refused by field.
TEST(PolicyFile, BlobFormReadsAsTheTextForm) {
  auto choice = std::make_shared<PipelineChoice>();
  PassPipeline skipping;
  skipping.skipped = {{"LoopRotatePass", std::nullopt}};
  choice->pipelines = {PassPipeline{}, skipping};
  choice->features = moduleFeatureNames();
  const size_t n = choice->features.size();
  choice->mean.assign(n, 0.5);
  choice->scale.assign(n, 3.0);
  choice->neighbours = 2;
  for (size_t e = 0; e < 40; ++e) {
    std::vector<double> features(n, 1.0 / (static_cast<double>(e) + 3));
    features[e % n] = -0.0;
    choice->examples.push_back({features, e % 2, {0, e % 2 ? -0.01 : 0.25}});
  }
  ASSERT_TRUE(choice->validate());
  PipelinePolicy policy(skipping, std::make_shared<MlpPolicy>(inlinerMlp()), choice);

  Expected<std::string> text = policyToJson(policy);
  Expected<std::string> blobs = policyToBytes(policy, PolicyEncoding::Blobs);
  ASSERT_TRUE(text && blobs) << (text ? blobs.error().message : text.error().message);
  EXPECT_FALSE(hasBlobArea(*text));
  ASSERT_TRUE(hasBlobArea(*blobs));
  EXPECT_LT(blobs->size(), text->size());
  const std::string head = blobs->substr(0, blobs->find('\0'));
  EXPECT_NE(head.find("\"version\": 4"), std::string::npos);
  EXPECT_NE(head.find("\"encoding\": \"float64-le-blob\""), std::string::npos);
  EXPECT_EQ(head.find("float64-le-base64"), std::string::npos) << "every run in the blob area";

  // Read back, it is the same policy: its text form is the same bytes.
  ScratchDirectory dir;
  ASSERT_TRUE(savePolicy(policy, dir / "p.policy", PolicyEncoding::Blobs));
  Expected<std::unique_ptr<Policy>> loaded = loadPolicy(dir / "p.policy");
  ASSERT_TRUE(loaded) << loaded.error().message;
  Expected<std::string> again = policyToJson(**loaded);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *text);
  const auto* back = dynamic_cast<const PipelinePolicy*>(loaded->get());
  ASSERT_TRUE(back && back->choice() && back->inliner());
  EXPECT_TRUE(std::signbit(back->choice()->examples[0].features[0]));
  std::vector<double> point(n, 0.9);
  EXPECT_EQ(back->choice()->choose(point), choice->choose(point));

  // The blob area cut short: the run that no longer fits is named.
  Expected<std::unique_ptr<Policy>> cut =
      policyFromJson(std::string_view(*blobs).substr(0, blobs->size() - 8), "p.policy");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("p.policy: "), std::string::npos);
  EXPECT_NE(cut.error().message.find("do not fit the blob area"), std::string::npos)
      << cut.error().message;
  // The head alone (no NUL): a text file with blob references.
  Expected<std::unique_ptr<Policy>> headOnly = policyFromJson(head, "h.json");
  ASSERT_FALSE(headOnly);
  EXPECT_NE(headOnly.error().message.find("a text file has none"), std::string::npos)
      << headOnly.error().message;

  // An example's features are read row by row where they lie in the blob
  // area: a value that is not finite is still refused, by its index.
  std::string poisoned = *blobs;
  const double last = 1.0 / 42; // example 39's features (but one)
  const std::string pattern(reinterpret_cast<const char*>(&last), sizeof last);
  const size_t at = poisoned.find(pattern, head.size());
  ASSERT_NE(at, std::string::npos);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  poisoned.replace(at, sizeof nan, reinterpret_cast<const char*>(&nan), sizeof nan);
  Expected<std::unique_ptr<Policy>> notFinite = policyFromJson(poisoned, "p.policy");
  ASSERT_FALSE(notFinite);
  EXPECT_NE(notFinite.error().message.find("choice.examples.features[" + std::to_string(39 * n)),
            std::string::npos)
      << notFinite.error().message;
  EXPECT_NE(notFinite.error().message.find("must be a finite number"), std::string::npos);
  // A file that is not there is named.
  Expected<std::unique_ptr<Policy>> missing = loadPolicy(dir / "missing.policy");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("missing.policy: no such file"), std::string::npos)
      << missing.error().message;
}

} // namespace
} // namespace mlgo::policies
