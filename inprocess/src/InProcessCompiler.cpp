#include "InProcessCompiler.h"
#include "CodeGeneration.h"
#include "CodeReuse.h"
#include "PolicyAdvisor.h"
#include "TestHooks.h"
#include "TrialForker.h"

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
#include <llvm/Analysis/InlineAdvisor.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/VirtualOutputBackend.h>
#include <llvm/Support/VirtualOutputFile.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

namespace mlgo::inprocess {

namespace {

namespace protocol = evaluators::protocol;

// What the advisor, the model runner and the pass callbacks of the running
// compilation share. The advisor factory LLVM calls is a plain function
// pointer, so the job reaches it through this per-thread pointer.
struct ActiveJob {
  const protocol::JobMessage* job = nullptr;
  const CacheQuestion* askCache = nullptr;
  llvm::ModuleAnalysisManager* moduleAnalyses = nullptr;
  AdvisorSession advisor;
  bool cacheHit = false;
  TrialForker* trials = nullptr; // a trial job's
  bool hollowBase = false;       // the base of a trial job, hollowed after the inliner
  // For the time report (evaluators::CompileTimes): when the compile started,
  // the inliner started and ended, and the last optimisation pass ended.
  using Time = std::chrono::steady_clock::time_point;
  Time started{}; // set by compileOnce
  std::optional<Time> inlinerStarted, inlinerEnded;
  Time lastPassEnded{};
};

thread_local ActiveJob* activeJob = nullptr;

// PluginInlineAdvisorAnalysis's factory: the job's policy advisor, or LLVM's
// own heuristic for plain compiles.
llvm::InlineAdvisor* createAdvisor(llvm::Module& module, llvm::FunctionAnalysisManager& functions,
                                   llvm::InlineParams params, llvm::InlineContext context) {
  ActiveJob* job = activeJob;
  if (!job || !job->advisor.policy || !job->moduleAnalyses)
    return new llvm::DefaultInlineAdvisor(module, functions, params, context);
  return createPolicyAdvisor(module, *job->moduleAnalyses, params, job->advisor);
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

void beforePass(llvm::StringRef pass, llvm::Any) {
  if (ActiveJob* job = activeJob; job && !job->inlinerStarted && pass == "ModuleInlinerWrapperPass")
    job->inlinerStarted = std::chrono::steady_clock::now();
}

// After the module inliner: the decision sequence is complete. In -O/-Oz
// pipelines without LTO the inliner runs once, so this is its end.
void afterPass(llvm::StringRef pass, llvm::Any ir, const llvm::PreservedAnalyses&) {
  ActiveJob* job = activeJob;
  if (!job)
    return;
  // Code generation runs under the legacy pass manager, which does not call
  // this: the last call is the optimisation pipeline's end.
  job->lastPassEnded = std::chrono::steady_clock::now();
  if (pass == "ModuleInlinerWrapperPass" && !job->inlinerEnded)
    job->inlinerEnded = job->lastPassEnded;
  if (!job->advisor.policy || job->advisor.inlinerDone || pass != "ModuleInlinerWrapperPass")
    return;
  job->advisor.inlinerDone = true;
  if (job->trials && job->trials->baseOnly()) {
    // The base of a trial job is known to the trainer: only its trials count.
    if (const llvm::Module* const* module = llvm::any_cast<const llvm::Module*>(&ir);
        module && job->moduleAnalyses) {
      job->hollowBase = true;
      hollowOut(const_cast<llvm::Module&>(**module), *job->moduleAnalyses);
    }
    return;
  }
  if (job->trials || !job->job->consultCache || job->advisor.mismatch || !job->askCache ||
      !*job->askCache)
    return;
  const llvm::Module* const* module = llvm::any_cast<const llvm::Module*>(&ir);
  if (!module || !job->moduleAnalyses)
    return;
  const std::vector<int64_t>& advice = job->advisor.adviceSequence;
  const auto* bytes = reinterpret_cast<const uint8_t*>(advice.data());
  llvm::ArrayRef<uint8_t> sequence(bytes, advice.size() * sizeof(int64_t));
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(sequence);
  protocol::CacheQueryMessage query{hash.low64, hash.high64, job->advisor.decisions};
  if ((*job->askCache)(query)) {
    job->cacheHit = true;
    hollowOut(const_cast<llvm::Module&>(**module), *job->moduleAnalyses);
  }
}

// clang's object file, kept in memory: no file to write, read back and
// delete, and a forked trial writes into its own copy. Other outputs a
// command may ask for (split DWARF, remarks) are dropped: nothing measures
// them.
class CapturedFile final : public llvm::RTTIExtends<CapturedFile, llvm::vfs::OutputFileImpl> {
public:
  static char ID;
  explicit CapturedFile(std::string* target) : target_(target), stream_(buffer_) {}
  llvm::Error keep() override {
    if (target_)
      target_->assign(buffer_.begin(), buffer_.end());
    return llvm::Error::success();
  }
  llvm::Error discard() override { return llvm::Error::success(); }
  llvm::raw_pwrite_stream& getOS() override { return stream_; }

private:
  std::string* target_;
  llvm::SmallVector<char, 0> buffer_;
  llvm::raw_svector_ostream stream_;
};
char CapturedFile::ID = 0;

class CapturedObject final : public llvm::vfs::OutputBackend {
public:
  CapturedObject(std::string path, std::string& bytes) : path_(std::move(path)), bytes_(bytes) {}

private:
  llvm::IntrusiveRefCntPtr<llvm::vfs::OutputBackend> cloneImpl() const override {
    return llvm::makeIntrusiveRefCnt<CapturedObject>(path_, bytes_);
  }
  llvm::Expected<std::unique_ptr<llvm::vfs::OutputFileImpl>>
  createFileImpl(llvm::StringRef path, std::optional<llvm::vfs::OutputConfig>) override {
    return std::make_unique<CapturedFile>(path == path_ ? &bytes_ : nullptr);
  }
  std::string path_;
  std::string& bytes_;
};

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
    llvm::InitializeAllDisassemblers(); // code reuse reads generated code (CodeReuse.cpp)
    return true;
  }();
  (void)done;
}

Expected<std::shared_ptr<clang::CompilerInvocation>>
parseInvocation(const std::vector<std::string>& command, std::string& object,
                std::string& diagnostics, protocol::WorkerStatus* status) {
  auto fail = [&](protocol::WorkerStatus why, std::string message) {
    if (status)
      *status = why;
    return makeError(std::move(message));
  };
  if (command.empty() || command.front() != "-cc1")
    return fail(protocol::WorkerStatus::SetupFailed, "the command does not start with -cc1");
  std::optional<std::string> output = outputOf(command);
  if (!output)
    return fail(protocol::WorkerStatus::SetupFailed, "the command has no -o");
  object = *output;

  std::vector<const char*> arguments;
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    // -mllvm options are process-global in LLVM; applying them per job would
    // leak into every later compilation of this worker.
    if (a == "-mllvm")
      return fail(protocol::WorkerStatus::Unsupported,
                  "the command passes -mllvm " +
                      (i + 1 < command.size() ? command[i + 1] : std::string()) +
                      ", which a worker cannot apply to one compilation");
    // -disable-free makes clang skip freeing its state at exit; in a
    // long-lived worker that leaks every compilation's memory.
    if (a == "-disable-free")
      continue;
    arguments.push_back(a.c_str());
  }

