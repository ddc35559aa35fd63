// What the compiler is asked to decide, as a value the evaluator is given:
// the arguments that open the interactive channel, the advice it answers
// with, the feature that holds the compiler's own decision, what is measured
// and how it is rewarded. Inlining for size is the first task;
// register-allocation eviction/priority are the same protocol with other
// arguments, advice and measures, and need no change to the backends' core.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Policy.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::evaluators {

// ml-compiler-opt's reward: 1 − (measured + δ) / (baseline + δ). Positive
// when the job measures less than the baseline. A module's reward and a
// corpus total's are computed alike.
struct RelativeReward {
  double delta = 0.01;
  double operator()(double measured, double baseline) const;
  bool operator==(const RelativeReward& other) const = default;
};

// How the in-process worker runs a task's jobs: the job carries it, and the
// worker dispatches on it (a task is more than its name: tests and tools
// make variants of the registered ones).
enum class InProcessRoute : uint8_t {
  None = 0,          // the worker cannot: the task's jobs go to clang processes
  InlineAdvisor = 1, // the policy is LLVM's inline advisor, called directly
  // LLVM's ML eviction advisor in release mode, whose interactive channel a
  // thread of the worker answers; code generation by the worker's own
  // pipeline (which also scores register allocation).
  EvictionChannel = 2,
  // clang's -Oz pipeline changed by the job's pipeline policy
  // (policies/PassPipeline.h) through PassBuilder's callbacks; code
  // generation by the worker's own pipeline, which also counts the
  // optimised module's IR instructions.
  PassPipeline = 3,
};

// What a job is measured by (lower is better); its reward is the relative
// reward of that measure against the module's baseline's. A job carries one
// measured value (JobResult::measured), whatever the measure.
enum class Measure {
  TextSize,       // bytes of the task's code sections
  RegAllocScore,  // LLVM's calculateRegAllocScore summed over the functions
                  // (in-process only: our own code generation pipeline)
  IrInstructions, // LLVM IR instructions of the optimised module (CompilerGym's
                  // IrInstructionCount; in-process only, pass-pipeline task)
  LinkedText,     // bytes of code a module adds to its linked code base, each
                  // COMDAT group counted once (LinkedCode.h), every other
                  // module at its baseline; the Evaluator takes it from the
                  // object's code and the code base's baselines
  RunCost,        // a whole benchmark program's run cost under cachegrind (its
                  // cycle estimate), built with the policy through mlgo-cc:
                  // training::ProgramRunCostScorer, never a module's compile
};

// Everything tools say about a measure, from one table (CompilerTask.cpp):
// a new measure is an enumerator and a row there.
struct MeasureTraits {
  Measure measure;
  std::string_view name;   // --measure's: "text-size"
  std::string_view noun;   // in sentences: "size", "score"
  std::string_view column; // a report's column: ".text", "score"
  std::string_view unit;   // what a difference counts: "bytes", "score"
  const char* valueFormat; // printf format of one value: "%.0f"
  std::string_view lower;  // a module that measures less: "smaller"
  std::string_view higher; // and more: "larger"
  // The object's code size, which every backend reads (JobResult::sizeBytes
  // becomes the measured value); otherwise only the in-process worker on the
  // task's route measures it, and sets JobResult::measured itself.
  bool ofObjectSize;
  // Otherwise, the in-process route whose worker takes it.
  InProcessRoute measuredBy;
  // Of whole programs (built and run), not of a module's compile: no
  // Evaluator measures it.
  bool ofPrograms = false;
  // Of the object's code against its code base's baseline objects (the
  // module's corpus): the Evaluator computes it from every backend's object
  // (sizes and COMDAT groups), with replay, the decision cache and
  // incremental evaluation off, since they keep sizes only.
  bool ofCodeBase = false;

  // Whether a job's measured value is its object's size itself (then tools
  // print no second column for it).
  bool valueIsSize() const { return ofObjectSize && !ofCodeBase; }
  std::string format(double value) const; // one value in valueFormat: "1234"
};
const MeasureTraits& traitsOf(Measure measure);
std::string_view measureName(Measure measure); // traitsOf(measure).name
Expected<Measure> parseMeasure(std::string_view name);
std::vector<std::string> measureNames(); // every measure's, for --measure
// "a, b or c": the choices an error message or a flag's help names.
std::string alternatives(const std::vector<std::string>& names);

struct CompilerTask {
  std::string name;
  // One line for --task's help: what is decided, measured against what.
  std::string summary;
  // Appended to a module's compile command; every "{channel}" is replaced by
  // the channel's base path.
  std::vector<std::string> interactiveArguments;
  // Process-global LLVM options the task needs beside them (e.g. IR2Vec's
  // vocabulary): given to clang as `-mllvm X` each, and to an in-process
  // worker once, on its command line, since LLVM cannot scope them to a job.
  std::vector<std::string> llvmOptions;
  // The advice tensor the compiler asks for (its header names it); a header
  // that asks for another is a protocol error.
  std::string adviceName;
  // The feature carrying the compiler's default decision (the BC label);
  // empty if the task has none.
  std::string defaultDecisionFeature;
  // Sections whose sizes make up the measured size: exact names, or a
  // prefix ending in '.' matches e.g. ".text.hot" for ".text.".
  std::vector<std::string> sizeSections{".text", ".text."};
  RelativeReward reward;
  Measure measure = Measure::TextSize;
  // Whether and how the in-process worker runs the task.
  InProcessRoute inProcess = InProcessRoute::None;
  // An advice that is valid at every decision, for a policy that reads
  // nothing: recording the compiler's features before any policy exists
  // (the inliner: 0, do not inline; eviction: 32, the register being
  // allocated, i.e. evict nothing).
  int64_t neutralAdvice = 0;
  // The feature marking which candidates a decision may choose, for tasks
  // whose advice is a candidate's index (eviction: "mask"); a policy for
  // such a task scores candidates (MlpOptions::candidateMask). Empty: none.
  std::string candidateMask;
  // The advice's values when every decision has the same ones (the inliner:
  // 2, no or yes); 0 when the advice picks one of the decision's candidates
  // (eviction: an index into the mask). "always"/"never" need 2.
  int actions = 2;
  // How reports name the baseline (the module's plain compile).
  std::string baselineName = "-Oz";
  // Only the in-process worker can apply the task's policies (no clang flag
  // carries them): a policy job that cannot run in-process fails rather
  // than fall back to a clang process that would compile without it.
  bool inProcessOnly = false;
  // The environment variable through which mlgo-cc deploys the task's
  // policies in a build (MLGO_POLICY: the plugin's inliner; the pipeline's;
  // MLGO_EVICTION_POLICY, MLGO_PRIORITY_POLICY: answered on clang's channel
  // by mlgo-channel-cc, deploy::channelDeployments()); empty: mlgo-cc cannot
  // deploy them.
  std::string launcherEnvironment;

