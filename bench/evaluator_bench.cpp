// Evaluator benchmark: prints figures, asserts nothing.
//  (a) modules/s compiling a corpus, same modules and workers:
//      plain `clang -cc1` per module (no policy, the floor of any process-
//      per-module tool); the same plain -Oz compile in in-process workers; an MLP policy through
//      clang's interactive channel
//      (--backend=clang); the MLP inside in-process workers without the
//      decision-sequence cache (--backend=inprocess --no-decision-cache);
//      a second pass of the same MLP with the cache (every sequence known);
//  (b) the same at 1 and 2 workers (scaling);
//  (c) ns per policy decision (MLP 64x64 on clang's 38 inliner features).
//
// Usage: mlgo_bench_evaluator [CORPUS_DIR] [--repeat N] [--heuristic]
// --heuristic times the heuristic-echo policy instead of the MLP: the same
// decisions as plain -Oz, so the difference to the plain columns is the cost
// of asking a policy (LLVM's ML advisor features, the channel or the call).
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/training/TraceRecording.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace mlgo;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Plain -Oz compiles of every module with `workers` in parallel.
double timePlainCompiles(evaluators::Evaluator& evaluator,
                         const std::vector<const corpus::ModuleSpec*>& modules, size_t workers) {
  auto start = Clock::now();
  tbb::task_arena arena(static_cast<int>(workers));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, modules.size(), 1), [&](const auto& range) {
      for (size_t i = range.begin(); i != range.end(); ++i) {
        evaluators::JobResult r = evaluator.compile({.module = modules[i]});
        if (!r.ok())
          std::fprintf(stderr, "plain compile failed: %s\n", r.message.c_str());
      }
    });
  });
  return secondsSince(start);
}

std::unique_ptr<evaluators::Evaluator>
makeEvaluator(size_t workers, const fs::path& scratch,
              evaluators::BackendKind backend = evaluators::BackendKind::InProcess,
              bool cache = false) {
  evaluators::EvaluatorOptions options;
  options.backend = backend;
  options.decisionCache = cache;
  options.replay = false; // the passes time compiles; replay would skip them
  options.workers = workers;
  options.scratchDirectory = scratch;
  auto evaluator =
      evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
  if (!evaluator) {
    std::fprintf(stderr, "%s\n", evaluator.error().message.c_str());
    std::exit(1);
  }
  return evaluator.take();
}

} // namespace

