// The one frontend command (-cc1) behind a driver command that compiles one
// source to one object, as `clang -###` prints it: what the build-time
// search needs to compile the unit's module (its bitcode, as the plugin wrote
// it before any pass) as the evaluator compiles a corpus module, and as the
// source compile would have (the same object, byte for byte: a test checks
// it on real code bases).
#pragma once

#include "mlgo/support/Expected.h"

#include <string>
#include <vector>

namespace mlgo::deploy {

struct Cc1Command {
  std::string compiler;               // the executable clang -### named
  std::vector<std::string> arguments; // "-cc1" first; without -o, -x and the input
  std::string language;               // the input's -x ("c", "c++", …)
  std::string input;                  // the source ("-": standard input)
  std::string output;                 // the object (-o)

  // Compiles `bitcode` as the command compiles its source, to `object`
  // (without -fembed-bitcode: the module already holds what the frontend
  // embedded, so the object is the source compile's).
  std::vector<std::string> backend(const std::string& bitcode, const std::string& object) const;
  // The arguments a corpus stores for the module (.llvmcmd's: no input, -x,
  // -o, dependency outputs or -fembed-bitcode).
  std::vector<std::string> corpusArguments() const;
};

// The jobs `clang -###` printed (one argument list per job, executable
// first), from its standard error.
std::vector<std::vector<std::string>> parseDriverJobs(const std::string& text);

// Runs `compiler -### arguments…`; an error says why the command is not one
// frontend job that writes an object from one source.
Expected<Cc1Command> cc1CommandFor(const std::string& compiler,
                                   const std::vector<std::string>& arguments);

} // namespace mlgo::deploy
