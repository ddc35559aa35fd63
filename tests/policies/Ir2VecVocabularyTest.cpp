// IR2Vec vocabularies: llvm-ir2vec's text formats, TransE learning a graph's
// structure, and the JSON sections clang reads.
#include "mlgo/policies/Ir2VecVocabulary.h"
#include "mlgo/support/Files.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace mlgo::policies {
namespace {

TEST(Ir2VecText, EntitiesAndTripletsParseAndBadLinesAreNamed) {
  Expected<std::vector<std::string>> names = parseIr2VecEntities("3\nRet\t0\nBr\t1\nFloatTy\t2\n");
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_EQ(*names, (std::vector<std::string>{"Ret", "Br", "FloatTy"}));

  Expected<std::vector<std::string>> skipped = parseIr2VecEntities("2\nRet\t0\nBr\t2\n");
  ASSERT_FALSE(skipped);
  EXPECT_NE(skipped.error().message.find("line 3"), std::string::npos) << skipped.error().message;
  EXPECT_FALSE(parseIr2VecEntities("3\nRet\t0\n")); // the count disagrees

  std::vector<Ir2VecTriplet> triplets;
  Expected<uint32_t> relations =
      parseIr2VecTriplets("MAX_RELATION=2\n0\t2\t0\n1 0 2\n", 3, triplets);
  ASSERT_TRUE(relations) << relations.error().message;
  EXPECT_EQ(*relations, 2u);
  EXPECT_EQ(triplets, (std::vector<Ir2VecTriplet>{{0, 2, 0}, {1, 0, 2}}));

  Expected<uint32_t> beyond = parseIr2VecTriplets("MAX_RELATION=2\n0 3 0\n", 3, triplets);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("line 2"), std::string::npos) << beyond.error().message;
  EXPECT_FALSE(parseIr2VecTriplets("0 1 0\n", 3, triplets));                 // no header
  EXPECT_FALSE(parseIr2VecTriplets("MAX_RELATION=0\n0 1 1\n", 3, triplets)); // relation 1 > 0
}

// IR-shaped: nine "opcodes" (0-8) each with one of three "types" (9-11,
// relation 0), each type with one of two "operand kinds" (12, 13, relation
// 1). TransE can satisfy every triplet; random vectors satisfy few.
std::vector<Ir2VecTriplet> typedOpcodes() {
  std::vector<Ir2VecTriplet> triplets;
  for (uint32_t op = 0; op < 9; ++op)
    triplets.push_back({op, 9 + op % 3, 0});
  for (uint32_t type = 9; type < 12; ++type)
    triplets.push_back({type, 12 + type % 2, 1});
  return triplets;
}

std::vector<std::string> namesFor(size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i)
    names.push_back("E" + std::to_string(i));
  return names;
}

TEST(TransE, LearnsWhichTypeAnOpcodeHasAndIsDeterministicForASeed) {
  TransEOptions options;
  options.dimension = 8;
  options.epochs = 1;
  Expected<Ir2VecVocabulary> untrained = trainTransE(namesFor(14), typedOpcodes(), 2, options);
  ASSERT_TRUE(untrained) << untrained.error().message;
  options.epochs = 400;
  Expected<Ir2VecVocabulary> trained = trainTransE(namesFor(14), typedOpcodes(), 2, options);
  ASSERT_TRUE(trained) << trained.error().message;
  EXPECT_LT(untrained->summary.rankedFirst, 0.5);
  EXPECT_GT(trained->summary.rankedFirst, 0.9);
  EXPECT_LT(trained->summary.finalLoss, trained->summary.firstLoss);
  ASSERT_EQ(trained->embeddings.size(), 14u);
  for (const std::vector<double>& e : trained->embeddings) {
    ASSERT_EQ(e.size(), 8u);
    double norm = 0;
    for (double x : e)
      norm += x * x;
    EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-9); // entities live on the unit sphere
  }

  Expected<Ir2VecVocabulary> again = trainTransE(namesFor(14), typedOpcodes(), 2, options);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->embeddings, trained->embeddings);
  options.seed = 2;
  Expected<Ir2VecVocabulary> other = trainTransE(namesFor(14), typedOpcodes(), 2, options);
  ASSERT_TRUE(other);
  EXPECT_NE(other->embeddings, trained->embeddings);
}

