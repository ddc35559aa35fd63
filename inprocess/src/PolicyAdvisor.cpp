#include "PolicyAdvisor.h"

#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/FeatureLayout.h"
#include "mlgo/policies/CalleeConsistent.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/BlockFrequencyInfo.h>
#include <llvm/Analysis/IR2Vec.h>
#include <llvm/Analysis/InlineAdvisor.h>
#include <llvm/Analysis/InlineCost.h>
#include <llvm/Analysis/MLInlineAdvisor.h>
#include <llvm/Analysis/MLModelRunner.h>
#include <llvm/Analysis/OptimizationRemarkEmitter.h>
#include <llvm/Analysis/ProfileSummaryInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CommandLine.h>

#include <algorithm>
#include <cstring>

namespace mlgo::inprocess {

namespace {

using evaluators::FeatureLayout;

policies::TensorType fromLlvm(llvm::TensorType type) {
  switch (type) {
  case llvm::TensorType::Float:
    return policies::TensorType::Float;
  case llvm::TensorType::Double:
    return policies::TensorType::Double;
  case llvm::TensorType::Int8:
    return policies::TensorType::Int8;
  case llvm::TensorType::UInt8:
    return policies::TensorType::UInt8;
  case llvm::TensorType::Int16:
    return policies::TensorType::Int16;
  case llvm::TensorType::UInt16:
    return policies::TensorType::UInt16;
  case llvm::TensorType::Int32:
    return policies::TensorType::Int32;
  case llvm::TensorType::UInt32:
    return policies::TensorType::UInt32;
  case llvm::TensorType::UInt64:
    return policies::TensorType::UInt64;
  default: // Int64, and LLVM's Invalid/Total markers
    break;
  }
  return policies::TensorType::Int64;
}

// The inliner's model: holds the features LLVM writes, one observation laid
// out exactly as the interactive channel would send it (features back to
// back in the advisor's order, the default decision last), and answers with
// the policy. Features the policy cannot bind make the job a policy mismatch;
// the compilation then goes on with the heuristic's answers and is discarded.
class PolicyRunner final : public llvm::MLModelRunner {
public:
  PolicyRunner(llvm::LLVMContext& context, const std::vector<llvm::TensorSpec>& features,
               AdvisorSession& session)
      : MLModelRunner(context, Kind::Release, features.size() + 1), session_(session) {
    std::vector<llvm::TensorSpec> specs = features;
    const std::string& defaultName = session.defaultDecisionFeature;
    // LLVM adds the default decision only when asked on its command line
    // (-inliner-interactive-include-default), which a worker never parses:
    // the runner appends it and the advisor fills it.
    bool hasDefault = false;
    for (const llvm::TensorSpec& spec : specs)
      hasDefault |= spec.name() == defaultName;
    if (!defaultName.empty() && !hasDefault)
      specs.push_back(llvm::TensorSpec::createSpec<int64_t>(defaultName, {1}));
    for (const llvm::TensorSpec& spec : specs)
      header_.features.push_back(
          policies::TensorSpec{spec.name(), fromLlvm(spec.type()), spec.shape(), spec.port()});
    // The advice LLVM's ML inliner asks for (the inlining task's).
    static const std::string advice = evaluators::CompilerTask::inliningForSize().adviceName;
    header_.advice = policies::TensorSpec{advice, policies::TensorType::Int64, {1}};
    // 8-byte aligned storage for every tensor, contiguous.
    storage_.assign((header_.observationBytes() + 7) / 8 + 1, 0);
    auto* base = reinterpret_cast<std::byte*>(storage_.data());
    size_t offset = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      setUpBufferForTensor(i, specs[i], base + offset);
      offset += header_.features[i].byteSize();
    }
    // The unused extra input slot (when the default was already there) gets
    // a buffer of its own so LLVM never sees a null tensor.
    if (specs.size() == features.size())
      setUpBufferForTensor(specs.size(), llvm::TensorSpec::createSpec<int64_t>("unused", {1}),
                           nullptr);
    defaultIndex_ = defaultName.empty() ? -1 : header_.findFeature(defaultName);
    if (session.policy || !session.resolvePolicy)
      bind();
    if (session.recordTrajectory) {
      session.trajectory.emplace();
      session.trajectory->featureSpecs = header_.features;
      session.trajectory->width = layout_ ? layout_->recordWidth : 0;
    }
  }

