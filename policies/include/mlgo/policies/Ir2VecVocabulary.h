// IR2Vec seed vocabularies: one embedding per IR entity (opcode, type,
// operand kind, comparison predicate), learned with TransE from the
// (head, tail, relation) triplets `llvm-ir2vec triplets` writes for a module,
// and written as the JSON file clang-22 reads with -ir2vec-vocab-path. With
// one, the inliner sends caller_embedding and callee_embedding: per function,
// the weighted sum of its instructions' entity embeddings. Debian's LLVM ships
// the tool but no vocabulary; IR2Vec's own was trained the same way (TransE
// over distinct triplets, 75 dimensions).
#pragma once

#include "mlgo/support/Expected.h"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::policies {

// llvm-ir2vec's train2id rows: entity ids and a relation id (0 = an
// instruction's type, 1 = the next instruction, 2… = its operands in order).
struct Ir2VecTriplet {
  uint32_t head = 0;
  uint32_t tail = 0;
  uint32_t relation = 0;
  auto operator<=>(const Ir2VecTriplet&) const = default;
};

// `llvm-ir2vec entities` output: a count line, then "name<TAB>id" per entity
// with ids 0…count-1 in order. The error names the line at fault.
Expected<std::vector<std::string>> parseIr2VecEntities(std::string_view text);

// `llvm-ir2vec triplets` output: "MAX_RELATION=R", then "head tail relation"
// per line. Appends to `triplets`; returns R. Ids are checked against
// `entityCount` and R; the error names the line.
Expected<uint32_t> parseIr2VecTriplets(std::string_view text, size_t entityCount,
                                       std::vector<Ir2VecTriplet>& triplets);

struct TransEOptions {
  size_t dimension = 75;      // LLVM's own seed vocabulary is 75-dimensional
  size_t epochs = 1000;       // passes over the distinct triplets
  double learningRate = 0.01; // SGD step per triplet
  double margin = 1.0;        // hinge: a triplet must score this much better than its corruption
  uint64_t seed = 1;          // initial embeddings, order and corruptions
  Status validate() const;
};

struct TransESummary {
  size_t entities = 0;
  size_t relations = 0;
  size_t triplets = 0;  // distinct
  double firstLoss = 0; // mean hinge loss over the first epoch
  double finalLoss = 0; // and the last
  double rankedFirst =
      0; // share of triplets whose true tail is the nearest entity to head + relation
  double seconds = 0;
};

struct Ir2VecVocabulary {
  std::vector<std::string> entities;           // by entity id
  std::vector<std::vector<double>> embeddings; // one per entity, `dimension` wide
  TransESummary summary;
};

// TransE (Bordes et al., 2013): entity and relation vectors with
// head + relation ≈ tail, trained by SGD on the margin loss against a
// corrupted triplet (head or tail replaced by a random entity), entities kept
// on the unit sphere. Deterministic for a seed. `progress(epoch, meanLoss)`
// is called after each epoch.
Expected<Ir2VecVocabulary> trainTransE(std::vector<std::string> entities,
                                       std::vector<Ir2VecTriplet> distinctTriplets,
                                       uint32_t relations, const TransEOptions& options,
                                       const std::function<void(size_t, double)>& progress = {});

// Writes the vocabulary as LLVM's JSON: {"Opcodes": {name: [...]}, "Types":
// {...}, "Arguments": {...}, "Predicates": {...}}; an entity's section
// follows from its name (…Ty: a type; ICMP_/FCMP_: a predicate; Function,
// Pointer, Constant, Variable: an operand kind; the rest are opcodes).
Status writeIr2VecVocabulary(const Ir2VecVocabulary& vocabulary, const std::filesystem::path& file);
// The same JSON as text (indented by `indent`, 0: one line).
Expected<std::string> ir2VecVocabularyJson(const Ir2VecVocabulary& vocabulary, unsigned indent = 1);
// Reads LLVM's vocabulary JSON (every section's entities, in the order of
// the file); every vector must be as wide as the first. The error names
// `where` and the entity at fault.
Expected<Ir2VecVocabulary> parseIr2VecVocabulary(std::string_view json, const std::string& where);
Expected<Ir2VecVocabulary> readIr2VecVocabulary(const std::filesystem::path& file);
// The dimension of its embeddings (0 when it has none).
size_t ir2VecDimension(const Ir2VecVocabulary& vocabulary);

} // namespace mlgo::policies
