#include "InProcessCompiler.h"

#include "mlgo/evaluators/FeatureLayout.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/support/Random.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticIDs.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/ADT/Any.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/BlockFrequencyInfo.h>
#include <llvm/Analysis/InlineAdvisor.h>
#include <llvm/Analysis/InlineCost.h>
#include <llvm/Analysis/MLInlineAdvisor.h>
#include <llvm/Analysis/MLModelRunner.h>
#include <llvm/Analysis/OptimizationRemarkEmitter.h>
#include <llvm/Analysis/ProfileSummaryInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace mlgo::inprocess {

namespace {

using evaluators::FeatureLayout;
using policies::Trajectory;
namespace protocol = evaluators::protocol;

// What the advisor, the model runner and the pass callbacks of the running
// compilation share. The advisor factory LLVM calls is a plain function
// pointer, so the job reaches it through this per-thread pointer.
struct ActiveJob {
  const protocol::JobMessage* job = nullptr;
  const policies::Policy* policy = nullptr;
  const CacheQuestion* askCache = nullptr;
  RandomStream rng{0};
  llvm::ModuleAnalysisManager* moduleAnalyses = nullptr;

  uint64_t decisions = 0;
  std::vector<int64_t> adviceSequence;
  std::optional<Trajectory> trajectory;
  std::optional<std::string> mismatch; // the policy's inputs are not what LLVM offers
  bool inlinerDone = false;
  bool cacheHit = false;
  bool decisionsAfterQuery = false;
};

thread_local ActiveJob* activeJob = nullptr;

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
               ActiveJob& job)
      : MLModelRunner(context, Kind::Release, features.size() + 1), job_(job) {
    std::vector<llvm::TensorSpec> specs = features;
    const std::string& defaultName = job.job->defaultDecisionFeature;
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
    header_.advice = policies::TensorSpec{"inlining_decision", policies::TensorType::Int64, {1}};
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

    Expected<FeatureLayout> layout = FeatureLayout::bind(header_, *job.policy, defaultName);
    if (!layout) {
      job.mismatch = layout.error().message;
    } else {
      layout_ = layout.take();
      inputs_.resize(layout_->policyWidth);
    }
    // The default decision costs a full inline-cost analysis per call site:
    // computed only when the policy reads it or the trajectory records it.
    needsDefault_ = defaultIndex_ >= 0 &&
                    ((job.job->recordTrajectory && job.job->recordDefaults) || !layout_ ||
                     std::find(layout_->policyInputs.begin(), layout_->policyInputs.end(),
                               static_cast<size_t>(defaultIndex_)) != layout_->policyInputs.end());
    // Not computed: recorded as -1 ("unknown"), never as a stale answer.
    if (!needsDefault_ && defaultIndex_ >= 0) {
      int64_t unknown = -1;
      std::memcpy(observation() + layout_offset(static_cast<size_t>(defaultIndex_)), &unknown,
                  sizeof unknown);
    }
    if (job.job->recordTrajectory) {
      job.trajectory.emplace();
      job.trajectory->featureSpecs = header_.features;
      job.trajectory->width = layout_ ? layout_->recordWidth : 0;
    }
  }

  bool needsDefaultDecision() const { return needsDefault_; }

  void setDefaultDecision(bool inline_) {
    if (defaultIndex_ < 0)
      return;
    int64_t value = inline_ ? 1 : 0;
    std::memcpy(observation() + layout_offset(static_cast<size_t>(defaultIndex_)), &value,
                sizeof value);
  }

private:
  std::byte* observation() { return reinterpret_cast<std::byte*>(storage_.data()); }
  size_t layout_offset(size_t feature) const {
    size_t offset = 0;
    for (size_t i = 0; i < feature; ++i)
      offset += header_.features[i].byteSize();
    return offset;
  }

  void* evaluateUntyped() override {
    if (!layout_) {
      advice_ =
          defaultIndex_ >= 0
              ? *reinterpret_cast<const int64_t*>(observation() + layout_offset(defaultIndex_))
              : 0;
      return &advice_;
    }
    layout_->gather(header_, observation(), layout_->policyInputs, inputs_.data());
    policies::Decision decision = job_.policy->decide(inputs_, job_.job->mode, job_.rng);
    advice_ = decision.advice;
    job_.decisionsAfterQuery |= job_.inlinerDone;
    ++job_.decisions;
    job_.adviceSequence.push_back(decision.advice);
    if (job_.trajectory)
      layout_->record(header_, observation(), decision, *job_.trajectory);
    return &advice_;
  }

  ActiveJob& job_;
  policies::ChannelHeader header_;
  std::vector<uint64_t> storage_;
  int defaultIndex_ = -1;
  bool needsDefault_ = true;
  std::optional<FeatureLayout> layout_;
  std::vector<double> inputs_;
  int64_t advice_ = 0;
};

