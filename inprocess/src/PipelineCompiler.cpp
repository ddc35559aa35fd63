#include "PipelineCompiler.h"

#include "CodeGeneration.h"
#include "InProcessCompiler.h"
#include "PipelineHooks.h"
#include "PolicyAdvisor.h"

#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/policies/PassPipeline.h"

#include <clang/Frontend/CompilerInvocation.h>
#include <llvm/Analysis/InlineAdvisor.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>

namespace mlgo::inprocess {

namespace protocol = evaluators::protocol;

namespace {

// The pipeline policy's inliner policy, for the advisor factory LLVM calls
// (a plain function pointer): this thread's compile.
struct InlinerSession {
  AdvisorSession advisor;
  llvm::ModuleAnalysisManager* moduleAnalyses = nullptr;
  const PipelineRun* run = nullptr; // its choice may give this module LLVM's heuristic
};
thread_local InlinerSession* activeInliner = nullptr;

llvm::InlineAdvisor* createAdvisor(llvm::Module& module, llvm::FunctionAnalysisManager& functions,
                                   llvm::InlineParams params, llvm::InlineContext context) {
  InlinerSession* session = activeInliner;
  if (!session || !session->moduleAnalyses || !session->run->inlinerPolicyDecides())
    return new llvm::DefaultInlineAdvisor(module, functions, params, context);
  return createPolicyAdvisor(module, *session->moduleAnalyses, params, session->advisor);
}

uint64_t instructionCount(const llvm::Module& module) {
  uint64_t count = 0;
  for (const llvm::Function& function : module)
    count += function.getInstructionCount();
  return count;
}

} // namespace

protocol::ResultMessage compilePipeline(const protocol::JobMessage& job,
                                        const policies::Policy* policy, PipelineReport* report) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  initialiseTargets();
  protocol::ResultMessage result;
  auto fail = [&](protocol::WorkerStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    return std::move(result);
  };
  static const policies::PipelinePolicy minusOz{policies::PassPipeline{}};
  const policies::PipelinePolicy* pipelinePolicy = &minusOz;
  if (policy) {
    pipelinePolicy = dynamic_cast<const policies::PipelinePolicy*>(policy);
    if (!pipelinePolicy)
      return fail(protocol::WorkerStatus::PolicyMismatch,
                  "the " + job.taskName +
                      " task needs a pipeline policy (kind \"pipeline\"), not " +
                      policy->describe());
  }
  if (Status texts = checkPolicyTexts(*pipelinePolicy); !texts)
    return fail(protocol::WorkerStatus::SetupFailed, texts.error().message);

  std::string object;
  protocol::WorkerStatus status = protocol::WorkerStatus::Ok;
  Expected<std::shared_ptr<clang::CompilerInvocation>> parsed =
      parseInvocation(job.arguments, object, result.diagnostics, &status);
  if (!parsed)
    return fail(status, parsed.error().message);
  std::shared_ptr<clang::CompilerInvocation> invocation = parsed.take();

  PipelineRun run(*pipelinePolicy);
  invocation->getCodeGenOpts().PassBuilderCallbacks.push_back(
      [&run](llvm::PassBuilder& builder) { applyPipeline(builder, run); });
  // The inliner policy it carries, as the inlining task's worker runs it.
  InlinerSession inliner;
  inliner.run = &run;
  const policies::Policy* inlinerPolicy = pipelinePolicy->inliner().get();
  if (inlinerPolicy) {
    inliner.advisor.policy = inlinerPolicy;
    static const std::string defaultFeature =
        evaluators::CompilerTask::inliningForSize().defaultDecisionFeature;
    inliner.advisor.defaultDecisionFeature = defaultFeature;
    invocation->getCodeGenOpts().PassBuilderCallbacks.push_back(
        [&inliner](llvm::PassBuilder& builder) {
          builder.registerAnalysisRegistrationCallback([&inliner](
                                                           llvm::ModuleAnalysisManager& analyses) {
            analyses.registerPass([] { return llvm::PluginInlineAdvisorAnalysis(&createAdvisor); });
            inliner.moduleAnalyses = &analyses;
          });
        });
  }

  llvm::LLVMContext context;
  // clang's optimisation pipeline (with the job's changes), no code generation.
  activeInliner = inlinerPolicy ? &inliner : nullptr;
  Expected<std::unique_ptr<llvm::Module>> optimised =
      optimiseModule(invocation, context, result.diagnostics);
  activeInliner = nullptr;
  result.decisions = inliner.advisor.decisions;
  if (inliner.advisor.mismatch)
    return fail(protocol::WorkerStatus::PolicyMismatch,
                "the pipeline policy's inliner: " + *inliner.advisor.mismatch);
  if (report) {
    report->declined = run.declined;
    report->declinedAfterReplacement = run.declinedAfterReplacement;
    report->declinedUnchosen = run.declinedUnchosen;
    report->chosen = run.choiceMade ? std::optional(run.chosen) : std::nullopt;
    report->counted = run.counted;
    report->features = run.features;
  }
  if (!optimised)
    return fail(protocol::WorkerStatus::CompilerFailed, optimised.error().message);
  std::unique_ptr<llvm::Module> module = optimised.take();
  const Clock::time_point afterOptimisation = Clock::now();
  const uint64_t instructions = instructionCount(*module);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  if (Status generated = generateObject(*module, *invocation, out); !generated)
    return fail(protocol::WorkerStatus::CompilerFailed, generated.error().message);
  Expected<evaluators::CodeMeasure> code = evaluators::measureCodeBytes(
      std::string_view(buffer.data(), buffer.size()), job.sizeSections);
  if (!code)
    return fail(protocol::WorkerStatus::BadObject, code.error().message);
  result.sizeBytes = code->bytes;
  result.codeHash = code->hash;
  result.comdat = std::move(code->comdat);
  result.measured = static_cast<double>(instructions);
  result.status = protocol::WorkerStatus::Ok;
  using Seconds = std::chrono::duration<double>;
  result.times.afterInliner = Seconds(afterOptimisation - started).count();
  result.times.codeGeneration = Seconds(Clock::now() - afterOptimisation).count();
  return result;
}

} // namespace mlgo::inprocess
