#include "mlgo/policies/TensorSpec.h"

#include "TensorSpecInternal.h"

#include <llvm/Support/raw_ostream.h>

#include <bit>
#include <cassert>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace mlgo::policies {

namespace {

struct TypeInfo {
  TensorType type;
  std::string_view name;
  size_t size;
};

// The spelling is LLVM's: the C type name of SUPPORTED_TENSOR_TYPES.
constexpr TypeInfo kTypes[] = {
    {TensorType::Float, "float", sizeof(float)},
    {TensorType::Double, "double", sizeof(double)},
    {TensorType::Int8, "int8_t", sizeof(int8_t)},
    {TensorType::UInt8, "uint8_t", sizeof(uint8_t)},
    {TensorType::Int16, "int16_t", sizeof(int16_t)},
    {TensorType::UInt16, "uint16_t", sizeof(uint16_t)},
    {TensorType::Int32, "int32_t", sizeof(int32_t)},
    {TensorType::UInt32, "uint32_t", sizeof(uint32_t)},
    {TensorType::Int64, "int64_t", sizeof(int64_t)},
    {TensorType::UInt64, "uint64_t", sizeof(uint64_t)},
};

const TypeInfo& typeInfo(TensorType type) {
  for (const TypeInfo& info : kTypes)
    if (info.type == type)
      return info;
  assert(false && "unknown TensorType");
  return kTypes[0];
}

template <class T> double readElement(const std::byte* data, size_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return static_cast<double>(value);
}

} // namespace

namespace detail {

std::string typeAndShape(const TensorSpec& spec) {
  std::string text = std::string(tensorTypeName(spec.type)) + "[";
  for (size_t i = 0; i < spec.shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(spec.shape[i]);
  return text + "]";
}

std::string fieldPath(const std::string& path, std::string_view field) {
  return path.empty() ? std::string(field) : path + "." + std::string(field);
}

Expected<TensorSpec> tensorSpecFromJson(const llvm::json::Value& value, const std::string& path) {
  const llvm::json::Object* object = value.getAsObject();
  if (!object)
    return makeError((path.empty() ? std::string("tensor spec") : path) +
                     ": must be an object with \"name\", \"type\", \"shape\" and \"port\"");
  TensorSpec spec;

  const llvm::json::Value* name = object->get("name");
  if (!name)
    return makeError(fieldPath(path, "name") + ": missing");
  std::optional<llvm::StringRef> nameText = name->getAsString();
  if (!nameText || nameText->empty())
    return makeError(fieldPath(path, "name") + ": must be a non-empty string");
  spec.name = nameText->str();

  const llvm::json::Value* type = object->get("type");
  if (!type)
    return makeError(fieldPath(path, "type") + ": missing");
  std::optional<llvm::StringRef> typeText = type->getAsString();
  if (!typeText)
    return makeError(fieldPath(path, "type") + ": must be a string");
  Expected<TensorType> parsedType = parseTensorType(std::string_view(*typeText));
  if (!parsedType)
    return makeError(fieldPath(path, "type") + ": " + parsedType.error().message);
  spec.type = *parsedType;

  const llvm::json::Value* shape = object->get("shape");
  if (!shape)
    return makeError(fieldPath(path, "shape") + ": missing");
  const llvm::json::Array* dims = shape->getAsArray();
  if (!dims)
    return makeError(fieldPath(path, "shape") + ": must be an array of positive integers");
  for (size_t i = 0; i < dims->size(); ++i) {
    std::optional<int64_t> dim = (*dims)[i].getAsInteger();
    if (!dim || *dim <= 0)
      return makeError(fieldPath(path, "shape") + "[" + std::to_string(i) +
                       "]: must be a positive integer");
    spec.shape.push_back(*dim);
  }

  // LLVM always writes "port"; tolerate its absence (it is 0 for every
  // feature clang sends) but not a wrong type.
  if (const llvm::json::Value* port = object->get("port")) {
    std::optional<int64_t> p = port->getAsInteger();
    if (!p || *p < 0 || *p > std::numeric_limits<int>::max())
      return makeError(fieldPath(path, "port") + ": must be a non-negative integer");
    spec.port = static_cast<int>(*p);
  }
  return spec;
}

llvm::json::Value tensorSpecToJsonValue(const TensorSpec& spec) {
  llvm::json::Array shape;
  for (int64_t dim : spec.shape)
    shape.push_back(dim);
  return llvm::json::Object{{"name", spec.name},
                            {"port", spec.port},
                            {"shape", std::move(shape)},
                            {"type", std::string(tensorTypeName(spec.type))}};
}

} // namespace detail

std::string_view tensorTypeName(TensorType type) {
  return typeInfo(type).name;
}

Expected<TensorType> parseTensorType(std::string_view name) {
  for (const TypeInfo& info : kTypes)
    if (info.name == name)
      return info.type;
  return makeError("unknown tensor type \"" + std::string(name) + "\"");
}

size_t tensorTypeSize(TensorType type) {
  return typeInfo(type).size;
}

size_t TensorSpec::elementCount() const {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

bool TensorSpec::isFloatVector() const {
  return (type == TensorType::Float || type == TensorType::Double) && elementCount() > 1;
}

std::string TensorSpec::describe() const {
  return name + ": " + detail::typeAndShape(*this);
}

Expected<TensorSpec> parseTensorSpec(std::string_view json) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed)
    return makeError("tensor spec: invalid JSON: " + llvm::toString(parsed.takeError()));
  return detail::tensorSpecFromJson(*parsed, "");
}

