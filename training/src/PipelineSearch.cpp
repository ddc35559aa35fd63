#include "mlgo/training/PipelineSearch.h"

#include "TrainerSupport.h"

#include "mlgo/policies/PolicyFile.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace mlgo::training {

using policies::ExtensionPoint;
using policies::PassPipeline;

namespace {

// Clean-ups added after -Oz's own passes: what a size-minded engineer tries
// first (another simplification round, function merging, global clean-up).
// instcombine without its fixpoint check, as the default pipelines run it
// (opt's textual default verifies and aborts). No gvn-sink, here or in the
// sequence list: clang-22's GVNSink orders by pointer values (LLVM issue
// #77852, fixed after 22 by PR #205952), so in a long-lived worker its
// output depends on the heap's history (zlib's trees.o: 5938 to 6083 bytes
// for one pipeline) and no evaluation of it is exact.
const std::vector<std::pair<ExtensionPoint, std::string>>& cleanUps() {
  static const std::vector<std::pair<ExtensionPoint, std::string>> menu{
      {ExtensionPoint::OptimizerLast, "function(instcombine<no-verify-fixpoint>,simplifycfg)"},
      {ExtensionPoint::OptimizerLast, "mergefunc"},
      {ExtensionPoint::OptimizerLast,
       "function(early-cse<memssa>,gvn,instcombine<no-verify-fixpoint>,simplifycfg)"},
      {ExtensionPoint::OptimizerLast, "ipsccp,globalopt,deadargelim,globaldce"},
      {ExtensionPoint::OptimizerLast,
       "function(jump-threading,simplifycfg,instcombine<no-verify-fixpoint>)"},
      {ExtensionPoint::OptimizerLast, "function(dse,adce,simplifycfg)"},
      {ExtensionPoint::ScalarOptimizerLate, "gvn-hoist,simplifycfg"},
      {ExtensionPoint::CgsccOptimizerLate, "function(instcombine<no-verify-fixpoint>,simplifycfg)"},
  };
  return menu;
}

// Pass parameters the structured space may set (--parameter-moves): a
// pass of -Oz's text with parameters other than -Oz's, each chosen because
// it trades speed for size in the pass itself (partial redundancy
// elimination and load PRE copy code into predecessors; speculation hoists
// code out of conditions; splitting a footer block adds one).
const std::vector<std::pair<std::string, std::string>>& parameterVariants() {
  static const std::vector<std::pair<std::string, std::string>> menu{
      {"gvn", "no-pre"},
      {"gvn", "no-load-pre"},
      {"gvn", "no-pre;no-load-pre;no-memdep;memoryssa"},
      {"licm", "no-allowspeculation"},
      {"mldst-motion", "split-footer-bb"},
      {"early-cse", "memssa"},
      {"sroa", "preserve-cfg"},
  };
  return menu;
}

// The sequence space's pass list (function passes unless marked), for
// random suffixes after -Oz: CompilerGym's action list, reduced to what
// can shrink -Oz's code.
const std::vector<std::string>& sequencePasses() {
  static const std::vector<std::string> passes{
      "function(instcombine<no-verify-fixpoint>)",
      "function(simplifycfg)",
      "function(sroa)",
      "function(early-cse<memssa>)",
      "function(gvn)",
      "function(newgvn)",
      "function(sccp)",
      "function(adce)",
      "function(bdce)",
      "function(dse)",
      "function(jump-threading)",
      "function(correlated-propagation)",
      "function(reassociate)",
      "function(tailcallelim)",
      "function(instsimplify)",
      "function(aggressive-instcombine)",
      "function(gvn-hoist)",
      "function(mldst-motion)",
      "function(loop-mssa(licm))",
      "function(loop(loop-deletion))",
      "function(loop(loop-idiom))",
      "function(constraint-elimination)",
      "function(div-rem-pairs)",
      "ipsccp",
      "globalopt",
      "globaldce",
      "deadargelim",
      "constmerge",
      "mergefunc",
  };
  return passes;
}

struct Tried {
  PassPipeline pipeline;
  std::optional<double> measured;
};

// One evaluation of `pipelines` on one module.
std::vector<Tried> tryAll(evaluators::Scorer& evaluator, const corpus::ModuleSpec* module,
                          std::vector<PassPipeline> pipelines, ModulePipelineSearch& search,
                          std::optional<double>& baseline) {
  std::vector<policies::PipelinePolicy> policies;
  policies.reserve(pipelines.size());
  for (PassPipeline& pipeline : pipelines)
    policies.emplace_back(std::move(pipeline));
  evaluators::EvaluationRequest request;
  request.modules = {module};
  for (const policies::PipelinePolicy& policy : policies)
    request.candidates.push_back(&policy);
  evaluators::EvaluationResult result = evaluator.evaluate(request);
  baseline = result.baselineMeasure(0);
  std::vector<Tried> tried;
  for (size_t c = 0; c < policies.size(); ++c) {
    const evaluators::JobResult& job = result.job(c, 0);
    ++search.compiled;
    if (!job.ok())
      ++search.failed;
    tried.push_back(
        {policies[c].pipeline(), job.ok() ? std::optional(result.measured(job)) : std::nullopt});
  }
  return tried;
}

void searchModule(evaluators::Scorer& evaluator, size_t index, const PipelineSearchOptions& options,
                  ModulePipelineSearch& search) {
  std::vector<PassPipeline> first;
  if (options.space == PipelineSpace::Structured) {
    first = structuredMoves(options.parameterMoves);
  } else {
    first = standardReplacements();
    for (size_t r = 0; r < options.randomSequences; ++r)
      first.push_back(randomReplacement(options.seed, index, r, options.sequenceLength));
  }
  std::vector<Tried> singles = tryAll(evaluator, search.module, first, search, search.baseline);
  if (!search.baseline)
    return;
  search.best = *search.baseline;
  for (const Tried& t : singles)
    if (t.measured && *t.measured < *search.best) {
      search.best = t.measured;
      search.pipeline = t.pipeline;
    }
  search.bestSingle = search.best;
  if (options.space != PipelineSpace::Structured)
    return;
  // Greedy combination: the best so far with each improving single it lacks.
  std::vector<Tried> improving;
  for (const Tried& t : singles)
    if (t.measured && *t.measured < *search.baseline)
      improving.push_back(t);
  std::stable_sort(improving.begin(), improving.end(),
                   [](const Tried& a, const Tried& b) { return *a.measured < *b.measured; });
  if (improving.size() > options.carried)
    improving.resize(options.carried);
  for (size_t round = 0; round < options.rounds && improving.size() > 1; ++round) {
    std::vector<PassPipeline> combos;
    for (const Tried& t : improving) {
      PassPipeline next = combinedPipeline(search.pipeline, t.pipeline);
      if (next != search.pipeline.canonical() && next.validate() &&
          std::find(combos.begin(), combos.end(), next) == combos.end())
        combos.push_back(std::move(next));
    }
    if (combos.empty())
      break;
    std::optional<double> unused;
    const std::optional<double> before = search.best;
    for (const Tried& t : tryAll(evaluator, search.module, combos, search, unused))
      if (t.measured && *t.measured < *search.best) {
        search.best = t.measured;
        search.pipeline = t.pipeline;
      }
    if (search.best == before)
      break;
  }
}

} // namespace

