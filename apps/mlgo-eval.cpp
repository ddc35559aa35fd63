// mlgo-eval: compile a corpus under a policy with clang-22 and compare the
// code size with plain -Oz; record trajectories; build vocabularies.
#include "TomlConfig.h"
#include "WriteLimits.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/Sampler.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/evaluators/Ir2VecTriplets.h"
#include "mlgo/policies/CalleeConsistent.h"
#include "mlgo/policies/Ensemble.h"
#include "mlgo/policies/Ir2VecVocabulary.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/ModuleFeatures.h"
#include "mlgo/policies/PassPipeline.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/policies/PolicyLocation.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/support/Files.h"
#include "mlgo/training/CodeBaseReport.h"
#include "mlgo/training/DecisionSearch.h"
#include "mlgo/training/PipelineChoice.h"
#include "mlgo/training/PipelineEs.h"
#include "mlgo/training/PipelineSearch.h"
#include "mlgo/training/TraceRecording.h"

#include "CommonOptions.h"
#include "RunCostCommand.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace mlgo;

namespace {

int fail(const Error& error) {
  std::cerr << "mlgo-eval: error: " << error.message << "\n";
  return 1;
}

struct RunArgs {
  std::string policy;
  std::string corpus;
  std::string trace;
  std::string mode = "deterministic";
  uint64_t seed = 0;
  size_t sample = 0;
  bool perModule = true;
  apps::EvaluatorArgs evaluator;
};

// A policy file, or a built-in policy of the task given by the flags:
// "heuristic" echoes the compiler's own decision, "neutral" answers the
// task's always-valid advice; "always"/"never" are the inliner's.
Expected<std::unique_ptr<policies::Policy>> policyByName(const std::string& spec,
                                                         const apps::EvaluatorArgs& flags) {
  Expected<evaluators::CompilerTask> task = flags.toTask();
  if (!task)
    return task.error();
  if (spec == "heuristic") {
    if (task->defaultDecisionFeature.empty())
      return makeError("policy heuristic: the task " + task->name +
                       " has no decision of the compiler's own to echo");
    return policies::makeHeuristicEchoPolicy(task->defaultDecisionFeature);
  }
  if (spec == "neutral")
    return task->neutralPolicy();
  if ((spec == "always" || spec == "never") && task->actions != 2)
    return makeError("policy " + spec + ": a yes-or-no policy (as the inliner's), but the task " +
                     task->name + " picks one of each decision's candidates");
  if (spec == "always")
    return policies::makeConstantPolicy(1);
  if (spec == "never")
    return policies::makeConstantPolicy(0);
  Expected<fs::path> file = policies::policyFileFor(spec);
  if (!file)
    return makeError("policy " + spec + ": " + file.error().message);
  return policies::loadPolicy(*file);
}

// An evaluator of the task given by the command's evaluator flags.
// `comdat`: it keeps the objects' COMDAT groups (EvaluatorOptions::comdat),
// with replay, the decision cache and incremental evaluation off.
Expected<std::unique_ptr<evaluators::Evaluator>> taskEvaluator(const apps::EvaluatorArgs& flags,
                                                               bool comdat = false) {
  Expected<evaluators::EvaluatorOptions> options = flags.toOptions();
  if (!options)
    return options.error();
  if (comdat) {
    options->comdat = true;
    options->replay = options->decisionCache = options->incremental = false;
  }
  Expected<evaluators::CompilerTask> task = flags.toTask();
  if (!task)
    return task.error();
  return evaluators::Evaluator::create(*options, task.take());
}

// A corpus for the task given by the flags: loaded (its modules checked),
// with a warning when it was built at another -O level than the task's.
Expected<corpus::Corpus> loadCorpusFor(const fs::path& directory,
                                       const apps::EvaluatorArgs& flags) {
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(directory);
  if (!corpus)
    return corpus;
  if (Expected<evaluators::CompilerTask> task = flags.toTask())
    if (std::optional<std::string> warning = evaluators::optimisationLevelWarning(*corpus, *task))
      std::fprintf(stderr, "mlgo-eval: warning: %s\n", warning->c_str());
  return corpus;
}

// Every module, or `sample` of them (bucket round robin, seeded); 0: all.
std::vector<const corpus::ModuleSpec*> chooseModules(const corpus::Corpus& corpus, size_t sample,
                                                     uint64_t seed) {
  std::vector<const corpus::ModuleSpec*> modules;
  if (sample > 0 && sample < corpus.size()) {
    std::vector<uint64_t> sizes;
    for (const corpus::ModuleSpec& m : corpus.modules())
      sizes.push_back(m.bitcodeBytes);
    corpus::ModuleSampler sampler(corpus::SamplingStrategy::BucketRoundRobin, sizes, seed);
    for (size_t index : sampler.sample(0, sample))
      modules.push_back(&corpus.modules()[index]);
  } else {
    for (const corpus::ModuleSpec& m : corpus.modules())
      modules.push_back(&m);
  }
  return modules;
}

// Percent change of `value` against `base` (0 for a module without code).
double percentChange(double value, double base) {
  return base ? 100.0 * (value / base - 1) : 0.0;
}

void printModules(const evaluators::EvaluationResult& result,
                  const std::vector<const corpus::ModuleSpec*>& modules,
                  const std::string& baselineName) {
  // Every job has a size; a measure that is not the size gets columns of its own.
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(result.measure);
  const bool scored = !measure.valueIsSize();
  const std::string column(measure.column);
  std::printf("%-40s %-20s %9s %10s %10s %8s", "module", "status", "decisions", "size",
              baselineName.c_str(), "delta");
  if (scored)
    std::printf(" %12s %12s %8s", column.c_str(), (baselineName + " " + column).c_str(), "delta");
  std::printf("\n");
  for (size_t m = 0; m < modules.size(); ++m) {
    const evaluators::JobResult& job = result.job(0, m);
    if (!job.ok()) {
      std::printf("%-40s %-20s %s\n", modules[m]->name.c_str(),
                  std::string(evaluators::jobStatusName(job.status)).c_str(), job.message.c_str());
      continue;
    }
    const uint64_t base = *result.baselineBytes[m];
    std::printf("%-40s %-20s %9llu %10llu %10llu %+7.2f%%", modules[m]->name.c_str(), "ok",
                static_cast<unsigned long long>(job.decisions),
                static_cast<unsigned long long>(job.sizeBytes),
                static_cast<unsigned long long>(base),
                percentChange(static_cast<double>(job.sizeBytes), static_cast<double>(base)));
    if (scored) {
      const double score = result.measured(job), baseScore = *result.baselineMeasure(m);
      std::printf(" %12.2f %12.2f %+7.2f%%", score, baseScore, percentChange(score, baseScore));
    }
    std::printf("\n");
  }
}

// The totals line and where the compilations ran.
void printTotals(const evaluators::EvaluationResult& result, evaluators::Evaluator& evaluator,
                 uint64_t decisions) {
  evaluators::CandidateScore score = result.score(0);
  const std::string& baselineName = evaluator.task().baselineName;
  std::printf("\ntotal: %zu ok, %zu failed, %llu decisions; .text %llu bytes vs %s %llu (%+.3f%%)",
              score.okModules, score.failedModules, static_cast<unsigned long long>(decisions),
              static_cast<unsigned long long>(score.totalBytes), baselineName.c_str(),
              static_cast<unsigned long long>(score.totalBaselineBytes),
              percentChange(static_cast<double>(score.totalBytes),
                            static_cast<double>(score.totalBaselineBytes)));
  if (const evaluators::MeasureTraits& measure = evaluators::traitsOf(result.measure);
      !measure.valueIsSize())
    std::printf("; %s %.2f vs %s %.2f (%+.3f%%)", std::string(measure.name).c_str(),
                score.totalMeasure, baselineName.c_str(), score.totalBaselineMeasure,
                percentChange(score.totalMeasure, score.totalBaselineMeasure));
  std::printf("; mean reward %.5f; %.1f s\n", score.meanReward, result.seconds);
  evaluators::EvaluatorStatistics stats = evaluator.statistics();
  std::printf("backend: %s; %zu in-process compilations (%zu workers started), %zu by clang "
              "processes (%zu of them fallbacks)\n",
              std::string(evaluators::backendKindName(evaluator.options().backend)).c_str(),
              stats.inprocessJobs, stats.workersStarted, stats.clangJobs, stats.fallbackJobs);
}

int runEvaluate(const RunArgs& args) {
  Expected<corpus::Corpus> corpus = loadCorpusFor(args.corpus, args.evaluator);
  if (!corpus)
    return fail(corpus.error());
  Expected<std::unique_ptr<policies::Policy>> policy = policyByName(args.policy, args.evaluator);
  if (!policy)
    return fail(policy.error());
  policies::DecisionMode mode;
  if (args.mode == "deterministic")
    mode = policies::DecisionMode::Deterministic;
  else if (args.mode == "sampling")
    mode = policies::DecisionMode::Sampling;
  else
    return fail(makeError("--mode: expected deterministic or sampling, got \"" + args.mode + "\""));

  std::vector<const corpus::ModuleSpec*> modules = chooseModules(*corpus, args.sample, args.seed);

  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator = taskEvaluator(args.evaluator);
  if (!evaluator)
    return fail(evaluator.error());

  std::fprintf(stderr, "policy %s on %zu modules of %s with %zu workers\n",
               (*policy)->describe().c_str(), modules.size(), args.corpus.c_str(),
               (*evaluator)->options().workers);
  evaluators::EvaluationRequest request;
  request.candidates = {policy->get()};
  request.modules = modules;
  request.mode = mode;
  request.seed = args.seed;
  request.recordTrajectories = !args.trace.empty();
  request.showProgress = true;
  evaluators::EvaluationResult result = (*evaluator)->evaluate(request);

  if (args.perModule)
    printModules(result, modules, (*evaluator)->task().baselineName);
  uint64_t decisions = 0;
  for (const evaluators::JobResult& job : result.jobs)
    decisions += job.decisions;
  printTotals(result, **evaluator, decisions);

  if (!args.trace.empty()) {
    results::TraceAttributes attributes{{"policy", (*policy)->describe()},
                                        {"corpus", args.corpus},
                                        {"compiler", (*evaluator)->compilerIdentity()}};
    attributes.merge(training::taskAttributes((*evaluator)->task()));
    Status written = training::writeTrace(args.trace, result, 0, modules, attributes);
    if (!written)
      return fail(written.error());
    std::printf("trace: %s (%llu decisions)\n", args.trace.c_str(),
                static_cast<unsigned long long>(decisions));
  }
  return result.score(0).failedModules == 0 ? 0 : 2;
}

struct ReportArgs {
  std::string policy;
  std::vector<std::string> codeBases;
  std::string split;
  std::string set = "test";
  std::string corporaDir;
  size_t regressions = 5;
  std::string markdown;
  std::string values; // the report's values, for mlgo-eval choose
  bool bestOf = false;
  bool bestOfSet = false; // a pipeline choice: the smallest of its alternatives per module
  bool linked = false;    // each COMDAT group counted once (training::countComdatOnce)
  apps::EvaluatorArgs evaluator;

