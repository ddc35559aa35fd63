// The option groups the trainer CLIs (es-train, ppo-train, bc-train) share,
// defined once: Data (the training corpus), Policy (where the MLP starts),
// Run (length, seed, files) and Evaluator (CommonOptions.h). Each group binds
// its flags to the matching training:: option group, so a default shown by
// --help is the library's own.
//
// The order in which a tool adds its groups is the order of its stored
// config (the run file's /config/toml): keep it.
#pragma once

#include "CommonOptions.h"
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

// --- Data: the code a compiling trainer learns from (es-train, ppo-train).
struct CorpusArgs {
  std::string corpus;
  std::string validationCorpus;
  EnumOption<corpus::SamplingStrategy> sampling =
      samplingOption(corpus::SamplingStrategy::BucketRoundRobin);

  // `modulesFlag` and `unit` name the trainer's step ("--modules-per-step",
  // "step").
  void addTo(CLI::App& app, training::CorpusOptions& o, const std::string& modulesFlag,
             const std::string& unit) {
    const char* group = "Data";
    sampling.text = std::string(corpus::samplingStrategyName(o.sampling));
    app.add_option("--corpus", corpus, "Training corpus (merge several code bases)")->group(group);
    app.add_option("--validation-corpus", validationCorpus,
                   "Held-out corpus, compiled with the argmax policy every validation interval; "
                   "the best policy is chosen on it")
        ->group(group);
    app.add_option("--validation-interval", o.validationInterval, "Validate every N " + unit + "s")
        ->capture_default_str()
        ->group(group);
    app.add_option(modulesFlag, o.modulesPerStep, "Modules compiled per " + unit)
        ->capture_default_str()
        ->check(kAtLeastOne)
        ->group(group);
    sampling.addTo(app, "--module-sampling", "How the " + unit + "'s modules are drawn", group);
  }
  void finish(training::CorpusOptions& o) const {
    o.corpus = corpus;
    o.validationCorpus.reset();
    if (!validationCorpus.empty())
      o.validationCorpus = validationCorpus;
    o.sampling = sampling.value();
  }
};

// --- Policy: where the MLP starts and its architecture.
struct PolicyArgs {
  std::string initialPolicy;
  std::string vocabulary;
  EnumOption<policies::Activation> activation = activationOption(policies::Activation::Relu);

  // `offerInitialPolicy`: whether the tool can start from a policy file
  // (bc-train always starts from random weights).
  void addTo(CLI::App& app, training::PolicyStartOptions& o, bool offerInitialPolicy) {
    const char* group = "Policy";
    activation.text = std::string(policies::activationName(o.mlp.activation));
    if (offerInitialPolicy)
      app.add_option("--initial-policy", initialPolicy,
                     "Start from this MLP policy file (e.g. from bc-train); default: random MLP")
          ->group(group);
    app.add_option("--vocabulary", vocabulary,
                   "Quantile vocabulary (.buckets directory) for a random start; default: built "
                   "from the training data's decisions")
        ->group(group);
    app.add_option("--vocabulary-quantiles", o.vocabularyQuantiles,
                   "Quantiles per feature when the vocabulary is built here")
        ->capture_default_str()
        ->group(group);
    app.add_option("--hidden", o.mlp.hiddenLayers, "Hidden layer widths of a random MLP")
        ->delimiter(',')
        ->capture_default_str()
        ->group(group);
    activation.addTo(app, "--activation", "Activation of a random MLP", group);
    app.add_flag("--with-sqrt,!--no-with-sqrt", o.mlp.withSqrt,
                 "Also feed sqrt of each normalised feature")
        ->group(group);
    app.add_option("--residual-margin", o.mlp.residualMargin,
                   "A random MLP residual around the compiler's own decision: add this to "
                   "the logit of the task's default decision's action and start with a zero "
                   "output layer (exactly the task's baseline); 0: a plain MLP")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str()
        ->group(group);
  }
  void finish(training::PolicyStartOptions& o) const {
    o.initialPolicy.reset();
    if (!initialPolicy.empty())
      o.initialPolicy = initialPolicy;
    o.vocabulary.reset();
    if (!vocabulary.empty())
      o.vocabulary = vocabulary;
    o.mlp.activation = activation.value();
  }
};

// --- Run: length, seed and files.
struct RunArgs {
  std::string output;
  std::string policyOutput;
  // A new run refuses an existing run file (its checkpoint would be lost)
  // unless this is set; the trainers' library API leaves that to callers.
  bool overwrite = false;