  // Before each decision: the policy, resolved at the first.
  bool needsDefaultDecision() {
    if (!bound_)
      bind();
    return needsDefault_;
  }

  // The callee of the decision about to be asked (for callee consistency).
  void setCallee(llvm::StringRef name, bool discardable) {
    callee_ = name;
    calleeDiscardable_ = discardable;
  }

  void setDefaultDecision(bool inline_) {
    if (defaultIndex_ < 0)
      return;
    int64_t value = inline_ ? 1 : 0;
    std::memcpy(observation() + layout_offset(static_cast<size_t>(defaultIndex_)), &value,
                sizeof value);
  }

private:
  // The policy's inputs bound to the header's features (a policy that does
  // not fit, or none, leaves the heuristic's decisions to answer).
  void bind() {
    bound_ = true;
    AdvisorSession& session = session_;
    const std::string& defaultName = session.defaultDecisionFeature;
    std::string problem;
    if (!session.policy && session.resolvePolicy)
      session.policy = session.resolvePolicy(problem);
    Expected<FeatureLayout> layout =
        session.policy ? FeatureLayout::bind(header_, *session.policy, defaultName)
                       : Expected<FeatureLayout>(makeError(problem));
    if (!layout) {
      session.mismatch = layout.error().message;
      if (session.onProblem)
        session.onProblem(*session.mismatch);
    } else {
      layout_ = layout.take();
      inputs_.resize(layout_->policyWidth);
    }
    // The default decision costs a full inline-cost analysis per call site:
    // computed only when the policy reads it or the trajectory records it.
    needsDefault_ = defaultIndex_ >= 0 &&
                    ((session.recordTrajectory && session.recordDefaults) || !layout_ ||
                     std::find(layout_->policyInputs.begin(), layout_->policyInputs.end(),
                               static_cast<size_t>(defaultIndex_)) != layout_->policyInputs.end());
    // Callee consistency needs the heuristic's decision at every site, and
    // so does telling an overrule.
    if (session.policy && session.policy->calleeConsistent())
      commitments_.emplace();
    if (commitments_ || session.onOverrule)
      needsDefault_ = defaultIndex_ >= 0;
    // Not computed: recorded as -1 ("unknown"), never as a stale answer.
    if (!needsDefault_ && defaultIndex_ >= 0) {
      int64_t unknown = -1;
      std::memcpy(observation() + layout_offset(static_cast<size_t>(defaultIndex_)), &unknown,
                  sizeof unknown);
    }
  }

  // The heuristic's decision at this site as set before it (-1: not
  // computed, or no feature carries it).
  int64_t heuristicDecision() {
    int64_t heuristic = -1;
    if (defaultIndex_ >= 0)
      std::memcpy(&heuristic, observation() + layout_offset(static_cast<size_t>(defaultIndex_)),
                  sizeof heuristic);
    return heuristic;
  }

  // After the policy's decision at this site (advice_).
  void reportOverrule() {
    const int64_t heuristic = heuristicDecision();
    if (heuristic < 0)
      session_.onOverrule(false);
    else if (heuristic != advice_)
      session_.onOverrule(true);
  }

  std::byte* observation() { return reinterpret_cast<std::byte*>(storage_.data()); }
  size_t layout_offset(size_t feature) const {
    size_t offset = 0;
    for (size_t i = 0; i < feature; ++i)
      offset += header_.features[i].byteSize();
    return offset;
  }

