#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Files.h"

#include "mlgo/policies/CalleeConsistent.h"
#include "mlgo/policies/FlipSet.h"
#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/policies/PassPipeline.h"

#include "BuiltinPolicies.h"
#include "Ir2VecVocabularyInternal.h"
#include "TensorSpecInternal.h"

#include <llvm/Support/Base64.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace fs = std::filesystem;

namespace mlgo::policies {

namespace {

constexpr std::string_view kKindHeuristic = "heuristic";
constexpr std::string_view kKindConstant = "constant";
constexpr std::string_view kKindMlp = "mlp";
constexpr std::string_view kKindFlipSet = "flip-set";
constexpr std::string_view kKindPipeline = "pipeline";
constexpr std::string_view kExpansionX = "x";
constexpr std::string_view kExpansionSquare = "x^2";
constexpr std::string_view kExpansionSqrt = "sqrt(x)";

// Parameters as the bytes of IEEE doubles, little-endian, in base64: exact,
// and read in a small fraction of the time tens of thousands of decimal
// numbers take (a build loads the policy once per compile).
constexpr std::string_view kParameterEncoding = "float64-le-base64";

// The blob form's runs of doubles: {"offset": bytes into the blob area,
// "count": doubles} (PolicyFile.h, version 4).
constexpr std::string_view kBlobEncoding = "float64-le-blob";

std::vector<unsigned char> littleEndianBytes(std::span<const double> values) {
  std::vector<unsigned char> bytes(values.size() * 8);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto bits = std::bit_cast<uint64_t>(values[i]);
    for (size_t b = 0; b < 8; ++b)
      bytes[8 * i + b] = static_cast<unsigned char>(bits >> (8 * b));
  }
  return bytes;
}

// Writes a file's runs of doubles: as base64 text, or into the blob area
// that follows the JSON (one writer for a whole file, a pipeline policy's
// inliner included, so that offsets are into one area).
class DoublesWriter {
public:
  explicit DoublesWriter(PolicyEncoding encoding) : blobs_(encoding == PolicyEncoding::Blobs) {}
  std::string encoding() const { return std::string(blobs_ ? kBlobEncoding : kParameterEncoding); }
  int version() const { return blobs_ ? kPolicyFileBlobVersion : kPolicyFileVersion; }
  void attribute(llvm::json::OStream& out, llvm::StringRef name, std::span<const double> values) {
    std::vector<unsigned char> bytes = littleEndianBytes(values);
    if (!blobs_) {
      out.attribute(name, llvm::encodeBase64(bytes));
      return;
    }
    out.attributeObject(name, [&] {
      out.attribute("offset", static_cast<int64_t>(area_.size()));
      out.attribute("count", static_cast<int64_t>(values.size()));
    });
    area_.append(bytes.begin(), bytes.end());
  }
  const std::string& area() const { return area_; }

private:
  bool blobs_;
  std::string area_;
};

// The bytes of a base64 text (RFC 4648, '=' padding only at the end),
// through a 256-entry table: a build decodes the policy's parameters in
// every compile, and LLVM's decoder took about 2 % of a small compile's
// instructions for inlining-oz (callgrind). Errors name the first bad
// character as LLVM's decoder did.
Expected<std::vector<unsigned char>> decodeBase64Bytes(std::string_view text) {
  static constexpr std::array<int8_t, 256> kValues = [] {
    std::array<int8_t, 256> values{};
    values.fill(-1);
    constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < alphabet.size(); ++i)
      values[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return values;
  }();
  if (text.size() % 4 != 0)
    return makeError("Base64 encoded strings must be a multiple of 4 bytes");
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=')
    ++padding;
  std::vector<unsigned char> bytes;
  bytes.reserve(text.size() / 4 * 3);
  uint32_t group = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const int8_t value = kValues[static_cast<unsigned char>(text[i])];
    if (value < 0) {
      char message[64];
      std::snprintf(message, sizeof message, "Invalid Base64 character %#2.2x at index %zu",
                    static_cast<unsigned char>(text[i]), i);
      return makeError(message);
    }
    group = group << 6 | static_cast<uint32_t>(value);
    if (i % 4 == 3) {
      bytes.push_back(static_cast<unsigned char>(group >> 16));
      bytes.push_back(static_cast<unsigned char>(group >> 8));
      bytes.push_back(static_cast<unsigned char>(group));
      group = 0;
    }
  }
  if (padding == 1) { // 3 characters: 18 bits, 2 bytes
    bytes.push_back(static_cast<unsigned char>(group >> 10));
    bytes.push_back(static_cast<unsigned char>(group >> 2));
  } else if (padding == 2) { // 2 characters: 12 bits, 1 byte
    bytes.push_back(static_cast<unsigned char>(group >> 4));
  }
  return bytes;
}

// A feature's boundaries as its distinct values and how often each occurs
// (1000 quantiles of an integer feature are mostly repeats): the same list,
// a tenth of the text.
void writeBoundaries(llvm::json::OStream& out, std::span<const double> boundaries,
                     DoublesWriter& doubles) {
  std::vector<double> values;
  std::vector<int64_t> counts;
  for (double boundary : boundaries) {
    if (!values.empty() &&
        std::bit_cast<uint64_t>(values.back()) == std::bit_cast<uint64_t>(boundary)) {
      ++counts.back();
      continue;
    }
    values.push_back(boundary);
    counts.push_back(1);
  }
  out.object([&] {
    // The values in base64 like the parameters (version 3): decimal numbers
    // were most of a small policy's parse, paid by every compile.
    doubles.attribute(out, "values", values);
    std::string text = "[";
    for (size_t i = 0; i < counts.size(); ++i)
      text += (i ? ", " : "") + std::to_string(counts[i]);
    out.attributeBegin("counts");
    out.rawValue(text + "]");
    out.attributeEnd();
  });
}

// One spec per line, as clang writes them.
void writeSpecs(llvm::json::OStream& out, const std::vector<TensorSpec>& specs) {
  out.array([&] {
    for (const TensorSpec& spec : specs)
      out.rawValue(tensorSpecToJson(spec));
  });
}

void writePipelineFields(llvm::json::OStream& out, const PassPipeline& pipeline) {
  {
    if (!pipeline.skipped.empty())
      out.attributeArray("skip", [&] {
        for (const SkippedPass& skip : pipeline.skipped)
          out.value(skip.text());
      });
    if (!pipeline.additions.empty())
      out.attributeArray("add", [&] {
        for (const auto& [point, passes] : pipeline.additions)
          out.object([&] {
            out.attribute("at", std::string(extensionPointName(point)));
            out.attribute("passes", passes);
          });
      });
    if (!pipeline.replacement.empty())
      out.attribute("replace", pipeline.replacement);
    if (!pipeline.parameters.empty())
      out.attributeObject("parameters", [&] {
        for (const auto& [pass, values] : pipeline.parameters)
          out.attribute(pass, values);
      });
  }
}

