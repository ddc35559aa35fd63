// Reading sections of object files through LLVM's Object library (no
// llvm-objcopy process), kept behind this header so LLVM's headers stay out
// of the rest of the project.
#pragma once

#include "mlgo/support/Expected.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::corpus {

// The contents of the named sections that exist in `object` (missing names are
// absent from the map). Fails if the file is not an object file.
Expected<std::map<std::string, std::string>>
readObjectSections(const std::filesystem::path& object, const std::vector<std::string>& names);

// The bytes of one section; nullopt if the object has no such section.
Expected<std::optional<std::string>> readObjectSection(const std::filesystem::path& object,
                                                       const std::string& name);

} // namespace mlgo::corpus
