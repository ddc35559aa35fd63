#include "mlgo/training/PipelineEs.h"

#include "mlgo/support/Files.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <limits>
#include <sstream>

namespace mlgo::training {

using policies::PassPipeline;

namespace {

// A point's pipeline as which changes are on: '1' per θ_i > 0. Distinct
// masks are distinct pipelines (the changes are), so it keys the cache.
std::string maskOf(std::span<const double> theta) {
  std::string mask(theta.size(), '0');
  for (size_t i = 0; i < theta.size(); ++i)
    if (theta[i] > 0)
      mask[i] = '1';
  return mask;
}

PassPipeline pipelineOfMask(const std::string& mask) {
  static const std::vector<PassPipeline> moves = structuredMoves();
  PassPipeline pipeline;
  for (size_t i = 0; i < mask.size() && i < moves.size(); ++i)
    if (mask[i] == '1')
      pipeline = combinedPipeline(pipeline, moves[i]);
  return pipeline.canonical();
}

double rewardOf(const ProgramPipelineStep& result, double baseline) {
  return baseline > 0 ? (baseline - result.objective) / baseline * 100 : 0;
}

// What a run carries from step to step besides the optimiser: -Oz's total,
// the best pipeline so far (as its mask) and every pipeline compiled.
struct RunState {
  int64_t stepsDone = 0;
  double baseline = 0;
  std::string bestMask;
  ProgramPipelineStep best;
  std::map<std::string, std::optional<ProgramPipelineStep>> cache;
};

// The checkpoint's identity line: a checkpoint from other modules, seed,
// weight or optimiser is refused rather than resumed into a different run.
std::string runIdentity(std::span<const corpus::ModuleSpec* const> modules,
                        const PipelineEsOptions& options) {
  std::string names;
  for (const corpus::ModuleSpec* module : modules)
    names += module->name + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "run %zu %016" PRIx64 " %" PRIu64 " %.17g %s %.17g ",
                modules.size(), hashBytes(names), options.seed, options.regressionWeight,
                std::string(es::optimizerKindName(es::kindOf(options.optimizer))).c_str(),
                options.startMargin);
  return line + options.start.describe() +
         (options.inliner ? " inliner " + options.inliner->describe() : "");
}

std::string resultText(const std::optional<ProgramPipelineStep>& result) {
  if (!result)
    return "failed";
  char text[128];
  std::snprintf(text, sizeof text, "%.17g %.17g %zu", result->total, result->objective,
                result->larger);
  return text;
}

std::optional<ProgramPipelineStep> parseResult(std::istringstream& in, const std::string& mask) {
  std::string first;
  in >> first;
  if (first == "failed")
    return std::nullopt;
  ProgramPipelineStep result;
  result.pipeline = pipelineOfMask(mask);
  result.total = std::stod(first);
  in >> result.objective >> result.larger;
  return result;
}

std::string checkpointText(const std::string& identity, const RunState& state,
                           const StateArchive& optimizer) {
  std::ostringstream out;
  out.precision(17);
  out << "mlgo-pipeline-es 1\n"
      << identity << "\nsteps " << state.stepsDone << "\nbaseline " << state.baseline << "\nbest "
      << state.bestMask << " " << resultText(state.best) << "\n";
  for (const auto& [name, value] : optimizer.integers())
    out << "int " << name << " " << value << "\n";
  for (const auto& [name, values] : optimizer.vectors()) {
    out << "vec " << name << " " << values.size();
    for (double v : values)
      out << " " << v;
    out << "\n";
  }
  for (const auto& [mask, result] : state.cache)
    out << "cache " << mask << " " << resultText(result) << "\n";
  return out.str();
}

Status readCheckpoint(const std::filesystem::path& file, const std::string& identity,
                      RunState& state, StateArchive& optimizer) {
  Expected<std::string> bytes = readFileBytes(file);
  if (!bytes)
    return bytes.error();
  std::istringstream lines(*bytes);
  std::string line;
  auto bad = [&](const std::string& what) { return makeError(file.string() + ": " + what); };
  if (!std::getline(lines, line) || line != "mlgo-pipeline-es 1")
    return bad("not a pipeline ES checkpoint");
  if (!std::getline(lines, line) || line != identity)
    return bad(
        "from another run (modules, seed, regression weight, optimiser, margin or start differ: "
        "its \"" +
        line + "\", this run's \"" + identity + "\")");
  try {
    while (std::getline(lines, line)) {
      std::istringstream in(line);
      std::string kind, name;
      in >> kind;
      if (kind == "steps") {
        in >> state.stepsDone;
      } else if (kind == "baseline") {
        in >> state.baseline;
      } else if (kind == "best") {
        in >> state.bestMask;
        std::optional<ProgramPipelineStep> best = parseResult(in, state.bestMask);
        if (!best)
          return bad("its best pipeline failed");
        state.best = *best;
      } else if (kind == "int") {
        int64_t value = 0;
        in >> name >> value;
        optimizer.setInteger(name, value);
      } else if (kind == "vec") {
        size_t size = 0;
        in >> name >> size;
        std::vector<double> values(size);
        for (double& v : values)
          in >> v;
        optimizer.setVector(name, std::move(values));
      } else if (kind == "cache") {
        in >> name;
        state.cache[name] = parseResult(in, name);
      } else {
        return bad("unknown line \"" + line + "\"");
      }
      if (in.fail())
        return bad("malformed line \"" + line + "\"");
    }
  } catch (const std::exception&) {
    return bad("malformed number in \"" + line + "\"");
  }
  return Status::ok();
}

} // namespace