  // $MLGO_BUILD_DIR/corpora, else build/corpora (where the recipes put them).
  std::filesystem::path corpora() const {
    if (!corporaDir.empty())
      return corporaDir;
    const char* buildDir = std::getenv("MLGO_BUILD_DIR");
    return fs::path(buildDir && *buildDir ? buildDir : "build") / "corpora";
  }
};

// The code bases to judge on: those named, else the split's set.
Expected<std::vector<std::string>> reportCodeBases(const ReportArgs& args) {
  if (!args.codeBases.empty())
    return args.codeBases;
  if (args.split.empty())
    return makeError("report: name code bases or give --split FILE");
  Expected<training::CodeBaseSplit> split = training::CodeBaseSplit::read(args.split);
  if (!split)
    return split.error();
  return split->set(args.set);
}

// The recipe that builds a code base: NAME, or NAME-O2 for its -O2 flavour.
std::string recipeCommand(const std::string& codeBase) {
  const size_t dash = codeBase.rfind("-O");
  if (dash != std::string::npos && dash + 3 == codeBase.size())
    return "corpus/recipes/" + codeBase.substr(0, dash) + ".sh --opt-level " +
           codeBase.substr(dash + 1);
  return "corpus/recipes/" + codeBase + ".sh";
}

// report --measure run-cost: the code bases are benchmark programs, judged
// by run-cost (RunCostCommand.h) with the report's policy, split and task.
int runRunCostReport(const ReportArgs& args) {
  mlgo::apps::RunCostArgs runCost;
  runCost.policy = args.policy;
  runCost.programs = args.codeBases;
  runCost.split = args.split;
  runCost.set = args.set;
  if (!args.evaluator.task.empty())
    runCost.task = args.evaluator.task;
  runCost.markdown = args.markdown;
  return mlgo::apps::runRunCost(runCost);
}

// --linked: the objects a build keeps of each module (the policy's, or the
// best of it and the others compiled beside it), each COMDAT group counted
// once in module order as a linker keeps it; on stderr the same totals per
// object beside it.
Expected<training::CodeBaseReport>
linkedReport(const std::string& codeBase, const evaluators::EvaluationResult& result,
             std::span<const corpus::ModuleSpec* const> modules, const ReportArgs& args,
             std::span<const size_t> alternatives, const std::string& baselineName) {
  evaluators::EvaluationResult kept = training::keptObjects(result, 0, args.bestOf, alternatives);
  uint64_t baselineObjects = 0, keptObjects = 0;
  for (size_t m = 0; m < kept.moduleCount; ++m)
    if (kept.baselineBytes[m] && kept.job(0, m).ok()) {
      baselineObjects += *kept.baselineBytes[m];
      keptObjects += kept.job(0, m).sizeBytes;
    }
  if (Status counted = training::countComdatOnce(kept, modules); !counted)
    return makeError("code base " + codeBase + ": " + counted.error().message);
  training::CodeBaseReport report =
      training::summariseCodeBase(codeBase, kept, 0, modules, args.regressions, baselineName);
  if (args.bestOf || !alternatives.empty())
    report.policyAlone =
        training::summariseCodeBase(codeBase, kept, 1, modules, 0, baselineName).policy;
  report.comdatOnce = true;
  std::fprintf(stderr,
               "%s: per object %" PRIu64 " -> %" PRIu64 "; COMDAT groups once %.0f -> %.0f\n",
               codeBase.c_str(), baselineObjects, keptObjects, report.baseline, report.policy);
  return report;
}

int runReport(const ReportArgs& args) {
  if (args.evaluator.measure == "run-cost")
    return runRunCostReport(args);
  Expected<std::vector<std::string>> codeBases = reportCodeBases(args);
  if (!codeBases)
    return fail(codeBases.error());
  Expected<std::unique_ptr<policies::Policy>> policy = policyByName(args.policy, args.evaluator);
  if (!policy)
    return fail(policy.error());
  std::vector<corpus::Corpus> corpora;
  for (const std::string& name : *codeBases) {
    fs::path dir = training::codeBaseCorpus(name, args.corpora());
    Expected<corpus::Corpus> corpus = loadCorpusFor(dir, args.evaluator);
    if (!corpus)
      return fail(makeError("code base " + name + ": " + corpus.error().message +
                            (name.find('/') == std::string::npos
                                 ? " (build it with " + recipeCommand(name) + ")"
                                 : "")));
    corpora.push_back(corpus.take());
  }
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      taskEvaluator(args.evaluator, args.linked);
  if (!evaluator)
    return fail(evaluator.error());

  // --best-of-set: the choice's every alternative compiled beside it.
  std::vector<std::shared_ptr<const policies::PipelinePolicy>> alternatives;
  if (args.bestOfSet) {
    const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(policy->get());
    if (!pipeline || !pipeline->choice())
      return fail(makeError("--best-of-set: " + args.policy +
                            " is not a pipeline policy with a choice (--task pass-pipeline)"));
    alternatives = policies::forcedAlternatives(*pipeline);
  }
  std::vector<size_t> alternativeIndices;
  for (size_t a = 0; a < alternatives.size(); ++a)
    alternativeIndices.push_back(a + 1);
  std::vector<training::CodeBaseReport> reports;
  for (size_t i = 0; i < corpora.size(); ++i) {
    std::vector<const corpus::ModuleSpec*> modules = chooseModules(corpora[i], 0, 0);
    std::fprintf(stderr, "%s: %zu modules\n", (*codeBases)[i].c_str(), modules.size());
    evaluators::EvaluationRequest request;
    request.candidates = {policy->get()};
    for (const auto& alternative : alternatives)
      request.candidates.push_back(alternative.get());
    request.modules = modules;
    request.showProgress = true;
    evaluators::EvaluationResult result = (*evaluator)->evaluate(request);
    const std::string& baselineName = (*evaluator)->task().baselineName;
    if (!args.linked) {
      reports.push_back(training::summariseCodeBase((*codeBases)[i], result, 0, modules,
                                                    args.regressions, baselineName, args.bestOf,
                                                    alternativeIndices));
      continue;
    }
    Expected<training::CodeBaseReport> linked =
        linkedReport((*codeBases)[i], result, modules, args, alternativeIndices, baselineName);
    if (!linked)
      return fail(linked.error());
    reports.push_back(linked.take());
  }
  const evaluators::CompilerTask& task = (*evaluator)->task();
  std::string text = training::formatReportMarkdown(
      reports, "Policy " + args.policy + " (" + (*policy)->describe() + ")" +
                   (args.bestOf ? ", best of it and " + task.baselineName + " per module," : "") +
                   (args.bestOfSet ? ", best of its set's alternatives per module," : "") +
                   " against " + task.baselineName + ", " +
                   std::string(evaluators::measureName(task.measure)) +
                   (args.linked ? ", each COMDAT group counted once (what a linker keeps)" : ""));
  std::cout << text;
  if (!args.markdown.empty()) {
    std::ofstream out(args.markdown);
    out << text;
    if (!out.flush())
      return fail(makeError(args.markdown + ": could not write the report"));
  }
  if (!args.values.empty())
    if (Status written = training::writeReportValues(reports, args.values); !written)
      return fail(written.error());
  int status = 0;
  for (const training::CodeBaseReport& r : reports) {
    if (r.failed)
      status = 2;
    if (r.policy > r.baseline)
      std::cerr << "mlgo-eval: warning: " << r.name << " is worse than " << r.baselineName << " ("
                << r.deltaPercent() << " %)\n";
  }
  return status;
}

// Percent of `value` against `base`.
const char* voteName(training::PipelineChoiceOptions::Vote vote) {
  switch (vote) {
  case training::PipelineChoiceOptions::Vote::Label:
    return "label";
  case training::PipelineChoiceOptions::Vote::Cost:
    return "cost";
  case training::PipelineChoiceOptions::Vote::CostMedian:
    return "cost-median";
  }
  return "label";
}

double percentOf(double value, double base) {
  return base > 0 ? (value / base - 1) * 100 : 0;
}

struct PipelineSearchArgs {
  ReportArgs where; // code bases, --split/--set, --corpora-dir, --markdown, --values
  std::string space = "structured";
  training::PipelineSearchOptions options;
  size_t sample = 0;
  bool listPasses = false;
  std::string set;                      // --set; default: train with --program, else test
  bool program = false;                 // one pipeline for all the code bases' modules
  size_t programRounds = 8;             // its combination rounds
  std::string output;                   // the program's pipeline policy
  std::string programSearch = "greedy"; // or "es", "choice"
  std::vector<std::string> pool;        // choice: candidate pipeline policies
  bool poolSingles = false;             // choice: every single change in the pool too
  std::string poolMeasures;             // choice: the pool's measures, read or written
  bool verifyPoolMeasures = false;      // choice: compile the pool anyway and compare
  std::string choiceEmbedding;          // choice: an IR2Vec vocabulary for the features
  std::string choiceData;               // choice: the learning data written out (TSV)
  training::PipelineChoiceOptions choice;
  training::PipelineEsOptions es;
  std::string start;   // a pipeline policy (file or name) the program search starts from
  std::string inliner; // an inliner policy (file or name) every candidate carries
  // The evaluator's and the optimiser's flags, bound together.
  std::shared_ptr<apps::SchemaFlags> flags;
};

// A program search's ending: its table to stdout (and --markdown), its
// pipeline as the policy file -o names.
int finishProgramPipeline(const PipelineSearchArgs& args, const std::string& text,
                          const policies::PassPipeline& pipeline,
                          std::shared_ptr<const policies::PipelineChoice> choice = nullptr) {
  const policies::PipelinePolicy policy(pipeline, args.options.inliner, std::move(choice));
  std::cout << text;
  if (!args.where.markdown.empty())
    if (Status written = writeFileAtomically(args.where.markdown, text); !written)
      return fail(written.error());
  if (Status saved = policies::savePolicy(policy, args.output); !saved)
    return fail(saved.error());
  std::fprintf(stderr, "pipeline policy: %s (%s)\n", args.output.c_str(),
               policy.describe().c_str());
  return 0;
}

// A policy file or name, for `flag`.
Expected<std::unique_ptr<policies::Policy>> loadPolicyFor(const std::string& flag,
                                                          const std::string& name) {
  Expected<fs::path> file = policies::policyFileFor(name);
  if (!file)
    return makeError(flag + " " + name + ": " + file.error().message);
  Expected<std::unique_ptr<policies::Policy>> policy = policies::loadPolicy(*file);
  if (!policy)
    return makeError(flag + " " + name + ": " + policy.error().message);
  return policy;
}

// --start and --inliner into the program search's options. A pipeline
// policy's own inliner comes with --start unless --inliner names one.
Status loadProgramStart(PipelineSearchArgs& args) {
  if (!args.start.empty()) {
    MLGO_ASSIGN_OR_RETURN(std::unique_ptr<policies::Policy> start,
                          loadPolicyFor("--start", args.start));
    const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(start.get());
    if (!pipeline)
      return makeError("--start " + args.start + ": not a pipeline policy");
    args.options.start = pipeline->pipeline();
    args.options.inliner = pipeline->inliner();
  }
  if (!args.inliner.empty()) {
    MLGO_ASSIGN_OR_RETURN(std::unique_ptr<policies::Policy> inliner,
                          loadPolicyFor("--inliner", args.inliner));
    if (dynamic_cast<const policies::PipelinePolicy*>(inliner.get()))
      return makeError("--inliner " + args.inliner + ": a pipeline policy, not an inliner policy");
    args.options.inliner = std::move(inliner);
  }
  return args.options.validate();
}

// --program --program-search es: the optimiser over the structured space.
int runProgramPipelineEs(PipelineSearchArgs& args,
                         std::span<const corpus::ModuleSpec* const> modules, size_t codeBases,
                         evaluators::Evaluator& evaluator) {
  args.es.start = args.options.start;
  args.es.inliner = args.options.inliner;
  args.es.seed = args.options.seed;
  args.es.regressionWeight = args.options.regressionWeight;
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(evaluator.task().measure);
  Expected<training::PipelineEsSummary> run = training::optimiseProgramPipeline(
      evaluator, modules, args.es, [&](const training::PipelineEsStep& step) {
        std::fprintf(stderr,
                     "step %lld: %zu points, %zu pipelines (%zu cached), reward mean %+.3f best "
                     "%+.3f %%; best so far %s; centre: %s\n",
                     static_cast<long long>(step.step), step.candidates, step.distinct,
                     step.cacheHits, step.meanReward, step.bestReward,
                     measure.format(step.bestObjective).c_str(), step.centre.c_str());
      });
  if (!run)
    return fail(run.error());
  const double baseline = run->baseline;
  std::string text =
      "ES over the structured space (" +
      std::string(es::optimizerKindName(es::kindOf(args.es.optimizer))) + ", seed " +
      std::to_string(args.es.seed) + ", regression weight " +
      std::to_string(args.es.regressionWeight).substr(0, 4) + ") for " +
      std::to_string(modules.size()) + " modules (" + std::to_string(codeBases) + " code bases), " +
      std::string(measure.name) + ", -Oz " + measure.format(baseline) + "\n\n" +
      "| step | points | pipelines | cached | mean reward | best reward | best objective "
      "so far |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const training::PipelineEsStep& step : run->steps) {
    char row[256];
    std::snprintf(row, sizeof row, "| %lld | %zu | %zu | %zu | %+.3f %% | %+.3f %% | %+.3f %% |\n",
                  static_cast<long long>(step.step), step.candidates, step.distinct, step.cacheHits,
                  step.meanReward, step.bestReward, percentOf(step.bestObjective, baseline));
    text += row;
  }
  char result[256];
  std::snprintf(result, sizeof result, ": total %s (%+.3f %%), %zu modules larger\n",
                measure.format(run->best.total).c_str(), percentOf(run->best.total, baseline),
                run->best.larger);
  text += "\nbest: `" + run->best.pipeline.describe() + "`" + result;
  if (run->resumedAfter > 0)
    text += "resumed after step " + std::to_string(run->resumedAfter - 1) + " of " +
            args.es.checkpoint.string() + "\n";
  text += std::to_string(run->evaluations) + " pipelines compiled (" +
          std::to_string(run->cacheHits) + " served by the cache), " +
          std::to_string(run->compiled) + " compiles, " +
          std::to_string(static_cast<long>(run->seconds)) + " s\n";
  return finishProgramPipeline(args, text, run->best.pipeline);
}

