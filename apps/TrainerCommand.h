// The one flow of es-train, ppo-train and bc-train: parse (or replay the
// stored config on --resume), create the evaluator, create or resume the
// trainer, print a header, run with a progress line per step (Ctrl-C stops
// after the step in flight), print the summary. A tool gives only what
// differs: its options, and how it prints progress and its summary.
#pragma once

#include "ClusterSession.h"
#include "CommonOptions.h"
#include "RunCostCommand.h"
#include "TrainerOptions.h"
#include "mlgo/support/Files.h"
#include "mlgo/training/ProgramScorer.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <type_traits>

namespace mlgo::apps {

// A tool's part, found by argument-dependent lookup on its Args type (so
// each tool declares them beside its Args; its flags are its Options'
// schema, TrainerArgs::define):
//   Args::program, Args::description, Args::verb ("training"), and
//   Args::missingData (the error when no data is named);
//   bool hasData(const Args&);              the command line names data
//   bool compiles(const Args&);             the run needs an evaluator
//   void printProgress(const Args&, const Trainer's progress&);
//   void printSummary(const Args&, const Trainer's summary&);

namespace detail {

// The trainer's create or resume; without a scorer (bc-train on traces)
// the trainer's own overload that compiles nothing.
template <class Trainer, class Options>
Expected<Trainer> openTrainer(bool resuming, Options options, evaluators::Scorer* scorer) {
  if constexpr (requires(Options o) { Trainer::create(std::move(o)); })
    if (!scorer)
      return resuming ? Trainer::resume(std::move(options)) : Trainer::create(std::move(options));
  return resuming ? Trainer::resume(std::move(options), *scorer)
                  : Trainer::create(std::move(options), *scorer);
}

// Where a compiling trainer's jobs go: the Evaluator, compiling a corpus's
// modules, or with --programs whole benchmark programs built through mlgo-cc
// and run under cachegrind (their run cost is the measure).
struct TrainerScorer {
  std::unique_ptr<evaluators::Evaluator> evaluator;
  std::optional<training::ProgramRunCostScorer> programs;
  evaluators::Scorer* get() {
    return evaluator  ? static_cast<evaluators::Scorer*>(evaluator.get())
           : programs ? &*programs
                      : nullptr;
  }
};

// The program scorer of a run on `data.programs`: candidates written beside
// the run file (RUN.h5.candidates/), programs built where mlgo-eval
// run-cost builds them (so plain builds are shared), at the task's level.
inline Expected<training::ProgramRunCostScorer>
programScorer(const training::CorpusOptions& data, const EvaluatorArgs& evaluator,
              const std::filesystem::path& runFile) {
  if (!evaluator.measure.empty() && evaluator.measure != "run-cost")
    return makeError("--measure " + evaluator.measure +
                     ": --programs are judged by their run cost (--measure run-cost)");
  Expected<evaluators::CompilerTask> task = evaluator.toTask();
  if (!task)
    return task.error();
  deploy::RunCostOptions options = runCostLocations();
  options.optLevel = task->baselineName.substr(1); // "-O2" → "O2"
  options.workload = data.programWorkload;
  options.verifyBuilds = data.verifyProgramBuilds;
  options.wallRuns = 0; // training trusts the counts alone
  std::filesystem::path candidates = runFile;
  candidates += ".candidates";
  return training::ProgramRunCostScorer::deployed(task.take(), std::move(options),
                                                  std::move(candidates));
}

template <class Args>
Expected<TrainerScorer> openScorer(const Args& args, const std::filesystem::path& runFile) {
  TrainerScorer scorer;
  if (!compiles(args))
    return scorer;
  if constexpr (requires { args.options.data.programs; })
    if (args.options.data.trainsOnPrograms()) {
      Expected<training::ProgramRunCostScorer> programs =
          programScorer(args.options.data, args.evaluator, runFile);
      if (!programs)
        return programs.error();
      scorer.programs.emplace(programs.take());
      return scorer;
    }
  Expected<evaluators::EvaluatorOptions> options = args.evaluator.toOptions();
  if (!options)
    return options.error();
  Expected<evaluators::CompilerTask> task = args.evaluator.toTask();
  if (!task)
    return task.error();
  Expected<std::unique_ptr<evaluators::Evaluator>> created =
      evaluators::Evaluator::create(*options, task.take());
  if (!created)
    return created.error();
  scorer.evaluator = created.take();
  return scorer;
}

// A new run's options as parsed: the flags' errors and warnings, then the
// run's threads and effective config.
template <class Args> Status finishNewRun(Args& args) {
  MLGO_TRY(args.flags.status());
  for (const std::string& warning : args.flags.unusedWarnings())
    std::fprintf(stderr, "%s: warning: %s\n", Args::program, warning.c_str());
  args.finishRun();
  return Status::ok();
}

} // namespace detail

template <class Args, class Trainer> int runTrainerCommand(int argc, char** argv) {
  auto fail = [](const Error& error) {
    std::cerr << Args::program << ": error: " << error.message << "\n";
    return 1;
  };
  CLI::App app{Args::description};
  Args args;
  args.define(app);
  CLI11_PARSE(app, argc, argv);
  StopOnSignal stop(joinedCluster() != nullptr);
  const bool resuming = !args.resume.empty();
  if (resuming) {
    // The run's own config, with this command line's evaluator flags on top.
    if (Status s = args.restore(app, Args::program, &Trainer::storedOptions); !s)
      return fail(s.error());
  } else {
    if (!hasData(args))
      return fail(makeError(std::string(Args::missingData) + " (or --resume RUN.h5)"));
    if (Status s = detail::finishNewRun(args); !s)
      return fail(s.error());
    const std::filesystem::path& output = args.options.run.output;
    std::error_code ec;
    if (!args.overwrite && std::filesystem::is_regular_file(output, ec))
      return fail(makeError(output.string() +
                            " already holds a run (replacing it loses its checkpoint): continue "
                            "it with --resume " +
                            output.string() + ", or give --overwrite to start again"));
    // What this run changed; every value is in the run file (a long list
    // would hide the lines that say what the run does).
    using Options = std::decay_t<decltype(args.options)>;
    const Options defaults;
    const EvaluatorArgs evaluatorDefaults;
    std::printf("# options away from their defaults (all: mlgo-results config %s)\n%s%s\n",
                args.options.run.output.c_str(),
                Options::schema().toToml(args.options, &defaults).c_str(),
                EvaluatorArgs::schema().toToml(args.evaluator, &evaluatorDefaults).c_str());
    std::fflush(stdout);
  }
  // One writer per run file, for the whole run (the lock file beside it).
  // (On --resume, the restored options point at the resumed file.)
  const std::filesystem::path runFile = args.options.run.output;
  if (Status replaceable = checkReplaceable(runFile); !replaceable)
    return fail(replaceable.error());
  std::error_code ignored;
  if (runFile.has_parent_path())
    std::filesystem::create_directories(runFile.parent_path(), ignored);
  Expected<FileLock> lock = FileLock::tryAcquire(runFile);
  if (!lock)
    return fail(lock.error());
  Expected<detail::TrainerScorer> scorer = detail::openScorer(args, runFile);
  if (!scorer)
    return fail(scorer.error());
  const std::unique_ptr<evaluators::Evaluator>& evaluator = scorer->evaluator;
  Expected<Trainer> trainer = detail::openTrainer<Trainer>(resuming, args.options, scorer->get());
  if (!trainer)
    return fail(trainer.error());
  const std::string output = runFile.string();
  auto stopped = [&] {
    std::cerr << Args::program << ": stopped by signal " << stop.signal() << "; the run file "
              << output << " holds every finished step: continue with " << Args::program
              << " --resume " << output << "\n";
    return 128 + stop.signal();
  };
  if (stop.signal() != 0) // during the baselines: no step has run
    return stopped();
  printRunHeader(trainer->record(), resuming ? "resuming" : Args::verb, args.options.run.output);
  auto summary = trainer->run([&](const auto& progress) {
    printProgress(args, progress);
    // A log file sees each step as it ends, not when the buffer fills.
    std::cout.flush();
    std::fflush(stdout);
    return stop.action();
  });
  if (!summary)
    return fail(summary.error());
  printSummary(args, *summary);
  if (evaluator) {
    printReplayStore(*evaluator);
    std::fputs(incrementalLine(evaluator->statistics()).c_str(), stdout);
  }
  printClusterTotals();
  return stop.signal() != 0 ? stopped() : 0;
}

} // namespace mlgo::apps