// LLVM's ML inliner with our runner. The only change is that the default
// decision is computed here for every call the model is asked about, exactly
// as clang's interactive mode computes it (LLVM's getDefaultInlineAdvice,
// which is file-local, hence reproduced).
class PolicyInlineAdvisor final : public llvm::MLInlineAdvisor {
public:
  PolicyInlineAdvisor(llvm::Module& module, llvm::ModuleAnalysisManager& analyses,
                      llvm::InlineParams params, ActiveJob& job)
      : MLInlineAdvisor(
            module, analyses,
            [&module, &job](const std::vector<llvm::TensorSpec>& features)
                -> std::unique_ptr<llvm::MLModelRunner> {
              return std::make_unique<PolicyRunner>(module.getContext(), features, job);
            },
            [this](llvm::CallBase& call) { return defaultAdvice(call); }),
        params_(params) {}

protected:
  std::unique_ptr<llvm::MLInlineAdvice>
  getAdviceFromModel(llvm::CallBase& call, llvm::OptimizationRemarkEmitter& remarks) override {
    auto& runner = static_cast<PolicyRunner&>(*ModelRunner);
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

  llvm::InlineParams params_;
};

// PluginInlineAdvisorAnalysis's factory: the job's policy advisor, or LLVM's
// own heuristic for plain compiles.
llvm::InlineAdvisor* createAdvisor(llvm::Module& module, llvm::FunctionAnalysisManager& functions,
                                   llvm::InlineParams params, llvm::InlineContext context) {
  ActiveJob* job = activeJob;
  if (!job || !job->policy || !job->moduleAnalyses)
    return new llvm::DefaultInlineAdvisor(module, functions, params, context);
  return new PolicyInlineAdvisor(module, *job->moduleAnalyses, params, *job);
}

// Replaces every function body by `unreachable`: what is left of the
// pipeline and code generation then costs next to nothing. Used when the
// size of this decision sequence is already known.
void hollowOut(llvm::Module& module, llvm::ModuleAnalysisManager& analyses) {
  // Cached analyses refer to the blocks about to go.
  analyses.clear();
  for (llvm::Function& function : module) {
    if (function.isDeclaration())
      continue;
    function.dropAllReferences();
    llvm::BasicBlock* block = llvm::BasicBlock::Create(module.getContext(), "", &function);
    llvm::IRBuilder<> builder(block);
    builder.CreateUnreachable();
  }
}

// After the module inliner: the decision sequence is complete. In -O/-Oz
// pipelines without LTO the inliner runs once, so this is its end.
void afterPass(llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses&) {
  ActiveJob* job = activeJob;
  if (!job || !job->policy || job->inlinerDone || pass != "ModuleInlinerWrapperPass")
    return;
  job->inlinerDone = true;
  if (!job->job->consultCache || job->mismatch || !job->askCache || !*job->askCache)
    return;
  const llvm::Module* const* module = llvm::any_cast<const llvm::Module*>(&ir);
  if (!module || !job->moduleAnalyses)
    return;
  const auto* bytes = reinterpret_cast<const uint8_t*>(job->adviceSequence.data());
  llvm::ArrayRef<uint8_t> sequence(bytes, job->adviceSequence.size() * sizeof(int64_t));
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(sequence);
  protocol::CacheQueryMessage query{hash.low64, hash.high64, job->decisions};
  if ((*job->askCache)(query)) {
    job->cacheHit = true;
    hollowOut(const_cast<llvm::Module&>(**module), *job->moduleAnalyses);
  }
}

std::optional<std::string> outputOf(const std::vector<std::string>& arguments) {
  for (size_t i = 0; i + 1 < arguments.size(); ++i)
    if (arguments[i] == "-o")
      return arguments[i + 1];
  return std::nullopt;
}

} // namespace

