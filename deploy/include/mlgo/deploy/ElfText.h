// The .text bytes of an object file, read from its ELF section headers with
// <elf.h> alone. The evaluator measures with LLVM's object library
// (evaluators::measureCode); the launcher cannot: loading libLLVM costs
// ~16 ms per compile, which a build pays once per translation unit. Same
// sections as the inlining task measures (".text" and ".text.*"); a test
// checks both agree on real objects.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace mlgo::deploy {

// ELF64 little-endian objects only (what clang-22 on x86-64 and AArch64
// Linux writes); anything else is an error naming the file.
Expected<uint64_t> textBytes(const std::filesystem::path& object);
// The same sections' contents, concatenated in section order: the code
// itself, without the symbol names or relocations that may differ between
// two compiles of the same code (--mlgo-best-of-verify compares these).
Expected<std::string> textContents(const std::filesystem::path& object);

} // namespace mlgo::deploy
