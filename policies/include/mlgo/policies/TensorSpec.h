// Tensor specifications as clang sends them in the interactive channel's
// header line (LLVM's TensorSpec JSON: {"name", "port", "type", "shape"}).
// The header is the source of truth for feature names, order, types and
// shapes; nothing in mlgo-es hard-codes a feature order.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::policies {

// The element types LLVM's TensorSpec supports (SUPPORTED_TENSOR_TYPES).
enum class TensorType { Float, Double, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64 };

std::string_view tensorTypeName(TensorType type); // "float", "int64_t", …
Expected<TensorType> parseTensorType(std::string_view name);
size_t tensorTypeSize(TensorType type);

struct TensorSpec {
  std::string name;
  TensorType type = TensorType::Int64;
  std::vector<int64_t> shape; // {1} for a scalar feature
  int port = 0;

  size_t elementCount() const;
  size_t byteSize() const { return elementCount() * tensorTypeSize(type); }
  // A float/double vector such as an IR2Vec embedding: its elements are
  // values of one kind and share one quantile vocabulary entry.
  bool isFloatVector() const;
  bool operator==(const TensorSpec& other) const = default;
  std::string describe() const; // "callee_users: int64_t[1]"
};

// Parses one spec from its JSON text, e.g.
// {"name":"callee_users","port":0,"shape":[1],"type":"int64_t"}.
Expected<TensorSpec> parseTensorSpec(std::string_view json);
std::string tensorSpecToJson(const TensorSpec& spec);

// The first line clang writes on the channel:
// {"features":[spec…],"score":spec?,"advice":spec}
struct ChannelHeader {
  std::vector<TensorSpec> features;
  TensorSpec advice;
  // Size in bytes of one observation's feature tensors, back to back.
  size_t observationBytes() const;
  // Index of the feature with that name, or -1.
  int findFeature(std::string_view name) const;
};

Expected<ChannelHeader> parseChannelHeader(std::string_view jsonLine);

// Reads element `index` of a raw little-endian tensor buffer as a double.
double tensorElementAsDouble(TensorType type, const std::byte* data, size_t index);

} // namespace mlgo::policies