void writeNumbers(llvm::json::OStream& out, const std::vector<double>& values) {
  out.array([&] {
    for (double value : values)
      out.value(value);
  });
}

void writeChoice(llvm::json::OStream& out, const PipelineChoice& choice, DoublesWriter& doubles) {
  out.attributeObject("choice", [&] {
    out.attributeArray("pipelines", [&] {
      for (const PassPipeline& pipeline : choice.pipelines)
        out.object([&] { writePipelineFields(out, pipeline); });
    });
    out.attributeArray("features", [&] {
      for (const std::string& name : choice.features)
        out.value(name);
    });
    if (choice.embedding) {
      // LLVM's vocabulary JSON, inline: the file alone is the policy.
      Expected<std::string> vocabulary = ir2VecVocabularyJson(*choice.embedding, 0);
      out.attributeBegin("embedding");
      out.rawValue(vocabulary ? *vocabulary : "null");
      out.attributeEnd();
    }
    out.attributeBegin("mean");
    writeNumbers(out, choice.mean);
    out.attributeEnd();
    out.attributeBegin("scale");
    writeNumbers(out, choice.scale);
    out.attributeEnd();
    out.attribute("neighbours", static_cast<int64_t>(choice.neighbours));
    if (choice.agreement > 0)
      out.attribute("agreement", choice.agreement);
    if (choice.margin > 0)
      out.attribute("margin", choice.margin);
    if (choice.inlinerMargin > 0)
      out.attribute("inliner_margin", choice.inlinerMargin);
    if (choice.vote == PipelineChoice::CostVote::Median)
      out.attribute("vote", "median");
    if (std::isfinite(choice.maxDistance))
      out.attribute("max_distance", choice.maxDistance);
    if (!choice.confirm.empty()) {
      out.attributeBegin("confirm");
      writeNumbers(out, choice.confirm);
      out.attributeEnd();
    }
    if (choice.forced)
      out.attribute("forced", static_cast<int64_t>(*choice.forced));
    if (!choice.heuristicInliner.empty())
      out.attributeArray("heuristic_inliner", [&] {
        for (size_t pipeline : choice.heuristicInliner)
          out.value(static_cast<int64_t>(pipeline));
      });
    // The examples as columns of base64 doubles: a build parses the file in
    // every compile, and hundreds of examples as decimal numbers were most of
    // what a choice cost a build.
    out.attributeObject("examples", [&] {
      out.attribute("encoding", doubles.encoding());
      out.attributeArray("pipelines", [&] {
        for (const PipelineChoice::Example& example : choice.examples)
          out.value(static_cast<int64_t>(example.pipeline));
      });
      std::vector<double> features, costs;
      for (const PipelineChoice::Example& example : choice.examples) {
        features.insert(features.end(), example.features.begin(), example.features.end());
        costs.insert(costs.end(), example.costs.begin(), example.costs.end());
      }
      doubles.attribute(out, "features", features);
      if (choice.votesWithCosts())
        doubles.attribute(out, "costs", costs);
    });
  });
}

// Reads the fields of one policy file; every error names the field.
class PolicyReader {
public:
  // `blobs`: the file's blob area (empty for a text file); must outlive the
  // reading.
  explicit PolicyReader(std::string origin, std::string_view blobs = {})
      : origin_(std::move(origin)), blobs_(blobs) {}

  Error error(std::string_view field, const std::string& message) const {
    return makeError(origin_ + ": " + std::string(field) + ": " + message);
  }

  Expected<std::string> string(const llvm::json::Object& object, std::string_view field,
                               const std::string& path) const {
    const llvm::json::Value* value = object.get(field);
    if (!value)
      return error(detail::fieldPath(path, field), "missing");
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return error(detail::fieldPath(path, field), "must be a string");
    return text->str();
  }

  Expected<int64_t> integer(const llvm::json::Object& object, std::string_view field,
                            const std::string& path) const {
    const llvm::json::Value* value = object.get(field);
    if (!value)
      return error(detail::fieldPath(path, field), "missing");
    std::optional<int64_t> number = value->getAsInteger();
    if (!number)
      return error(detail::fieldPath(path, field), "must be an integer");
    return *number;
  }

  Expected<const llvm::json::Array*> array(const llvm::json::Object& object, std::string_view field,
                                           const std::string& path) const {
    const llvm::json::Value* value = object.get(field);
    if (!value)
      return error(detail::fieldPath(path, field), "missing");
    const llvm::json::Array* result = value->getAsArray();
    if (!result)
      return error(detail::fieldPath(path, field), "must be an array");
    return result;
  }

  Expected<std::vector<double>> numbers(const llvm::json::Array& array,
                                        const std::string& path) const {
    std::vector<double> values;
    values.reserve(array.size());
    for (size_t i = 0; i < array.size(); ++i) {
      std::optional<double> number = array[i].getAsNumber();
      if (!number || !std::isfinite(*number))
        return error(path + "[" + std::to_string(i) + "]", "must be a finite number");
      values.push_back(*number);
    }
    return values;
  }

  // The doubles of a "float64-le-base64" string.
  Expected<std::vector<double>> decodeDoubles(llvm::StringRef text, const std::string& path) const {
    Expected<std::vector<unsigned char>> decoded =
        decodeBase64Bytes(std::string_view(text.data(), text.size()));
    if (!decoded)
      return error(path, "invalid base64: " + decoded.error().message);
    const std::vector<unsigned char>& bytes = *decoded;
    if (bytes.size() % 8 != 0)
      return error(path, std::to_string(bytes.size()) + " bytes is not a whole number of doubles");
    return littleEndianDoubles(reinterpret_cast<const char*>(bytes.data()), bytes.size() / 8, path);
  }

