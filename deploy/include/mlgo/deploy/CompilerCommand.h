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
  // assembly, objects or libraries); "-" is a source read from standard input.
  std::vector<std::string> sources;
  // The other inputs, as the linker sees them: objects, archives, shared
  // libraries (an LTO link is recognised by bitcode among them).
  std::vector<std::string> linkInputs;
  std::vector<std::string> libraries;          // -lNAME
  std::vector<std::string> libraryDirectories; // -L DIR
  std::optional<std::string> output;           // -o
  bool compileOnly = false;                    // -c
  bool stopsBeforeOptimiser = false;           // -E, -fsyntax-only, -M, -MM
  bool assemblyOrIr = false;                   // -S, -emit-llvm: optimised, but no object
  bool lto = false;                            // -flto[=…] (unless a later -fno-lto)
  bool usesLld = false;                        // -fuse-ld=lld
  bool splitDwarf = false;                     // -gsplit-dwarf: a .dwo beside the object
  bool saveTemps = false;                      // -save-temps[=…]: .i/.bc/.s beside the object
  // A source in C++ (Objective-C++, CUDA, HIP), by -x or extension: a
  // frontend that is about half of an -Oz compile, not a tenth as C's.
  bool cxxSource = false;
  // Why the launcher cannot tell what this command does (the frontend called
  // directly, another driver mode, a language it does not know); empty when
  // it can. Such a command may optimise code that the policy never sees.
  std::string unclassified;

  // The optimiser runs on at least one source: the pass plugin applies.
  bool optimisesSources() const { return !sources.empty() && !stopsBeforeOptimiser; }
  bool readsStandardInput() const;
  // A step that runs the linker (which runs LTO when asked to or when an
  // input is bitcode).
  bool links() const { return !compileOnly && !assemblyOrIr && !stopsBeforeOptimiser; }
  // A link step that asks for LTO with -flto (bitcode inputs: BitcodeInputs.h).
  bool linksWithLto() const { return lto && links(); }
  // One source compiled to one native object whose .text can be measured.
  bool singleNativeObject() const { return whyNotSingleNativeObject().empty(); }
  // What keeps it from being one ("-S: no object", "2 sources", …); empty if it is.
  std::string whyNotSingleNativeObject() const;
  // The object singleNativeObject commands write: -o, or the source's stem + ".o".
  std::string objectPath() const;
};

CompilerCommand parseCompilerCommand(const std::vector<std::string>& arguments);

// The arguments without those that make a compile write files other than its
// object (dependency files -MD/-MMD/-MF/-MT/-MQ/-MP and their -Wp, forms,
// --serialize-diagnostics, -ftime-trace, -save-temps) and with -o `output`:
// the second compile of --best-of must not overwrite what the first wrote.
std::vector<std::string> withOnlyObjectOutput(const std::vector<std::string>& arguments,
                                              const std::string& output);

} // namespace mlgo::deploy
