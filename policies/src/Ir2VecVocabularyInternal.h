// The vocabulary reader for what already holds the JSON parsed (a policy
// file's "embedding"), so that nothing is written out and parsed again.
#pragma once

#include "mlgo/policies/Ir2VecVocabulary.h"

#include <llvm/Support/JSON.h>

#include <string>

namespace mlgo::policies {

Expected<Ir2VecVocabulary> ir2VecVocabularyFromJson(const llvm::json::Object& root,
                                                    const std::string& where);

} // namespace mlgo::policies