  llvm::raw_string_ostream diagnosticStream(diagnostics);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  clang::DiagnosticOptions options;
  clang::TextDiagnosticPrinter printer(diagnosticStream, options);
  clang::DiagnosticsEngine engine(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), options,
                                  &printer, /*ShouldOwnClient=*/false);
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, arguments, engine, "clang"))
    return fail(protocol::WorkerStatus::CompilerFailed, "cc1 rejected the command line");
  return invocation;
}

Expected<std::unique_ptr<llvm::Module>>
optimiseModule(const std::shared_ptr<clang::CompilerInvocation>& invocation,
               llvm::LLVMContext& context, std::string& diagnostics) {
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  clang::CompilerInstance compiler(invocation);
  compiler.createVirtualFileSystem();
  compiler.createDiagnostics(
      new clang::TextDiagnosticPrinter(diagnosticStream, compiler.getDiagnosticOpts()),
      /*ShouldOwnClient=*/true);
  clang::EmitLLVMOnlyAction optimise(&context);
  if (!compiler.ExecuteAction(optimise))
    return makeError("compiler reported errors");
  std::unique_ptr<llvm::Module> module = optimise.takeModule();
  if (!module)
    return makeError("clang kept no module");
  return module;
}

namespace {

// The code-reuse cache's key of the job's module: its cc1 command without
// the output path (the input's path is in it).
std::string reuseKey(const protocol::JobMessage& job) {
  std::string key;
  for (size_t i = 0; i < job.arguments.size(); ++i) {
    if (job.arguments[i] == "-o") {
      ++i;
      continue;
    }
    key += job.arguments[i];
    key += '\0';
  }
  return key;
}

// Code generation for the optimised `module` with the worker's code reuse
// (CodeReuse.h): the object into `object`, the counts into `result`; false
// when a placeholder came out unlike its function (compile again in full).
Expected<bool> generateReusing(llvm::Module& module, const clang::CompilerInvocation& invocation,
                               const protocol::JobMessage& job, TrialForker* trials,
                               std::string& object, protocol::ResultMessage& result) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  CodeReuse::setBudget(job.reuseBytes);
  CodeReuse reuse(reuseKey(job));
  reuse.prepare(module);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  CodeGenerationHooks hooks;
  hooks.beforeEmission = [&](llvm::legacy::PassManager& passes) { reuse.recordPass(passes); };
  const Clock::time_point prepared = Clock::now();
  MLGO_TRY(generateObject(module, invocation, out, hooks));
  object.assign(buffer.begin(), buffer.end());
  const Clock::time_point generated = Clock::now();
  bool exact = reuse.learn(object);
  // A test hook: MLGO_WORKER_FAULT=reuse-mismatch takes every compile that
  // reused code for one whose placeholders came out wrong.
  if (workerFault("reuse-mismatch") && reuse.counts().reused > 0)
    exact = false;
  result.times.codeGeneration = std::chrono::duration<double>(generated - prepared).count();
  result.times.codeReuse =
      std::chrono::duration<double>(prepared - started + (Clock::now() - generated)).count();
  if (trials && trials->isChild())
    trials->setLearned(reuse.learned());
  result.reuse.reused = reuse.counts().reused;
  result.reuse.generated = reuse.counts().generated;
  return exact;
}