  // `count` little-endian doubles at `bytes` (base64-decoded or in the blob
  // area), each finite.
  Expected<std::vector<double>> littleEndianDoubles(const char* bytes, size_t count,
                                                    const std::string& path) const {
    std::vector<double> values(count);
    if constexpr (std::endian::native == std::endian::little) {
      // The file's own layout: one copy (byte by byte, reading a large
      // policy was mostly this loop).
      if (count > 0)
        std::memcpy(values.data(), bytes, 8 * count);
    } else {
      for (size_t i = 0; i < count; ++i) {
        uint64_t bits = 0;
        for (size_t b = 0; b < 8; ++b)
          bits |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 * i + b])) << (8 * b);
        values[i] = std::bit_cast<double>(bits);
      }
    }
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(values[i]))
        return error(path + "[" + std::to_string(i) + "]", "must be a finite number");
    return values;
  }

  // A run of doubles: base64 text, or {"offset", "count"} into the blob area.
  Expected<std::vector<double>> encodedDoubles(const llvm::json::Value& value,
                                               const std::string& path) const {
    if (std::optional<llvm::StringRef> text = value.getAsString())
      return decodeDoubles(*text, path);
    MLGO_ASSIGN_OR_RETURN(const BlobRun run, blobRun(value, path));
    return littleEndianDoubles(run.bytes, run.count, path);
  }

  // A run of doubles read where it lies in the blob area, row by row, or
  // decoded from base64 text. A choice's examples are megabytes: a copy of
  // the whole run before the rows' own was a compile's page faults.
  struct DoubleColumn {
    std::vector<double> decoded;
    const char* blob = nullptr;
    size_t count = 0;
  };
  Expected<DoubleColumn> column(const llvm::json::Value& value, const std::string& path) const {
    if constexpr (std::endian::native == std::endian::little) {
      if (value.getAsObject()) {
        MLGO_ASSIGN_OR_RETURN(const BlobRun run, blobRun(value, path));
        return DoubleColumn{{}, run.bytes, run.count};
      }
    }
    MLGO_ASSIGN_OR_RETURN(std::vector<double> values, encodedDoubles(value, path));
    const size_t count = values.size();
    return DoubleColumn{std::move(values), nullptr, count};
  }
  // Row `i` of `size` values (none if the column is empty), each finite.
  Expected<std::vector<double>> row(const DoubleColumn& column, size_t i, size_t size,
                                    const std::string& path) const {
    if (column.count == 0)
      return std::vector<double>();
    const size_t first = i * size;
    if (!column.blob)
      return std::vector<double>(column.decoded.begin() + static_cast<std::ptrdiff_t>(first),
                                 column.decoded.begin() +
                                     static_cast<std::ptrdiff_t>(first + size));
    std::vector<double> values(size);
    if (size > 0)
      std::memcpy(values.data(), column.blob + 8 * first, 8 * size);
    for (size_t j = 0; j < size; ++j)
      if (!std::isfinite(values[j]))
        return error(path + "[" + std::to_string(first + j) + "]", "must be a finite number");
    return values;
  }

  // {"offset", "count"}: `count` little-endian doubles in the blob area.
  struct BlobRun {
    const char* bytes;
    size_t count;
  };
  Expected<BlobRun> blobRun(const llvm::json::Value& value, const std::string& path) const {
    const llvm::json::Object* reference = value.getAsObject();
    std::optional<int64_t> offset = reference ? reference->getInteger("offset") : std::nullopt;
    std::optional<int64_t> count = reference ? reference->getInteger("count") : std::nullopt;
    if (!offset || !count || *offset < 0 || *count < 0)
      return error(path, "must be base64 text or {\"offset\", \"count\"} into the blob area");
    const auto start = static_cast<uint64_t>(*offset), size = static_cast<uint64_t>(*count);
    if (size > blobs_.size() / 8 || start > blobs_.size() - 8 * size)
      return error(path, std::to_string(size) + " doubles at byte " + std::to_string(start) +
                             " do not fit the blob area (" + std::to_string(blobs_.size()) +
                             " bytes" + (blobs_.empty() ? ": a text file has none" : "") + ")");
    return BlobRun{blobs_.data() + start, static_cast<size_t>(size)};
  }

  Status checkEncoding(const std::string& encoding, const std::string& path) const {
    if (encoding != kParameterEncoding && encoding != kBlobEncoding)
      return error(path, "\"" + encoding + "\" is not " + std::string(kParameterEncoding) + " or " +
                             std::string(kBlobEncoding));
    return Status::ok();
  }

  // Parameters: an array of numbers (version 1) or {"encoding":
  // "float64-le-base64", "data": "…"} (version 2), or "float64-le-blob"
  // with "data" in the blob area (version 4).
  Expected<std::vector<double>> parameters(const llvm::json::Object& root) const {
    const llvm::json::Value* value = root.get("parameters");
    if (!value)
      return error("parameters", "missing");
    if (const llvm::json::Array* numbersArray = value->getAsArray())
      return numbers(*numbersArray, "parameters");
    const llvm::json::Object* object = value->getAsObject();
    if (!object)
      return error("parameters", "must be an array of numbers or an encoded object");
    MLGO_ASSIGN_OR_RETURN(const std::string encoding, string(*object, "encoding", "parameters"));
    MLGO_TRY(checkEncoding(encoding, "parameters.encoding"));
    const llvm::json::Value* data = object->get("data");
    if (!data)
      return error("parameters.data", "missing");
    return encodedDoubles(*data, "parameters.data");
  }

  // A feature's boundaries: an array of numbers (version 1) or {"values":
  // distinct values, "counts": how often each occurs} (version 2; the
  // values in base64 as the parameters since version 3).
  Expected<std::vector<double>> boundaries(const llvm::json::Value& value,
                                           const std::string& path) const {
    if (const llvm::json::Array* list = value.getAsArray())
      return numbers(*list, path);
    const llvm::json::Object* object = value.getAsObject();
    if (!object)
      return error(path, "must be an array of numbers or {\"values\", \"counts\"}");
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* countArray, array(*object, "counts", path));
    std::vector<double> values;
    const llvm::json::Value* valueField = object->get("values");
    if (valueField && (valueField->getAsString() || valueField->getAsObject())) {
      MLGO_ASSIGN_OR_RETURN(values, encodedDoubles(*valueField, path + ".values"));
    } else {
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* valueArray, array(*object, "values", path));
      MLGO_ASSIGN_OR_RETURN(values, numbers(*valueArray, path + ".values"));
    }
    if (values.size() != countArray->size())
      return error(path, "values and counts differ in length");
    std::vector<double> result;
    for (size_t i = 0; i < values.size(); ++i) {
      std::optional<int64_t> count = (*countArray)[i].getAsInteger();
      if (!count || *count < 1 || *count > (1 << 24))
        return error(path + ".counts[" + std::to_string(i) + "]", "must be a positive integer");
      result.insert(result.end(), static_cast<size_t>(*count), values[i]);
    }
    return result;
  }

  Expected<std::vector<TensorSpec>> specs(const llvm::json::Object& root) const {
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* inputs, array(root, "inputs", ""));
    std::vector<TensorSpec> result;
    for (size_t i = 0; i < inputs->size(); ++i) {
      Expected<TensorSpec> spec =
          detail::tensorSpecFromJson((*inputs)[i], "inputs[" + std::to_string(i) + "]");
      if (!spec)
        return makeError(origin_ + ": " + spec.error().message);
      result.push_back(spec.take());
    }
    return result;
  }

  Expected<std::unique_ptr<Policy>> heuristic(const llvm::json::Object& root) const {
    MLGO_ASSIGN_OR_RETURN(const std::vector<TensorSpec> inputs, specs(root));
    if (inputs.size() != 1)
      return error("inputs", "a heuristic policy reads exactly one feature (got " +
                                 std::to_string(inputs.size()) + ")");
    const TensorSpec& input = inputs.front();
    if (input.type != TensorType::Int64 || input.shape != std::vector<int64_t>{1})
      return error("inputs[0]", "the heuristic's feature must be int64_t[1], not " +
                                    detail::typeAndShape(input));
    return makeHeuristicEchoPolicy(input.name);
  }

  Expected<std::unique_ptr<Policy>> constant(const llvm::json::Object& root) const {
    MLGO_ASSIGN_OR_RETURN(const std::vector<TensorSpec> inputs, specs(root));
    if (!inputs.empty())
      return error("inputs", "a constant policy reads no features");
    MLGO_ASSIGN_OR_RETURN(const int64_t advice, integer(root, "advice", ""));
    return makeConstantPolicy(advice);
  }

  // The compiler's decision but at the listed states (64-bit hashes, hex).
  Expected<std::unique_ptr<Policy>> flipSet(const llvm::json::Object& root) const {
    MLGO_ASSIGN_OR_RETURN(std::vector<TensorSpec> inputs, specs(root));
    MLGO_ASSIGN_OR_RETURN(const std::string defaultFeature, string(root, "default_feature", ""));
    Expected<FlipSetPolicy> policy = FlipSetPolicy::create(std::move(inputs), defaultFeature);
    if (!policy)
      return error("default_feature", policy.error().message);
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* flips, array(root, "flips", ""));
    for (size_t i = 0; i < flips->size(); ++i) {
      std::optional<llvm::StringRef> text = (*flips)[i].getAsString();
      uint64_t state = 0;
      if (!text || text->size() != 16 || text->getAsInteger(16, state))
        return error("flips[" + std::to_string(i) + "]", "must be 16 hex digits");
      if (policy->flips(state))
        return error("flips[" + std::to_string(i) + "]", "appears twice");
      policy->toggle(state);
    }
    return std::unique_ptr<Policy>(std::make_unique<FlipSetPolicy>(policy.take()));
  }

  // "pipeline": {"skip": ["LoopRotatePass@late", …],
  //              "add": [{"at": "optimizer-last", "passes": "function(…)"}, …],
  //              "replace": "…", "parameters": {"gvn": "no-load-pre", …}}
  // (every field optional; {} is -Oz).
  Expected<PassPipeline> pipelineFields(const llvm::json::Object& object,
                                        const std::string& path) const {
    PassPipeline pipeline;
    if (object.get("skip")) {
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* skip, array(object, "skip", path));
      for (size_t i = 0; i < skip->size(); ++i) {
        const std::string field = path + ".skip[" + std::to_string(i) + "]";
        std::optional<llvm::StringRef> text = (*skip)[i].getAsString();
        if (!text)
          return error(field, "must be a string");
        Expected<SkippedPass> skipped = parseSkippedPass(*text);
        if (!skipped)
          return error(field, skipped.error().message);
        pipeline.skipped.push_back(skipped.take());
      }
    }
    if (object.get("add")) {
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* add, array(object, "add", path));
      for (size_t i = 0; i < add->size(); ++i) {
        const std::string entryPath = path + ".add[" + std::to_string(i) + "]";
        const llvm::json::Object* entry = (*add)[i].getAsObject();
        if (!entry)
          return error(entryPath, "must be an object with \"at\" and \"passes\"");
        MLGO_ASSIGN_OR_RETURN(const std::string at, string(*entry, "at", entryPath));
        Expected<ExtensionPoint> point = parseExtensionPoint(at);
        if (!point)
          return error(entryPath + ".at", point.error().message);
        MLGO_ASSIGN_OR_RETURN(std::string passes, string(*entry, "passes", entryPath));
        pipeline.additions.emplace_back(*point, std::move(passes));
      }
    }
    if (object.get("replace")) {
      MLGO_ASSIGN_OR_RETURN(pipeline.replacement, string(object, "replace", path));
      if (pipeline.replacement.empty())
        return error(path + ".replace", "empty pipeline text");
    }
    if (const llvm::json::Value* parameters = object.get("parameters")) {
      const llvm::json::Object* byPass = parameters->getAsObject();
      if (!byPass)
        return error(path + ".parameters", "must be an object: {\"gvn\": \"no-load-pre\", …}");
      for (const auto& [pass, values] : *byPass) {
        std::optional<llvm::StringRef> text = values.getAsString();
        if (!text)
          return error(path + ".parameters." + pass.str(), "must be a string");
        pipeline.parameters.emplace_back(pass.str(), text->str());
      }
      // A JSON object's order is not the file's: sorted, as canonical() has them.
      std::sort(pipeline.parameters.begin(), pipeline.parameters.end());
    }
    return pipeline;
  }

  // A choice's examples: {"encoding": "float64-le-base64", "pipelines":
  // [index per example], "features": base64 of every example's scaled
  // features in turn, optional "costs": the same for costs}, or (files
  // before 2026-12-06) [{"pipeline": index, "features": […], optional
  // "costs": […]}, …].
  Expected<std::vector<PipelineChoice::Example>>
  choiceExamples(const llvm::json::Object& object, const PipelineChoice& choice) const {
    std::vector<PipelineChoice::Example> result;
    if (const llvm::json::Object* columns = object.getObject("examples")) {
      MLGO_ASSIGN_OR_RETURN(const std::string encoding,
                            string(*columns, "encoding", "choice.examples"));
      MLGO_TRY(checkEncoding(encoding, "choice.examples.encoding"));
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* labels,
                            array(*columns, "pipelines", "choice.examples"));
      const llvm::json::Value* featureData = columns->get("features");
      if (!featureData)
        return error("choice.examples.features", "missing");
      MLGO_ASSIGN_OR_RETURN(const DoubleColumn features,
                            column(*featureData, "choice.examples.features"));
      DoubleColumn costs;
      if (const llvm::json::Value* costData = columns->get("costs")) {
        MLGO_ASSIGN_OR_RETURN(costs, column(*costData, "choice.examples.costs"));
      }
      const size_t n = labels->size(), width = choice.features.size(),
                   alternatives = choice.pipelines.size();
      if (features.count != n * width)
        return error("choice.examples.features", std::to_string(features.count) + " values, not " +
                                                     std::to_string(n) + " examples of " +
                                                     std::to_string(width) + " features");
      if (costs.count != 0 && costs.count != n * alternatives)
        return error("choice.examples.costs", std::to_string(costs.count) + " values, not " +
                                                  std::to_string(n) + " examples of " +
                                                  std::to_string(alternatives) + " pipelines");
      result.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        std::optional<int64_t> index = (*labels)[i].getAsInteger();
        if (!index || *index < 0)
          return error("choice.examples.pipelines[" + std::to_string(i) + "]",
                       "must be a pipeline index");
        MLGO_ASSIGN_OR_RETURN(std::vector<double> featureRow,
                              row(features, i, width, "choice.examples.features"));
        MLGO_ASSIGN_OR_RETURN(std::vector<double> costRow,
                              row(costs, i, alternatives, "choice.examples.costs"));
        result.push_back({std::move(featureRow), static_cast<size_t>(*index), std::move(costRow)});
      }
      return result;
    }
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* examples, array(object, "examples", "choice"));
    for (size_t i = 0; i < examples->size(); ++i) {
      const std::string path = "choice.examples[" + std::to_string(i) + "]";
      const llvm::json::Object* entry = (*examples)[i].getAsObject();
      if (!entry)
        return error(path, "must be an object");
      MLGO_ASSIGN_OR_RETURN(const int64_t index, integer(*entry, "pipeline", path));
      if (index < 0)
        return error(path + ".pipeline", "must not be negative");
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* values, array(*entry, "features", path));
      MLGO_ASSIGN_OR_RETURN(std::vector<double> scaled, numbers(*values, path + ".features"));
      std::vector<double> costs;
      if (entry->get("costs")) {
        MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* given, array(*entry, "costs", path));
        MLGO_ASSIGN_OR_RETURN(costs, numbers(*given, path + ".costs"));
      }
      result.push_back({std::move(scaled), static_cast<size_t>(index), std::move(costs)});
    }
    return result;
  }

  // "choice": {"pipelines": [pipeline objects], "features": [names],
  // optional "embedding": an IR2Vec vocabulary (LLVM's JSON),
  // "mean": […], "scale": […], "neighbours": k, optional "agreement": share,
  // "margin": share, "inliner_margin": share, "vote": "mean" or "median", "max_distance": scaled
  // distance, "confirm":
  // [weights], "forced": index and "heuristic_inliner": [pipeline indices], "examples":
  // choiceExamples()}.
  Expected<PipelineChoice> pipelineChoice(const llvm::json::Object& root) const {
    const llvm::json::Object* object = root.getObject("choice");
    if (!object)
      return error("choice", "must be an object");
    PipelineChoice choice;
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* pipelines,
                          array(*object, "pipelines", "choice"));
    for (size_t i = 0; i < pipelines->size(); ++i) {
      const std::string path = "choice.pipelines[" + std::to_string(i) + "]";
      const llvm::json::Object* entry = (*pipelines)[i].getAsObject();
      if (!entry)
        return error(path, "must be a pipeline object");
      MLGO_ASSIGN_OR_RETURN(PassPipeline pipeline, pipelineFields(*entry, path));
      choice.pipelines.push_back(std::move(pipeline));
    }
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* features, array(*object, "features", "choice"));
    for (size_t i = 0; i < features->size(); ++i) {
      std::optional<llvm::StringRef> name = (*features)[i].getAsString();
      if (!name)
        return error("choice.features[" + std::to_string(i) + "]", "must be a string");
      choice.features.push_back(name->str());
    }
    if (const llvm::json::Value* embedding = object->get("embedding")) {
      const llvm::json::Object* sections = embedding->getAsObject();
      if (!sections)
        return error("choice.embedding", "must be an IR2Vec vocabulary (an object of sections)");
      Expected<Ir2VecVocabulary> vocabulary = ir2VecVocabularyFromJson(*sections, "embedding");
      if (!vocabulary)
        return error("choice.embedding", vocabulary.error().message);
      choice.embedding = vocabulary.take();
    }
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* mean, array(*object, "mean", "choice"));
    MLGO_ASSIGN_OR_RETURN(choice.mean, numbers(*mean, "choice.mean"));
    MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* scale, array(*object, "scale", "choice"));
    MLGO_ASSIGN_OR_RETURN(choice.scale, numbers(*scale, "choice.scale"));
    MLGO_ASSIGN_OR_RETURN(const int64_t neighbours, integer(*object, "neighbours", "choice"));
    if (neighbours < 1)
      return error("choice.neighbours", "must be at least 1");
    choice.neighbours = static_cast<size_t>(neighbours);
    if (const llvm::json::Value* agreement = object->get("agreement")) {
      std::optional<double> share = agreement->getAsNumber();
      if (!share)
        return error("choice.agreement", "must be a number");
      choice.agreement = *share;
    }
    if (const llvm::json::Value* margin = object->get("margin")) {
      std::optional<double> share = margin->getAsNumber();
      if (!share)
        return error("choice.margin", "must be a number");
      choice.margin = *share;
    }
    if (const llvm::json::Value* price = object->get("inliner_margin")) {
      std::optional<double> share = price->getAsNumber();
      if (!share)
        return error("choice.inliner_margin", "must be a number");
      choice.inlinerMargin = *share;
    }
    if (const llvm::json::Value* vote = object->get("vote")) {
      std::optional<llvm::StringRef> kind = vote->getAsString();
      if (!kind || (*kind != "mean" && *kind != "median"))
        return error("choice.vote", "must be \"mean\" or \"median\"");
      choice.vote =
          *kind == "median" ? PipelineChoice::CostVote::Median : PipelineChoice::CostVote::Mean;
    }
    if (const llvm::json::Value* distance = object->get("max_distance")) {
      std::optional<double> value = distance->getAsNumber();
      if (!value)
        return error("choice.max_distance", "must be a number");
      choice.maxDistance = *value;
    }
    if (object->get("confirm")) {
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* weights, array(*object, "confirm", "choice"));
      MLGO_ASSIGN_OR_RETURN(choice.confirm, numbers(*weights, "choice.confirm"));
    }
    if (object->get("forced")) {
      MLGO_ASSIGN_OR_RETURN(const int64_t forced, integer(*object, "forced", "choice"));
      if (forced < 0)
        return error("choice.forced", "must be a pipeline index");
      choice.forced = static_cast<size_t>(forced);
    }
    if (object->get("heuristic_inliner")) {
      MLGO_ASSIGN_OR_RETURN(const llvm::json::Array* indices,
                            array(*object, "heuristic_inliner", "choice"));
      for (size_t i = 0; i < indices->size(); ++i) {
        std::optional<int64_t> index = (*indices)[i].getAsInteger();
        if (!index || *index < 0)
          return error("choice.heuristic_inliner[" + std::to_string(i) + "]",
                       "must be a pipeline index");
        choice.heuristicInliner.push_back(static_cast<size_t>(*index));
      }
    }
    MLGO_ASSIGN_OR_RETURN(choice.examples, choiceExamples(*object, choice));
    if (Status valid = choice.validate(); !valid)
      return error("choice", valid.error().message);
    return choice;
  }

  Expected<std::unique_ptr<Policy>> pipeline(const llvm::json::Object& root) const {
    const llvm::json::Value* value = root.get("pipeline");
    const llvm::json::Object* object = value ? value->getAsObject() : nullptr;
    if (!object)
      return error("pipeline", value ? "must be an object" : "missing");
    MLGO_ASSIGN_OR_RETURN(PassPipeline pipeline, pipelineFields(*object, "pipeline"));
    std::shared_ptr<const PipelineChoice> choice;
    if (root.get("choice")) {
      MLGO_ASSIGN_OR_RETURN(PipelineChoice read, pipelineChoice(root));
      choice = std::make_shared<const PipelineChoice>(std::move(read));
    }
    std::shared_ptr<const Policy> inliner;
    if (const llvm::json::Value* inner = root.get("inliner")) {
      if (!inner->getAsObject())
        return error("inliner", "must be a policy object");
      Expected<std::unique_ptr<Policy>> loaded =
          PolicyReader(origin_ + ": inliner", blobs_).policy(*inner->getAsObject());
      if (!loaded)
        return loaded.error();
      inliner = std::shared_ptr<const Policy>(loaded.take());
    }
    Expected<std::unique_ptr<Policy>> policy =
        makePipelinePolicy(std::move(pipeline), std::move(inliner), std::move(choice));
    if (!policy)
      return error("pipeline", policy.error().message);
    return policy;
  }

  Expected<MlpOptions> architecture(const llvm::json::Object& root) const {
    const llvm::json::Value* value = root.get("architecture");
    if (!value)
      return error("architecture", "missing");
    const llvm::json::Object* object = value->getAsObject();
    if (!object)
      return error("architecture", "must be an object");
    const std::string path = "architecture";
    MlpOptions options;

    Expected<const llvm::json::Array*> layers = array(*object, "hidden_layers", path);
    if (!layers)
      return layers.error();
    options.hiddenLayers.clear();
    for (size_t i = 0; i < (*layers)->size(); ++i) {
      std::optional<int64_t> width = (**layers)[i].getAsInteger();
      if (!width || *width < 1 || *width > (1 << 20))
        return error(path + ".hidden_layers[" + std::to_string(i) + "]",
                     "must be a positive integer");
      options.hiddenLayers.push_back(static_cast<int>(*width));
    }

    Expected<std::string> activation = string(*object, "activation", path);
    if (!activation)
      return activation.error();
    Expected<Activation> parsed = parseActivation(*activation);
    if (!parsed)
      return error(path + ".activation", parsed.error().message);
    options.activation = *parsed;

    Expected<int64_t> actions = integer(*object, "actions", path);
    if (!actions)
      return actions.error();
    if (*actions < 2 || *actions > (1 << 20))
      return error(path + ".actions", "must be at least 2 (got " + std::to_string(*actions) + ")");
    options.actions = static_cast<int>(*actions);

    Expected<const llvm::json::Array*> expansions = array(*object, "expansions", path);
    if (!expansions)
      return expansions.error();
    std::vector<std::string> names;
    for (const llvm::json::Value& name : **expansions)
      names.push_back(name.getAsString().value_or("?").str());
    const std::vector<std::string> plain{std::string(kExpansionX), std::string(kExpansionSquare)};
    std::vector<std::string> withSqrt = plain;
    withSqrt.emplace_back(kExpansionSqrt);
    if (names != plain && names != withSqrt)
      return error(path + ".expansions",
                   "must be [\"x\", \"x^2\"] or [\"x\", \"x^2\", \"sqrt(x)\"]");
    options.withSqrt = names == withSqrt;

    Expected<const llvm::json::Array*> excluded = array(*object, "excluded_features", path);
    if (!excluded)
      return excluded.error();
    options.excludedFeatures.clear();
    for (size_t i = 0; i < (*excluded)->size(); ++i) {
      std::optional<llvm::StringRef> name = (**excluded)[i].getAsString();
      if (!name || name->empty())
        return error(path + ".excluded_features[" + std::to_string(i) + "]",
                     "must be a non-empty string");
      options.excludedFeatures.push_back(name->str());
    }
    // Optional (absent in files written before residual policies existed).
    if (const llvm::json::Value* residual = object->get("residual")) {
      const llvm::json::Object* fields = residual->getAsObject();
      std::optional<llvm::StringRef> feature = fields ? fields->getString("feature") : std::nullopt;
      double margin = fields ? fields->getNumber("margin").value_or(-1) : -1;
      if (!feature || feature->empty() || !(margin > 0) || !std::isfinite(margin))
        return error(path + ".residual",
                     "must be {\"feature\": a feature name, \"margin\": a number > 0}");
      options.residualFeature = feature->str();
      options.residualMargin = margin;
      // Optional: decisions never overruled (MlpOptions::residualKept);
      // the options' validation checks the values.
      options.residualKept.clear();
      if (const llvm::json::Value* kept = fields->get("kept")) {
        const llvm::json::Array* values = kept->getAsArray();
        if (!values)
          return error(path + ".residual.kept", "must be an array of decisions");
        for (size_t i = 0; i < values->size(); ++i) {
          std::optional<int64_t> value = (*values)[i].getAsInteger();
          if (!value || *value < 0 || *value > 1024)
            return error(path + ".residual.kept[" + std::to_string(i) + "]",
                         "must be a decision (an integer from 0)");
          options.residualKept.push_back(static_cast<int>(*value));
        }
      }
    }
    // Optional: candidate scoring (eviction policies).
    if (const llvm::json::Value* mask = object->get("candidate_mask")) {
      std::optional<llvm::StringRef> name = mask->getAsString();
      if (!name || name->empty())
        return error(path + ".candidate_mask", "must be a feature name");
      options.candidateMask = name->str();
    }
    // Optional: unanimity of an ensemble's members (MlpOptions::unanimousMembers).
    if (const llvm::json::Value* members = object->get("unanimous_members")) {
      std::optional<int64_t> count = members->getAsInteger();
      if (!count || *count < 2 || *count > 1024)
        return error(path + ".unanimous_members", "must be an integer from 2 to 1024");
      options.unanimousMembers = static_cast<int>(*count);
    }
    return options;
  }

  Expected<Vocabulary> vocabulary(const llvm::json::Object& root,
                                  const std::vector<TensorSpec>& inputs) const {
    const llvm::json::Value* value = root.get("vocabulary");
    if (!value)
      return error("vocabulary", "missing");
    const llvm::json::Object* object = value->getAsObject();
    if (!object)
      return error("vocabulary", "must be an object mapping feature names to boundaries");
    Vocabulary result;
    for (const auto& [key, boundaries] : *object) {
      std::string path = "vocabulary." + key.str();
      bool isInput = false;
      for (const TensorSpec& input : inputs)
        isInput = isInput || input.name == key.str();
      if (!isInput)
        return error(path, "is not one of the policy's inputs");
      Expected<std::vector<double>> values = this->boundaries(boundaries, path);
      if (!values)
        return values.error();
      Status status = result.set(key.str(), values.take());
      if (!status)
        return error(path, status.error().message);
    }
    return result;
  }

  Expected<MlpPolicy> mlp(const llvm::json::Object& root) const {
    MLGO_ASSIGN_OR_RETURN(const std::vector<TensorSpec> inputs, specs(root));
    MLGO_ASSIGN_OR_RETURN(const MlpOptions options, architecture(root));
    for (size_t i = 0; i < inputs.size(); ++i)
      for (const std::string& name : options.excludedFeatures)
        if (inputs[i].name == name &&
            !(options.residualMargin > 0 && name == options.residualFeature))
          return error("inputs[" + std::to_string(i) + "]",
                       "\"" + name + "\" is also in architecture.excluded_features");
    MLGO_ASSIGN_OR_RETURN(const Vocabulary vocab, vocabulary(root, inputs));
    Expected<std::shared_ptr<const MlpStructure>> structure =
        MlpStructure::create(inputs, vocab, options);
    if (!structure)
      return makeError(origin_ + ": " + structure.error().message);

    MLGO_ASSIGN_OR_RETURN(const std::vector<double> parameters, this->parameters(root));
    if (parameters.size() != (*structure)->parameterCount())
      return error("parameters", "has " + std::to_string(parameters.size()) +
                                     " values but the architecture needs " +
                                     std::to_string((*structure)->parameterCount()));
    return MlpPolicy(structure.take(),
                     Eigen::Map<const Eigen::VectorXd>(
                         parameters.data(), static_cast<Eigen::Index>(parameters.size())));
  }

  Expected<std::unique_ptr<Policy>> policy(std::string_view json) const {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
    if (!parsed)
      return makeError(origin_ + ": invalid JSON: " + llvm::toString(parsed.takeError()));
    const llvm::json::Object* root = parsed->getAsObject();
    if (!root)
      return makeError(origin_ + ": top level must be a JSON object");
    return policy(*root);
  }

  // A policy object already parsed: a file's, or a pipeline policy's inliner
  // (read in place: written out and parsed again, a 0.6 MB inliner cost a
  // compile more than its pipeline choice).
  Expected<std::unique_ptr<Policy>> policy(const llvm::json::Object& object) const {
    const llvm::json::Object* root = &object;
    Expected<std::string> format = string(*root, "format", "");
    if (!format)
      return format.error();
    if (*format != kPolicyFileFormat)
      return error("format",
                   "is \"" + *format + "\", expected \"" + std::string(kPolicyFileFormat) + "\"");
    Expected<int64_t> version = integer(*root, "version", "");
    if (!version)
      return version.error();
    if (*version > kPolicyFileBlobVersion)
      return error("version", std::to_string(*version) +
                                  " is newer than this build of mlgo-es reads (" +
                                  std::to_string(kPolicyFileBlobVersion) + "); update mlgo-es");
    if (*version < 1)
      return error("version", "must be at least 1 (got " + std::to_string(*version) + ")");

    Expected<std::unique_ptr<Policy>> policy = ofKind(*root);
    if (!policy)
      return policy.error();
    // Optional: callee consistency (CalleeConsistent.h), for any kind.
    if (const llvm::json::Value* consistent = root->get("callee_consistent")) {
      std::optional<bool> value = consistent->getAsBoolean();
      if (!value)
        return error("callee_consistent", "must be true or false");
      if (*value) {
        if (auto* flipSet = dynamic_cast<FlipSetPolicy*>(policy->get())) {
          flipSet->setCalleeConsistent(true);
          return policy;
        }
        return std::unique_ptr<Policy>(
            std::make_unique<CalleeConsistentPolicy>(std::shared_ptr<const Policy>(policy.take())));
      }
    }
    return policy;
  }