  // `stepsFlag`/`unit`: "--steps"/"step", "--iterations"/"iteration", … The
  // policy-file flag is offered when the options have a default for it.
  void addTo(CLI::App& app, training::RunOptions& o, const std::string& stepsFlag,
             const std::string& stepsHelp, const std::string& unit, const std::string& seedHelp) {
    const char* group = "Run";
    output = o.output.string();
    app.add_option(stepsFlag, o.steps, stepsHelp)->capture_default_str()->group(group);
    app.add_option("--seed", o.seed, seedHelp)->capture_default_str()->group(group);
    app.add_option("--max-seconds", o.maxSeconds,
                   "Wall-clock budget of this invocation: the " + unit +
                       " expected to end past it is the run's last (validated, policy written; "
                       "--resume continues); 0: none")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str()
        ->group(group);
    app.add_option("-o,--output", output, "The run's HDF5 file")
        ->capture_default_str()
        ->group(group);
    app.add_flag("--overwrite", overwrite,
                 "Replace an existing run file at -o (without it, a new run refuses one)")
        ->group(group);
    if (o.policyOutput) {
      // Empty: beside the run file (-o with .json), not in the working directory.
      policyOutput.clear();
      app.add_option("--policy-output", policyOutput,
                     "The final policy file (for mlgo-eval and --initial-policy); default: the "
                     "run file's path with .json")
          ->group(group);
    }
    app.add_option("--snapshot-interval", o.snapshotInterval,
                   "Store the policy every N " + unit + "s")
        ->capture_default_str()
        ->group(group);
  }
  // `threads`: the evaluator's workers, which also parallelise the updates.
  void finish(training::RunOptions& o, size_t threads) const {
    o.output = output;
    if (o.policyOutput) {
      std::filesystem::path beside = std::filesystem::path(output).replace_extension(".json");
      if (beside == std::filesystem::path(output))
        beside += ".policy.json";
      o.policyOutput = policyOutput.empty() ? beside : std::filesystem::path(policyOutput);
    }
    o.threads = threads;
  }
};

// What every trainer tool's arguments hold besides its own: the run file to
// resume, the trainer's options, and the shared Policy, Run and Evaluator
// groups (the Data group is not bc-train's).
template <class Options> struct TrainerArgs {
  std::string resume;
  Options options;
  PolicyArgs policy;
  RunArgs run;
  EvaluatorArgs evaluator;

  // --config and --resume, the first options of every trainer.
  void addConfigAndResume(CLI::App& app) {
    app.set_config("--config", "", "Read options from a TOML file (keys are the long flag names)");
    mlgo::apps::useStrictTomlConfig(app);
    app.add_option("--resume", resume,
                   "Continue the run in this HDF5 file from its checkpoint (its stored config is "
                   "used; only evaluator flags such as --workers may be given)");
  }
  // The last of a tool's finishOptions: the run's files and threads, then
  // the effective config (which then holds every flag as given).
  Status finishRun(const CLI::App& app) {
    run.finish(options.run, evaluator.resolvedWorkers());
    effectiveConfig(app, options.run.configToml, options.run.configValues);
    return Status::ok();
  }
};

// A trainer that compiles a training corpus (es-train, ppo-train): the Data
// group besides the shared ones.
template <class Options> struct CorpusTrainerArgs : TrainerArgs<Options> {
  static constexpr const char* verb = "training";
  static constexpr const char* missingData = "--corpus is required";
  CorpusArgs data;

  // The Data and Policy groups, first after --config and --resume.
  void addDataAndPolicy(CLI::App& app, const std::string& modulesFlag, const std::string& unit) {
    this->addConfigAndResume(app);
    data.addTo(app, this->options.data, modulesFlag, unit);
    this->policy.addTo(app, this->options.policy, true);
  }
  void finishDataAndPolicy() {
    data.finish(this->options.data);
    this->policy.finish(this->options.policy);
  }
};

// Found by TrainerCommand through the tools' Args.
template <class Options> bool hasData(const CorpusTrainerArgs<Options>& args) {
  return !args.data.corpus.empty();
}
template <class Options> bool compiles(const CorpusTrainerArgs<Options>&) {
  return true;
}

// Adam's flags (ppo-train, bc-train). `maxGradientNorm` 0 means no clipping.
inline void addAdamOptions(CLI::App& app, rl::AdamOptions& adam, double& maxGradientNorm,
                           const std::string& group) {
  app.add_option("--learning-rate", adam.learningRate, "Adam step size")
      ->capture_default_str()
      ->group(group);
  app.add_option("--beta1", adam.beta1, "Adam β1")->capture_default_str()->group(group);
  app.add_option("--beta2", adam.beta2, "Adam β2")->capture_default_str()->group(group);
  app.add_option("--epsilon", adam.epsilon, "Adam ε (TensorFlow 1 form)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--max-gradient-norm", maxGradientNorm, "Clip the gradient (0: no clipping)")
      ->capture_default_str()
      ->group(group);
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
  std::string modules = std::to_string(record.moduleNames.size()) + " training modules" +
                        decisions("training_decisions");
  if (!record.validationModuleNames.empty())
    modules += ", " + std::to_string(record.validationModuleNames.size()) +
               (record.trainer == "bc-train" ? " held-out modules" : " validation modules") +
               decisions("heldout_decisions");
  if (std::string measure = attribute("measure"); !measure.empty() && record.trainer != "bc-train")
    modules += ", rewarded by " + measure;
  std::fprintf(stderr, "%s %s, %s parameters, %s; run file %s\n", verb.c_str(),
               attribute("policy").c_str(), attribute("parameters").c_str(), modules.c_str(),
               output.c_str());
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
    std::printf("policy: %s\n", summary.policyOutput->c_str());
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