// The job's shared state for the advisor and the pass callbacks, and the
// callbacks that find it (the advisor factory LLVM calls is a plain
// function pointer).
void prepare(ActiveJob& active, clang::CompilerInvocation& invocation,
             const protocol::JobMessage& job, const policies::Policy* policy,
             const CacheQuestion& askCache, TrialForker* trials) {
  active.job = &job;
  active.askCache = &askCache;
  active.trials = trials;
  active.advisor.policy = policy;
  active.advisor.mode = job.mode;
  active.advisor.rng = RandomStream(job.rngKey);
  active.advisor.defaultDecisionFeature = job.defaultDecisionFeature;
  active.advisor.recordTrajectory = job.recordTrajectory;
  active.advisor.recordDefaults = job.recordDefaults;
  if (trials)
    active.advisor.invert = [trials](uint64_t decision, const std::vector<double>& inputs) {
      return trials->beforeDecision(decision, inputs);
    };
  invocation.getCodeGenOpts().PassBuilderCallbacks.push_back([](llvm::PassBuilder& builder) {
    builder.registerAnalysisRegistrationCallback([](llvm::ModuleAnalysisManager& analyses) {
      analyses.registerPass([] { return llvm::PluginInlineAdvisorAnalysis(&createAdvisor); });
      if (activeJob)
        activeJob->moduleAnalyses = &analyses;
    });
    if (llvm::PassInstrumentationCallbacks* callbacks = builder.getPassInstrumentationCallbacks()) {
      callbacks->registerBeforeNonSkippedPassCallback(beforePass);
      callbacks->registerAfterPassCallback(afterPass);
    }
  });
}

