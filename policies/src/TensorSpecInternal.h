// Internal: TensorSpec <-> llvm::json::Value and spec formatting, shared by
// the channel header parser, the binder and the policy file. Keeps LLVM out
// of the public headers.
#pragma once

#include "mlgo/policies/TensorSpec.h"

#include <llvm/Support/JSON.h>

#include <string>

namespace mlgo::policies::detail {

// Parses one spec; errors are prefixed with `path` (e.g. "features[3]"), so
// they read `features[3].type: unknown tensor type "int128_t"`. An empty path
// gives bare field names.
Expected<TensorSpec> tensorSpecFromJson(const llvm::json::Value& value, const std::string& path);

llvm::json::Value tensorSpecToJsonValue(const TensorSpec& spec);

// "int64_t[1]", "float[1,33]": a spec without its name.
std::string typeAndShape(const TensorSpec& spec);

// "path.field", or "field" when path is empty.
std::string fieldPath(const std::string& path, std::string_view field);

} // namespace mlgo::policies::detail