// Each module's features (moduleFeatureVector of its bitcode's counts, then
// with a vocabulary file its IR2Vec embedding), from `mlgo-inprocess-worker
// --module-features`, which reads as the pipeline start does (PipelineHooks
// test).
Expected<std::vector<std::vector<double>>>
moduleFeatures(const std::string& worker, std::span<const corpus::ModuleSpec* const> modules,
               const std::string& embedding = "", size_t dimension = 0) {
  if (embedding.find('\'') != std::string::npos)
    return makeError(embedding + ": a path with a quote");
  std::vector<std::vector<double>> features;
  constexpr size_t batch = 64; // modules per worker run (a command line's length)
  for (size_t first = 0; first < modules.size(); first += batch) {
    std::string command = "'" + worker + "' --module-features";
    if (!embedding.empty())
      command += " --embedding '" + embedding + "'";
    const size_t end = std::min(modules.size(), first + batch);
    for (size_t m = first; m < end; ++m) {
      const std::string path = modules[m]->bitcode.string();
      if (path.find('\'') != std::string::npos)
        return makeError(path + ": a path with a quote");
      command += " '" + path + "'";
    }
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe)
      return makeError("could not run " + worker);
    std::string output;
    char buffer[65536];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      output.append(buffer, n);
    if (pclose(pipe) != 0)
      return makeError(worker + " --module-features failed (its message is above)");
    std::istringstream lines(output);
    std::string line;
    std::getline(lines, line); // the header
    for (size_t m = first; m < end; ++m) {
      if (!std::getline(lines, line))
        return makeError(worker + " --module-features: no row for " + modules[m]->name);
      std::istringstream fields(line);
      std::string field;
      std::getline(fields, field, '\t'); // the path
      policies::ModuleCounts counts{};
      for (uint64_t& count : counts)
        if (!(fields >> count))
          return makeError(worker + " --module-features: a short row for " + modules[m]->name);
      std::vector<double> row = policies::moduleFeatureVector(counts);
      for (size_t i = 0; i < dimension; ++i) {
        double value = 0;
        if (!(fields >> value))
          return makeError(worker + " --module-features: no embedding for " + modules[m]->name);
        row.push_back(value);
      }
      features.push_back(std::move(row));
    }
  }
  return features;
}

// The pool's measures on every module: read from --pool-measures for the
// candidates that file holds, compiled for the rest (then the file is
// written with them added), then the set and the choice learned from them.
Expected<training::PipelineChoiceResult> learnChoiceFromPool(
    const PipelineSearchArgs& args, std::span<const corpus::ModuleSpec* const> modules,
    evaluators::Evaluator& evaluator, const std::vector<training::ChoiceCandidate>& pool,
    const std::vector<std::vector<double>>& features, const std::vector<std::string>& codeBaseOf) {
  const std::string context = std::string(evaluators::traitsOf(evaluator.task().measure).name) +
                              ", inliner " + (args.inliner.empty() ? "none" : args.inliner);
  training::PoolMeasures stored;
  if (!args.poolMeasures.empty() && std::filesystem::exists(args.poolMeasures)) {
    MLGO_ASSIGN_OR_RETURN(stored, training::readPoolMeasures(args.poolMeasures, context, modules));
  }
  std::vector<training::ChoiceCandidate> missing, found;
  for (const training::ChoiceCandidate& candidate : pool)
    (stored.find(candidate) ? found : missing).push_back(candidate);
  size_t compiled = 0;
  if (!found.empty()) {
    std::fprintf(stderr, "%zu of the pool's %zu pipelines measured before, in %s\n", found.size(),
                 pool.size(), args.poolMeasures.c_str());
    if (args.verifyPoolMeasures) {
      std::fprintf(stderr, "verifying them: compiled again on %zu modules\n", modules.size());
      std::vector<std::vector<double>> before;
      for (const training::ChoiceCandidate& candidate : found)
        before.push_back(*stored.find(candidate));
      MLGO_TRY(training::comparePoolMatrices(
          before, training::measureChoicePool(evaluator, modules, found, args.options.inliner),
          modules, found));
      compiled += found.size() * modules.size();
    }
  }
  if (!missing.empty()) {
    std::fprintf(stderr, "compiling %zu pool pipelines on %zu modules\n", missing.size(),
                 modules.size());
    std::vector<std::vector<double>> measured =
        training::measureChoicePool(evaluator, modules, missing, args.options.inliner);
    compiled += missing.size() * modules.size();
    for (size_t p = 0; p < missing.size(); ++p)
      stored.store(missing[p], std::move(measured[p]));
    if (!args.poolMeasures.empty())
      MLGO_TRY(training::writePoolMeasures(args.poolMeasures, context, modules, stored));
  }
  std::vector<std::vector<double>> measures;
  for (const training::ChoiceCandidate& candidate : pool)
    measures.push_back(*stored.find(candidate));
  if (!args.choiceData.empty())
    MLGO_TRY(training::writeChoiceData(
        args.choiceData, modules, codeBaseOf,
        policies::moduleFeatureNames(
            args.choice.embedding ? policies::ir2VecDimension(*args.choice.embedding) : 0),
        features, pool, measures));
  MLGO_ASSIGN_OR_RETURN(
      training::PipelineChoiceResult result,
      training::choosePipelineSet(measures, features, pool, args.choice, codeBaseOf));
  result.compiled = compiled;
  return result;
}

// --program --program-search choice: a set of pipelines learned from a pool
// (--start or -Oz first, --pool policies, --pool-singles), chosen per module.
// With --inliner every pool pipeline comes twice, with LLVM's heuristic and
// with the inliner policy, so the choice also picks who inlines; the
// fallback keeps the heuristic.
int runProgramPipelineChoice(PipelineSearchArgs& args,
                             std::span<const corpus::ModuleSpec* const> modules,
                             const std::vector<std::string>& codeBaseOf,
                             evaluators::Evaluator& evaluator) {
  const size_t codeBases = std::set<std::string>(codeBaseOf.begin(), codeBaseOf.end()).size();
  std::vector<policies::PassPipeline> pipelines{args.options.start.canonical()};
  for (const std::string& name : args.pool) {
    Expected<std::unique_ptr<policies::Policy>> loaded = loadPolicyFor("--pool", name);
    if (!loaded)
      return fail(loaded.error());
    const auto* pipeline = dynamic_cast<const policies::PipelinePolicy*>(loaded->get());
    if (!pipeline || pipeline->choice() || pipeline->inliner())
      return fail(makeError("--pool " + name + ": not a single pipeline without an inliner"));
    pipelines.push_back(pipeline->pipeline().canonical());
  }
  if (args.poolSingles)
    for (const policies::PassPipeline& move : training::structuredMoves())
      pipelines.push_back(training::combinedPipeline(pipelines.front(), move));
  std::vector<training::ChoiceCandidate> pool;
  for (size_t i = 0; i < pipelines.size(); ++i) // one row per distinct pipeline
    if (std::find(pipelines.begin(), pipelines.begin() + static_cast<std::ptrdiff_t>(i),
                  pipelines[i]) == pipelines.begin() + static_cast<std::ptrdiff_t>(i))
      pool.emplace_back(pipelines[i]);
  if (args.options.inliner)
    for (size_t i = 0, heuristic = pool.size(); i < heuristic; ++i)
      pool.emplace_back(pool[i].pipeline, true);
  if (!args.choiceEmbedding.empty()) {
    Expected<policies::Ir2VecVocabulary> vocabulary =
        policies::readIr2VecVocabulary(args.choiceEmbedding);
    if (!vocabulary)
      return fail(makeError("--choice-embedding: " + vocabulary.error().message));
    args.choice.embedding = vocabulary.take();
  }
  Expected<std::vector<std::vector<double>>> features =
      moduleFeatures(args.where.evaluator.inprocessWorker, modules, args.choiceEmbedding,
                     args.choice.embedding ? policies::ir2VecDimension(*args.choice.embedding) : 0);
  if (!features)
    return fail(features.error());
  Expected<training::PipelineChoiceResult> learned =
      learnChoiceFromPool(args, modules, evaluator, pool, *features, codeBaseOf);
  if (!learned)
    return fail(learned.error());
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(evaluator.task().measure);
  const double fallback = learned->fallbackTotal;
  std::string text = "A choice among " + std::to_string(learned->setInPool.size()) +
                     " pipelines (of a pool of " + std::to_string(pool.size()) + ") for " +
                     std::to_string(modules.size()) + " modules (" + std::to_string(codeBases) +
                     " code bases), " + std::string(measure.name) + ", against the pool's first (" +
                     pool.front().describe() + ", " + measure.format(fallback) + ")\n\n" +
                     "| # | pipeline | modules it is best of the set on |\n| ---: | --- | ---: |\n";
  for (size_t s = 0; s < learned->setInPool.size(); ++s)
    text += "| " + std::to_string(s) + " | `" + pool[learned->setInPool[s]].describe() + "` | " +
            std::to_string(std::count(learned->labels.begin(), learned->labels.end(), s)) + " |\n";
  char totals[512];
  std::snprintf(totals, sizeof totals,
                "\neach module with its best of the set: %s (%+.3f %%); each module as its %zu "
                "nearest others choose (leave one out, %s vote): %s (%+.3f %%)\n%zu compiles\n",
                measure.format(learned->oracleTotal).c_str(),
                percentOf(learned->oracleTotal, fallback), args.choice.neighbours,
                voteName(args.choice.vote), measure.format(learned->chosenTotal).c_str(),
                percentOf(learned->chosenTotal, fallback), learned->compiled);
  text += totals;
  if (learned->codeBaseOutTotal && codeBases > 1) {
    std::snprintf(totals, sizeof totals,
                  "each module as the other code bases' modules choose (leave one code base out, "
                  "what an unseen code base gets): %s (%+.3f %%)\n",
                  measure.format(*learned->codeBaseOutTotal).c_str(),
                  percentOf(*learned->codeBaseOutTotal, fallback));
    text += totals;
  }
  policies::PipelineChoice& choice = learned->choice;
  if (choice.heuristicInliner.size() == choice.pipelines.size()) { // no set member runs it
    choice.heuristicInliner.clear();
    args.options.inliner = nullptr;
  }
  return finishProgramPipeline(args, text, pool.front().pipeline,
                               std::make_shared<const policies::PipelineChoice>(std::move(choice)));
}

