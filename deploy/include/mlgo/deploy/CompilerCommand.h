// What a compiler command line does, as far as the launcher needs to know:
// whether it runs LLVM's optimiser on sources (then the plugin goes in),
// whether it links with LTO (then the linker must load the plugin too), and
// whether one native object comes out of one source (then --best-of can
// compare). Read from the arguments alone, never by running the compiler.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mlgo::deploy {

struct CompilerCommand {
  // Inputs LLVM's optimiser will see (C, C++, Objective-C, CUDA, IR; not
  // assembly, objects or libraries).
  std::vector<std::string> sources;
  std::optional<std::string> output; // -o
  bool compileOnly = false;          // -c
  bool stopsBeforeOptimiser = false; // -E, -fsyntax-only, -M, -MM
  bool assemblyOrIr = false;         // -S, -emit-llvm: optimised, but no object
  bool lto = false;                  // -flto[=…] (unless a later -fno-lto)
  bool usesLld = false;              // -fuse-ld=lld
  bool splitDwarf = false;           // -gsplit-dwarf: a .dwo beside the object

  // The optimiser runs on at least one source: the pass plugin applies.
  bool optimisesSources() const { return !sources.empty() && !stopsBeforeOptimiser; }
  // A link step that runs LTO (the linker then runs the inliner).
  bool linksWithLto() const {
    return lto && !compileOnly && !assemblyOrIr && !stopsBeforeOptimiser;
  }
  // One source compiled to one native object whose .text can be measured.
  bool singleNativeObject() const {
    return compileOnly && !assemblyOrIr && !stopsBeforeOptimiser && !lto && !splitDwarf &&
           sources.size() == 1;
  }
  // The object singleNativeObject commands write: -o, or the source's stem + ".o".
  std::string objectPath() const;
};

CompilerCommand parseCompilerCommand(const std::vector<std::string>& arguments);

// The arguments without those that make a compile write files other than its
// object (dependency files -MD/-MMD/-MF/-MT/-MQ/-MP and their -Wp, forms,
// --serialize-diagnostics, -ftime-trace) and with -o `output`: the second
// compile of --best-of must not overwrite what the first wrote.
std::vector<std::string> withOnlyObjectOutput(const std::vector<std::string>& arguments,
                                              const std::string& output);

} // namespace mlgo::deploy