int main(int argc, char** argv) {
  fs::path corpusDir = "build/corpora/lua/corpus";
  int repeat = 1;
  bool heuristic = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--heuristic") == 0)
      heuristic = true;
    else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else
      corpusDir = argv[i];
  }
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(corpusDir);
  if (!corpus) {
    std::fprintf(stderr, "%s (build it with corpus/recipes/lua.sh)\n",
                 corpus.error().message.c_str());
    return 1;
  }
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : corpus->modules())
    modules.push_back(&m);
  fs::path scratch = evaluators::EvaluatorOptions::defaultScratchDirectory();
  std::printf("corpus %s: %zu modules; %u hardware threads\n", corpusDir.c_str(), modules.size(),
              std::thread::hardware_concurrency());

  // A realistic MLP: vocabulary from the heuristic's own decisions on this
  // corpus, random weights.
  auto evaluator2 = makeEvaluator(2, scratch, evaluators::BackendKind::InProcess);
  std::unique_ptr<policies::Policy> echo = policies::makeHeuristicEchoPolicy(
      evaluators::CompilerTask::inliningForSize().defaultDecisionFeature);
  evaluators::EvaluationRequest traceRequest;
  traceRequest.candidates = {echo.get()};
  traceRequest.modules = modules;
  traceRequest.recordTrajectories = true;
  evaluators::EvaluationResult traced = evaluator2->evaluate(traceRequest);
  fs::path traceFile = scratch / ("mlgo-bench-trace-" + std::to_string(getpid()) + ".h5");
  if (Status s = training::writeTrace(traceFile, traced, 0, modules, {}); !s) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    return 1;
  }
  Expected<results::Trace> trace = results::readTrace(traceFile);
  fs::remove(traceFile);
  if (!trace) {
    std::fprintf(stderr, "%s\n", trace.error().message.c_str());
    return 1;
  }
  policies::FeatureSamples samples;
  results::appendFeatureSamples(*trace, samples);
  Expected<policies::Vocabulary> vocabulary = policies::buildVocabulary(samples);
  if (!vocabulary) {
    std::fprintf(stderr, "%s\n", vocabulary.error().message.c_str());
    return 1;
  }
  auto structure = policies::MlpStructure::create(trace->featureSpecs, *vocabulary);
  if (!structure) {
    std::fprintf(stderr, "%s\n", structure.error().message.c_str());
    return 1;
  }
  policies::MlpPolicy mlp = policies::MlpPolicy::initialised(*structure, 1);
  uint64_t decisions = 0;
  for (const evaluators::JobResult& job : traced.jobs)
    decisions += job.decisions;
  std::printf("policy %s, %zu parameters; %llu decisions per pass over the corpus\n\n",
              mlp.describe().c_str(), mlp.parameterCount(),
              static_cast<unsigned long long>(decisions));

  // Seconds for one pass of `mlp` over the corpus (baselines are memoised
  // by the first pass, so later passes time the policy's compiles alone).
  const policies::Policy* timed =
      heuristic ? echo.get() : static_cast<const policies::Policy*>(&mlp);
  auto timePolicy = [&](evaluators::Evaluator& evaluator) {
    evaluators::EvaluationRequest request;
    request.candidates = {timed};
    request.modules = modules;
    auto start = Clock::now();
    evaluators::EvaluationResult result = evaluator.evaluate(request);
    double t = secondsSince(start);
    if (result.score(0).failedModules)
      std::fprintf(stderr, "%zu jobs failed\n", result.score(0).failedModules);
    return t;
  };
  const double n = static_cast<double>(modules.size());
  std::printf("modules/s (best of %d passes; higher is better)\n", repeat);
  std::printf("policy timed: %s\n", timed->describe().c_str());
  std::printf("%-8s %12s %14s %12s %14s %12s %12s\n", "workers", "plain cc1", "plain inproc",
              "pol. clang", "pol. inprocess", "pol. cached", "inproc/cc1");
  double inprocessSeconds[3] = {0, 0, 0};
  for (size_t workers : {size_t{1}, size_t{2}}) {
    auto clang = makeEvaluator(workers, scratch, evaluators::BackendKind::Clang);
    auto inprocess = makeEvaluator(workers, scratch, evaluators::BackendKind::InProcess);
    auto cached = makeEvaluator(workers, scratch, evaluators::BackendKind::InProcess, true);
    timePolicy(*clang); // baselines, warm-up
    timePolicy(*inprocess);
    timePolicy(*cached); // fills the decision cache
    double plain = 1e300, plainWorkers = 1e300, viaClang = 1e300, viaWorkers = 1e300,
           viaCache = 1e300;
    for (int r = 0; r < repeat; ++r) {
      plain = std::min(plain, timePlainCompiles(*clang, modules, workers));
      plainWorkers = std::min(plainWorkers, timePlainCompiles(*inprocess, modules, workers));
      viaClang = std::min(viaClang, timePolicy(*clang));
      viaWorkers = std::min(viaWorkers, timePolicy(*inprocess));
      viaCache = std::min(viaCache, timePolicy(*cached));
    }
    inprocessSeconds[workers] = viaWorkers;
    std::printf("%-8zu %12.1f %14.1f %12.1f %14.1f %12.1f %11.2fx\n", workers, n / plain,
                n / plainWorkers, n / viaClang, n / viaWorkers, n / viaCache, plain / viaWorkers);
  }
  std::printf("\nscaling 1 -> 2 workers (policy in-process): %.2fx\n",
              inprocessSeconds[1] / inprocessSeconds[2]);

  // (c) decide() alone on recorded observations.
  std::vector<size_t> inputIndex;
  for (const policies::TensorSpec& input : mlp.inputs())
    for (size_t f = 0; f < trace->featureSpecs.size(); ++f)
      if (trace->featureSpecs[f].name == input.name)
        inputIndex.push_back(f);
  const size_t rows = trace->decisions();
  std::vector<double> inputs(rows * inputIndex.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < inputIndex.size(); ++i)
      inputs[r * inputIndex.size() + i] = trace->row(r)[inputIndex[i]];
  RandomStream rng(7);
  int64_t sink = 0;
  const size_t passes = std::max<size_t>(1, 200000 / std::max<size_t>(rows, 1));
  auto start = Clock::now();
  for (size_t p = 0; p < passes; ++p)
    for (size_t r = 0; r < rows; ++r)
      sink += mlp.decide({inputs.data() + r * inputIndex.size(), inputIndex.size()},
                         policies::DecisionMode::Deterministic, rng)
                  .advice;
  double perDecision = secondsSince(start) / static_cast<double>(passes * rows);
  std::printf("policy decide(): %.0f ns per decision (%zu decisions timed; checksum %lld)\n",
              perDecision * 1e9, passes * rows, static_cast<long long>(sink));
  return 0;
}