// --program: one pipeline for every module of the code bases, written as a
// pipeline policy.
int runProgramPipelineSearch(PipelineSearchArgs& args, const std::vector<std::string>& codeBases,
                             evaluators::Evaluator& evaluator) {
  if (args.output.empty())
    return fail(makeError("pipeline-search --program: give -o FILE for the pipeline policy"));
  if (Status loaded = loadProgramStart(args); !loaded)
    return fail(loaded.error());
  std::vector<corpus::Corpus> corpora;
  for (const std::string& name : codeBases) {
    Expected<corpus::Corpus> corpus =
        loadCorpusFor(training::codeBaseCorpus(name, args.where.corpora()), args.where.evaluator);
    if (!corpus)
      return fail(makeError("code base " + name + ": " + corpus.error().message));
    corpora.push_back(corpus.take());
  }
  std::vector<const corpus::ModuleSpec*> modules;
  std::vector<std::string> codeBaseOf; // per module
  for (size_t c = 0; c < corpora.size(); ++c)
    for (const corpus::ModuleSpec* module :
         chooseModules(corpora[c], args.sample, args.options.seed)) {
      modules.push_back(module);
      codeBaseOf.push_back(codeBases[c]);
    }
  std::fprintf(stderr, "one pipeline for %zu modules of %zu code bases\n", modules.size(),
               codeBases.size());
  if (args.programSearch == "es")
    return runProgramPipelineEs(args, modules, codeBases.size(), evaluator);
  if (args.programSearch == "choice")
    return runProgramPipelineChoice(args, modules, codeBaseOf, evaluator);
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(evaluator.task().measure);
  double baseline = 0;
  // --checkpoint: the pipelines' measures, kept as they are compiled; a run
  // again (after a kill, or with another --regression-weight) compiles only
  // what the log lacks.
  std::optional<training::ProgramMeasureLog> log;
  if (!args.es.checkpoint.empty()) {
    Expected<training::ProgramMeasureLog> opened = training::ProgramMeasureLog::open(
        args.es.checkpoint,
        training::ProgramMeasureLog::contextOf(evaluator, modules, args.options.inliner.get()));
    if (!opened)
      return fail(makeError("--checkpoint: " + opened.error().message));
    log = opened.take();
    std::fprintf(stderr, "measure log %s: %zu pipelines already measured%s\n",
                 args.es.checkpoint.string().c_str(), log->size(),
                 args.es.verifyCache ? " (compiled again to compare: --verify-cache)" : "");
    args.options.measureLog = &*log;
    args.options.verifyMeasureLog = args.es.verifyCache;
  }
  Expected<training::ProgramPipelineSearch> search = training::searchProgramPipeline(
      evaluator, modules, args.options, args.programRounds,
      [&](const training::ProgramPipelineStep& step) {
        std::fprintf(stderr, "step: %s: %s (%zu modules larger)\n",
                     step.pipeline.describe().c_str(), measure.format(step.total).c_str(),
                     step.larger);
      });
  if (!search)
    return fail(search.error());
  baseline = search->baseline;
  std::string text = "One pipeline for " + std::to_string(modules.size()) + " modules (" +
                     std::to_string(codeBases.size()) + " code bases), " +
                     std::string(measure.name) + ", -Oz " + measure.format(baseline) + "\n\n" +
                     (args.options.inliner ? "every candidate with the inliner " +
                                                 args.options.inliner->describe() + "\n\n"
                                           : std::string()) +
                     "| step | pipeline | total | vs -Oz | modules larger |\n"
                     "| ---: | --- | ---: | ---: | ---: |\n";
  auto addRow = [&](const std::string& step, const training::ProgramPipelineStep& result) {
    char row[64];
    std::snprintf(row, sizeof row, " | %+.3f %% | %zu |\n", percentOf(result.total, baseline),
                  result.larger);
    text += "| " + step + " | `" + result.pipeline.describe() + "` | " +
            measure.format(result.total) + row;
  };
  if (search->start)
    addRow("start", *search->start);
  for (size_t i = 0; i < search->steps.size(); ++i)
    addRow(std::to_string(i + 1), search->steps[i]);
  text += "\n" + std::to_string(search->evaluations) + " pipelines" +
          (log ? " (" + std::to_string(search->logged) + " from the measure log)" : "") + ", " +
          std::to_string(search->compiled) + " compiles, " +
          std::to_string(static_cast<long>(search->seconds)) + " s\n";
  return finishProgramPipeline(args, text, search->pipeline);
}

int runPipelineSearch(PipelineSearchArgs& args) {
  if (args.listPasses) {
    for (const std::string& passClass : policies::ozPassClasses())
      std::printf("%s\n", passClass.c_str());
    return 0;
  }
  Expected<training::PipelineSpace> space = training::parsePipelineSpace(args.space);
  if (!space)
    return fail(makeError("--space: " + space.error().message));
  args.options.space = *space;
  if (Status valid = args.options.validate(); !valid)
    return fail(valid.error());
  Expected<evaluators::CompilerTask> task = args.where.evaluator.toTask();
  if (!task)
    return fail(task.error());
  // A program's pipeline is learned on training code; the headroom is
  // measured on code bases that judge policies.
  args.where.set = !args.set.empty() ? args.set : args.program ? "train" : "test";
  if (task->inProcess != evaluators::InProcessRoute::PassPipeline)
    return fail(makeError("pipeline-search: --task must be a pipeline task (pass-pipeline), not " +
                          task->name));
  Expected<std::vector<std::string>> codeBases = reportCodeBases(args.where);
  if (!codeBases)
    return fail(codeBases.error());
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator = taskEvaluator(args.where.evaluator);
  if (!evaluator)
    return fail(evaluator.error());
  if (args.program)
    return runProgramPipelineSearch(args, *codeBases, **evaluator);
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(task->measure);

  std::string table = "Per-module pipeline search (" + args.space + " space), " +
                      std::string(measure.name) + " against -Oz\n\n" +
                      "| code base | modules | -Oz | best single change | searched | "
                      "modules " +
                      std::string(measure.lower) +
                      " | compiles | seconds |\n"
                      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  std::string values = "code_base\tmodule\tbaseline\tbest_single\tbest\tpipeline\n";
  double allBase = 0, allSingle = 0, allBest = 0;
  std::map<std::string, size_t> changes; // how often each change is in a module's best pipeline
  int status = 0;
  for (const std::string& name : *codeBases) {
    Expected<corpus::Corpus> corpus =
        loadCorpusFor(training::codeBaseCorpus(name, args.where.corpora()), args.where.evaluator);
    if (!corpus)
      return fail(makeError("code base " + name + ": " + corpus.error().message));
    std::vector<const corpus::ModuleSpec*> modules =
        chooseModules(*corpus, args.sample, args.options.seed);
    std::fprintf(stderr, "%s: %zu modules\n", name.c_str(), modules.size());
    size_t done = 0;
    Expected<training::PipelineSearchSummary> summary = training::searchPipelines(
        **evaluator, modules, args.options, [&](const std::string& module, size_t compiles) {
          std::fprintf(stderr, "  [%zu/%zu] %s: %zu compiles\n", ++done, modules.size(),
                       module.c_str(), compiles);
        });
    if (!summary)
      return fail(summary.error());
    double base = 0, single = 0, best = 0;
    size_t lower = 0, failed = 0;
    for (const training::ModulePipelineSearch& m : summary->modules) {
      if (!m.baseline || !m.best) {
        ++failed;
        continue;
      }
      base += *m.baseline;
      single += *m.bestSingle;
      best += *m.best;
      lower += *m.best < *m.baseline;
      for (const policies::SkippedPass& skip : m.pipeline.skipped)
        ++changes["-" + skip.text()];
      for (const auto& [point, passes] : m.pipeline.additions)
        ++changes["+" + std::string(policies::extensionPointName(point)) + "=" + passes];
      if (!m.pipeline.replacement.empty())
        ++changes["replace: " + m.pipeline.replacement.substr(0, 60)];
      values += name + "\t" + m.module->name + "\t" + measure.format(*m.baseline) + "\t" +
                measure.format(*m.bestSingle) + "\t" + measure.format(*m.best) + "\t" +
                m.pipeline.describe() + "\n";
    }
    if (failed > 0)
      status = 2;
    allBase += base;
    allSingle += single;
    allBest += best;
    char row[512];
    std::snprintf(row, sizeof row,
                  "| %s | %zu%s | %s | %+.3f %% | **%+.3f %%** | %zu | %zu | %.0f |\n",
                  name.c_str(), modules.size(),
                  failed ? (" (" + std::to_string(failed) + " failed)").c_str() : "",
                  measure.format(base).c_str(), percentOf(single, base), percentOf(best, base),
                  lower, summary->compiled, summary->seconds);
    table += row;
  }
  char total[256];
  std::snprintf(total, sizeof total, "| total | | %s | %+.3f %% | **%+.3f %%** | | | |\n",
                measure.format(allBase).c_str(), percentOf(allSingle, allBase),
                percentOf(allBest, allBase));
  table += total;
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& [change, count] : changes)
    ranked.emplace_back(count, change);
  std::sort(ranked.rbegin(), ranked.rend());
  table += "\nChanges most often in a module's best pipeline:\n\n";
  for (size_t i = 0; i < std::min<size_t>(ranked.size(), 12); ++i)
    table += "- `" + ranked[i].second + "`: " + std::to_string(ranked[i].first) + " modules\n";
  std::cout << table;
  if (!args.where.markdown.empty())
    if (Status written = writeFileAtomically(args.where.markdown, table); !written)
      return fail(written.error());
  if (!args.where.values.empty())
    if (Status written = writeFileAtomically(args.where.values, values); !written)
      return fail(written.error());
  return status;
}

