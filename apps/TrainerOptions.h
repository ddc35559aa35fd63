// What the trainer CLIs (es-train, ppo-train, bc-train) share: their
// arguments (the trainer's options as its schema describes them, the
// evaluator's flags), Ctrl-C handling, and how they print a run's header,
// progress and ending.
#pragma once

#include "CommonOptions.h"
#include "SchemaFlags.h"
#include "TomlConfig.h"
#include "WriteLimits.h"
#include "mlgo/rl/Adam.h"
#include "mlgo/training/Options.h"
#include "mlgo/training/TrainingLoop.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <sys/resource.h>

namespace mlgo::apps {

// What every trainer tool's arguments hold: the run file to resume, the
// trainer's options (every flag of Options::schema()), --overwrite and the
// evaluator's flags, all bound through one SchemaFlags.
template <class Options> struct TrainerArgs {
  std::string resume;
  // A new run refuses an existing run file (its checkpoint would be lost)
  // unless this is set; the trainers' library API leaves that to callers.
  bool overwrite = false;
  Options options;
  EvaluatorArgs evaluator;
  SchemaFlags flags;

  // --config and --resume, the trainer's schema, --overwrite, the
  // evaluator's flags: the order of --help and of the stored config.
  void define(CLI::App& app) {
    app.set_config("--config", "", "Read options from a TOML file (keys are the long flag names)");
    mlgo::apps::useStrictTomlConfig(app);
    app.add_option("--resume", resume,
                   "Continue the run in this HDF5 file from its checkpoint (its stored config is "
                   "used; only evaluator flags such as --workers may be given)");
    flags.bind(app, Options::schema(), options);
    app.add_flag("--overwrite", overwrite,
                 "Replace an existing run file at -o (without it, a new run refuses one)")
        ->group("Run");
    evaluator.addTo(app, flags);
    flags.install(app);
  }

  // The run's threads (the evaluator's workers, which also parallelise the
  // updates) and its effective config (the trainer's and the evaluator's
  // schemas written out: every flag's value, given or default).
  void finishRun() {
    options.run.threads = evaluator.resolvedWorkers();
    options.run.configToml =
        Options::schema().toToml(options) + EvaluatorArgs::schema().toToml(evaluator);
    options.run.configValues.clear();
    Options::schema().toValues(options, options.run.configValues);
    EvaluatorArgs::schema().toValues(evaluator, options.run.configValues);
  }

  // --resume: the run's own options and evaluator flags, read back from its
  // stored config (the evaluator flags given on `commandLine` on top).
  // `storedOptions` is the trainer's (Trainer::storedOptions).
  Status restore(const CLI::App& commandLine, const std::string& program,
                 Expected<Options> (*storedOptions)(const results::RunRecord&,
                                                    const std::filesystem::path&)) {
    MLGO_TRY(checkResumeFlags(commandLine, program));
    MLGO_ASSIGN_OR_RETURN(results::RunRecord stored, results::readRunFile(resume));
    if (stored.trainer != program)
      return makeError(resume + " is a run of " + stored.trainer + ", not of " + program +
                       ": resume it with " + stored.trainer + " --resume " + resume);
    const std::string origin = resume + " (its stored config)";
    MLGO_ASSIGN_OR_RETURN(ConfigValues values, parseFlatToml(stored.configToml, origin));
    for (const auto& [key, texts] : values)
      if (!Options::schema().find(key) && !EvaluatorArgs::schema().find(key) && key != "overwrite")
        return makeError(origin + ": unknown option '" + key + "' (a run of another version?)");
    MLGO_ASSIGN_OR_RETURN(options, storedOptions(stored, resume));
    MLGO_ASSIGN_OR_RETURN(evaluator, resumedEvaluatorArgs(values, origin, evaluator, commandLine));
    finishRun();
    return Status::ok();
  }
};

// A trainer that compiles a training corpus (es-train, ppo-train).
template <class Options> struct CorpusTrainerArgs : TrainerArgs<Options> {
  static constexpr const char* verb = "training";
  static constexpr const char* missingData = "--corpus (or --programs) is required";
};

// Found by TrainerCommand through the tools' Args.
template <class Options> bool hasData(const CorpusTrainerArgs<Options>& args) {
  return !args.options.data.corpus.empty() || args.options.data.trainsOnPrograms();
}
template <class Options> bool compiles(const CorpusTrainerArgs<Options>&) {
  return true;
}

// Ctrl-C during training: the first asks the run to stop after the step in
// flight (its file is then complete and --resume continues it); a second one
// ends the program at once (the file still holds the last finished step).
// SIGINT, SIGTERM and SIGHUP: the first stops the run after the step in
// flight (the run file then holds every finished step, and the scratch
// directory is removed as on any normal exit); a second exits at once (the
// next run removes what it leaves in the scratch directory). Installed
// before the evaluator starts, so a signal during the baselines is caught too.
// Rank 0 of an MPI job (`inCluster`) exits at once: the launcher signals
// every rank when the job ends (a rank died, Ctrl-C, scancel), so the step in
// flight cannot finish; the run file holds every finished step.
class StopOnSignal {
public:
  explicit StopOnSignal(bool inCluster = false) {
    received().store(0);
    exitAtOnce().store(inCluster);
    reportFileSizeLimitsAsWriteErrors();
    for (int signal : {SIGINT, SIGTERM, SIGHUP})
      std::signal(signal, [](int signal) {
        if (exitAtOnce().load()) {
          static const char note[] = "\nsignal received: the MPI job is ending; the run file "
                                     "holds every finished step (continue it with --resume)\n";
          (void)!::write(2, note, sizeof note - 1);
          std::_Exit(128 + signal);
        }
        if (received().exchange(signal) != 0)
          std::_Exit(128 + signal);
        static const char note[] = "\nsignal received: stopping after the step in flight (send it "
                                   "again to quit now)\n";
        (void)!::write(2, note, sizeof note - 1);
      });
  }
  ~StopOnSignal() {
    for (int signal : {SIGINT, SIGTERM, SIGHUP})
      std::signal(signal, SIG_DFL);
  }
  // The signal received, or 0.
  int signal() const { return received().load(); }
  training::CallbackAction action() const {
    return signal() != 0 ? training::CallbackAction::Stop : training::CallbackAction::Continue;
  }

private:
  static std::atomic<int>& received() {
    static std::atomic<int> value{0};
    return value;
  }
  static std::atomic<bool>& exitAtOnce() {
    static std::atomic<bool> value{false};
    return value;
  }
};

// The line a trainer prints before its first step: what it trains, on what.
inline void printRunHeader(const results::RunRecord& record, const std::string& verb,
                           const std::filesystem::path& output) {
  auto attribute = [&](const char* name) {
    auto it = record.attributes.find(name);
    return it == record.attributes.end() ? std::string() : it->second;
  };
  auto decisions = [&](const char* name) {
    std::string count = attribute(name);
    return count.empty() ? count : " (" + count + " decisions)";
  };
  // A run on benchmark programs (--programs) names them: there are a few.
  const bool programs = attribute("corpus").rfind("programs ", 0) == 0;
  std::string modules = programs ? "training " + attribute("corpus")
                                 : std::to_string(record.moduleNames.size()) + " training modules" +
                                       decisions("training_decisions");
  if (programs && !record.validationModuleNames.empty())
    modules += ", validation " + attribute("validation_corpus");
  else if (!record.validationModuleNames.empty())
    modules += ", " + std::to_string(record.validationModuleNames.size()) +
               (record.trainer == "bc-train" ? " held-out modules" : " validation modules") +
               decisions("heldout_decisions");
  if (std::string measure = attribute("measure"); !measure.empty() && record.trainer != "bc-train")
    modules += ", rewarded by " + measure;
  std::fprintf(stderr, "%s %s, %s parameters, %s; run file %s\n", verb.c_str(),
               attribute("policy").c_str(), attribute("parameters").c_str(), modules.c_str(),
               output.c_str());
  if (std::string start = attribute("initial_policy"); !start.empty())
    std::fprintf(stderr, "%s from %s\n", verb == "resuming" ? "started" : "starting",
                 start.c_str());
  // Modules whose -Oz baseline failed cannot be scored and are left out of
  // training: say so here, not only in the run file's failure table.
  size_t leftOut = 0;
  const results::FailureRecord* first = nullptr;
  for (const results::FailureRecord& failure : record.failures)
    if (failure.step == -1 && failure.status == "baseline-unavailable") {
      first = first ? first : &failure;
      ++leftOut;
    }
  if (first)
    std::fprintf(stderr,
                 "warning: %zu training module%s left out, the -Oz baseline failed (in the run "
                 "file's failures); first: %s\n",
                 leftOut, leftOut == 1 ? "" : "s", first->message.c_str());
  // What the data cannot give as asked (TrainingCorpus::load).
  for (const results::FailureRecord& failure : record.failures)
    if (failure.step == -1 &&
        (failure.status == "corpus-opt-level" || failure.status == "modules-per-step"))
      std::fprintf(stderr, "warning: %s\n", failure.message.c_str());
}

// "  validation <total reward>" when the step validated, for progress lines.
inline std::string validationNote(const training::StepProgress& p) {
  return p.validationTotalReward ? "  validation " + std::to_string(*p.validationTotalReward) : "";
}

// How a step's jobs were answered, for progress lines: "  replayed R
// cached H/L compiled F (~S s avoided)" (what replay and the decision cache
// did not answer ran a compiler to the end; S: the compile time they saved).
inline std::string compileNote(const training::CompileStats& c) {
  std::string note;
  if (c.replays)
    note += "  replayed " + std::to_string(c.replays);
  if (c.cacheLookups)
    note += "  cached " + std::to_string(c.cacheHits) + "/" + std::to_string(c.cacheLookups);
  if (c.replays || c.cacheLookups) {
    char avoided[48];
    std::snprintf(avoided, sizeof avoided, " (~%.0f s avoided)",
                  c.replaySecondsSaved + c.cacheSecondsSaved);
    note += "  compiled " + std::to_string(c.fullCompiles) + avoided;
  }
  return note;
}

// The run's replay and decision-cache totals, one line each when used.
inline void printCompileTotals(const training::CompileStats& c) {
  auto percent = [&](size_t part) {
    return c.compilations ? 100.0 * static_cast<double>(part) / static_cast<double>(c.compilations)
                          : 0.0;
  };
  if (c.replays)
    std::printf("replay: %zu of %zu jobs answered without compiling (%.0f%%), ~%.0f s of "
                "compilation avoided%s\n",
                c.replays, c.compilations, percent(c.replays), c.replaySecondsSaved,
                c.replaysVerified ? (", " + std::to_string(c.replaysVerified) +
                                     " verified identical to their compile")
                                        .c_str()
                                  : "");
  if (c.cacheLookups)
    std::printf("decision-sequence cache: %zu of %zu compilations repeated a known sequence "
                "(%.0f%%), ~%.0f s of compilation saved\n",
                c.cacheHits, c.cacheLookups,
                100.0 * static_cast<double>(c.cacheHits) / static_cast<double>(c.cacheLookups),
                c.cacheSecondsSaved);
  if (c.replays || c.cacheLookups)
    std::printf("full compiles: %zu of %zu jobs (%.0f%%)\n", c.fullCompiles, c.compilations,
                percent(c.fullCompiles));
}

// What the replay store holds at the end of a run, and the process's peak
// memory, when replay was on.
inline void printReplayStore(const evaluators::Evaluator& evaluator) {
  if (!evaluator.options().replay)
    return;
  evaluators::ReplayStatistics s = evaluator.statistics().replayStore;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("replay store: %zu modules, %zu trajectories, %zu decision prefixes, %.1f MiB of "
              "%.0f MiB (%zu modules forgotten); trainer peak memory %.0f MiB\n",
              s.modules, s.trajectories, s.nodes, static_cast<double>(s.bytes) / (1 << 20),
              static_cast<double>(evaluator.options().replayMemoryBytes) / (1 << 20),
              s.evictedModules, static_cast<double>(usage.ru_maxrss) / 1024);
}

// How a run ended, for the last lines of a trainer's output.
inline void printEnding(const training::LoopSummary& summary) {
  if (summary.termination != training::Termination::Completed)
    std::printf("%s\n", summary.message.c_str());
  std::printf("results: %s\n", summary.output.c_str());
  if (summary.policyOutput)
    std::printf("policy: %s (kept: %s)\n", summary.policyOutput->c_str(),
                summary.kept ? summary.kept->why().c_str() : "the final policy");
}

// The rest of a compiling trainer's "done:" line (its best validation
// reward) and the lines after it: compile totals, how the run ended.
inline void finishCompilingSummary(const training::LoopSummary& summary,
                                   const training::CompileStats& compiles) {
  if (summary.bestValidationTotalReward())
    std::printf("; best validation reward %+.5f", *summary.bestValidationTotalReward());
  std::printf("\n");
  printCompileTotals(compiles);
  printEnding(summary);
}

} // namespace mlgo::apps