// The compile's phases (evaluators::CompileTimes) from its timestamps:
// `optimised` is the optimisation pipeline's end (for the compile that
// generates code with clang's own action, the last pass's end), `compiled`
// the end of code generation. Code reuse's compiles time their code
// generation themselves (generateReusing).
void recordTimes(const ActiveJob& active, ActiveJob::Time optimised, ActiveJob::Time compiled,
                 bool reused, evaluators::CompileTimes& times) {
  using Seconds = std::chrono::duration<double>;
  const ActiveJob::Time inlinerStart = active.inlinerStarted.value_or(active.started);
  const ActiveJob::Time inlinerEnd = active.inlinerEnded.value_or(inlinerStart);
  // Children the worker waited for ran before this compile's decision (a
  // trial's) or inside its inliner (a base's): neither is this compile's.
  const double waited = active.trials ? active.trials->secondsWaited() : 0;
  // (A trial compiled again in full after its code reuse failed is timed as
  // a full compile.)
  if (active.trials && active.trials->isTrial() &&
      active.trials->decisionReached() >= active.started) {
    const ActiveJob::Time decision = active.trials->decisionReached();
    times.shared = Seconds(decision - active.started).count() - waited;
    times.inliner = Seconds(inlinerEnd - decision).count();
  } else {
    times.beforeInliner = Seconds(inlinerStart - active.started).count();
    times.inliner = Seconds(inlinerEnd - inlinerStart).count() - waited;
  }
  times.afterInliner = Seconds(optimised - inlinerEnd).count();
  if (!reused)
    times.codeGeneration = Seconds(compiled - optimised).count();
}

