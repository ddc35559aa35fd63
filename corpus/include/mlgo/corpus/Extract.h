// Extraction of a corpus from a build whose objects carry their bitcode and
// -cc1 command line (built with `-Xclang -fembed-bitcode=all`): the sections
// `.llvmbc` and `.llvmcmd` become <name>.bc and <name>.cmd.
#pragma once

#include "mlgo/support/Expected.h"
#include "mlgo/support/Threads.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace mlgo::corpus {

struct ObjectInput {
  std::filesystem::path object;
  // The module's name in the corpus: the object's path relative to the
  // build tree, as ml-compiler-opt names modules.
  std::string moduleName;
};

// Every regular file named *.o or *.obj below `directory`, sorted by name.
Expected<std::vector<ObjectInput>> findObjectsInDirectory(const std::filesystem::path& directory);

// The objects named by a compile_commands.json (its "output" field, or the
// argument after -o in "arguments"/"command"), relative to each entry's
// "directory"; names relative to the directory holding the JSON file.
Expected<std::vector<ObjectInput>>
findObjectsInCompileCommands(const std::filesystem::path& compileCommands);

struct ExtractOptions {
  // Parallel extraction threads; objects are independent, so the default is
  // every core.
  size_t threads = hardwareThreads();
};

struct SkippedObject {
  std::filesystem::path object;
  std::string reason;
};

struct ExtractSummary {
  size_t objectsScanned = 0;
  std::vector<std::string> modules;
  // Objects without .llvmbc/.llvmcmd: normal for assembly or objects from
  // another compiler; counted and listed, not an error.
  std::vector<std::filesystem::path> withoutEmbeddedBitcode;
  // Corrupt or unusable objects: skipped with the reason.
  std::vector<SkippedObject> skipped;
  double seconds = 0;
};

// Writes the corpus (modules in the order of `inputs`) into `outputDirectory`,
// replacing any corpus_description.json there. Fails only if the output cannot
// be written or two inputs share a module name.
Expected<ExtractSummary> extractCorpus(const std::vector<ObjectInput>& inputs,
                                       const std::filesystem::path& outputDirectory,
                                       const ExtractOptions& options);

} // namespace mlgo::corpus