std::string tensorSpecToJson(const TensorSpec& spec) {
  std::string text;
  llvm::raw_string_ostream out(text);
  out << detail::tensorSpecToJsonValue(spec);
  out.flush();
  return text;
}

size_t ChannelHeader::observationBytes() const {
  size_t bytes = 0;
  for (const TensorSpec& feature : features)
    bytes += feature.byteSize();
  return bytes;
}

int ChannelHeader::findFeature(std::string_view name) const {
  for (size_t i = 0; i < features.size(); ++i)
    if (features[i].name == name)
      return static_cast<int>(i);
  return -1;
}

Expected<ChannelHeader> parseChannelHeader(std::string_view jsonLine) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(jsonLine));
  if (!parsed)
    return makeError("channel header: invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object* root = parsed->getAsObject();
  if (!root)
    return makeError("channel header: must be a JSON object with \"features\" and \"advice\"");

  ChannelHeader header;
  const llvm::json::Value* features = root->get("features");
  if (!features)
    return makeError("features: missing");
  const llvm::json::Array* array = features->getAsArray();
  if (!array)
    return makeError("features: must be an array of tensor specs");
  if (array->empty())
    return makeError("features: is empty");
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < array->size(); ++i) {
    std::string path = "features[" + std::to_string(i) + "]";
    Expected<TensorSpec> spec = detail::tensorSpecFromJson((*array)[i], path);
    if (!spec)
      return spec.error();
    if (!seen.insert(spec->name).second)
      return makeError(path + ".name: feature \"" + spec->name + "\" appears twice");
    header.features.push_back(spec.take());
  }

  // "score" (present when clang logs a reward) is not an input: ignored.
  const llvm::json::Value* advice = root->get("advice");
  if (!advice)
    return makeError("advice: missing");
  Expected<TensorSpec> adviceSpec = detail::tensorSpecFromJson(*advice, "advice");
  if (!adviceSpec)
    return adviceSpec.error();
  header.advice = adviceSpec.take();
  return header;
}

double tensorElementAsDouble(TensorType type, const std::byte* data, size_t index) {
  // The channel carries the host's native layout; clang and mlgo-es run on the
  // same (little-endian) machine.
  static_assert(std::endian::native == std::endian::little);
  switch (type) {
  case TensorType::Float:
    return readElement<float>(data, index);
  case TensorType::Double:
    return readElement<double>(data, index);
  case TensorType::Int8:
    return readElement<int8_t>(data, index);
  case TensorType::UInt8:
    return readElement<uint8_t>(data, index);
  case TensorType::Int16:
    return readElement<int16_t>(data, index);
  case TensorType::UInt16:
    return readElement<uint16_t>(data, index);
  case TensorType::Int32:
    return readElement<int32_t>(data, index);
  case TensorType::UInt32:
    return readElement<uint32_t>(data, index);
  case TensorType::Int64:
    return readElement<int64_t>(data, index);
  case TensorType::UInt64:
    return readElement<uint64_t>(data, index);
  }
  assert(false && "unknown TensorType");
  return 0;
}

} // namespace mlgo::policies