  void* evaluateUntyped() override {
    if (!layout_) {
      advice_ = defaultIndex_ >= 0 ? heuristicDecision() : 0;
      return &advice_;
    }
    layout_->gather(header_, observation(), layout_->policyInputs, inputs_.data());
    policies::Decision decision = session_.policy->decide(inputs_, session_.mode, session_.rng);
    // A trial's inversion is the policy's answer as a full compile of the
    // toggled policy would give it; consistency then applies to that answer,
    // so that a forked trial and its full compile commit alike.
    if (session_.invert && session_.invert(session_.decisions, inputs_))
      decision.advice = 1 - decision.advice;
    bool follows = false;
    if (commitments_ && defaultIndex_ >= 0) {
      const int64_t heuristic = heuristicDecision();
      const std::string_view callee(callee_.data(), callee_.size());
      follows = commitments_->follows(callee, calleeDiscardable_, heuristic);
      decision.advice = commitments_->apply(callee, calleeDiscardable_, heuristic, decision.advice);
    }
    advice_ = decision.advice;
    if (session_.onOverrule)
      reportOverrule();
    session_.decisionsAfterInlinerDone |= session_.inlinerDone;
    ++session_.decisions;
    session_.adviceSequence.push_back(decision.advice);
    if (session_.trajectory) {
      layout_->record(header_, observation(), decision, *session_.trajectory);
      if (commitments_)
        session_.trajectory->followsCommitment.push_back(follows ? 1 : 0);
    }
    return &advice_;
  }

  AdvisorSession& session_;
  std::optional<policies::CalleeCommitments> commitments_;
  llvm::StringRef callee_;
  bool calleeDiscardable_ = false;
  policies::ChannelHeader header_;
  std::vector<uint64_t> storage_;
  int defaultIndex_ = -1;
  bool bound_ = false;
  bool needsDefault_ = true;
  std::optional<FeatureLayout> layout_;
  std::vector<double> inputs_;
  int64_t advice_ = 0;
};

// LLVM's ML inliner with our runner. The only change is that the default
// decision is computed here for every call the model is asked about, exactly
// as clang's interactive mode computes it (LLVM's getDefaultInlineAdvice,
// which is file-local, hence reproduced).
// Holds a session the advisor owns (the plugin's case). A base class, so
// that it exists before MLInlineAdvisor's constructor creates the runner.
struct OwnedSession {
  std::unique_ptr<AdvisorSession> owned;
};

class PolicyInlineAdvisor final : private OwnedSession, public llvm::MLInlineAdvisor {
public:
  PolicyInlineAdvisor(llvm::Module& module, llvm::ModuleAnalysisManager& analyses,
                      llvm::InlineParams params, AdvisorSession& session,
                      std::unique_ptr<AdvisorSession> owned = nullptr)
      : OwnedSession{std::move(owned)},
        MLInlineAdvisor(
            module, analyses,
            [&module, &session](const std::vector<llvm::TensorSpec>& features)
                -> std::unique_ptr<llvm::MLModelRunner> {
              return std::make_unique<PolicyRunner>(module.getContext(), features, session);
            },
            [this](llvm::CallBase& call) { return defaultAdvice(call); }),
        session_(session), params_(params) {}