void initialiseTargets() {
  static const bool done = [] {
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
    return true;
  }();
  (void)done;
}

protocol::ResultMessage compileModule(const protocol::JobMessage& job,
                                      const policies::Policy* policy,
                                      const CacheQuestion& askCache) {
  protocol::ResultMessage result;
  auto fail = [&](protocol::WorkerStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    return std::move(result);
  };
  if (job.arguments.empty() || job.arguments.front() != "-cc1")
    return fail(protocol::WorkerStatus::SetupFailed, "the command does not start with -cc1");
  std::optional<std::string> object = outputOf(job.arguments);
  if (!object)
    return fail(protocol::WorkerStatus::SetupFailed, "the command has no -o");

  std::vector<const char*> arguments;
  for (size_t i = 1; i < job.arguments.size(); ++i) {
    const std::string& a = job.arguments[i];
    // -mllvm options are process-global in LLVM; applying them per job would
    // leak into every later compilation of this worker.
    if (a == "-mllvm")
      return fail(protocol::WorkerStatus::Unsupported,
                  "the command passes -mllvm " +
                      (i + 1 < job.arguments.size() ? job.arguments[i + 1] : std::string()) +
                      ", which a worker cannot apply to one compilation");
    // -disable-free makes clang skip freeing its state at exit; in a
    // long-lived worker that leaks every compilation's memory.
    if (a == "-disable-free")
      continue;
    arguments.push_back(a.c_str());
  }

  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  {
    clang::DiagnosticOptions options;
    clang::TextDiagnosticPrinter printer(diagnosticStream, options);
    clang::DiagnosticsEngine engine(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), options,
                                    &printer, /*ShouldOwnClient=*/false);
    if (!clang::CompilerInvocation::CreateFromArgs(*invocation, arguments, engine, "clang")) {
      result.diagnostics = diagnostics;
      return fail(protocol::WorkerStatus::CompilerFailed, "cc1 rejected the command line");
    }
  }

  ActiveJob active;
  active.job = &job;
  active.policy = policy;
  active.askCache = &askCache;
  active.rng = RandomStream(job.rngKey);
  invocation->getCodeGenOpts().PassBuilderCallbacks.push_back([](llvm::PassBuilder& builder) {
    builder.registerAnalysisRegistrationCallback([](llvm::ModuleAnalysisManager& analyses) {
      analyses.registerPass([] { return llvm::PluginInlineAdvisorAnalysis(&createAdvisor); });
      if (activeJob)
        activeJob->moduleAnalyses = &analyses;
    });
    if (llvm::PassInstrumentationCallbacks* callbacks = builder.getPassInstrumentationCallbacks())
      callbacks->registerAfterPassCallback(afterPass);
  });

  bool compiled = false;
  {
    clang::CompilerInstance compiler(invocation);
    compiler.createVirtualFileSystem();
    compiler.createDiagnostics(
        new clang::TextDiagnosticPrinter(diagnosticStream, compiler.getDiagnosticOpts()),
        /*ShouldOwnClient=*/true);
    llvm::LLVMContext context;
    clang::EmitObjAction action(&context);
    activeJob = &active;
    compiled = compiler.ExecuteAction(action);
    activeJob = nullptr;
  }
  result.diagnostics = diagnostics;
  result.decisions = active.decisions;
  result.trajectory = std::move(active.trajectory);
  result.decisionsAfterQuery = active.decisionsAfterQuery;
  if (active.mismatch)
    return fail(protocol::WorkerStatus::PolicyMismatch, *active.mismatch);
  if (!compiled)
    return fail(protocol::WorkerStatus::CompilerFailed, "compiler reported errors");
  if (active.cacheHit) {
    result.cacheHit = true;
    result.status = protocol::WorkerStatus::Ok;
    return result;
  }
  Expected<evaluators::CodeMeasure> code = evaluators::measureCode(*object, job.sizeSections);
  if (!code)
    return fail(protocol::WorkerStatus::BadObject, code.error().message);
  result.sizeBytes = code->bytes;
  result.codeHash = code->hash;
  result.status = protocol::WorkerStatus::Ok;
  return result;
}

} // namespace mlgo::inprocess