// One compile of the job's module under `policy` (null: the plain compile),
// `trials` forking a trial job's children on the way.
protocol::ResultMessage compileOnce(const protocol::JobMessage& job, const policies::Policy* policy,
                                    const CacheQuestion& askCache, TrialForker* trials) {
  const ActiveJob::Time started = std::chrono::steady_clock::now();
  protocol::ResultMessage result;
  auto fail = [&](protocol::WorkerStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    return std::move(result);
  };
  std::string object;
  protocol::WorkerStatus status = protocol::WorkerStatus::Ok;
  Expected<std::shared_ptr<clang::CompilerInvocation>> parsed =
      parseInvocation(job.arguments, object, result.diagnostics, &status);
  if (!parsed)
    return fail(status, parsed.error().message);
  std::shared_ptr<clang::CompilerInvocation> invocation = parsed.take();
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);

  ActiveJob active;
  active.started = active.lastPassEnded = started;
  prepare(active, *invocation, job, policy, askCache, trials);
  std::optional<ActiveJob::Time> optimised;

  bool compiled = false;
  std::string objectBytes;
  bool reuseFailed = false;
  {
    clang::CompilerInstance compiler(invocation);
    compiler.createVirtualFileSystem();
    compiler.createDiagnostics(
        new clang::TextDiagnosticPrinter(diagnosticStream, compiler.getDiagnosticOpts()),
        /*ShouldOwnClient=*/true);
    compiler.setOutputManager(llvm::makeIntrusiveRefCnt<CapturedObject>(object, objectBytes));
    llvm::LLVMContext context;
    activeJob = &active;
    if (!job.reuseCode) {
      clang::EmitObjAction action(&context);
      compiled = compiler.ExecuteAction(action);
    } else {
      // clang's optimisation pipeline, then code generation for the
      // functions this worker has not generated before (CodeReuse.h).
      clang::EmitLLVMOnlyAction optimise(&context);
      compiled = compiler.ExecuteAction(optimise);
      optimised = std::chrono::steady_clock::now();
      std::unique_ptr<llvm::Module> module = optimise.takeModule();
      if (compiled && module && !active.cacheHit && !active.hollowBase) {
        Expected<bool> generated =
            generateReusing(*module, *invocation, job, trials, objectBytes, result);
        if (!generated) {
          activeJob = nullptr;
          return fail(protocol::WorkerStatus::CompilerFailed, generated.error().message);
        }
        reuseFailed = !*generated;
      }
    }
    activeJob = nullptr;
  }
  if (reuseFailed) {
    // A placeholder did not sit where its function would: compile in full.
    protocol::JobMessage whole = job;
    whole.reuseCode = false;
    protocol::ResultMessage again = compileOnce(whole, policy, askCache, trials);
    again.reuse.retried = 1;
    return again;
  }
  result.diagnostics = diagnostics;
  result.decisions = active.advisor.decisions;
  result.trajectory = std::move(active.advisor.trajectory);
  result.decisionsAfterQuery = active.advisor.decisionsAfterInlinerDone;
  if (active.advisor.mismatch)
    return fail(protocol::WorkerStatus::PolicyMismatch, *active.advisor.mismatch);
  if (!compiled)
    return fail(protocol::WorkerStatus::CompilerFailed, "compiler reported errors");
  if (active.cacheHit || active.hollowBase) {
    result.cacheHit = active.cacheHit;
    result.status = protocol::WorkerStatus::Ok;
    return result;
  }
  Expected<evaluators::CodeMeasure> code =
      evaluators::measureCodeBytes(objectBytes, job.sizeSections);
  if (!code)
    return fail(protocol::WorkerStatus::BadObject, code.error().message);
  result.sizeBytes = code->bytes;
  result.codeHash = code->hash;
  result.comdat = std::move(code->comdat);
  result.status = protocol::WorkerStatus::Ok;
  recordTimes(active, optimised.value_or(active.lastPassEnded), std::chrono::steady_clock::now(),
              optimised.has_value(), result.times);
  return result;
}

// A trial job (JobMessage::trials): the base compile forks each trial; the
// answer carries one result per trial.
protocol::ResultMessage compileTrials(const protocol::JobMessage& job,
                                      const policies::Policy* policy) {
  protocol::ResultMessage answer;
  answer.status = protocol::WorkerStatus::Ok;
  const auto* flips = dynamic_cast<const policies::FlipSetPolicy*>(policy);
  if (!flips) {
    for (size_t i = 0; i < job.trials.size(); ++i) {
      protocol::ResultMessage& trial = answer.trials.emplace_back();
      trial.status = protocol::WorkerStatus::NotIncremental;
      trial.message = "policy is not a flip set";
    }
    return answer;
  }
  std::function<void(std::string_view)> absorb;
  if (job.reuseCode)
    absorb = [key = reuseKey(job)](std::string_view learned) { CodeReuse::absorb(key, learned); };
  TrialForker trials(job, *flips, std::move(absorb));
  protocol::ResultMessage own = compileOnce(job, policy, CacheQuestion(), &trials);
  if (trials.isChild())
    trials.finishChild(own);
  if (!trials.isTrial() && own.status != protocol::WorkerStatus::Ok) {
    // The base itself failed: so would every trial's prefix.
    own.trials = trials.results(std::nullopt);
    for (protocol::ResultMessage& trial : own.trials)
      if (trial.status == protocol::WorkerStatus::NotIncremental)
        trial.message = "base compile failed";
    own.trajectory.reset();
    return own;
  }
  answer.trials = trials.results(trials.isTrial() ? std::optional(std::move(own)) : std::nullopt);
  return answer;
}

} // namespace

protocol::ResultMessage compileModule(const protocol::JobMessage& job,
                                      const policies::Policy* policy,
                                      const CacheQuestion& askCache) {
  if (!job.trials.empty())
    return compileTrials(job, policy);
  return compileOnce(job, policy, askCache, nullptr);
}

} // namespace mlgo::inprocess