CLI::App* definePipelineSearchCommand(CLI::App& app, PipelineSearchArgs& args) {
  CLI::App* command = app.add_subcommand(
      "pipeline-search",
      "Per-module search over the pass-pipeline task's actions (--task pass-pipeline): "
      "the headroom a pipeline policy has, per code base, in the task's measure "
      "(--measure ir-instructions for CompilerGym's count)");
  command->add_option("code-bases", args.where.codeBases,
                      "Recipe names or corpus directories; default: --split's --set");
  command->add_option("--split", args.where.split, "Split file (configs/inlining-split.toml)");
  command->add_option("--set", args.set,
                      "train | validation | test; default: train with --program, else test");
  command->add_option("--corpora-dir", args.where.corporaDir,
                      "Where recipe corpora are; default: $MLGO_BUILD_DIR/corpora or "
                      "build/corpora");
  command
      ->add_option("--space", args.space,
                   "structured (skip -Oz's passes, add clean-ups, greedy combinations) | "
                   "sequence (standard pipelines and random pass sequences after -Oz)")
      ->capture_default_str();
  command
      ->add_option("--rounds", args.options.rounds,
                   "structured: greedy combination rounds after the single changes")
      ->capture_default_str();
  command
      ->add_option("--carried", args.options.carried,
                   "structured: improving single changes combined in those rounds")
      ->capture_default_str();
  command
      ->add_option("--random-sequences", args.options.randomSequences,
                   "sequence: random sequences per module beside the standard pipelines")
      ->capture_default_str();
  command
      ->add_option("--sequence-length", args.options.sequenceLength,
                   "sequence: passes per random sequence")
      ->capture_default_str();
  command->add_option("--seed", args.options.seed, "Seed of the random sequences and --sample")
      ->capture_default_str();
  command
      ->add_option("--sample", args.sample,
                   "Search this many modules per code base (bucket round robin by size); "
                   "0: all")
      ->capture_default_str();
  command->add_option("--markdown", args.where.markdown, "Also write the table to this file");
  command->add_option("--values", args.where.values,
                      "Write each module's result (TSV: measures and best pipeline)");
  command->add_flag("--program", args.program,
                    "One pipeline for every module of the code bases (greedy forward selection "
                    "on their total; default set: train), written with -o as a pipeline policy");
  command
      ->add_option("--program-rounds", args.programRounds,
                   "--program: combination rounds after the first change")
      ->capture_default_str();
  command->add_option("-o,--output", args.output, "--program: the pipeline policy to write");
  command
      ->add_option("--regression-weight", args.options.regressionWeight,
                   "--program: the objective is the total plus this weight times the bytes "
                   "modules grow over -Oz (0: the total)")
      ->capture_default_str();
  command->add_flag("--parameter-moves", args.options.parameterMoves,
                    "Structured space: pass parameters among the moves (gvn without PRE or "
                    "load PRE, licm without speculation, …; -Oz is then run as its text, which "
                    "takes added passes at optimizer-last and scalar-optimizer-late only)");
  command->add_flag("--list-passes", args.listPasses,
                    "Print the -Oz pass classes the structured space may skip, and exit");
  command
      ->add_option("--program-search", args.programSearch,
                   "--program: greedy (forward selection) | es (the optimiser below over one "
                   "parameter per change of the structured space) | choice (a set of pipelines "
                   "from a pool, chosen per module by its nearest training modules' features)")
      ->capture_default_str()
      ->check(CLI::IsMember({"greedy", "es", "choice"}));
  command
      ->add_option("--pool", args.pool,
                   "--program-search choice: a candidate pipeline policy (file or name; "
                   "repeat the flag for more, after the code bases) after --start's pipeline (or "
                   "-Oz), which is the fallback")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_flag("--pool-singles", args.poolSingles,
                    "--program-search choice: every single change of the structured space, "
                    "added to the fallback, in the pool too");
  command->add_option("--pool-measures", args.poolMeasures,
                      "--program-search choice: a file for the pool's measures on the modules "
                      "(TSV): the pipelines it holds are read from it, the others compiled and "
                      "added to it, so that learning with other options or a larger pool "
                      "compiles only what is new");
  command->add_option("--choice-embedding", args.choiceEmbedding,
                      "--program-search choice: an IR2Vec vocabulary (mlgo-eval ir2vec-vocab, "
                      "learned on training code): each module's IR2Vec embedding per instruction "
                      "joins its features, and the vocabulary goes into the policy file");
  command->add_option("--choice-data", args.choiceData,
                      "--program-search choice: write the learning data as TSV (a row per "
                      "module: its code base, its features and every pool pipeline's measure), "
                      "to try other choosers outside the tool");
  command->add_flag("--verify-pool-measures", args.verifyPoolMeasures,
                    "--pool-measures: compile the pool anyway and fail unless every stored "
                    "measure equals the compiler's");
  command
      ->add_option("--set-size", args.choice.setSize,
                   "--program-search choice: pipelines in the set, the fallback included")
      ->capture_default_str();
  command
      ->add_option("--neighbours", args.choice.neighbours,
                   "--program-search choice: training modules that vote for a module's pipeline")
      ->capture_default_str();
  command
      ->add_option("--agreement", args.choice.agreement,
                   "--program-search choice: the share of the neighbours' votes a pipeline "
                   "other than the fallback needs (with --vote cost: the share of their weight "
                   "on which it gained), else the fallback")
      ->capture_default_str();
  command
      ->add_option("--novelty", args.choice.novelty,
                   "--program-search choice: a module whose nearest training module is farther "
                   "than this quantile of the training modules' own nearest-other distances "
                   "keeps the fallback (1: off)")
      ->capture_default_str();
  command->add_flag("--novelty-across-code-bases", args.choice.noveltyAcrossCodeBases,
                    "--novelty: of the training modules' distances to the nearest module of "
                    "another code base (what an unseen code base's module meets)");
  command
      ->add_option("--vote", args.choice.vote,
                   "--program-search choice: how the neighbours vote: label (each for its best "
                   "pipeline), cost (each with every pipeline's relative change against the "
                   "fallback on it; the cheapest on average wins) or cost-median (the cheapest "
                   "by the neighbours' weighted median: half their weight must gain)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, training::PipelineChoiceOptions::Vote>{
              {"label", training::PipelineChoiceOptions::Vote::Label},
              {"cost", training::PipelineChoiceOptions::Vote::Cost},
              {"cost-median", training::PipelineChoiceOptions::Vote::CostMedian}},
          CLI::ignore_case))
      ->default_str("label");
  command
      ->add_option("--margin", args.choice.margin,
                   "--vote cost or cost-median: how much cheaper (a share, e.g. 0.002) than the "
                   "fallback "
                   "another pipeline must look")
      ->capture_default_str();
  command
      ->add_option("--minimum-gain", args.choice.minimumGain,
                   "--program-search choice: a pipeline joins the set only if it shrinks the "
                   "training total by this share more")
      ->capture_default_str();
  command->add_option("--steps", args.es.steps, "--program-search es: optimiser steps")
      ->capture_default_str();
  command->add_option("--start", args.start,
                      "--program: a pipeline policy (file or name) whose changes the search "
                      "starts from (greedy: kept unless removing one helps; es: on at the start), "
                      "its inliner with it; default: -Oz");
  command->add_option("--inliner", args.inliner,
                      "--program: an inliner policy (file or name) every candidate carries and "
                      "the written policy embeds (with --program-search choice: every pool "
                      "pipeline twice, with it and with LLVM's heuristic, chosen per module); "
                      "default: LLVM's heuristic");
  command
      ->add_option("--start-margin", args.es.startMargin,
                   "--program-search es: |parameter| of each change at the start (on: +, off: -)")
      ->capture_default_str();
  command->add_flag("--verify-cache", args.es.verifyCache,
                    "--program: compile every pipeline the cache (es) or the measure log "
                    "(greedy) answers again and fail on a difference");
  command->add_option("--checkpoint", args.es.checkpoint,
                      "--program: es: the state after every step; greedy: every pipeline's "
                      "measures as they are compiled (a run again compiles only what the file "
                      "lacks, also under another --regression-weight); an existing one resumes");
  args.where.evaluator.task = evaluators::CompilerTask::passPipeline().name;
  args.flags = std::make_shared<apps::SchemaFlags>();
  args.where.evaluator.addTo(*command, *args.flags);
  args.flags->bind(*command, es::optimizerSchema(), args.es.optimizer);
  args.flags->install(*command);
  args.where.evaluator.ownFlags = args.flags;
  return command;
}

struct SearchArgs {
  std::string corpus;
  std::string output;
  size_t maxDecisions = 50;
  double maxSeconds = 0;
  size_t sample = 0;
  uint64_t seed = 0;
  std::string order = "first";
  size_t trialsPerRound = training::DecisionSearchOptions().trialsPerRound;
  std::string tried;       // trace of the tried decisions, if given
  std::string startPolicy; // the decisions to start from, if not -Oz's
  bool calleeConsistent = false;
  std::optional<int64_t> flipsFrom; // one way only, if given
  size_t pairFirsts = 0;            // the pair phase's first steps per module (0: none)
  size_t pairSeconds = training::DecisionSearchOptions().pairSeconds;
  bool timeReport = false;
  std::string checkpoint;         // progress file: saved as it goes, resumed from if present
  size_t checkpointModules = 256; // modules compiled between checkpoints within a round
  apps::EvaluatorArgs evaluator;
};

// A search's checkpoint file and, beside it (FILE.tried.h5), a copy of the
// tried decisions it counts. Seconds spent and the tried trace's rows are
// the caller's numbers in it.
class SearchCheckpointFile {
public:
  explicit SearchCheckpointFile(std::string path) : path_(std::move(path)) {}
  bool enabled() const { return !path_.empty(); }
  std::filesystem::path triedCopy() const { return path_ + ".tried.h5"; }

  // The saved progress, if the file exists; errors name the file.
  Expected<std::optional<training::SearchProgress>> load() const {
    if (!enabled() || !std::filesystem::exists(path_))
      return std::optional<training::SearchProgress>();
    Expected<std::string> text = readFileBytes(path_);
    if (!text)
      return text.error();
    Expected<training::SearchProgress> progress = training::SearchProgress::parse(*text);
    if (!progress)
      return makeError(path_ + ": " + progress.error().message);
    return std::optional<training::SearchProgress>(progress.take());
  }
  // The tried trace's copy first, then the progress that counts its rows:
  // a kill between the two leaves a copy with more rows than counted.
  Status save(training::SearchProgress progress, double seconds, double roundEnd,
              training::TriedDecisionTrace* tried) const {
    progress.extra["seconds"] = seconds;
    progress.extra["round_end_seconds"] = roundEnd;
    progress.extra["tried_rows"] = tried ? static_cast<double>(tried->rows()) : 0.0;
    if (tried)
      MLGO_TRY(tried->saveCopy(triedCopy()));
    return writeFileAtomically(path_, progress.text());
  }
  // A finished search leaves no checkpoint behind.
  void remove() const {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    std::filesystem::remove(triedCopy(), ignored);
  }

private:
  std::string path_;
};

// What a search keeps outside itself: its clock (with the time spent before
// a resume), the flips saved after every round (an interrupted search
// leaves a usable policy), --checkpoint's progress, and --max-seconds.
class SearchBookkeeping {
public:
  SearchBookkeeping(const SearchArgs& args, training::TriedDecisionTrace* tried,
                    const std::optional<Error>& triedError)
      : args_(args), tried_(tried), triedError_(triedError), checkpoint_(args.checkpoint),
        started_(std::chrono::steady_clock::now()) {}

  // Continues from --checkpoint's file if there is one: the search's
  // progress, the tried trace's rows and the time spent.
  Status resume(training::DecisionSearchOptions& search) {
    Expected<std::optional<training::SearchProgress>> loaded = checkpoint_.load();
    if (!loaded)
      return makeError("--checkpoint " + loaded.error().message);
    if (!*loaded)
      return Status::ok();
    saved_ = std::move(**loaded);
    auto extra = [&](const char* name) {
      auto it = saved_->extra.find(name);
      return it == saved_->extra.end() ? 0.0 : it->second;
    };
    secondsBefore_ = extra("seconds");
    roundEnd_ = extra("round_end_seconds");
    if (tried_)
      if (Status restored =
              tried_->restore(checkpoint_.triedCopy(), static_cast<size_t>(extra("tried_rows")));
          !restored)
        return makeError("--checkpoint " + args_.checkpoint + ": " + restored.error().message);
    size_t into = 0;
    for (const training::SearchProgress::Module& m : saved_->modules)
      into += m.rounds > saved_->rounds;
    std::fprintf(stderr,
                 "resuming from %s: %zu rounds done, %zu modules into the next, %.0f s spent\n",
                 args_.checkpoint.c_str(), saved_->rounds, into, secondsBefore_);
    search.resume = &*saved_;
    return Status::ok();
  }

  // The search's onCheckpoint and onRound. With --checkpoint or a time
  // budget, rounds run in chunks of --checkpoint-modules: the checkpoint is
  // saved after each, and the budget is checked after each, so a search
  // stops within a round when its time is spent (the modules searched so
  // far keep their flips) rather than finishing a round of an hour.
  void install(training::DecisionSearchOptions& search) {
    if (checkpoint_.enabled() || args_.maxSeconds > 0) {
      search.checkpointModules = args_.checkpointModules;
      search.onCheckpoint = [this](const training::SearchProgress& progress) {
        if (checkpoint_.enabled())
          if (Status written = checkpoint_.save(progress, elapsed(), roundEnd_, tried_); !written)
            error_ = makeError("--checkpoint: " + written.error().message);
        return !error_ && !budgetSpentWithin(progress);
      };
    }
    search.onRound = [this](size_t round, size_t rounds, const policies::FlipSetPolicy& flips) {
      return afterRound(round, rounds, flips);
    };
  }