  // f(field of each task…) for every field, in declaration order, over one
  // or more tasks at once: what carries a whole task (the cluster protocol
  // writes and reads it with this) never lists the fields itself. A new
  // field is added here as well (CompilerTask.ForEachFieldCoversEveryField
  // copies each registered task through it).
  template <class F, class... Tasks> static void forEachField(F&& f, Tasks&... tasks) {
    f(tasks.name...);
    f(tasks.summary...);
    f(tasks.interactiveArguments...);
    f(tasks.llvmOptions...);
    f(tasks.adviceName...);
    f(tasks.defaultDecisionFeature...);
    f(tasks.sizeSections...);
    f(tasks.reward.delta...);
    f(tasks.measure...);
    f(tasks.inProcess...);
    f(tasks.neutralAdvice...);
    f(tasks.candidateMask...);
    f(tasks.actions...);
    f(tasks.baselineName...);
    f(tasks.inProcessOnly...);
    f(tasks.launcherEnvironment...);
  }
  bool operator==(const CompilerTask& other) const = default;

  // The task's policy architecture from `base` (the user's layers and
  // options): a candidate-scoring network for candidate-index advice, the
  // default decision kept out of the network's inputs (ml-compiler-opt
  // discards it so that a policy cannot learn to copy it) and made the
  // residual policy's feature.
  policies::MlpOptions policyOptions(policies::MlpOptions base) const;

  // interactiveArguments for this channel, then llvmOptions as -mllvm pairs.
  std::vector<std::string> argumentsFor(const std::filesystem::path& channelBase) const;

  // The inliner also sends IR2Vec embeddings of caller and callee
  // (caller_embedding, callee_embedding: float vectors of the vocabulary's
  // dimension) computed with this vocabulary (JSON, see Ir2VecVocabulary.h).
  // clang-22 reads the file from -ir2vec-vocab-path; the other option only
  // switches the features on. Fails for a task that is not the inliner's.
  Status useIr2VecVocabulary(const std::filesystem::path& vocabulary);

  // LLVM's ML inliner in release/interactive mode, with the default
  // decision included as the last feature; .text bytes against -Oz.
  static CompilerTask inliningForSize();
  // The greedy register allocator's eviction advisor in release/interactive
  // mode; LLVM's RegAllocScore against plain -O2's (use -O2 corpora). The
  // default advisor's choice is not on clang's channel (LLVM 22 has no
  // include-default flag for it): the in-process worker adds it.
  static CompilerTask regallocEviction();
  // A toy: the greedy allocator's priority advisor, whose float advice a
  // policy answers with its action (two levels); .text against -O2's, by
  // clang processes only. It shows what a task needs and nothing more.
  static CompilerTask regallocPriority();
  // The optimisation pipeline per module (policies/PassPipeline.h): passes
  // of -Oz skipped, passes added at extension points, or a replacement;
  // .text against -Oz (or --measure ir-instructions). The neutral policy
  // is -Oz itself. In-process only.
  static CompilerTask passPipeline();
  // The policy that gives the task's baseline: the always-valid advice, or
  // for the pipeline task the unchanged -Oz pipeline.
  std::unique_ptr<policies::Policy> neutralPolicy() const;
  // The registered tasks (CompilerTask.cpp's list: a new task is one
  // definition and one line there), by name, and their names.
  static const std::vector<CompilerTask>& all();
  static Expected<CompilerTask> named(std::string_view name);
  static std::vector<std::string> names();
  // The registered task mlgo-cc deploys through `variable`.
  static Expected<CompilerTask> deployedThrough(std::string_view variable);
};

// The -O level a module was built with: the last -O option of its stored
// command ("-Oz", "-O2"), or "" without one.
std::string optimisationLevelOf(const corpus::ModuleSpec& module);

// A warning when a corpus was built at another -O level than the task's
// baseline (an -Oz corpus for the eviction task, an -O2 one for the
// inliner): its labels and reports would name the wrong baseline. Every tool
// that gives a corpus to a task prints it; --task makes the choice deliberate.
std::optional<std::string> optimisationLevelWarning(const corpus::Corpus& corpus,
                                                    const CompilerTask& task);

// The inlining task's reward (ml-compiler-opt's, δ = 0.01).
inline double sizeReward(uint64_t sizeBytes, uint64_t baselineBytes) {
  return RelativeReward{}(sizeBytes, baselineBytes);
}

} // namespace mlgo::evaluators
