#include "mlgo/policies/Ir2VecVocabulary.h"
#include "Ir2VecVocabularyInternal.h"

#include "mlgo/support/Files.h"
#include "mlgo/support/Random.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <set>

namespace mlgo::policies {

namespace {

// Splits `text` into lines (without the newline), numbered from 1.
template <class F> Status forEachLine(std::string_view text, F&& visit) {
  size_t number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (Status ok = visit(number, line); !ok)
      return ok;
  }
  return Status::ok();
}

// "<what>, line N: why", for a bad line of one of llvm-ir2vec's files.
Status lineError(std::string_view what, size_t number, const std::string& why) {
  return makeError(std::string(what) + ", line " + std::to_string(number) + ": " + why);
}

// Whitespace-separated unsigned integers of one line.
std::vector<uint64_t> numbersOf(std::string_view line, bool& ok) {
  std::vector<uint64_t> numbers;
  ok = true;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r'))
      ++at;
    if (at == line.size())
      break;
    uint64_t value = 0;
    auto [end, error] = std::from_chars(line.data() + at, line.data() + line.size(), value);
    if (error != std::errc()) {
      ok = false;
      return numbers;
    }
    numbers.push_back(value);
    at = static_cast<size_t>(end - line.data());
  }
  return numbers;
}

using Vector = std::vector<double>;

double distance(const Vector& head, const Vector& relation, const Vector& tail, Vector& gradient) {
  double squared = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    gradient[i] = head[i] + relation[i] - tail[i];
    squared += gradient[i] * gradient[i];
  }
  double norm = std::sqrt(squared);
  // d‖x‖/dx = x/‖x‖ (0 at 0).
  for (double& g : gradient)
    g = norm > 0 ? g / norm : 0;
  return norm;
}

void normalise(Vector& v) {
  double norm = 0;
  for (double x : v)
    norm += x * x;
  norm = std::sqrt(norm);
  if (norm > 0)
    for (double& x : v)
      x /= norm;
}

// Moves the triplet (h, r, t) by −step·∂d: h and r along −g, t along +g.
void descend(Vector& head, Vector& relation, Vector& tail, const Vector& gradient, double step) {
  for (size_t i = 0; i < gradient.size(); ++i) {
    head[i] -= step * gradient[i];
    relation[i] -= step * gradient[i];
    tail[i] += step * gradient[i];
  }
}

// Share of triplets whose tail is the entity nearest to head + relation.
double rankedFirst(const std::vector<Vector>& entities, const std::vector<Vector>& relations,
                   const std::vector<Ir2VecTriplet>& triplets) {
  if (triplets.empty())
    return 0;
  size_t first = 0;
  Vector unused(entities.front().size());
  for (const Ir2VecTriplet& t : triplets) {
    double truth = distance(entities[t.head], relations[t.relation], entities[t.tail], unused);
    bool best = true;
    for (size_t e = 0; e < entities.size() && best; ++e)
      best = e == t.tail ||
             distance(entities[t.head], relations[t.relation], entities[e], unused) >= truth;
    first += best;
  }
  return static_cast<double>(first) / static_cast<double>(triplets.size());
}

std::string_view sectionOf(std::string_view entity) {
  if (entity.size() > 2 && entity.ends_with("Ty"))
    return "Types";
  if (entity.starts_with("ICMP_") || entity.starts_with("FCMP_"))
    return "Predicates";
  // LLVM 22's operand kinds (ir2vec::Vocabulary::OperandKind).
  for (std::string_view kind : {"Function", "Pointer", "Constant", "Variable"})
    if (entity == kind)
      return "Arguments";
  return "Opcodes";
}

} // namespace

Expected<std::vector<std::string>> parseIr2VecEntities(std::string_view text) {
  std::vector<std::string> names;
  std::optional<uint64_t> count;
  Status parsed = forEachLine(text, [&](size_t number, std::string_view line) -> Status {
    auto bad = [&](const std::string& why) { return lineError("IR2Vec entities", number, why); };
    if (line.empty())
      return Status::ok();
    if (!count) {
      bool ok = false;
      std::vector<uint64_t> n = numbersOf(line, ok);
      if (!ok || n.size() != 1)
        return bad("expected the entity count");
      count = n[0];
      return Status::ok();
    }
    size_t tab = line.rfind('\t');
    if (tab == std::string_view::npos)
      return bad("expected \"name<TAB>id\"");
    bool ok = false;
    std::vector<uint64_t> id = numbersOf(line.substr(tab + 1), ok);
    if (!ok || id.size() != 1 || id[0] != names.size())
      return bad("expected id " + std::to_string(names.size()));
    names.emplace_back(line.substr(0, tab));
    return Status::ok();
  });
  if (!parsed)
    return parsed.error();
  if (!count || *count != names.size())
    return makeError("IR2Vec entities: the count line says " +
                     (count ? std::to_string(*count) : std::string("nothing")) + " but " +
                     std::to_string(names.size()) + " entities follow");
  return names;
}