  double elapsed() const {
    return secondsBefore_ +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  const std::optional<Error>& error() const { return error_; }
  // A finished search leaves no checkpoint.
  void finished() const { checkpoint_.remove(); }

private:
  // Within a round (some modules a round ahead of the others), whether the
  // time budget is spent; says so once.
  bool budgetSpentWithin(const training::SearchProgress& progress) {
    if (args_.maxSeconds <= 0 || elapsed() < args_.maxSeconds)
      return false;
    size_t into = 0;
    for (const training::SearchProgress::Module& m : progress.modules)
      into += m.rounds > progress.rounds;
    if (into == 0 || into == progress.modules.size())
      return false; // a round's end: afterRound decides
    std::fprintf(stderr, "time budget of %.0f s reached within round %zu (%zu of %zu modules)\n",
                 args_.maxSeconds, progress.rounds + 1, into, progress.modules.size());
    return true;
  }

  bool afterRound(size_t round, size_t rounds, const policies::FlipSetPolicy& flips) {
    const double seconds = elapsed();
    roundEnd_ = seconds;
    std::fprintf(stderr, "round %zu/%zu  %zu flips kept  %.0f s\n", round, rounds,
                 flips.flipSet().size(), seconds);
    if (Status saved = policies::savePolicy(flips, args_.output); !saved)
      error_ = saved.error();
    if (triedError_)
      error_ = triedError_;
    const double budget = args_.maxSeconds;
    if (budget > 0 && seconds >= budget) {
      std::fprintf(stderr, "time budget of %.0f s reached\n", budget);
      return false;
    }
    // Another round starts even if it cannot finish: it stops within it at
    // the budget (budgetSpentWithin).
    return !error_;
  }

  const SearchArgs& args_;
  training::TriedDecisionTrace* tried_;
  const std::optional<Error>& triedError_;
  SearchCheckpointFile checkpoint_;
  std::chrono::steady_clock::time_point started_;
  double secondsBefore_ = 0; // spent before a resume
  double roundEnd_ = 0;      // elapsed() at the last round's end
  std::optional<training::SearchProgress> saved_;
  std::optional<Error> error_;
};

// The search's totals in the task's measure, as measured in the search.
void printSearchSummary(const training::DecisionSearchResult& result,
                        const evaluators::CompilerTask& task, bool fromPolicy,
                        const std::string& output) {
  double baseline = 0, best = 0, atStart = 0;
  size_t tried = 0, kept = 0, smaller = 0;
  for (const training::ModuleSearch& m : result.modules) {
    if (!m.baseline || !m.best)
      continue;
    baseline += *m.baseline;
    best += *m.best;
    atStart += *m.start;
    tried += m.tried;
    kept += m.kept;
    smaller += *m.best < *m.baseline;
  }
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(task.measure);
  auto compared = [&](double value) { // e.g. ".text 1234 bytes vs -Oz 1300 (-5.077%"
    std::string text = std::string(measure.column) + " " + measure.format(value) + " " +
                       std::string(measure.unit) + " vs " + task.baselineName + " " +
                       measure.format(baseline);
    char change[32];
    std::snprintf(change, sizeof change, " (%+.3f%%", percentChange(value, baseline));
    return text + change;
  };
  if (fromPolicy)
    std::printf("start: the policy's decisions, %s)\n", compared(atStart).c_str());
  std::printf("search: %zu rounds, %zu compilations; %zu decisions tried, %zu flips kept; %zu of "
              "%zu modules %s\n%s, as measured in the search)\npolicy: %s (mlgo-eval report %s "
              "CORPUS... for exact totals)\n",
              result.rounds, result.compilations, tried, kept, smaller, result.modules.size(),
              std::string(measure.lower).c_str(), compared(best).c_str(), output.c_str(),
              output.c_str());
  if (result.pairTrials > 0)
    std::printf("pairs: %zu compilations; %zu modules kept a pair\n", result.pairTrials,
                result.pairModules);
  std::string full;
  size_t fullCount = 0;
  for (const auto& [why, count] : result.fullCompiles) {
    full += (full.empty() ? "" : ", ") + std::to_string(count) + " " + why;
    fullCount += count;
  }
  std::printf("trials: %zu answered incrementally%s, %zu compiled in full%s\n", result.incremental,
              result.verified ? (" (" + std::to_string(result.verified) + " verified)").c_str()
                              : "",
              fullCount, full.empty() ? "" : (" (" + full + ")").c_str());
}

int runSearch(const SearchArgs& args) {
  Expected<corpus::Corpus> corpus = loadCorpusFor(args.corpus, args.evaluator);
  if (!corpus)
    return fail(corpus.error());
  std::vector<const corpus::ModuleSpec*> modules = chooseModules(*corpus, args.sample, args.seed);
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator = taskEvaluator(args.evaluator);
  if (!evaluator)
    return fail(evaluator.error());

  training::DecisionSearchOptions search;
  search.showProgress = true; // rounds over a whole training set take minutes each
  search.maxDecisions = args.maxDecisions;
  search.order = args.order == "random"   ? training::SearchOrder::Random
                 : args.order == "guided" ? training::SearchOrder::Guided
                                          : training::SearchOrder::First;
  search.seed = args.seed;
  search.trialsPerRound = args.trialsPerRound;
  search.calleeConsistent = args.calleeConsistent;
  search.flipsFrom = args.flipsFrom;
  search.pairFirsts = args.pairFirsts;
  search.pairSeconds = args.pairSeconds;
  std::unique_ptr<policies::Policy> start;
  if (!args.startPolicy.empty()) {
    Expected<std::unique_ptr<policies::Policy>> loaded =
        policyByName(args.startPolicy, args.evaluator);
    if (!loaded)
      return fail(makeError("--start-policy " + args.startPolicy + ": " + loaded.error().message));
    start = loaded.take();
    search.start = start.get();
  }
  std::optional<training::TriedDecisionTrace> triedTrace;
  std::optional<Error> triedError;
  if (!args.tried.empty()) {
    results::TraceAttributes attributes = training::taskAttributes((*evaluator)->task());
    attributes["policy"] = "decisions tried by mlgo-eval search (action: the better one)";
    attributes["corpus"] = args.corpus;
    if (args.flipsFrom)
      attributes[training::kFlipsFromAttribute] = std::to_string(*args.flipsFrom);
    triedTrace.emplace(args.tried, std::move(attributes), (*evaluator)->task().reward);
    search.onTried = [&](const training::TriedDecision& tried) {
      if (triedError)
        return;
      if (Status added = triedTrace->add(tried, modules[tried.module]->name); !added)
        triedError = makeError(args.tried + ": " + added.error().message);
    };
  }
  SearchBookkeeping bookkeeping(args, triedTrace ? &*triedTrace : nullptr, triedError);
  if (Status resumed = bookkeeping.resume(search); !resumed)
    return fail(resumed.error());
  bookkeeping.install(search);
  std::fprintf(
      stderr, "searching %s %zu decisions of %zu modules of %s from %s\n",
      args.order == "random"   ? "a random"
      : args.order == "guided" ? "a guided"
                               : "the first",
      args.maxDecisions, modules.size(), args.corpus.c_str(),
      (args.startPolicy.empty() ? (*evaluator)->task().baselineName : "policy " + args.startPolicy)
          .c_str());
  Expected<training::DecisionSearchResult> result =
      training::searchDecisions(**evaluator, modules, search);
  if (!result)
    return fail(result.error());
  if (bookkeeping.error())
    return fail(*bookkeeping.error());
  if (triedTrace)
    if (Status closed = triedTrace->close(); !closed)
      return fail(makeError(args.tried + ": " + closed.error().message));
  if (Status written = policies::savePolicy(result->policy, args.output); !written)
    return fail(written.error());
  bookkeeping.finished();
  printSearchSummary(*result, (*evaluator)->task(), start != nullptr, args.output);
  const double seconds = bookkeeping.elapsed();
  size_t tried = 0;
  for (const training::ModuleSearch& m : result->modules)
    tried += m.tried;
  std::printf("time: %.1f s, %.2f decisions tried per second\n", seconds,
              seconds > 0 ? static_cast<double>(tried) / seconds : 0.0);
  const evaluators::EvaluatorStatistics statistics = (*evaluator)->statistics();
  std::fputs(apps::incrementalLine(statistics).c_str(), stdout);
  if (args.timeReport)
    std::fputs(apps::timeReport(statistics).c_str(), stdout);
  return 0;
}

struct VocabArgs {
  std::vector<std::string> traces;
  std::string output;
  policies::VocabularyOptions options;
};

int runVocab(const VocabArgs& args) {
  policies::FeatureSamples samples;
  for (const std::string& file : args.traces) {
    Expected<results::Trace> trace = results::readTrace(file);
    if (!trace)
      return fail(trace.error());
    results::appendFeatureSamples(*trace, samples);
  }
  if (Status valid = args.options.validate(); !valid)
    return fail(valid.error());
  Expected<policies::Vocabulary> vocabulary = policies::buildVocabulary(samples, args.options);
  if (!vocabulary)
    return fail(vocabulary.error());
  if (Status written = policies::writeVocabularyDirectory(*vocabulary, args.output); !written)
    return fail(written.error());
  size_t values = 0;
  for (const auto& [name, v] : samples)
    values = std::max(values, v.size());
  std::printf("vocabulary: %zu features from %zu decisions, %d quantiles each, in %s\n",
              vocabulary->size(), values, args.options.quantiles, args.output.c_str());
  return 0;
}

struct Ir2VecArgs {
  std::vector<std::string> corpora;
  std::string output;
  policies::TransEOptions options;
  std::string tool = evaluators::ir2vecToolBeside(evaluators::EvaluatorOptions::defaultClang());
  std::string scratch = evaluators::EvaluatorOptions::defaultScratchDirectory().string();
  size_t workers = 0;
};

int runIr2VecVocabulary(const Ir2VecArgs& args) {
  if (Status valid = args.options.validate(); !valid)
    return fail(valid.error());
  std::vector<corpus::Corpus> corpora;
  for (const std::string& directory : args.corpora) {
    Expected<corpus::Corpus> corpus = corpus::Corpus::load(directory);
    if (!corpus)
      return fail(corpus.error());
    corpora.push_back(corpus.take());
  }
  Expected<evaluators::Ir2VecTrainingData> data = evaluators::collectIr2VecTriplets(
      corpora, args.tool, args.scratch, args.workers ? args.workers : hardwareThreads());
  if (!data)
    return fail(data.error());
  std::printf("triplets: %zu distinct of %zu from %zu modules; %zu entities, %u relations\n",
              data->triplets.size(), data->tripletsRead, data->modules, data->entities.size(),
              data->relations);
  std::fflush(stdout);
  const size_t every = std::max<size_t>(1, args.options.epochs / 10);
  Expected<policies::Ir2VecVocabulary> vocabulary = policies::trainTransE(
      data->entities, data->triplets, data->relations, args.options,
      [&](size_t epoch, double loss) {
        if (epoch % every == 0 || epoch == args.options.epochs)
          std::fprintf(stderr, "TransE epoch %zu/%zu: mean margin loss %.4f\n", epoch,
                       args.options.epochs, loss);
      });
  if (!vocabulary)
    return fail(vocabulary.error());
  if (Status written = policies::writeIr2VecVocabulary(*vocabulary, args.output); !written)
    return fail(written.error());
  const policies::TransESummary& summary = vocabulary->summary;
  std::printf("TransE: %zu dimensions, %zu epochs, loss %.4f -> %.4f, true tail nearest for "
              "%.1f %% of triplets, %.1f s\nvocabulary: %s\n",
              args.options.dimension, args.options.epochs, summary.firstLoss, summary.finalLoss,
              100 * summary.rankedFirst, summary.seconds, args.output.c_str());
  return 0;
}

CLI::App* addIr2VecCommand(CLI::App& app, Ir2VecArgs& args) {
  CLI::App* command = app.add_subcommand(
      "ir2vec-vocab", "Learn an IR2Vec vocabulary (TransE over llvm-ir2vec's triplets of the "
                      "corpora's modules) for --ir2vec-vocabulary");
  command->add_option("corpora", args.corpora, "Corpus directories (training code only)")
      ->required();
  command->add_option("-o,--output", args.output, "Vocabulary file (JSON) to write")->required();
  command->add_option("--dimension", args.options.dimension, "Embedding width")
      ->capture_default_str()
      ->check(mlgo::apps::kAtLeastOne);
  command->add_option("--epochs", args.options.epochs, "Passes over the distinct triplets")
      ->capture_default_str()
      ->check(mlgo::apps::kAtLeastOne);
  command->add_option("--learning-rate", args.options.learningRate, "SGD step")
      ->capture_default_str();
  command->add_option("--margin", args.options.margin, "TransE's hinge margin")
      ->capture_default_str();
  command->add_option("--seed", args.options.seed, "Seed")->capture_default_str();
  command->add_option("--tool", args.tool, "llvm-ir2vec executable")->capture_default_str();
  command->add_option("--scratch", args.scratch, "Directory for the tool's output")
      ->capture_default_str();
  command
      ->add_option("-j,--workers", args.workers,
                   "Concurrent llvm-ir2vec runs; 0: one per hardware thread")
      ->capture_default_str();
  return command;
}

struct InitArgs {
  std::string task = evaluators::CompilerTask::inliningForSize().name;
  std::string trace;
  std::string vocabulary;
  std::string output;
  policies::MlpOptions mlp; // MlpOptions::schema()'s flags
  std::shared_ptr<apps::SchemaFlags> mlpFlags;
  uint64_t seed = 0;
};

int runInitMlp(const InitArgs& args) {
  Expected<results::Trace> trace = results::readTrace(args.trace);
  if (!trace)
    return fail(trace.error());
  Expected<policies::Vocabulary> vocabulary = policies::readVocabularyDirectory(args.vocabulary);
  if (!vocabulary)
    return fail(vocabulary.error());
  Expected<evaluators::CompilerTask> task = evaluators::CompilerTask::named(args.task);
  if (!task)
    return fail(makeError("--task: " + task.error().message));
  if (Status flags = args.mlpFlags->status(); !flags)
    return fail(flags.error());
  policies::MlpOptions options = task->policyOptions(args.mlp);
  if (Status valid = options.validate(); !valid)
    return fail(valid.error());
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(trace->featureSpecs, *vocabulary, options);
  if (!structure)
    return fail(structure.error());
  policies::MlpPolicy policy = policies::MlpPolicy::initialised(*structure, args.seed);
  if (Status saved = policies::savePolicy(policy, args.output); !saved)
    return fail(saved.error());
  std::printf("%s: %s, %zu inputs, %zu parameters\n", args.output.c_str(),
              policy.describe().c_str(), (*structure)->inputs().size(), policy.parameterCount());
  return 0;
}

struct ChooseArgs {
  std::vector<std::string> candidates; // NAME=VALUES
  bool verdict = false;
};

// The policy to ship among candidates' validation reports (mlgo-eval report
// --values): one line per candidate on stderr, the chosen name on stdout
// (exit 1 when none is eligible). --verdict: the one report's sentence.
int runChoose(const ChooseArgs& args) {
  std::vector<std::string> names;
  std::vector<std::vector<training::CodeBaseReport>> reports;
  for (const std::string& candidate : args.candidates) {
    const size_t equals = candidate.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == candidate.size())
      return fail(makeError("candidate \"" + candidate + "\": expected NAME=VALUES-FILE"));
    Expected<std::vector<training::CodeBaseReport>> values =
        training::readReportValues(candidate.substr(equals + 1));
    if (!values)
      return fail(
          makeError("candidate " + candidate.substr(0, equals) + ": " + values.error().message));
    // Candidates counted two ways are not compared: per object, C++
    // copies a linker drops count, and with --linked they do not.
    if (!reports.empty() && !values->empty() && !reports.front().empty() &&
        values->front().comdatOnce != reports.front().front().comdatOnce)
      return fail(makeError(
          "candidate " + candidate.substr(0, equals) + ": its values count " +
          (values->front().comdatOnce ? "COMDAT groups once (report --linked)" : "per object") +
          ", " + names.front() + "'s the other way"));
    names.push_back(candidate.substr(0, equals));
    reports.push_back(values.take());
  }
  if (args.verdict) {
    if (reports.size() != 1)
      return fail(makeError("--verdict takes one report"));
    std::printf("%s\n", training::reportVerdict(reports[0]).c_str());
    return 0;
  }
  const std::optional<size_t> chosen = training::chooseCandidate(reports);
  for (size_t c = 0; c < reports.size(); ++c) {
    std::string line;
    for (const training::CodeBaseReport& r : reports[c]) {
      line += " " + r.name + " " + training::percentText(r.deltaPercent()) + ";";
    }
    const bool eligible = training::codeBasesAboveBaseline(reports[c]).empty();
    std::fprintf(stderr, "%s:%s%s%s\n", names[c].c_str(), line.c_str(), eligible ? " eligible" : "",
                 chosen == c ? ", chosen" : "");
  }
  if (!chosen) {
    std::fprintf(stderr, "mlgo-eval: no candidate keeps every code base at or below its "
                         "baseline\n");
    return 1;
  }
  std::printf("%s\n", names[*chosen].c_str());
  return 0;
}