std::string_view pipelineSpaceName(PipelineSpace space) {
  return space == PipelineSpace::Structured ? "structured" : "sequence";
}

Expected<PipelineSpace> parsePipelineSpace(std::string_view name) {
  if (name == "structured")
    return PipelineSpace::Structured;
  if (name == "sequence")
    return PipelineSpace::Sequence;
  return makeError("unknown pipeline space \"" + std::string(name) + "\" (structured or sequence)");
}

Status PipelineSearchOptions::validate() const {
  if (space == PipelineSpace::Structured && rounds > 0 && carried < 2)
    return makeError("carried must be at least 2 for combination rounds (got " +
                     std::to_string(carried) + ")");
  if (space == PipelineSpace::Sequence && randomSequences > 0 && sequenceLength == 0)
    return makeError("sequence length must be positive");
  if (!(regressionWeight >= 0))
    return makeError("the regression weight must be at least 0");
  if (!start.replacement.empty())
    return makeError("the program search starts from a structured pipeline, not a replacement");
  MLGO_TRY(start.validate());
  return Status::ok();
}

PassPipeline combinedPipeline(const PassPipeline& a, const PassPipeline& b) {
  PassPipeline result = a;
  for (const policies::SkippedPass& skip : b.skipped)
    if (std::find(result.skipped.begin(), result.skipped.end(), skip) == result.skipped.end())
      result.skipped.push_back(skip);
  for (const auto& addition : b.additions)
    if (std::find(result.additions.begin(), result.additions.end(), addition) ==
        result.additions.end())
      result.additions.push_back(addition);
  // One set of parameters per pass: b's replace a's.
  for (const auto& [pass, values] : b.parameters) {
    std::erase_if(result.parameters, [&](const auto& set) { return set.first == pass; });
    result.parameters.emplace_back(pass, values);
  }
  return result.canonical();
}