private:
  Expected<std::unique_ptr<Policy>> ofKind(const llvm::json::Object& object) const {
    const llvm::json::Object* root = &object;
    Expected<std::string> kind = string(*root, "kind", "");
    if (!kind)
      return kind.error();
    if (*kind == kKindHeuristic)
      return heuristic(*root);
    if (*kind == kKindConstant)
      return constant(*root);
    if (*kind == kKindFlipSet)
      return flipSet(*root);
    if (*kind == kKindPipeline)
      return pipeline(*root);
    if (*kind == kKindMlp) {
      Expected<MlpPolicy> result = mlp(*root);
      if (!result)
        return result.error();
      return std::unique_ptr<Policy>(std::make_unique<MlpPolicy>(result.take()));
    }
    return error("kind", "unknown policy kind \"" + *kind +
                             "\" (expected heuristic, constant, mlp, flip-set or pipeline)");
  }

  std::string origin_;
  std::string_view blobs_;
};

} // namespace

namespace {

// The JSON of a policy; its runs of doubles go through `doubles`.
Expected<std::string> policyText(const Policy& outer, DoublesWriter& doubles) {
  // Callee consistency is one field beside the wrapped policy's own.
  const auto* consistent = dynamic_cast<const CalleeConsistentPolicy*>(&outer);
  const Policy& policy = consistent ? consistent->inner() : outer;
  const auto* heuristic = dynamic_cast<const detail::HeuristicEchoPolicy*>(&policy);
  const auto* constant = dynamic_cast<const detail::ConstantPolicy*>(&policy);
  const auto* mlp = dynamic_cast<const MlpPolicy*>(&policy);
  const auto* flipSet = dynamic_cast<const FlipSetPolicy*>(&policy);
  const auto* pipeline = dynamic_cast<const PipelinePolicy*>(&policy);
  if (!heuristic && !constant && !mlp && !flipSet && !pipeline)
    return makeError("cannot save policy \"" + policy.describe() +
                     "\": only heuristic, constant, mlp, flip-set and pipeline policies have a "
                     "file format");
  if (mlp)
    for (size_t i = 0; i < mlp->parameterCount(); ++i)
      if (!std::isfinite(mlp->parameters()[i]))
        return makeError("cannot save policy \"" + policy.describe() + "\": parameter " +
                         std::to_string(i) + " is not finite");

  std::string text;
  std::string innerError; // a pipeline's inliner policy that cannot be written
  llvm::raw_string_ostream stream(text);
  {
    llvm::json::OStream out(stream, 1);
    out.object([&] {
      out.attribute("format", std::string(kPolicyFileFormat));
      out.attribute("version", doubles.version());
      out.attribute("kind", std::string(heuristic  ? kKindHeuristic
                                        : constant ? kKindConstant
                                        : flipSet  ? kKindFlipSet
                                        : pipeline ? kKindPipeline
                                                   : kKindMlp));
      out.attribute("description", outer.describe());
      if (outer.calleeConsistent())
        out.attribute("callee_consistent", true);
      out.attributeBegin("inputs");
      writeSpecs(out, policy.inputs());
      out.attributeEnd();
      if (constant)
        out.attribute("advice", constant->advice());
      if (flipSet) {
        out.attribute("default_feature", flipSet->defaultFeature());
        std::vector<uint64_t> states(flipSet->flipSet().begin(), flipSet->flipSet().end());
        std::sort(states.begin(), states.end()); // the same set, the same file
        out.attributeArray("flips", [&] {
          for (uint64_t state : states) {
            char hex[17];
            std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(state));
            out.value(std::string(hex));
          }
        });
      }
      if (pipeline) {
        out.attributeObject("pipeline", [&] { writePipelineFields(out, pipeline->pipeline()); });
        if (pipeline->choice())
          writeChoice(out, *pipeline->choice(), doubles);
        if (pipeline->inliner()) {
          Expected<std::string> inner = policyText(*pipeline->inliner(), doubles);
          llvm::Expected<llvm::json::Value> value =
              inner ? llvm::json::parse(*inner)
                    : llvm::Expected<llvm::json::Value>(llvm::createStringError(""));
          if (value) {
            out.attribute("inliner", std::move(*value));
          } else {
            llvm::consumeError(value.takeError());
            innerError = inner ? "the inliner policy did not read back" : inner.error().message;
          }
        }
      }
      if (!mlp)
        return;
      const MlpStructure& structure = *mlp->structure();
      const MlpOptions& options = structure.options();
      out.attributeObject("architecture", [&] {
        out.attributeArray("hidden_layers", [&] {
          for (int width : options.hiddenLayers)
            out.value(width);
        });
        out.attribute("activation", std::string(activationName(options.activation)));
        out.attribute("actions", options.actions);
        out.attributeArray("expansions", [&] {
          out.value(std::string(kExpansionX));
          out.value(std::string(kExpansionSquare));
          if (options.withSqrt)
            out.value(std::string(kExpansionSqrt));
        });
        out.attributeArray("excluded_features", [&] {
          for (const std::string& name : options.excludedFeatures)
            out.value(name);
        });
        if (structure.residualFeatureOffset())
          out.attributeObject("residual", [&] {
            out.attribute("feature", options.residualFeature);
            out.attribute("margin", options.residualMargin);
            if (!options.residualKept.empty())
              out.attributeArray("kept", [&] {
                for (int decision : options.residualKept)
                  out.value(decision);
              });
          });
        if (structure.candidates() > 0)
          out.attribute("candidate_mask", options.candidateMask);
        if (structure.members() > 1)
          out.attribute("unanimous_members", options.unanimousMembers);
      });
      out.attributeObject("vocabulary", [&] {
        for (const auto& [feature, boundaries] : structure.vocabulary().entries()) {
          out.attributeBegin(feature);
          writeBoundaries(out, boundaries, doubles);
          out.attributeEnd();
        }
      });
      out.attributeObject("parameters", [&] {
        out.attribute("encoding", doubles.encoding());
        doubles.attribute(out, "data", mlp->parameters());
      });
    });
  }
  stream << "\n";
  stream.flush();
  if (!innerError.empty())
    return makeError("cannot save policy \"" + policy.describe() + "\": " + innerError);
  return text;
}

} // namespace

