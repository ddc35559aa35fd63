#include "mlgo/policies/TensorSpec.h"

#include "PoliciesTestSupport.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

namespace mlgo::policies {
namespace {

using testing::loadHeader;
using testing::readTestData;

TEST(ChannelHeader, ParsesClang22InlinerHeader) {
  ChannelHeader header = loadHeader("inliner-header-llvm22.json");
  ASSERT_EQ(header.features.size(), 39u);
  for (const TensorSpec& feature : header.features) {
    EXPECT_EQ(feature.type, TensorType::Int64) << feature.name;
    EXPECT_EQ(feature.shape, std::vector<int64_t>{1}) << feature.name;
    EXPECT_EQ(feature.port, 0) << feature.name;
  }
  EXPECT_EQ(header.features.front().name, "sroa_savings");
  EXPECT_EQ(header.features.back().name, "inlining_default");
  EXPECT_EQ(header.observationBytes(), 312u);
  EXPECT_EQ(header.findFeature("callee_users"), 35);
  EXPECT_EQ(header.findFeature("inlining_default"), 38);
  EXPECT_EQ(header.findFeature("no_such_feature"), -1);
  EXPECT_EQ(header.advice.name, "inlining_decision");
  EXPECT_EQ(header.advice.type, TensorType::Int64);
  EXPECT_EQ(header.advice.byteSize(), 8u);
}

TEST(ChannelHeader, ParsesClang22RegallocEvictHeader) {
  ChannelHeader header = loadHeader("regalloc-evict-header-llvm22.json");
  ASSERT_EQ(header.features.size(), 21u);
  const TensorSpec& mask = header.features[0];
  EXPECT_EQ(mask.describe(), "mask: int64_t[1,33]");
  EXPECT_EQ(mask.elementCount(), 33u);
  EXPECT_EQ(mask.byteSize(), 33u * 8);
  const TensorSpec& urgent = header.features[header.findFeature("nr_urgent")];
  EXPECT_EQ(urgent.describe(), "nr_urgent: float[1,33]");
  EXPECT_EQ(urgent.byteSize(), 33u * 4);
  EXPECT_EQ(header.features.back().describe(), "progress: float[1]");
  EXPECT_EQ(header.observationBytes(), 3436u); // 6 int64 and 14 float rows of 33, one float
  EXPECT_EQ(header.advice.describe(), "index_to_evict: int64_t[1]");
}

TEST(ChannelHeader, ParsesClang22RegallocPriorityHeader) {
  ChannelHeader header = loadHeader("regalloc-priority-header-llvm22.json");
  ASSERT_EQ(header.features.size(), 3u);
  EXPECT_EQ(header.features[2].describe(), "weight: float[1]");
  EXPECT_EQ(header.observationBytes(), 8u + 8u + 4u);
  EXPECT_EQ(header.advice.describe(), "priority: float[1]");
}

// With -ml-inliner-ir2vec-vocab-file, clang appends float embeddings; a
// training log also carries a "score" spec. Neither is in tests/data, so the
// header is made from the real one.
TEST(ChannelHeader, ParsesIR2VecEmbeddingsAndIgnoresScore) {
  std::string text = readTestData("inliner-header-llvm22.json");
  std::string tail = R"({"name":"inlining_default","type":"int64_t","port":0,"shape":[1]}])";
  size_t at = text.find(tail);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, tail.size(),
               R"({"name":"inlining_default","type":"int64_t","port":0,"shape":[1]},)"
               R"({"name":"callee_embedding","type":"float","port":0,"shape":[75]},)"
               R"({"name":"caller_embedding","type":"float","port":0,"shape":[75]}],)"
               R"("score":{"name":"reward","type":"float","port":0,"shape":[1]})");
  Expected<ChannelHeader> header = parseChannelHeader(text);
  ASSERT_TRUE(header) << header.error().message;
  ASSERT_EQ(header->features.size(), 41u);
  const TensorSpec& embedding = header->features[40];
  EXPECT_EQ(embedding.describe(), "caller_embedding: float[75]");
  EXPECT_EQ(embedding.byteSize(), 300u);
  EXPECT_EQ(header->observationBytes(), 312u + 2 * 300u);
  EXPECT_EQ(header->findFeature("reward"), -1);
  EXPECT_EQ(header->advice.name, "inlining_decision");
}

struct BadHeader {
  const char* json;
  const char* error;
  friend void PrintTo(const BadHeader& bad, std::ostream* os) { *os << bad.json; }
};

class BadChannelHeader : public ::testing::TestWithParam<BadHeader> {};

TEST_P(BadChannelHeader, IsRejectedNamingTheField) {
  Expected<ChannelHeader> header = parseChannelHeader(GetParam().json);
  ASSERT_FALSE(header) << GetParam().json;
  EXPECT_EQ(header.error().message, GetParam().error);
}

#define SPEC(name, type, shape)                                                                    \
  R"({"name":")" name R"(","type":")" type R"(","port":0,"shape":)" shape "}"

INSTANTIATE_TEST_SUITE_P(
    Examples, BadChannelHeader,
    ::testing::Values(
        BadHeader{"[1,2]",
                  "channel header: must be a JSON object with \"features\" and \"advice\""},
        BadHeader{R"({"advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features: missing"},
        BadHeader{R"({"features":{},"advice":{}})", "features: must be an array of tensor specs"},
        BadHeader{R"({"features":[],"advice":{}})", "features: is empty"},
        BadHeader{R"({"features":[)" SPEC("a", "int64_t", "[1]") "]}", "advice: missing"},
        BadHeader{
            R"({"features":[)" SPEC("a", "int64_t", "[1]") "," SPEC("b", "int64_t", "[1]") "," SPEC(
                "c", "int64_t",
                "[1]") "," SPEC("d", "int128_t",
                                "[1]") "],"
                                       R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
            "features[3].type: unknown tensor type \"int128_t\""},
        BadHeader{R"({"features":[{"type":"float","port":0,"shape":[1]}],)"
                  R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].name: missing"},
        BadHeader{R"({"features":[{"name":7,"type":"float","port":0,"shape":[1]}],)"
                  R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].name: must be a non-empty string"},
        BadHeader{R"({"features":[{"name":"a","port":0,"shape":[1]}],)"
                  R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].type: missing"},
        BadHeader{R"({"features":[{"name":"a","type":"float","port":0}],)"
                  R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].shape: missing"},
        BadHeader{R"({"features":[)" SPEC(
                      "a", "float",
                      "1") "],"
                           R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].shape: must be an array of positive integers"},
        BadHeader{R"({"features":[)" SPEC(
                      "a", "float",
                      "[1,0]") "],"
                               R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].shape[1]: must be a positive integer"},
        BadHeader{R"({"features":[)" SPEC(
                      "a", "float",
                      "[1.5]") "],"
                               R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].shape[0]: must be a positive integer"},
        BadHeader{R"({"features":[{"name":"a","type":"float","port":"x","shape":[1]}],)"
                  R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[0].port: must be a non-negative integer"},
        BadHeader{R"({"features":[)" SPEC("a", "float", "[1]") "," SPEC(
                      "a", "int64_t",
                      "[1]") "],"
                             R"("advice":{"name":"d","type":"int64_t","port":0,"shape":[1]}})",
                  "features[1].name: feature \"a\" appears twice"},
        BadHeader{R"({"features":[)" SPEC("a", "float", "[1]") R"(],"advice":[]})",
                  "advice: must be an object with \"name\", \"type\", \"shape\" and \"port\""},
        BadHeader{R"({"features":[)" SPEC("a", "float", "[1]") R"(],"advice":)" SPEC("d", "bool",
                                                                                     "[1]") "}",
                  "advice.type: unknown tensor type \"bool\""}));

#undef SPEC

TEST(ChannelHeader, InvalidJsonErrorSaysSo) {
  Expected<ChannelHeader> header = parseChannelHeader("{\"features\":[");
  ASSERT_FALSE(header);
  EXPECT_EQ(header.error().message.rfind("channel header: invalid JSON: ", 0), 0u)
      << header.error().message;
}

TEST(TensorType, NamesSizesAndParsingAgree) {
  const std::array<std::pair<TensorType, size_t>, 10> types{{{TensorType::Float, 4},
                                                             {TensorType::Double, 8},
                                                             {TensorType::Int8, 1},
                                                             {TensorType::UInt8, 1},
                                                             {TensorType::Int16, 2},
                                                             {TensorType::UInt16, 2},
                                                             {TensorType::Int32, 4},
                                                             {TensorType::UInt32, 4},
                                                             {TensorType::Int64, 8},
                                                             {TensorType::UInt64, 8}}};
  for (auto [type, size] : types) {
    EXPECT_EQ(tensorTypeSize(type), size) << tensorTypeName(type);
    Expected<TensorType> parsed = parseTensorType(tensorTypeName(type));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, type);
  }
  EXPECT_EQ(tensorTypeName(TensorType::Int64), "int64_t");
  EXPECT_EQ(tensorTypeName(TensorType::Float), "float");
  Expected<TensorType> bad = parseTensorType("int64");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "unknown tensor type \"int64\"");
}

TEST(TensorSpec, JsonRoundTrip) {
  const char* text = R"({"name":"callee_users","port":0,"shape":[1],"type":"int64_t"})";
  Expected<TensorSpec> spec = parseTensorSpec(text);
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->describe(), "callee_users: int64_t[1]");
  EXPECT_EQ(tensorSpecToJson(*spec), text);

  TensorSpec matrix{"m", TensorType::UInt16, {2, 3}, 4};
  Expected<TensorSpec> back = parseTensorSpec(tensorSpecToJson(matrix));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, matrix);
  EXPECT_EQ(matrix.elementCount(), 6u);
  EXPECT_EQ(matrix.byteSize(), 12u);

  Expected<TensorSpec> bad = parseTensorSpec(R"({"name":"x","type":"half","shape":[1]})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "type: unknown tensor type \"half\"");
}

TEST(TensorElement, ReadsEveryTypeAsDouble) {
  auto check = [](TensorType type, auto value) {
    std::array<decltype(value), 3> buffer{};
    buffer[2] = value;
    std::array<std::byte, sizeof(buffer)> bytes;
    std::memcpy(bytes.data(), buffer.data(), sizeof(buffer));
    EXPECT_EQ(tensorElementAsDouble(type, bytes.data(), 2), static_cast<double>(value))
        << tensorTypeName(type);
    EXPECT_EQ(tensorElementAsDouble(type, bytes.data(), 1), 0.0) << tensorTypeName(type);
  };
  check(TensorType::Float, -1.5f);
  check(TensorType::Double, 0.1);
  check(TensorType::Int8, int8_t{-7});
  check(TensorType::UInt8, uint8_t{250});
  check(TensorType::Int16, int16_t{-30000});
  check(TensorType::UInt16, uint16_t{60000});
  check(TensorType::Int32, int32_t{-2000000000});
  check(TensorType::UInt32, uint32_t{4000000000u});
  check(TensorType::Int64, int64_t{-(int64_t{1} << 40)});
  check(TensorType::UInt64, uint64_t{1} << 63);
}

} // namespace
} // namespace mlgo::policies