Status PipelineEsOptions::validate() const {
  if (steps < 1)
    return makeError("steps must be at least 1");
  if (!(regressionWeight >= 0))
    return makeError("the regression weight must be at least 0");
  if (!(startMargin > 0) || !std::isfinite(startMargin))
    return makeError("the start margin must be positive");
  if (Expected<std::vector<double>> theta = encodePipeline(this->start, startMargin); !theta)
    return makeError("start: " + theta.error().message);
  return es::validateOptimizer(optimizer);
}

PassPipeline decodePipeline(std::span<const double> theta) {
  return pipelineOfMask(maskOf(theta));
}

Expected<std::vector<double>> encodePipeline(const PassPipeline& pipeline, double margin) {
  if (!pipeline.replacement.empty())
    return makeError("a replacement pipeline is not in the structured space");
  const std::vector<PassPipeline> moves = structuredMoves();
  std::vector<double> theta(moves.size(), -margin);
  for (const policies::SkippedPass& skip : pipeline.skipped) {
    auto move = std::find_if(moves.begin(), moves.end(), [&](const PassPipeline& m) {
      return m.skipped.size() == 1 && m.skipped[0] == skip;
    });
    if (move == moves.end())
      return makeError("skipping " + skip.text() + " is not one of the structured space's changes");
    theta[static_cast<size_t>(move - moves.begin())] = margin;
  }
  for (const auto& addition : pipeline.additions) {
    auto move = std::find_if(moves.begin(), moves.end(), [&](const PassPipeline& m) {
      return m.additions.size() == 1 && m.additions[0] == addition;
    });
    if (move == moves.end())
      return makeError("adding " + addition.second + " at " +
                       std::string(policies::extensionPointName(addition.first)) +
                       " is not one of the structured space's changes");
    theta[static_cast<size_t>(move - moves.begin())] = margin;
  }
  return theta;
}

namespace {

// Compiles the masks' pipelines (once each), into the cache; with `verify`,
// cached ones again, failing on a difference.
Status compileMasks(evaluators::Scorer& evaluator,
                    std::span<const corpus::ModuleSpec* const> modules,
                    const std::vector<std::string>& masks, const PipelineEsOptions& options,
                    RunState& state, PipelineEsSummary& summary, size_t& hits) {
  std::vector<std::string> wanted;
  for (const std::string& mask : masks) {
    if (std::find(wanted.begin(), wanted.end(), mask) != wanted.end())
      continue;
    const bool cached = state.cache.count(mask) > 0;
    hits += cached;
    if (!cached || options.verifyCache)
      wanted.push_back(mask);
  }
  if (wanted.empty())
    return Status::ok();
  std::vector<PassPipeline> pipelines;
  for (const std::string& mask : wanted)
    pipelines.push_back(pipelineOfMask(mask));
  ProgramEvaluation evaluation = evaluateProgramPipelines(
      evaluator, modules, pipelines, options.regressionWeight, options.inliner);
  if (state.baseline == 0)
    state.baseline = evaluation.baseline;
  else if (evaluation.baseline != state.baseline)
    return makeError("-Oz's total changed during the run (" + std::to_string(state.baseline) +
                     ", now " + std::to_string(evaluation.baseline) + ")");
  summary.evaluations += pipelines.size();
  summary.compiled += evaluation.compiled;
  for (size_t i = 0; i < wanted.size(); ++i) {
    auto cached = state.cache.find(wanted[i]);
    if (cached != state.cache.end()) {
      if (resultText(cached->second) != resultText(evaluation.pipelines[i]))
        return makeError("cache verification failed for " + pipelines[i].describe() + ": cached " +
                         resultText(cached->second) + ", compiled " +
                         resultText(evaluation.pipelines[i]));
      continue;
    }
    state.cache[wanted[i]] = evaluation.pipelines[i];
  }
  return Status::ok();
}

void keepBest(const std::string& mask, RunState& state) {
  const std::optional<ProgramPipelineStep>& result = state.cache.at(mask);
  if (result && (state.bestMask.empty() || result->objective < state.best.objective)) {
    state.best = *result;
    state.bestMask = mask;
  }
}

} // namespace