std::vector<PassPipeline> structuredMoves(bool withParameters) {
  std::vector<PassPipeline> moves;
  for (const std::string& passClass : policies::ozPassClasses()) {
    PassPipeline skip;
    skip.skipped = {{passClass, std::nullopt}};
    moves.push_back(std::move(skip));
  }
  for (const auto& addition : cleanUps()) {
    PassPipeline add;
    add.additions = {addition};
    moves.push_back(std::move(add));
  }
  if (withParameters)
    for (const auto& set : parameterVariants()) {
      PassPipeline tuned;
      tuned.parameters = {set};
      moves.push_back(std::move(tuned));
    }
  return moves;
}

std::vector<PassPipeline> standardReplacements() {
  std::vector<PassPipeline> standard;
  for (const char* text :
       {"default<O1>", "default<O2>", "default<Os>", "default<Oz>,default<Oz>",
        "default<O1>,default<Oz>",
        "default<Oz>,function(instcombine<no-verify-fixpoint>,simplifycfg),globaldce"}) {
    PassPipeline replaced;
    replaced.replacement = text;
    standard.push_back(std::move(replaced));
  }
  return standard;
}

PassPipeline randomReplacement(uint64_t seed, uint64_t moduleIndex, uint64_t index, size_t length) {
  RandomStream draws(deriveKey({seed, moduleIndex, index, 0x9a55e5}));
  const std::vector<std::string>& passes = sequencePasses();
  PassPipeline replaced;
  replaced.replacement = "default<Oz>";
  for (size_t i = 0; i < length; ++i)
    replaced.replacement += "," + passes[draws.uniformBelow(passes.size())];
  return replaced;
}

namespace {

// One move of the program search: one change (a skip or an addition) added
// to a pipeline, or, from a warm start, one of the start's changes removed.
struct ProgramMove {
  PassPipeline change;
  bool removes = false;

  PassPipeline appliedTo(const PassPipeline& pipeline) const {
    if (!removes)
      return combinedPipeline(pipeline, change);
    PassPipeline result = pipeline;
    std::erase_if(result.skipped, [&](const policies::SkippedPass& skip) {
      return std::find(change.skipped.begin(), change.skipped.end(), skip) != change.skipped.end();
    });
    std::erase_if(result.additions, [&](const auto& addition) {
      return std::find(change.additions.begin(), change.additions.end(), addition) !=
             change.additions.end();
    });
    std::erase_if(result.parameters, [&](const auto& set) {
      return std::find(change.parameters.begin(), change.parameters.end(), set) !=
             change.parameters.end();
    });
    return result.canonical();
  }
};

// Every change the start lacks, then every change it has, removed. A
// change that cannot join the start (pass parameters beside added passes)
// is left out.
std::vector<ProgramMove> programMoves(const PassPipeline& start, bool withParameters) {
  std::vector<ProgramMove> moves;
  for (PassPipeline& change : structuredMoves(withParameters))
    if (const PassPipeline joined = combinedPipeline(start, change);
        joined != start && joined.validate())
      moves.push_back({std::move(change), false});
  for (const policies::SkippedPass& skip : start.skipped)
    moves.push_back({PassPipeline{{skip}, {}, {}, {}}, true});
  for (const auto& addition : start.additions)
    moves.push_back({PassPipeline{{}, {addition}, {}, {}}, true});
  for (const auto& set : start.parameters)
    moves.push_back({PassPipeline{{}, {}, {}, {set}}, true});
  return moves;
}

} // namespace

