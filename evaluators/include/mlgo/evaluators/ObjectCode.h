// Measuring what a compilation produced: the code size of an object file and a
// hash of the code bytes. Both evaluator backends (clang processes and the
// in-process workers) measure through this one function, so their sizes mean
// the same thing.
#pragma once

#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::evaluators {

// Code of one COMDAT group: an inline function or template instance that
// every object using it emits, and of which a linker keeps one copy. Its
// sections of one name count as one group (a linker discards by signature;
// the name keeps a group's hot and cold parts apart, as bench/linked_text.py
// does).
struct ComdatCode {
  uint64_t group = 0; // xxh3 of the signature, a NUL and the section's name
  uint64_t bytes = 0;
  bool operator==(const ComdatCode& other) const = default;
};

struct CodeMeasure {
  uint64_t bytes = 0;
  uint64_t hash = 0;
  // The part of `bytes` in COMDAT groups, one entry per group, sorted by
  // group (ELF objects; other formats have none listed).
  std::vector<ComdatCode> comdat;
};

// The sizes of the object's sections named in `sections` (exact names, or a
// prefix ending in '.' such as ".text." for -ffunction-sections builds), and
// a hash of their contents. A module without code is a valid 0-byte result;
// an unreadable object is an error.
Expected<CodeMeasure> measureCode(const std::filesystem::path& object,
                                  const std::vector<std::string>& sections);
// The same for an object held in memory (an in-process compile's output).
Expected<CodeMeasure> measureCodeBytes(std::string_view object,
                                       const std::vector<std::string>& sections);

} // namespace mlgo::evaluators
