// LLVM's ML inliner answered by a policy: the one implementation behind both
// the in-process evaluator worker and the deployment pass plugin
// (libmlgo-inliner.so), so that a policy makes the same decisions in training
// and in a user's build. Needs LLVM only, never clang: lld loads the plugin
// for LTO links, where no clang library is present.
#pragma once

#include "mlgo/policies/Policy.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Random.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class InlineAdvisor;
class Module;
struct InlineParams;
template <typename IRUnitT, typename... ExtraArgTs> class AnalysisManager;
using ModuleAnalysisManager = AnalysisManager<Module>;
} // namespace llvm

namespace mlgo::inprocess {

// What one module's advisor is told and what it reports back. The advisor
// keeps a reference: the session must outlive it.
struct AdvisorSession {
  const policies::Policy* policy = nullptr;
  // Without `policy`: called at the module's first decision for it (the
  // plugin parses the policy file only when a compile has a decision to make:
  // most of a build's configure probes have none). Null, or a policy that
  // does not fit, sets `mismatch` and calls `onProblem` with it; the advisor
  // then answers with the heuristic's decisions.
  std::function<const policies::Policy*(std::string& problem)> resolvePolicy;
  std::function<void(const std::string& problem)> onProblem;
  policies::DecisionMode mode = policies::DecisionMode::Deterministic;
  RandomStream rng{0};
  // The feature carrying the heuristic's own decision ("" if none is wanted).
  std::string defaultDecisionFeature;
  bool recordTrajectory = false;
  // Compute the default decision for every recorded row even when the
  // policy does not read it (the labels of behavioural cloning).
  bool recordDefaults = false;
  // Asked before each decision with its index and the policy's inputs: true
  // makes this decision the other of the two actions (an incremental trial's,
  // see InProcessCompiler.cpp). Unset: the policy decides alone.
  std::function<bool(uint64_t decision, const std::vector<double>& inputs)> invert;
  // Called at each decision that differs from the heuristic's (true), or
  // whose heuristic decision cannot be known (false: the header has no
  // feature for it). Set, the heuristic's decision is computed at every
  // site: mlgo-cc --mlgo-best-of then skips the compile without the policy
  // where nothing was overruled (policies/CompileReport.h).
  std::function<void(bool known)> onOverrule;

  uint64_t decisions = 0;
  std::vector<int64_t> adviceSequence;
  std::optional<policies::Trajectory> trajectory;
  // Set when the policy's inputs are not what this LLVM offers (names the
  // feature); the advisor then answers with the heuristic's decisions.
  std::optional<std::string> mismatch;
  // Set by the caller once the inliner pass has finished; decisions after it
  // (a second inliner run) are counted.
  bool inlinerDone = false;
  bool decisionsAfterInlinerDone = false;
};

// LLVM's MLInlineAdvisor whose model is `session.policy`, computing the
// heuristic's decision per call site exactly as clang's interactive mode
// does. The caller owns the result (InlineAdvisorAnalysis takes it).
llvm::InlineAdvisor* createPolicyAdvisor(llvm::Module& module,
                                         llvm::ModuleAnalysisManager& moduleAnalyses,
                                         const llvm::InlineParams& params, AdvisorSession& session);
// As above, the advisor owning its session.
llvm::InlineAdvisor* createPolicyAdvisor(llvm::Module& module,
                                         llvm::ModuleAnalysisManager& moduleAnalyses,
                                         const llvm::InlineParams& params,
                                         std::unique_ptr<AdvisorSession> session);

} // namespace mlgo::inprocess