PipelineMatrix measurePipelines(evaluators::Scorer& evaluator,
                                std::span<const corpus::ModuleSpec* const> modules,
                                const std::vector<PassPipeline>& pipelines,
                                std::shared_ptr<const policies::Policy> inliner) {
  std::vector<policies::PipelinePolicy> policies;
  policies.reserve(pipelines.size());
  for (const PassPipeline& pipeline : pipelines)
    policies.emplace_back(pipeline, inliner);
  return measurePipelinePolicies(evaluator, modules, policies);
}

PipelineMatrix measurePipelinePolicies(evaluators::Scorer& evaluator,
                                       std::span<const corpus::ModuleSpec* const> modules,
                                       std::span<const policies::PipelinePolicy> policies) {
  evaluators::EvaluationRequest request;
  request.modules.assign(modules.begin(), modules.end());
  request.showProgress = true;
  for (const policies::PipelinePolicy& policy : policies)
    request.candidates.push_back(&policy);
  evaluators::EvaluationResult result = evaluator.evaluate(request);
  PipelineMatrix matrix;
  for (size_t m = 0; m < modules.size(); ++m)
    matrix.baselines.push_back(result.baselineMeasure(m));
  matrix.measures.assign(
      policies.size(),
      std::vector<double>(modules.size(), std::numeric_limits<double>::quiet_NaN()));
  for (size_t c = 0; c < policies.size(); ++c)
    for (size_t m = 0; m < modules.size(); ++m)
      if (const evaluators::JobResult& job = result.job(c, m); job.ok())
        matrix.measures[c][m] = result.measured(job);
  return matrix;
}

