// Code generation only for the functions that changed. A module compiled
// again with a few other decisions (a tried flip, a nearby ES candidate)
// ends the optimisation pipeline with most functions exactly as before; a
// worker remembers, per module, each function's machine code under a key of
// everything its code generation reads, and before code generation replaces
// a function it knows by a naked function whose body is its old bytes
// (inline assembly `.byte ...`). Code generation then works on the changed
// functions only, and the object's code sections are byte for byte what a
// full compile gives: same bytes, same sizes, same layout.
//
// Why that is exact, and where it is not used:
// - The key (FunctionKeys in CodeReuse.cpp) holds the function's IR as
//   printed (local values numbered within it, module-wide metadata and
//   attribute-group numbers left out), its attributes and every call site's,
//   its metadata by content, every global it references with what code
//   generation reads of it (linkage, visibility, dso_local, section,
//   alignment, attributes, a constant's initialiser), and the module's
//   target, data layout and flags. The cache is per module and cc1 command.
// - A function's bytes must not depend on where it lands. A call of a
//   function with local linkage does: the assembler resolves it itself and
//   writes the displacement. learn() decodes every generated function's
//   code (x86-64) and keeps such calls as `.long callee - . - 4` for the
//   assembler to resolve again. Always generated: functions with a jump to
//   another function (a tail call, which the assembler sizes by distance),
//   any other reference to a local function, a block address or an alias,
//   a block aligned more than the function (its padding depends on the
//   start), prefix or prologue data or entry instrumentation (patchable
//   entries, XRay, mcount), and every function of a module with
//   control-flow protection or KCFI.
// - Nothing else in code generation reads another function's body on the
//   targets the corpora use (interprocedural register allocation and the
//   machine outliner are off unless asked by -mllvm, which a worker
//   refuses). The placeholder keeps the function's attributes and
//   alignment; after code generation each placeholder's alignment is
//   checked against the one remembered, and any mismatch makes the job
//   compile again in full.
// --verify-incremental compiles every job in full as well and stops at the
// first difference (Evaluator.cpp).
#pragma once

#include "mlgo/support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
namespace legacy {
class PassManager;
}
} // namespace llvm

namespace mlgo::inprocess {

struct ReuseCounts {
  size_t reused = 0;    // functions whose bytes came from the cache
  size_t generated = 0; // functions that went through code generation
};

// One compile's use of the cache: prepare() before code generation,
// recordPass() into its pipeline, learn() from the object after it.
class CodeReuse {
public:
  // `moduleKey`: the module and its command (without the output path).
  explicit CodeReuse(std::string moduleKey);
  ~CodeReuse();
  // Replaces the functions the cache knows by their bytes.
  void prepare(llvm::Module& module);
  // Adds the pass that records each function's alignment.
  void recordPass(llvm::legacy::PassManager& passes);
  // Checks the placeholders and remembers the generated functions' bytes
  // from the object; false: a placeholder came out unlike the function it
  // stands for (compile again without reuse).
  bool learn(std::string_view object);
  ReuseCounts counts() const;
  // What learn() added, in a form absorb() takes: a forked trial hands it
  // to its worker, so the worker's next trials reuse it too.
  std::string learned() const;
  static void absorb(const std::string& moduleKey, std::string_view learned);

  // Bytes the whole cache may hold (least recently used modules go first).
  static void setBudget(size_t bytes);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace mlgo::inprocess