Expected<uint32_t> parseIr2VecTriplets(std::string_view text, size_t entityCount,
                                       std::vector<Ir2VecTriplet>& triplets) {
  std::optional<uint32_t> maxRelation;
  Status parsed = forEachLine(text, [&](size_t number, std::string_view line) -> Status {
    auto bad = [&](const std::string& why) { return lineError("IR2Vec triplets", number, why); };
    if (line.empty())
      return Status::ok();
    bool ok = false;
    if (!maxRelation) {
      constexpr std::string_view prefix = "MAX_RELATION=";
      std::vector<uint64_t> r = line.starts_with(prefix) ? numbersOf(line.substr(prefix.size()), ok)
                                                         : std::vector<uint64_t>();
      if (!ok || r.size() != 1)
        return bad("expected MAX_RELATION=N");
      maxRelation = static_cast<uint32_t>(r[0]);
      return Status::ok();
    }
    std::vector<uint64_t> n = numbersOf(line, ok);
    if (!ok || n.size() != 3)
      return bad("expected \"head tail relation\"");
    if (n[0] >= entityCount || n[1] >= entityCount)
      return bad("entity id beyond the " + std::to_string(entityCount) + " entities");
    if (n[2] > *maxRelation)
      return bad("relation beyond MAX_RELATION");
    triplets.push_back(
        {static_cast<uint32_t>(n[0]), static_cast<uint32_t>(n[1]), static_cast<uint32_t>(n[2])});
    return Status::ok();
  });
  if (!parsed)
    return parsed.error();
  if (!maxRelation)
    return makeError("IR2Vec triplets: no MAX_RELATION line");
  return *maxRelation;
}

Status TransEOptions::validate() const {
  if (dimension == 0)
    return makeError("TransE: the dimension must be at least 1");
  if (epochs == 0)
    return makeError("TransE: at least one epoch");
  if (!(learningRate > 0) || !std::isfinite(learningRate))
    return makeError("TransE: the learning rate must be positive");
  if (!(margin > 0) || !std::isfinite(margin))
    return makeError("TransE: the margin must be positive");
  return Status::ok();
}

Expected<Ir2VecVocabulary> trainTransE(std::vector<std::string> entities,
                                       std::vector<Ir2VecTriplet> distinctTriplets,
                                       uint32_t relations, const TransEOptions& options,
                                       const std::function<void(size_t, double)>& progress) {
  if (Status valid = options.validate(); !valid)
    return valid.error();
  if (entities.size() < 2)
    return makeError("TransE: needs at least two entities");
  if (distinctTriplets.empty())
    return makeError("TransE: no triplets to learn from");
  for (const Ir2VecTriplet& t : distinctTriplets)
    if (t.head >= entities.size() || t.tail >= entities.size() || t.relation >= relations)
      return makeError("TransE: a triplet names an entity or relation that does not exist");
  const auto started = std::chrono::steady_clock::now();
  RandomStream random(options.seed);
  // Bordes et al.'s initialisation: uniform in ±6/√d.
  const double bound = 6.0 / std::sqrt(static_cast<double>(options.dimension));
  auto initial = [&] {
    Vector v(options.dimension);
    for (double& x : v)
      x = (2 * random.uniform01() - 1) * bound;
    return v;
  };
  std::vector<Vector> entity(entities.size()), relation(relations);
  for (Vector& v : entity)
    v = initial();
  for (Vector& v : relation) {
    v = initial();
    normalise(v);
  }

  TransESummary summary;
  summary.entities = entities.size();
  summary.relations = relations;
  summary.triplets = distinctTriplets.size();
  Vector positive(options.dimension), negative(options.dimension);
  for (size_t epoch = 0; epoch < options.epochs; ++epoch) {
    for (Vector& v : entity)
      normalise(v);
    // Fisher–Yates with our own stream: the order is part of the seed.
    for (size_t i = distinctTriplets.size(); i > 1; --i)
      std::swap(distinctTriplets[i - 1], distinctTriplets[random.uniformBelow(i)]);
    double loss = 0;
    for (const Ir2VecTriplet& t : distinctTriplets) {
      Ir2VecTriplet corrupt = t;
      uint32_t& replaced = random.uniformBelow(2) ? corrupt.head : corrupt.tail;
      const uint32_t original = replaced;
      while (replaced == original)
        replaced = static_cast<uint32_t>(random.uniformBelow(entities.size()));
      double good = distance(entity[t.head], relation[t.relation], entity[t.tail], positive);
      double bad = distance(entity[corrupt.head], relation[corrupt.relation], entity[corrupt.tail],
                            negative);
      double hinge = options.margin + good - bad;
      if (hinge <= 0)
        continue;
      loss += hinge;
      descend(entity[t.head], relation[t.relation], entity[t.tail], positive, options.learningRate);
      descend(entity[corrupt.head], relation[corrupt.relation], entity[corrupt.tail], negative,
              -options.learningRate);
    }
    loss /= static_cast<double>(distinctTriplets.size());
    if (epoch == 0)
      summary.firstLoss = loss;
    summary.finalLoss = loss;
    if (progress)
      progress(epoch + 1, loss);
  }
  for (Vector& v : entity)
    normalise(v);
  std::sort(distinctTriplets.begin(), distinctTriplets.end());
  summary.rankedFirst = rankedFirst(entity, relation, distinctTriplets);
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return Ir2VecVocabulary{std::move(entities), std::move(entity), summary};
}