struct EnsembleArgs {
  std::vector<std::string> policies;
  std::string output;
  bool unanimous = false;
};

int runEnsemble(const EnsembleArgs& args) {
  std::vector<policies::MlpPolicy> members;
  for (const std::string& path : args.policies) {
    Expected<policies::MlpPolicy> policy = policies::loadMlpPolicy(path);
    if (!policy)
      return fail(makeError(path + ": " + policy.error().message));
    members.push_back(policy.take());
  }
  std::vector<const policies::MlpPolicy*> pointers;
  for (const policies::MlpPolicy& member : members)
    pointers.push_back(&member);
  Expected<policies::MlpPolicy> ensemble = args.unanimous ? policies::unanimousEnsemble(pointers)
                                                          : policies::meanLogitEnsemble(pointers);
  if (!ensemble)
    return fail(ensemble.error());
  if (Status saved = policies::savePolicy(*ensemble, args.output); !saved)
    return fail(saved.error());
  std::printf("ensemble of %zu policies (%s): %s\n", members.size(), ensemble->describe().c_str(),
              args.output.c_str());
  return 0;
}

struct RewriteArgs {
  std::string policy;
  std::string output;
  bool blobs = false; // the blob form (policy file version 4)
};

// A policy file in this version's format, with the same contents: every
// decision is the same (numbers are exact both ways).
int runRewrite(const RewriteArgs& args) {
  Expected<std::unique_ptr<policies::Policy>> policy = loadPolicyFor("policy", args.policy);
  if (!policy)
    return fail(policy.error());
  if (Status saved = policies::savePolicy(**policy, args.output,
                                          args.blobs ? policies::PolicyEncoding::Blobs
                                                     : policies::PolicyEncoding::Text);
      !saved)
    return fail(saved.error());
  std::error_code ignored;
  std::printf("%s -> %s (%ju bytes)\n", args.policy.c_str(), args.output.c_str(),
              static_cast<uintmax_t>(fs::file_size(args.output, ignored)));
  return 0;
}

struct MarginArgs {
  std::string policy;
  double margin = 0; // 0: the policy's own
  std::vector<int> keep;
  bool keepBoth = false;
  std::string output;
};

int runMargin(const MarginArgs& args) {
  // A file or a shipped policy's name, as the other commands take.
  Expected<fs::path> file = policies::policyFileFor(args.policy);
  if (!file)
    return fail(makeError("policy " + args.policy + ": " + file.error().message));
  Expected<policies::MlpPolicy> policy = policies::loadMlpPolicy(*file);
  if (!policy)
    return fail(policy.error());
  const double before = policy->structure()->options().residualMargin;
  const double margin = args.margin > 0 ? args.margin : before;
  std::optional<std::vector<int>> kept;
  if (args.keepBoth || !args.keep.empty())
    kept = args.keep;
  Expected<policies::MlpPolicy> changed = policies::withResidualMargin(*policy, margin, kept);
  if (!changed)
    return fail(makeError(args.policy + ": " + changed.error().message));
  if (Status saved = policies::savePolicy(*changed, args.output); !saved)
    return fail(saved.error());
  std::printf("%s: %s\n", changed->describe().c_str(), args.output.c_str());
  return 0;
}

struct ConsistentArgs {
  std::string policy;
  std::string output;
};

int runConsistent(const ConsistentArgs& args) {
  Expected<std::unique_ptr<policies::Policy>> policy = loadPolicyFor("policy", args.policy);
  if (!policy)
    return fail(policy.error());
  const policies::CalleeConsistentPolicy consistent(
      std::shared_ptr<const policies::Policy>(policy.take()));
  if (Status saved = policies::savePolicy(consistent, args.output); !saved)
    return fail(saved.error());
  std::printf("%s: %s\n", consistent.describe().c_str(), args.output.c_str());
  return 0;
}

CLI::App* defineConsistentCommand(CLI::App& app, ConsistentArgs& consistent) {
  CLI::App* command = app.add_subcommand(
      "consistent",
      "Write the policy with callee consistency: in each module, every call site of one "
      "discardable callee (internal or linkonce) where -Oz inlines follows the policy's answer "
      "at the first such site, so a callee is declined everywhere or nowhere (in-process "
      "backend and mlgo-cc only)");
  command
      ->add_option("policy", consistent.policy,
                   "Policy file of any kind, or a shipped policy's name (inlining-oz)")
      ->required();
  command->add_option("-o,--output", consistent.output, "Policy file to write")->required();
  return command;
}

CLI::App* defineRunCommand(CLI::App& app, RunArgs& run) {
  CLI::App* runCmd = app.add_subcommand("run", "Evaluate a policy on a corpus");
  runCmd
      ->add_option("policy", run.policy,
                   "Policy file, a shipped policy's name (configs/policies: inlining-oz), or "
                   "heuristic | neutral | always | never")
      ->required();
  runCmd->add_option("corpus", run.corpus, "Corpus directory")->required();
  runCmd->add_option("--trace", run.trace,
                     "Record every decision (features, default, action, log-probability) into "
                     "this HDF5 file");
  runCmd->add_option("--mode", run.mode, "deterministic (argmax) | sampling")
      ->capture_default_str();
  runCmd->add_option("--seed", run.seed, "Seed for sampling mode and --sample")
      ->capture_default_str();
  runCmd->add_option("--sample", run.sample,
                     "Evaluate this many modules (bucket round robin by size) instead of all");
  runCmd->add_flag("!--no-per-module", run.perModule, "Print only the total");
  run.evaluator.addTo(*runCmd);
  return runCmd;
}

CLI::App* defineReportCommand(CLI::App& app, ReportArgs& report) {
  CLI::App* reportCmd = app.add_subcommand(
      "report",
      "Judge a policy on whole code bases against the task's baseline, in its measure: "
      "totals per code base, modules better / worse, largest regressions (a Markdown table)");
  reportCmd
      ->add_option("policy", report.policy,
                   "Policy file, a shipped policy's name (configs/policies: inlining-oz), or "
                   "heuristic | neutral | always | never")
      ->required();
  reportCmd->add_option("code-bases", report.codeBases,
                        "Recipe names (corpus in <corpora-dir>/NAME/corpus) or corpus "
                        "directories; default: --split's --set");
  reportCmd->add_option("--split", report.split,
                        "Split file naming the train / validation / test code bases "
                        "(configs/inlining-split.toml)");
  reportCmd->add_option("--set", report.set, "Which set of --split: train | validation | test")
      ->capture_default_str();
  reportCmd->add_option("--corpora-dir", report.corporaDir,
                        "Where recipe corpora are; default: $MLGO_BUILD_DIR/corpora or "
                        "build/corpora");
  reportCmd
      ->add_option("--regressions", report.regressions, "Largest regressions listed per code base")
      ->capture_default_str();
  reportCmd->add_option("--markdown", report.markdown, "Also write the report to this file");
  reportCmd->add_option("--values", report.values,
                        "Also write the report's values to this file (for mlgo-eval choose)");
  reportCmd->add_flag(
      "--linked", report.linked,
      "Count each COMDAT group (inline function, template instance) once across a code "
      "base's objects, as a linker keeps the first copy (in module order), instead of once "
      "per object; compiles every job (no replay, decision cache or incremental evaluation)");
  reportCmd->add_flag("--best-of", report.bestOf,
                      "Count each module as the smaller of the policy's and the baseline's, as "
                      "mlgo-cc --mlgo-best-of builds it (each object compiled both ways)");
  reportCmd->add_flag("--best-of-set", report.bestOfSet,
                      "A pipeline choice: count each module as the smallest of the choice's and "
                      "each of its set's alternatives', as mlgo-cc --mlgo-best-of-set builds it "
                      "(each object compiled once per alternative)");
  report.evaluator.addTo(*reportCmd);
  return reportCmd;
}

