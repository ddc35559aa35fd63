// Whole-file reads and writes whose errors name the file.
#pragma once

#include "mlgo/support/Expected.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace mlgo {

Expected<std::string> readFileBytes(const std::filesystem::path& file);
Status writeFileBytes(const std::filesystem::path& file, std::string_view bytes);

// Writes beside the target and renames over it, so a reader (or a process
// killed mid-write) never sees half a file.
Status writeFileAtomically(const std::filesystem::path& file, std::string_view bytes);

} // namespace mlgo