Expected<std::string> ir2VecVocabularyJson(const Ir2VecVocabulary& vocabulary, unsigned indent) {
  if (vocabulary.entities.size() != vocabulary.embeddings.size())
    return makeError("IR2Vec vocabulary: " + std::to_string(vocabulary.entities.size()) +
                     " names for " + std::to_string(vocabulary.embeddings.size()) + " embeddings");
  std::string text;
  llvm::raw_string_ostream stream(text);
  llvm::json::OStream out(stream, indent);
  out.object([&] {
    for (std::string_view section : {"Opcodes", "Types", "Arguments", "Predicates"})
      out.attributeObject(section, [&] {
        for (size_t i = 0; i < vocabulary.entities.size(); ++i)
          if (sectionOf(vocabulary.entities[i]) == section)
            out.attributeArray(vocabulary.entities[i], [&] {
              for (double x : vocabulary.embeddings[i])
                out.value(x);
            });
      });
  });
  stream.flush();
  return text;
}

Status writeIr2VecVocabulary(const Ir2VecVocabulary& vocabulary,
                             const std::filesystem::path& file) {
  Expected<std::string> text = ir2VecVocabularyJson(vocabulary);
  if (!text)
    return text.error();
  if (Status written = writeFileAtomically(file, *text + "\n"); !written)
    return makeError("IR2Vec vocabulary " + file.string() + ": " + written.error().message);
  return Status::ok();
}

Expected<Ir2VecVocabulary> ir2VecVocabularyFromJson(const llvm::json::Object& root,
                                                    const std::string& where) {
  Ir2VecVocabulary vocabulary;
  for (std::string_view section : {"Opcodes", "Types", "Arguments", "Predicates"}) {
    const llvm::json::Object* entries = root.getObject(llvm::StringRef(section));
    if (!entries)
      continue;
    // In name order (a JSON object has none of its own), so that a
    // vocabulary read back equals the one written.
    std::vector<std::string> names;
    for (const auto& entry : *entries)
      names.push_back(entry.first.str());
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      const llvm::json::Array* values = entries->getArray(name);
      if (!values)
        return makeError(where + ": " + std::string(section) + "." + name + ": not an array");
      std::vector<double> embedding;
      for (const llvm::json::Value& value : *values) {
        std::optional<double> number = value.getAsNumber();
        if (!number)
          return makeError(where + ": " + std::string(section) + "." + name +
                           ": not an array of numbers");
        embedding.push_back(*number);
      }
      if (embedding.empty() || (!vocabulary.embeddings.empty() &&
                                embedding.size() != vocabulary.embeddings.front().size()))
        return makeError(where + ": " + std::string(section) + "." + name + ": " +
                         std::to_string(embedding.size()) + " values, not the vocabulary's width");
      vocabulary.entities.push_back(name);
      vocabulary.embeddings.push_back(std::move(embedding));
    }
  }
  if (vocabulary.entities.empty())
    return makeError(where + ": no entities (Opcodes, Types, Arguments, Predicates)");
  return vocabulary;
}

Expected<Ir2VecVocabulary> parseIr2VecVocabulary(std::string_view json, const std::string& where) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed)
    return makeError(where + ": not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object* root = parsed->getAsObject();
  if (!root)
    return makeError(where + ": an IR2Vec vocabulary is a JSON object of sections");
  return ir2VecVocabularyFromJson(*root, where);
}

Expected<Ir2VecVocabulary> readIr2VecVocabulary(const std::filesystem::path& file) {
  const std::string where = "IR2Vec vocabulary " + file.string();
  Expected<std::string> text = readFileBytes(file);
  if (!text)
    return makeError(where + ": " + text.error().message);
  return parseIr2VecVocabulary(*text, where);
}

size_t ir2VecDimension(const Ir2VecVocabulary& vocabulary) {
  return vocabulary.embeddings.empty() ? 0 : vocabulary.embeddings.front().size();
}

} // namespace mlgo::policies