namespace {

// Each pipeline's total, objective and modules above -Oz from its measures
// (nullopt: it failed a module whose baseline compiled).
ProgramEvaluation programSteps(const PipelineMatrix& matrix,
                               const std::vector<PassPipeline>& pipelines,
                               double regressionWeight) {
  ProgramEvaluation evaluation;
  for (const std::optional<double>& baseline : matrix.baselines)
    evaluation.baseline += baseline.value_or(0);
  for (size_t c = 0; c < pipelines.size(); ++c) {
    ProgramPipelineStep step{pipelines[c], 0, 0, 0};
    bool ok = true;
    for (size_t m = 0; m < matrix.baselines.size(); ++m) {
      if (!matrix.baselines[m])
        continue;
      const double measured = matrix.measures[c][m], baseline = *matrix.baselines[m];
      if (std::isnan(measured)) {
        ok = false;
        continue;
      }
      step.total += measured;
      step.objective += measured + regressionWeight * std::max(0.0, measured - baseline);
      step.larger += measured > baseline;
    }
    evaluation.pipelines.push_back(ok ? std::optional(step) : std::nullopt);
  }
  return evaluation;
}

bool sameMeasure(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// Pipelines compiled between two writes of a measure log.
constexpr size_t kLoggedChunk = 8;

// The pipelines' matrix, those in the log answered from it (and compiled
// anyway to compare, with verifyMeasureLog). The rest are compiled in
// chunks, each logged as it ends: a kill loses at most one chunk (the first
// round alone is every single change of the space).
Expected<PipelineMatrix> loggedMatrix(evaluators::Scorer& evaluator,
                                      std::span<const corpus::ModuleSpec* const> modules,
                                      const std::vector<PassPipeline>& pipelines,
                                      const PipelineSearchOptions& options,
                                      ProgramPipelineSearch& search) {
  ProgramMeasureLog& log = *options.measureLog;
  std::vector<PassPipeline> compile;
  std::vector<const std::vector<double>*> logged; // per compiled pipeline: as logged, or none
  for (const PassPipeline& pipeline : pipelines) {
    const std::vector<double>* found = log.find(pipeline); // map nodes: stable
    search.logged += found != nullptr;
    if ((!found || options.verifyMeasureLog) &&
        std::find(compile.begin(), compile.end(), pipeline) == compile.end()) {
      compile.push_back(pipeline);
      logged.push_back(found);
    }
  }
  for (size_t begin = 0; begin < compile.size() || (begin == 0 && !log.baselines());
       begin += kLoggedChunk) {
    const size_t end = std::min(compile.size(), begin + kLoggedChunk);
    const std::vector<PassPipeline> chunk(compile.begin() + static_cast<std::ptrdiff_t>(begin),
                                          compile.begin() + static_cast<std::ptrdiff_t>(end));
    const PipelineMatrix measured = measurePipelines(evaluator, modules, chunk, options.inliner);
    search.compiled += chunk.size() * modules.size();
    for (size_t m = 0; log.baselines() && m < modules.size(); ++m)
      if (measured.baselines[m] != (*log.baselines())[m])
        return makeError("the measure log's -Oz differs from a compile: module " +
                         modules[m]->name);
    for (size_t c = 0; c < chunk.size(); ++c)
      for (size_t m = 0; logged[begin + c] && m < modules.size(); ++m)
        if (!sameMeasure((*logged[begin + c])[m], measured.measures[c][m]))
          return makeError("the measure log differs from a compile: module " + modules[m]->name +
                           ", " + chunk[c].describe() + ": logged " +
                           std::to_string((*logged[begin + c])[m]) + ", compiled " +
                           std::to_string(measured.measures[c][m]));
    MLGO_TRY(log.record(measured.baselines, chunk, measured.measures)); // new ones only
  }
  PipelineMatrix matrix;
  matrix.baselines = *log.baselines();
  for (const PassPipeline& pipeline : pipelines)
    matrix.measures.push_back(*log.find(pipeline));
  return matrix;
}

} // namespace

ProgramEvaluation evaluateProgramPipelines(evaluators::Scorer& evaluator,
                                           std::span<const corpus::ModuleSpec* const> modules,
                                           const std::vector<PassPipeline>& pipelines,
                                           double regressionWeight,
                                           std::shared_ptr<const policies::Policy> inliner) {
  ProgramEvaluation evaluation =
      programSteps(measurePipelines(evaluator, modules, pipelines, std::move(inliner)), pipelines,
                   regressionWeight);
  evaluation.compiled = pipelines.size() * modules.size();
  return evaluation;
}

namespace {

// The pipelines' program results (from options.measureLog where it has
// them), counted into `search`.
Expected<std::vector<std::optional<ProgramPipelineStep>>>
programTotals(evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
              const std::vector<PassPipeline>& pipelines, const PipelineSearchOptions& options,
              ProgramPipelineSearch& search) {
  PipelineMatrix matrix;
  if (options.measureLog) {
    MLGO_ASSIGN_OR_RETURN(matrix, loggedMatrix(evaluator, modules, pipelines, options, search));
  } else {
    matrix = measurePipelines(evaluator, modules, pipelines, options.inliner);
    search.compiled += pipelines.size() * modules.size();
  }
  ProgramEvaluation evaluation = programSteps(matrix, pipelines, options.regressionWeight);
  search.baseline = evaluation.baseline;
  search.evaluations += pipelines.size();
  return std::move(evaluation.pipelines);
}

} // namespace

Expected<ProgramPipelineSearch>
searchProgramPipeline(evaluators::Scorer& evaluator,
                      std::span<const corpus::ModuleSpec* const> modules,
                      const PipelineSearchOptions& options, size_t rounds,
                      const std::function<void(const ProgramPipelineStep&)>& progress) {
  MLGO_TRY(options.validate());
  if (options.space != PipelineSpace::Structured)
    return makeError("a program's pipeline is searched in the structured space only");
  const auto started = std::chrono::steady_clock::now();
  ProgramPipelineSearch search;
  const PassPipeline start = options.start.canonical();
  const bool warm = !start.neutral() || options.inliner;
  // The start itself is evaluated first when it is not plain -Oz.
  const std::vector<ProgramMove> moves = programMoves(start, options.parameterMoves);
  std::vector<PassPipeline> firsts;
  if (warm)
    firsts.push_back(start);
  for (const ProgramMove& move : moves)
    firsts.push_back(move.appliedTo(start));
  MLGO_ASSIGN_OR_RETURN(const std::vector<std::optional<ProgramPipelineStep>> singles,
                        programTotals(evaluator, modules, firsts, options, search));
  search.best = search.baseline;
  double bestObjective = search.baseline;
  search.pipeline = start;
  if (warm) {
    if (!singles[0])
      return makeError("the start pipeline (" + start.describe() +
                       (options.inliner ? ", inliner " + options.inliner->describe() : "") +
                       ") failed on a module");
    search.start = singles[0];
    search.best = singles[0]->total;
    bestObjective = singles[0]->objective;
  }
  std::vector<size_t> improving; // indices into moves
  const size_t first = warm ? 1 : 0;
  for (size_t i = 0; i < moves.size(); ++i)
    if (singles[first + i] && singles[first + i]->objective < bestObjective)
      improving.push_back(i);
  std::stable_sort(improving.begin(), improving.end(), [&](size_t a, size_t b) {
    return singles[first + a]->objective < singles[first + b]->objective;
  });
  if (improving.size() > options.carried)
    improving.resize(options.carried);
  auto take = [&](const ProgramPipelineStep& step) {
    search.pipeline = step.pipeline;
    search.best = step.total;
    bestObjective = step.objective;
    search.steps.push_back(step);
    if (progress)
      progress(search.steps.back());
  };
  if (!improving.empty())
    take(*singles[first + improving[0]]);
  for (size_t round = 0; round < rounds; ++round) {
    std::vector<PassPipeline> combos;
    for (size_t i : improving) {
      PassPipeline next = moves[i].appliedTo(search.pipeline);
      if (next != search.pipeline.canonical() && next.validate() &&
          std::find(combos.begin(), combos.end(), next) == combos.end())
        combos.push_back(std::move(next));
    }
    if (combos.empty())
      break;
    MLGO_ASSIGN_OR_RETURN(const std::vector<std::optional<ProgramPipelineStep>> steps,
                          programTotals(evaluator, modules, combos, options, search));
    std::optional<size_t> bestCombo;
    for (size_t c = 0; c < combos.size(); ++c)
      if (steps[c] && steps[c]->objective < bestObjective &&
          (!bestCombo || steps[c]->objective < steps[*bestCombo]->objective))
        bestCombo = c;
    if (!bestCombo)
      break;
    take(*steps[*bestCombo]);
  }
  search.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return search;
}

Expected<PipelineSearchSummary>
searchPipelines(evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
                const PipelineSearchOptions& options,
                const std::function<void(const std::string&, size_t)>& progress) {
  MLGO_TRY(options.validate());
  const auto started = std::chrono::steady_clock::now();
  PipelineSearchSummary summary;
  summary.modules.resize(modules.size());
  for (size_t m = 0; m < modules.size(); ++m) {
    ModulePipelineSearch& search = summary.modules[m];
    search.module = modules[m];
    searchModule(evaluator, m, options, search);
    summary.compiled += search.compiled;
    summary.failed += search.failed;
    if (progress)
      progress(modules[m]->name, search.compiled);
  }
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

// The log's text: a magic line, the context, -Oz's row, then a row per
// pipeline (its canonical description, then one measure per module; "nan"
// for a failed job, "none" for a failed baseline). Measures are written
// with 17 significant digits, so they read back exactly.
namespace {
constexpr const char* kLogMagic = "mlgo-program-measures 1";

std::string measureText(double value) {
  return std::isnan(value) ? "nan" : detail::exactDecimal(value);
}

Expected<double> parseMeasure(const std::string& text, const std::string& where) {
  if (text == "nan")
    return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0')
    return makeError(where + ": \"" + text + "\" is not a measure");
  return value;
}

} // namespace

std::string ProgramMeasureLog::contextOf(const evaluators::Scorer& evaluator,
                                         std::span<const corpus::ModuleSpec* const> modules,
                                         const policies::Policy* inliner) {
  std::string names;
  for (const corpus::ModuleSpec* module : modules)
    names += module->name + "\n";
  uint64_t inlinerHash = 0;
  if (inliner)
    if (Expected<std::string> json = policies::policyToJson(*inliner))
      inlinerHash = hashBytes(*json);
  char text[160];
  std::snprintf(text, sizeof text, " %zu modules %016" PRIx64 ", inliner %016" PRIx64,
                modules.size(), hashBytes(names), inlinerHash);
  return evaluator.compilerIdentity() + ", " + evaluator.task().name + ", " +
         std::string(evaluators::measureName(evaluator.task().measure)) + "," + text;
}

Expected<ProgramMeasureLog> ProgramMeasureLog::open(std::filesystem::path path,
                                                    std::string context) {
  for (char& c : context)
    if (c == '\n' || c == '\t')
      c = ' ';
  ProgramMeasureLog log(path, context);
  std::error_code missing;
  if (!std::filesystem::exists(path, missing))
    return log;
  MLGO_TRY(checkRegularFile(path, "measure log"));
  std::ifstream in(path);
  std::string line;
  const std::string where = path.string();
  if (!std::getline(in, line) || line != kLogMagic)
    return makeError(where + ": not a program search's measure log (no \"" + kLogMagic +
                     "\" line)");
  if (!std::getline(in, line) || line != "context " + context)
    return makeError(where + ": the log of another search (" + line + "; this one: context " +
                     context + ")");
  size_t modules = 0;
  for (size_t number = 3; std::getline(in, line); ++number) {
    const std::vector<std::string> fields = detail::splitTabs(line);
    const std::string at = where + ":" + std::to_string(number);
    if (fields.empty())
      return makeError(at + ": an empty row");
    if (!log.baselines_) {
      if (fields[0] != "baseline")
        return makeError(at + ": -Oz's row (baseline) must come first");
      std::vector<std::optional<double>> baselines;
      for (size_t f = 1; f < fields.size(); ++f) {
        if (fields[f] == "none") {
          baselines.push_back(std::nullopt);
          continue;
        }
        MLGO_ASSIGN_OR_RETURN(double value, parseMeasure(fields[f], at));
        baselines.push_back(value);
      }
      modules = baselines.size();
      log.baselines_ = std::move(baselines);
      continue;
    }
    if (fields.size() != modules + 1)
      return makeError(at + ": " + std::to_string(fields.size() - 1) + " measures, not " +
                       std::to_string(modules) + " (a damaged log)");
    std::vector<double> measures;
    for (size_t f = 1; f < fields.size(); ++f) {
      MLGO_ASSIGN_OR_RETURN(double value, parseMeasure(fields[f], at));
      measures.push_back(value);
    }
    if (log.measures_.emplace(fields[0], std::move(measures)).second)
      log.order_.push_back(fields[0]);
  }
  return log;
}

const std::vector<double>* ProgramMeasureLog::find(const PassPipeline& pipeline) const {
  auto it = measures_.find(pipeline.canonical().describe());
  return it == measures_.end() ? nullptr : &it->second;
}

Status ProgramMeasureLog::record(const std::vector<std::optional<double>>& baselines,
                                 const std::vector<PassPipeline>& pipelines,
                                 const std::vector<std::vector<double>>& measures) {
  bool changed = !baselines_;
  if (!baselines_)
    baselines_ = baselines;
  for (size_t p = 0; p < pipelines.size(); ++p) {
    if (measures[p].size() != baselines_->size())
      return makeError("measure log: " + std::to_string(measures[p].size()) + " measures for " +
                       std::to_string(baselines_->size()) + " modules");
    const std::string key = pipelines[p].canonical().describe();
    if (measures_.emplace(key, measures[p]).second) {
      order_.push_back(key);
      changed = true;
    }
  }
  if (!changed)
    return Status::ok();
  std::string text = std::string(kLogMagic) + "\ncontext " + context_ + "\nbaseline";
  for (const std::optional<double>& baseline : *baselines_)
    text += "\t" + (baseline ? measureText(*baseline) : std::string("none"));
  text += "\n";
  for (const std::string& key : order_) {
    text += key;
    for (double value : measures_.at(key))
      text += "\t" + measureText(value);
    text += "\n";
  }
  if (Status written = writeFileAtomically(path_, text); !written)
    return makeError("measure log: " + written.error().message);
  return Status::ok();
}

} // namespace mlgo::training