TEST(TransE, RefusesWhatItCannotLearnFrom) {
  TransEOptions options;
  EXPECT_FALSE(trainTransE(namesFor(3), {}, 1, options));
  EXPECT_FALSE(trainTransE(namesFor(3), {{0, 5, 0}}, 1, options)); // no entity 5
  EXPECT_FALSE(trainTransE(namesFor(3), {{0, 1, 1}}, 1, options)); // no relation 1
  options.dimension = 0;
  EXPECT_FALSE(options.validate());
  options = {};
  options.learningRate = -1;
  EXPECT_FALSE(options.validate());
}

TEST(Ir2VecVocabularyFile, EntitiesGoToLlvmsSections) {
  Ir2VecVocabulary vocabulary;
  vocabulary.entities = {"Ret", "IntegerTy", "Pointer", "ICMP_eq", "Load"};
  for (size_t i = 0; i < vocabulary.entities.size(); ++i)
    vocabulary.embeddings.push_back({double(i), 0.5});
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("mlgo-ir2vec-" + std::to_string(::getpid()) + ".json");
  ASSERT_TRUE(writeIr2VecVocabulary(vocabulary, file));
  Expected<std::string> text = readFileBytes(file);
  std::filesystem::remove(file);
  ASSERT_TRUE(text);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*text);
  ASSERT_TRUE(bool(parsed));
  const llvm::json::Object& root = *parsed->getAsObject();
  auto keys = [&](const char* section) {
    std::vector<std::string> names;
    for (const auto& [name, value] : *root.getObject(section))
      names.push_back(name.str());
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(keys("Opcodes"), (std::vector<std::string>{"Load", "Ret"}));
  EXPECT_EQ(keys("Types"), (std::vector<std::string>{"IntegerTy"}));
  EXPECT_EQ(keys("Arguments"), (std::vector<std::string>{"Pointer"}));
  EXPECT_EQ(keys("Predicates"), (std::vector<std::string>{"ICMP_eq"}));
  const llvm::json::Array& load = *root.getObject("Opcodes")->getArray("Load");
  EXPECT_EQ(load[0].getAsNumber(), 4.0);
  EXPECT_EQ(load[1].getAsNumber(), 0.5);

  // Read back: the same entities and vectors (in section, then name order).
  Expected<Ir2VecVocabulary> back = parseIr2VecVocabulary(*text, "vocab.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(ir2VecDimension(*back), 2u);
  ASSERT_EQ(back->entities.size(), vocabulary.entities.size());
  for (size_t i = 0; i < back->entities.size(); ++i) {
    const auto at =
        std::find(vocabulary.entities.begin(), vocabulary.entities.end(), back->entities[i]);
    ASSERT_NE(at, vocabulary.entities.end()) << back->entities[i];
    EXPECT_EQ(back->embeddings[i], vocabulary.embeddings[at - vocabulary.entities.begin()]);
  }
  EXPECT_EQ(*ir2VecVocabularyJson(*back), *ir2VecVocabularyJson(*parseIr2VecVocabulary(
                                              *ir2VecVocabularyJson(*back, 0), "again")));
  Expected<Ir2VecVocabulary> ragged =
      parseIr2VecVocabulary(R"({"Opcodes": {"Add": [1, 2], "Ret": [1]}})", "ragged.json");
  ASSERT_FALSE(ragged);
  EXPECT_NE(ragged.error().message.find("ragged.json: Opcodes.Ret"), std::string::npos)
      << ragged.error().message;
  EXPECT_FALSE(parseIr2VecVocabulary("{}", "empty.json"));
  EXPECT_FALSE(parseIr2VecVocabulary("[1]", "array.json"));

  vocabulary.embeddings.pop_back();
  EXPECT_FALSE(writeIr2VecVocabulary(vocabulary, file));
}

} // namespace
} // namespace mlgo::policies