Expected<PipelineEsSummary> optimiseProgramPipeline(
    evaluators::Scorer& evaluator, std::span<const corpus::ModuleSpec* const> modules,
    const PipelineEsOptions& options, const std::function<void(const PipelineEsStep&)>& progress) {
  MLGO_TRY(options.validate());
  const auto started = std::chrono::steady_clock::now();
  Expected<std::vector<double>> start = encodePipeline(options.start, options.startMargin);
  const Eigen::VectorXd x0 =
      Eigen::Map<const Eigen::VectorXd>(start->data(), static_cast<Eigen::Index>(start->size()));
  Expected<std::unique_ptr<es::BlackboxOptimizer>> optimizer =
      es::createOptimizer(options.optimizer, x0, std::nullopt, options.seed);
  if (!optimizer)
    return optimizer.error();
  es::BlackboxOptimizer& es = **optimizer;

  PipelineEsSummary summary;
  RunState state;
  const std::string identity = runIdentity(modules, options);
  const std::string startMask = maskOf(*start);
  if (!options.checkpoint.empty() && std::filesystem::exists(options.checkpoint)) {
    StateArchive archive;
    MLGO_TRY(readCheckpoint(options.checkpoint, identity, state, archive));
    if (Status restored = es.restoreState(archive); !restored)
      return makeError(options.checkpoint.string() + ": " + restored.error().message);
    summary.resumedAfter = state.stepsDone;
  } else {
    // The start is the first contender, so the result is never worse.
    size_t hits = 0;
    MLGO_TRY(compileMasks(evaluator, modules, {startMask}, options, state, summary, hits));
    if (!state.cache.at(startMask))
      return makeError("the start pipeline " + options.start.describe() + " fails on some module");
    keepBest(startMask, state);
  }
  summary.baseline = state.baseline;
  if (auto it = state.cache.find(startMask); it != state.cache.end())
    summary.start = it->second;

  for (int64_t step = state.stepsDone; step < options.steps; ++step) {
    const es::Population population = es.ask();
    std::vector<std::string> masks;
    std::vector<double> theta(population.dimension());
    for (size_t c = 0; c < population.size(); ++c) {
      population.candidate(c, theta);
      masks.push_back(maskOf(theta));
    }
    PipelineEsStep account;
    account.step = step;
    account.candidates = masks.size();
    std::vector<std::string> distinct = masks;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    account.distinct = distinct.size();
    MLGO_TRY(compileMasks(evaluator, modules, masks, options, state, summary, account.cacheHits));
    summary.cacheHits += account.cacheHits;
    std::vector<std::optional<double>> rewards;
    double sum = 0;
    size_t succeeded = 0;
    account.bestReward = -std::numeric_limits<double>::infinity();
    for (const std::string& mask : masks) {
      const std::optional<ProgramPipelineStep>& result = state.cache.at(mask);
      rewards.push_back(result ? std::optional(rewardOf(*result, state.baseline)) : std::nullopt);
      if (rewards.back()) {
        sum += *rewards.back();
        ++succeeded;
        account.bestReward = std::max(account.bestReward, *rewards.back());
      }
      keepBest(mask, state);
    }
    account.meanReward = succeeded > 0 ? sum / static_cast<double>(succeeded) : 0;
    Expected<es::StepRecord> record = es.tell(rewards);
    if (!record)
      return record.error();
    const Eigen::VectorXd& point = es.point();
    account.centre = decodePipeline({point.data(), static_cast<size_t>(point.size())}).describe();
    account.bestObjective = state.best.objective;
    state.stepsDone = step + 1;
    if (!options.checkpoint.empty())
      MLGO_TRY(
          writeFileAtomically(options.checkpoint, checkpointText(identity, state, es.saveState())));
    summary.steps.push_back(account);
    if (progress)
      progress(account);
  }
  summary.best = state.best;
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

} // namespace mlgo::training