  void onPassExit(llvm::LazyCallGraph::SCC* scc) override {
    MLInlineAdvisor::onPassExit(scc);
    // Past its size limit LLVM's ML advisor stops inlining where the
    // heuristic would go on: its decisions are no longer the heuristic's.
    if (isForcedToStop() && session_.onOverrule)
      session_.onOverrule(false);
  }

protected:
  std::unique_ptr<llvm::MLInlineAdvice>
  getAdviceFromModel(llvm::CallBase& call, llvm::OptimizationRemarkEmitter& remarks) override {
    auto& runner = static_cast<PolicyRunner&>(*ModelRunner);
    const llvm::Function* callee = call.getCalledFunction();
    runner.setCallee(callee ? callee->getName() : llvm::StringRef(),
                     callee && callee->isDiscardableIfUnused());
    if (runner.needsDefaultDecision())
      runner.setDefaultDecision(defaultAdvice(call));
    return MLInlineAdvisor::getAdviceFromModel(call, remarks);
  }

private:
  bool defaultAdvice(llvm::CallBase& call) {
    llvm::Function& caller = *call.getCaller();
    llvm::ProfileSummaryInfo* profile =
        FAM.getResult<llvm::ModuleAnalysisManagerFunctionProxy>(caller)
            .getCachedResult<llvm::ProfileSummaryAnalysis>(*caller.getParent());
    auto& remarks = FAM.getResult<llvm::OptimizationRemarkEmitterAnalysis>(caller);
    auto assumptions = [&](llvm::Function& f) -> llvm::AssumptionCache& {
      return FAM.getResult<llvm::AssumptionAnalysis>(f);
    };
    auto frequencies = [&](llvm::Function& f) -> llvm::BlockFrequencyInfo& {
      return FAM.getResult<llvm::BlockFrequencyAnalysis>(f);
    };
    auto libraryInfo = [&](llvm::Function& f) -> const llvm::TargetLibraryInfo& {
      return FAM.getResult<llvm::TargetLibraryAnalysis>(f);
    };
    llvm::Function& callee = *call.getCalledFunction();
    auto& calleeTTI = FAM.getResult<llvm::TargetIRAnalysis>(callee);
    auto cost = [&](llvm::CallBase& site) {
      llvm::Function& target = *site.getCalledFunction();
      auto& targetTTI = FAM.getResult<llvm::TargetIRAnalysis>(target);
      bool remarksEnabled =
          target.getContext().getDiagHandlerPtr()->isMissedOptRemarkEnabled("inline");
      return llvm::getInlineCost(site, params_, targetTTI, assumptions, libraryInfo, frequencies,
                                 profile, remarksEnabled ? &remarks : nullptr);
    };
    // LLVM's -inline-deferral defaults to off; the pipeline may set it.
    return llvm::shouldInline(call, calleeTTI, cost, remarks,
                              params_.EnableDeferral.value_or(false))
        .has_value();
  }

  AdvisorSession& session_;
  llvm::InlineParams params_;
};

// MLInlineAdvisor adds caller_embedding/callee_embedding only when it finds
// IR2Vec's vocabulary already computed; clang's own path computes it first
// when -ml-inliner-ir2vec-vocab-file is set (the worker's --llvm-option).
void computeIr2VecVocabularyIfAsked(llvm::Module& module,
                                    llvm::ModuleAnalysisManager& moduleAnalyses) {
  static const bool asked = [] {
    auto& options = llvm::cl::getRegisteredOptions();
    auto found = options.find("ml-inliner-ir2vec-vocab-file");
    return found != options.end() &&
           !static_cast<llvm::cl::opt<std::string>*>(found->second)->getValue().empty();
  }();
  if (asked)
    moduleAnalyses.getResult<llvm::IR2VecVocabAnalysis>(module);
}

} // namespace

llvm::InlineAdvisor* createPolicyAdvisor(llvm::Module& module,
                                         llvm::ModuleAnalysisManager& moduleAnalyses,
                                         const llvm::InlineParams& params,
                                         AdvisorSession& session) {
  computeIr2VecVocabularyIfAsked(module, moduleAnalyses);
  return new PolicyInlineAdvisor(module, moduleAnalyses, params, session);
}

llvm::InlineAdvisor* createPolicyAdvisor(llvm::Module& module,
                                         llvm::ModuleAnalysisManager& moduleAnalyses,
                                         const llvm::InlineParams& params,
                                         std::unique_ptr<AdvisorSession> session) {
  AdvisorSession& kept = *session;
  computeIr2VecVocabularyIfAsked(module, moduleAnalyses);
  return new PolicyInlineAdvisor(module, moduleAnalyses, params, kept, std::move(session));
}

} // namespace mlgo::inprocess