Expected<std::string> policyToJson(const Policy& policy) {
  DoublesWriter doubles(PolicyEncoding::Text);
  return policyText(policy, doubles);
}

Expected<std::string> policyToBytes(const Policy& policy, PolicyEncoding encoding) {
  DoublesWriter doubles(encoding);
  Expected<std::string> text = policyText(policy, doubles);
  if (!text || encoding == PolicyEncoding::Text)
    return text;
  return *text + '\0' + doubles.area();
}

bool hasBlobArea(std::string_view bytes) {
  return bytes.find('\0') != std::string_view::npos;
}

Expected<std::unique_ptr<Policy>> policyFromJson(std::string_view bytes, std::string_view origin) {
  // The JSON ends at the first NUL (none in JSON text); the blob area follows.
  const size_t end = bytes.find('\0');
  if (end == std::string_view::npos)
    return PolicyReader(std::string(origin)).policy(bytes);
  return PolicyReader(std::string(origin), bytes.substr(end + 1)).policy(bytes.substr(0, end));
}

Status savePolicy(const Policy& policy, const fs::path& file, PolicyEncoding encoding) {
  Expected<std::string> text = policyToBytes(policy, encoding);
  if (!text)
    return makeError(file.string() + ": " + text.error().message);
  return writeFileAtomically(file, *text);
}