CLI::App* defineSearchCommand(CLI::App& app, SearchArgs& searchArgs) {
  CLI::App* searchCmd = app.add_subcommand(
      "search", "Greedy per-module decision search from -Oz (or --start-policy): flip each of the "
                "first N decisions "
                "in turn, keep the flips that shrink the module; writes a flip-set policy");
  searchCmd->add_option("corpus", searchArgs.corpus, "Corpus directory (training code only)")
      ->required();
  searchCmd->add_option("-o,--output", searchArgs.output, "Flip-set policy file to write")
      ->required();
  searchCmd->add_option("--max-decisions", searchArgs.maxDecisions, "Decisions tried per module")
      ->capture_default_str();
  searchCmd
      ->add_option("--max-seconds", searchArgs.maxSeconds,
                   "Time budget: the search stops when it is spent, within a round if "
                   "need be (checked every --checkpoint-modules modules; the modules searched "
                   "so far keep their flips); 0: no limit")
      ->capture_default_str();
  searchCmd->add_option("--sample", searchArgs.sample,
                        "Search this many modules (bucket round robin by size) instead of all");
  searchCmd->add_option("--seed", searchArgs.seed, "Seed for --sample and --order random")
      ->capture_default_str();
  searchCmd
      ->add_option("--order", searchArgs.order,
                   "Which decision a round tries: first (the r-th in round r), random (a "
                   "seeded order over the whole trajectory) or guided (where the start policy "
                   "overrules the compiler first, then its smallest logit margins)")
      ->check(CLI::IsMember({"first", "random", "guided"}))
      ->capture_default_str();
  searchCmd
      ->add_option("--trials-per-round", searchArgs.trialsPerRound,
                   "Decisions a module tries per round when one compile answers them all "
                   "(incremental evaluation); the search's result does not depend on it")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  searchCmd->add_option("--tried", searchArgs.tried,
                        "Also write every tried decision with its outcome as a trace (labels "
                        "for bc-train --imitate-actions)");
  searchCmd->add_option(
      "--start-policy", searchArgs.startPolicy,
      "Start from this policy's decisions instead of -Oz's (a policy file or name): its "
      "trajectories become flips, and the search tries decisions at the states it reaches and "
      "can undo its flips (labels for a policy trained on an earlier search; DAgger)");
  searchCmd->add_flag(
      "--callee-consistent", searchArgs.calleeConsistent,
      "Search callee-consistent decisions (mlgo-eval consistent): a tried decision at a "
      "discardable callee's first -Oz-inlined call flips all of that callee's -Oz-inlined "
      "calls in the module, a group no single flip reaches; the written policy is consistent "
      "(in-process backend only)");
  searchCmd
      ->add_option("--flips-from", searchArgs.flipsFrom,
                   "Try only decisions whose action in the current trajectory is this one "
                   "(inlining: 1, every flip declines an inline; 0, every flip inlines); "
                   "default: both ways")
      ->check(CLI::IsMember({0, 1}));
  searchCmd
      ->add_option("--pairs", searchArgs.pairFirsts,
                   "Pairs where single flips find nothing: after the rounds, each module that "
                   "kept no flip takes its N cheapest tried flips as first steps and tries each "
                   "with one of the next --pair-seconds decisions of its trajectory, keeping "
                   "the best pair if the module gets smaller (0: no pairs)")
      ->capture_default_str();
  searchCmd
      ->add_option("--pair-seconds", searchArgs.pairSeconds,
                   "With --pairs: the decisions after a first step tried with it")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  searchCmd->add_option(
      "--checkpoint", searchArgs.checkpoint,
      "Save the search's progress to this file as it goes (with FILE.tried.h5, a copy of "
      "--tried's rows) and, if it exists, continue from it: the same trials and flips as an "
      "uninterrupted search; --max-seconds counts the time before the interruption. Removed "
      "when the search ends");
  searchCmd
      ->add_option("--checkpoint-modules", searchArgs.checkpointModules,
                   "With --checkpoint or --max-seconds: modules compiled between two "
                   "checkpoints (and budget checks) within a round")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  searchCmd->add_flag("--time-report", searchArgs.timeReport,
                      "Print where the workers' compiles spent their time, by phase (full "
                      "compiles and forked trials apart)");
  searchArgs.evaluator.addTo(*searchCmd);
  return searchCmd;
}

CLI::App* defineVocabCommand(CLI::App& app, VocabArgs& vocab) {
  CLI::App* vocabCmd =
      app.add_subcommand("vocab", "Build a quantile vocabulary (.buckets files) from traces");
  vocabCmd->add_option("traces", vocab.traces, "Trace files (mlgo-eval run --trace)")->required();
  vocabCmd->add_option("-o,--output", vocab.output, "Vocabulary directory")->required();
  vocabCmd->add_option("--quantiles", vocab.options.quantiles, "Boundaries per feature")
      ->capture_default_str();
  vocabCmd
      ->add_option("--sampling-fraction", vocab.options.samplingFraction,
                   "Share of values the quantiles are computed from")
      ->capture_default_str();
  vocabCmd->add_option("--seed", vocab.options.seed, "Seed for subsampling")->capture_default_str();
  return vocabCmd;
}

CLI::App* defineInitCommand(CLI::App& app, InitArgs& init) {
  CLI::App* initCmd = app.add_subcommand(
      "init-mlp", "Write a randomly initialised MLP policy over a trace's features");
  initCmd->add_option("--trace", init.trace, "A trace file (gives clang's feature specs)")
      ->required();
  initCmd
      ->add_option("--task", init.task,
                   "The task the trace is of: its default decision is kept out of the "
                   "network's inputs and is the residual's feature")
      ->capture_default_str()
      ->check(CLI::IsMember(evaluators::CompilerTask::names()));
  initCmd->add_option("--vocab", init.vocabulary, "Vocabulary directory")->required();
  initCmd->add_option("-o,--output", init.output, "Policy file to write")->required();
  init.mlpFlags = apps::SchemaFlags::bindAlone(*initCmd, policies::MlpOptions::schema(), init.mlp);
  initCmd->add_option("--seed", init.seed, "Initialisation seed")->capture_default_str();
  return initCmd;
}

CLI::App* defineChooseCommand(CLI::App& app, ChooseArgs& choose) {
  CLI::App* chooseCmd = app.add_subcommand(
      "choose", "Choose the policy to ship from its candidates' validation reports (mlgo-eval "
                "report --values): no code base above the baseline, then the smallest total; "
                "prints the chosen name");
  chooseCmd
      ->add_option("candidates", choose.candidates,
                   "NAME=VALUES-FILE per candidate, in order (ties go to the first)")
      ->required();
  chooseCmd->add_flag("--verdict", choose.verdict,
                      "Print one report's verdict instead: its total against the baseline and "
                      "the code bases above it");
  return chooseCmd;
}

CLI::App* defineEnsembleCommand(CLI::App& app, EnsembleArgs& ensemble) {
  CLI::App* ensembleCmd = app.add_subcommand(
      "ensemble", "Write the mean-logit ensemble of MLP policies (same inputs, vocabulary and "
                  "architecture) as one wider MLP policy");
  ensembleCmd->add_option("policies", ensemble.policies, "MLP policy files")->required();
  ensembleCmd->add_option("-o,--output", ensemble.output, "The ensemble's policy file")->required();
  ensembleCmd->add_flag(
      "--unanimous", ensemble.unanimous,
      "Residual members: keep the compiler's own decision unless every member flips it (each "
      "with its own margin), instead of the mean of their logits");
  return ensembleCmd;
}

CLI::App* defineMarginCommand(CLI::App& app, MarginArgs& margin) {
  CLI::App* marginCmd = app.add_subcommand(
      "margin", "Write a residual policy with another margin: it keeps the compiler's own "
                "decision unless its logit difference exceeds the margin (a larger margin "
                "flips fewer, more confident decisions: the rule that makes a policy safe alone), "
                "or that overrules it in one direction only (--keep)");
  marginCmd
      ->add_option("policy", margin.policy,
                   "Residual MLP policy file or a shipped policy's name (inlining-oz)")
      ->required();
  marginCmd->add_option("--margin", margin.margin, "The new margin (> 0); default: the policy's")
      ->check(CLI::NonNegativeNumber);
  CLI::Option* keep =
      marginCmd
          ->add_option("--keep", margin.keep,
                       "A decision of the compiler's the policy never overrules (repeatable): "
                       "for inlining, 1 keeps every inline -Oz makes (the policy only "
                       "inlines more), 0 every call -Oz declines (the policy only declines)")
          ->check(CLI::NonNegativeNumber);
  marginCmd
      ->add_flag("--keep-none", margin.keepBoth,
                 "Overrule the compiler both ways again (drops a policy's --keep)")
      ->excludes(keep);
  marginCmd->add_option("-o,--output", margin.output, "Policy file to write")->required();
  return marginCmd;
}

CLI::App* defineRewriteCommand(CLI::App& app, RewriteArgs& rewrite) {
  CLI::App* command = app.add_subcommand(
      "rewrite-policy", "Write a policy file in this version's format, with the same contents "
                        "(e.g. a pipeline choice's examples as base64, which a build reads "
                        "faster)");
  command->add_option("policy", rewrite.policy, "Policy file or a shipped policy's name")
      ->required();
  command->add_option("-o,--output", rewrite.output, "Policy file to write")->required();
  command->add_flag("--blobs", rewrite.blobs,
                    "Write the blob form (version 4): the doubles (parameters, vocabularies, a "
                    "choice's examples) as raw bytes after the JSON, which a compile reads without "
                    "parsing them; default: base64 text in the JSON");
  return command;
}

} // namespace

int main(int argc, char** argv) {
  mlgo::apps::reportFileSizeLimitsAsWriteErrors();
  mlgo::apps::ClusterSession cluster("mlgo-eval");
  if (cluster.exitCode())
    return *cluster.exitCode();
  CLI::App app{"mlgo-eval: compile a corpus under an inlining policy with clang-22 and compare "
               ".text with plain -Oz"};
  app.set_config("--config", "", "Read options from a TOML file");
  mlgo::apps::useStrictTomlConfig(app);
  app.require_subcommand(1);

  RunArgs run;
  ReportArgs report;
  SearchArgs search;
  VocabArgs vocab;
  Ir2VecArgs ir2vec;
  InitArgs init;
  ChooseArgs choose;
  EnsembleArgs ensemble;
  MarginArgs margin;
  RewriteArgs rewrite;
  ConsistentArgs consistent;
  PipelineSearchArgs pipelineSearch;
  mlgo::apps::RunCostArgs runCost;
  // Each subcommand and what runs it, in --help's order.
  const std::pair<CLI::App*, std::function<int()>> commands[] = {
      {defineRunCommand(app, run), [&] { return runEvaluate(run); }},
      {defineReportCommand(app, report), [&] { return runReport(report); }},
      {defineSearchCommand(app, search), [&] { return runSearch(search); }},
      {definePipelineSearchCommand(app, pipelineSearch),
       [&] { return runPipelineSearch(pipelineSearch); }},
      {defineVocabCommand(app, vocab), [&] { return runVocab(vocab); }},
      {addIr2VecCommand(app, ir2vec), [&] { return runIr2VecVocabulary(ir2vec); }},
      {defineInitCommand(app, init), [&] { return runInitMlp(init); }},
      {defineChooseCommand(app, choose), [&] { return runChoose(choose); }},
      {defineEnsembleCommand(app, ensemble), [&] { return runEnsemble(ensemble); }},
      {defineMarginCommand(app, margin), [&] { return runMargin(margin); }},
      {defineRewriteCommand(app, rewrite), [&] { return runRewrite(rewrite); }},
      {defineConsistentCommand(app, consistent), [&] { return runConsistent(consistent); }},
      {mlgo::apps::defineRunCostCommand(app, runCost),
       [&] { return mlgo::apps::runRunCost(runCost); }},
  };
  CLI11_PARSE(app, argc, argv);
  for (const auto& [command, body] : commands)
    if (*command)
      return mlgo::apps::withStdoutWritten(body(), "mlgo-eval");
  return 1;
}