Expected<std::unique_ptr<Policy>> loadPolicy(const fs::path& file) {
  // Every compile with the plugin loads its policy here. MemoryBuffer maps a
  // large file rather than copying it: a pipeline choice's examples are
  // megabytes, and each copy of them cost the compile its page faults
  // (docs/pass-pipeline.md). The policy copies what it keeps, so the mapping
  // ends with this call.
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    return makeError(file.string() +
                     (fs::exists(file, ec) ? ": not a regular file" : ": no such file"));
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> mapped = llvm::MemoryBuffer::getFile(
      file.string(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!mapped)
    return makeError(file.string() + ": cannot read: " + mapped.getError().message());
  return policyFromJson(std::string_view((*mapped)->getBufferStart(), (*mapped)->getBufferSize()),
                        file.string());
}

Expected<MlpPolicy> loadMlpPolicy(const fs::path& file) {
  Expected<std::unique_ptr<Policy>> policy = loadPolicy(file);
  if (!policy)
    return policy.error();
  auto* mlp = dynamic_cast<MlpPolicy*>(policy->get());
  if (!mlp)
    return makeError(file.string() + ": kind: is \"" + (*policy)->describe() +
                     "\", expected an mlp policy");
  return std::move(*mlp);
}

} // namespace mlgo::policies
