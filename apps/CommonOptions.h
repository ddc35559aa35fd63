// Command-line options shared by the tools that compile under policies:
// one place that maps flags onto EvaluatorOptions.
#pragma once

#include "ClusterSession.h"
#include "FilterOptions.h"
#include "Validators.h"
#include "mlgo/corpus/Sampler.h"
#include "mlgo/evaluators/BaselineCache.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace mlgo::apps {

struct EvaluatorArgs {
  evaluators::EvaluatorOptions defaults;
  std::string backend = std::string(evaluators::backendKindName(defaults.backend));
  std::string inprocessWorker = defaults.inprocessWorker;
  std::string task = evaluators::CompilerTask::inliningForSize().name;
  std::string measure;          // empty: the task's own
  std::string ir2vecVocabulary; // empty: no embedding features
  bool noDecisionCache = false;
  bool noReplay = false;
  size_t replayMemoryMiB = defaults.replayMemoryBytes >> 20;
  bool replayVerify = false;
  std::string clang = defaults.clang;
  size_t workers = 0; // 0: the hardware threads, shared by the MPI ranks on a node
  double timeoutSeconds = defaults.compileTimeout.count();
  double rankDeadlineSeconds = defaults.rankDeadline.count();
  std::string scratch = defaults.scratchDirectory.string();
  std::string baselineCache = evaluators::defaultBaselineCacheDirectory().string();
  bool noBaselineCache = false;
  FilterArgs filters;

  // One row per evaluator flag, in --help's and the stored config's order:
  // its definition, and whether --resume may change it (where and how fast
  // compilations run, never the numbers: the run's results stay the same).
  struct Flag {
    const char* name;
    bool resumable;
    CLI::Option* (*add)(CLI::App&, EvaluatorArgs&);
  };
  static const std::vector<Flag>& flags() {
    static const std::vector<Flag> table = {
        {"--backend", false,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--backend", a.backend,
                           "How modules are compiled: inprocess (clang's cc1 inside long-lived "
                           "worker processes, the policy called directly) or clang (a clang-22 "
                           "process per module, the policy over a pipe)")
               ->capture_default_str()
               ->check(CLI::IsMember({"inprocess", "clang"}));
         }},
        {"--task", false,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_option("--task", a.task, "What the compiler decides: " + taskChoices())
               ->capture_default_str()
               ->check(CLI::IsMember(evaluators::CompilerTask::names()));
         }},
        {"--measure", false,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--measure", a.measure,
                           "What jobs are measured and rewarded by (lower is better); default: "
                           "the task's (" +
                               taskMeasures() + ")")
               ->check(CLI::IsMember(evaluators::measureNames()));
         }},
        {"--ir2vec-vocabulary", false,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_option("--ir2vec-vocabulary", a.ir2vecVocabulary,
                                 "IR2Vec vocabulary (JSON, from mlgo-eval ir2vec-vocab): the "
                                 "inliner also sends caller_embedding and callee_embedding; "
                                 "policies trained with them need the same vocabulary wherever "
                                 "they run");
         }},
        {"--inprocess-worker", false,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--inprocess-worker", a.inprocessWorker,
                           "mlgo-inprocess-worker executable (in-process backend)")
               ->capture_default_str();
         }},
        {"--no-decision-cache", false,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_flag("--no-decision-cache", a.noDecisionCache,
                               "In-process backend: always compile to the end, even when this "
                               "run has seen the module's decision sequence before");
         }},
        {"--no-replay", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_flag("--no-replay", a.noReplay,
                               "Compile every job, even when its policy follows a trajectory "
                               "this run has compiled before to the end (replay answers those "
                               "without a compiler)");
         }},
        {"--replay-memory", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--replay-memory", a.replayMemoryMiB,
                           "MiB the known trajectories may take; the least recently used "
                           "modules are forgotten first")
               ->capture_default_str()
               ->check(kAtLeastOne);
         }},
        {"--replay-verify", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_flag(
               "--replay-verify", a.replayVerify,
               "Compile every replayed job anyway and stop the run at the first difference");
         }},
        {"--clang", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_option("--clang", a.clang, "clang-22 executable")->capture_default_str();
         }},
        {"--workers", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("-j,--workers", a.workers,
                           "Concurrent compilations (under MPI: per rank); 0: one per hardware "
                           "thread, shared by the ranks on a node")
               ->capture_default_str()
               ->check(kAtLeastZero);
         }},
        {"--timeout", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--timeout", a.timeoutSeconds, "Per-compilation deadline in seconds")
               ->capture_default_str();
         }},
        {"--rank-deadline", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--rank-deadline", a.rankDeadlineSeconds,
                           "Under MPI: end the job when a rank has sent nothing for this many "
                           "seconds (stopped, hung, cut off; ranks send a heartbeat every "
                           "second)")
               ->capture_default_str();
         }},
        {"--scratch", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app
               .add_option("--scratch", a.scratch,
                           "Directory for FIFOs and objects of running jobs")
               ->capture_default_str();
         }},
        {"--baseline-cache", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_option("--baseline-cache", a.baselineCache, "On-disk cache of -Oz sizes")
               ->capture_default_str();
         }},
        {"--no-baseline-cache", true,
         [](CLI::App& app, EvaluatorArgs& a) {
           return app.add_flag("--no-baseline-cache", a.noBaselineCache,
                               "Compile every baseline afresh");
         }},
    };
    return table;
  }

  void addTo(CLI::App& app) {
    for (const Flag& flag : flags())
      flag.add(app, *this)->group("Evaluator");
    filters.addTo(app);
    for (const char* flag : {"--delete-flag", "--replace-flag", "--add-flag"})
      app.get_option(flag)->group("Evaluator");
  }

  // "name (summary) or …" over the registered tasks, for --task's help.
  static std::string taskChoices() {
    std::vector<std::string> choices;
    for (const evaluators::CompilerTask& t : evaluators::CompilerTask::all())
      choices.push_back(t.name + " (" + t.summary + ")");
    return evaluators::alternatives(choices);
  }
  // "task: measure, …", the measure each registered task is judged by.
  static std::string taskMeasures() {
    std::string text;
    for (const evaluators::CompilerTask& t : evaluators::CompilerTask::all())
      text += (text.empty() ? "" : ", ") + t.name + ": " + std::string(measureName(t.measure));
    return text;
  }

  Expected<evaluators::CompilerTask> toTask() const {
    Expected<evaluators::CompilerTask> named = evaluators::CompilerTask::named(task);
    if (!named)
      return makeError("--task: " + named.error().message);
    if (!measure.empty()) {
      Expected<evaluators::Measure> chosen = evaluators::parseMeasure(measure);
      if (!chosen)
        return makeError("--measure: " + chosen.error().message);
      named->measure = *chosen;
    }
    if (!ir2vecVocabulary.empty())
      if (Status used = named->useIr2VecVocabulary(ir2vecVocabulary); !used)
        return makeError("--ir2vec-vocabulary: " + used.error().message);
    return named;
  }

  // This process's compile slots: --workers, or (0) its share of the node.
  size_t resolvedWorkers() const {
    const std::shared_ptr<evaluators::Cluster>& cluster = joinedCluster();
    return evaluators::workersPerRank(workers, cluster ? cluster->localSize() : 1);
  }

  Expected<evaluators::EvaluatorOptions> toOptions() const {
    evaluators::EvaluatorOptions options;
    Expected<evaluators::BackendKind> parsedBackend = evaluators::parseBackendKind(backend);
    if (!parsedBackend)
      return makeError("--backend: " + parsedBackend.error().message);
    options.backend = *parsedBackend;
    options.inprocessWorker = inprocessWorker;
    options.decisionCache = !noDecisionCache;
    options.replay = !noReplay;
    options.replayMemoryBytes = replayMemoryMiB << 20;
    options.replayVerify = replayVerify;
    options.clang = clang;
    // Under mpirun (ClusterSession.h) rank 0 spreads the jobs over every
    // rank; the ranks' own slots are resolved on each rank.
    options.workers = resolvedWorkers();
    options.cluster = joinedCluster();
    options.rankWorkers = workers;
    options.compileTimeout = std::chrono::duration<double>(timeoutSeconds);
    options.rankDeadline = std::chrono::duration<double>(rankDeadlineSeconds);
    options.scratchDirectory = scratch;
    if (!noBaselineCache)
      options.baselineCacheDirectory = baselineCache;
    Expected<corpus::CommandLineFilters> parsedFilters = filters.toFilters();
    if (!parsedFilters)
      return parsedFilters.error();
    options.filters = parsedFilters.take();
    if (Status valid = options.validate(); !valid)
      return valid.error();
    return options;
  }
};

// --- Shared by the trainers (bc-train, ppo-train) -----------------------------

// An enumerated option held as its name, so --help and the stored config show
// names, not codes; checked against the library's own spellings and converted
// once parsing is done.
template <class E> struct EnumOption {
  std::string text;
  std::vector<E> values;
  std::function<std::string_view(E)> name;

  EnumOption(E initial, std::vector<E> all, std::function<std::string_view(E)> nameOf)
      : text(nameOf(initial)), values(std::move(all)), name(std::move(nameOf)) {}
  std::vector<std::string> names() const {
    std::vector<std::string> result;
    for (E v : values)
      result.emplace_back(name(v));
    return result;
  }
  CLI::Option* addTo(CLI::App& app, const std::string& flag, const std::string& help,
                     const std::string& group) {
    std::string joined;
    for (const std::string& n : names())
      joined += (joined.empty() ? "" : " | ") + n;
    return app.add_option(flag, text, help + ": " + joined)
        ->check(CLI::IsMember(names()))
        ->capture_default_str()
        ->group(group);
  }
  E value() const {
    for (E v : values)
      if (name(v) == text)
        return v;
    return values.front(); // unreachable: IsMember checked the text
  }
};

// Choices the trainers share, offered the same way by each.
inline EnumOption<corpus::SamplingStrategy> samplingOption(corpus::SamplingStrategy initial) {
  return {initial,
          {corpus::SamplingStrategy::WithReplacement, corpus::SamplingStrategy::WithoutReplacement,
           corpus::SamplingStrategy::BucketRoundRobin},
          corpus::samplingStrategyName};
}

inline EnumOption<policies::Activation> activationOption(policies::Activation initial) {
  return {
      initial, {policies::Activation::Relu, policies::Activation::Tanh}, policies::activationName};
}

// A TOML scalar: numbers and booleans as they are, anything else quoted.
inline std::string tomlValue(const std::string& value) {
  if (value == "true" || value == "false")
    return value;
  if (!value.empty()) {
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    if (end == value.c_str() + value.size())
      return value;
  }
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// The effective config of a parsed `app`: every long option with a value
// (given, or its default), as TOML that --config reads back and flattened to
// key → value. Flags are stored as true/false; --help, --config and --resume
// are not stored.
inline void effectiveConfig(const CLI::App& app, std::string& toml,
                            std::map<std::string, std::string, std::less<>>& values) {
  toml.clear();
  values.clear();
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty())
      continue;
    const std::string& name = option->get_lnames().front();
    if (name == "help" || name == "config" || name == "resume")
      continue;
    std::vector<std::string> results = option->results();
    if (option->get_expected_max() == 0) {
      results = {option->count() > 0 && option->as<bool>() ? "true" : "false"};
    } else if (option->count() == 0) {
      results.clear();
      std::string defaults = option->get_default_str();
      if (!defaults.empty() && defaults.front() == '[' && defaults.back() == ']')
        defaults = defaults.substr(1, defaults.size() - 2);
      for (size_t begin = 0; !defaults.empty() && begin <= defaults.size();) {
        size_t comma = defaults.find(',', begin);
        results.push_back(
            defaults.substr(begin, comma == std::string::npos ? comma : comma - begin));
        if (comma == std::string::npos)
          break;
        begin = comma + 1;
      }
    }
    if (results.empty())
      continue;
    std::string joined, list;
    for (const std::string& v : results) {
      joined += (joined.empty() ? "" : ",") + v;
      list += (list.empty() ? "" : ", ") + tomlValue(v);
    }
    values[name] = joined;
    bool many = option->get_items_expected_max() > 1;
    toml += name + " = " + (many ? "[" + list + "]" : list) + "\n";
  }
}

// A tool's exit status once its standard output is flushed: output that
// could not be written (a full disk, a closed pipe) is an error, not exit 0.
inline int withStdoutWritten(int status, const char* program) {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%s: error: writing standard output failed: %s\n", program,
                 std::strerror(errno ? errno : EIO));
    return status == 0 ? 1 : status;
  }
  return status;
}

// What --resume may change (EvaluatorArgs::flags()' resumable rows: where
// and how fast compilations run), as CLI11 names them on `app`.
inline std::vector<std::string> resumableFlags() {
  std::vector<std::string> names;
  for (const EvaluatorArgs::Flag& flag : EvaluatorArgs::flags())
    if (flag.resumable)
      names.push_back(flag.name);
  return names;
}

// Any other flag with --resume is an error, not silently dropped: the run
// continues exactly as it was configured.
inline Status checkResumeFlags(const CLI::App& commandLine, const std::string& program) {
  const std::vector<std::string> allowed = resumableFlags();
  for (const CLI::Option* option : commandLine.get_options()) {
    if (option->count() == 0)
      continue;
    std::string name = option->get_name();
    if (name == "--resume" || name == "--help" ||
        std::find(allowed.begin(), allowed.end(), name) != allowed.end())
      continue;
    // The list the check uses, so the message cannot fall behind it.
    return makeError(name +
                     " cannot be given with --resume: a resumed run keeps the config "
                     "stored in its run file (only " +
                     evaluators::alternatives(allowed) +
                     " may change); to train longer or differently, start a new run from its "
                     "policy (" +
                     program + " --initial-policy …)");
  }
  return Status::ok();
}

// For --resume: parses a run's stored config into `replay` (an App already
// given the tool's options), with the evaluator flags given on `commandLine`
// on top: they change where and how fast compilations run, never the numbers.
inline Status parseStoredConfig(CLI::App& replay, const std::string& program,
                                const std::string& storedToml, const CLI::App& commandLine,
                                const std::string& origin) {
  std::filesystem::path config = std::filesystem::temp_directory_path() /
                                 (program + "-resume-" + std::to_string(getpid()) + ".toml");
  std::ofstream(config) << storedToml;
  std::vector<std::string> args{program, "--config", config.string()};
  for (const std::string& flag : resumableFlags()) {
    if (!commandLine.count(flag))
      continue;
    const CLI::Option* option = commandLine[flag];
    if (option->get_expected_max() == 0) // a switch
      args.push_back(flag);
    else
      for (const std::string& r : option->results()) {
        args.push_back(flag);
        args.push_back(r);
      }
  }
  std::vector<const char*> argv;
  for (const std::string& a : args)
    argv.push_back(a.c_str());
  Status status;
  try {
    replay.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    status = makeError(origin + ": stored config does not parse: " + e.what());
  }
  std::filesystem::remove(config);
  return status;
}

// --resume for a trainer: replaces `args` by the run's stored config (with
// the evaluator flags of `commandLine` on top), pointed at the run file, and
// finishes it with the trainer's own `finish`.
template <class Args>
Status resumeArguments(Args& args, const CLI::App& commandLine, const std::string& program,
                       void (*define)(CLI::App&, Args&), Status (*finish)(Args&, const CLI::App&)) {
  if (Status flags = checkResumeFlags(commandLine, program); !flags)
    return flags;
  Expected<results::RunRecord> stored = results::readRunFile(args.resume);
  if (!stored)
    return stored.error();
  if (stored->trainer != program)
    return makeError(args.resume + " is a run of " + stored->trainer + ", not of " + program +
                     ": resume it with " + stored->trainer + " --resume " + args.resume);
  CLI::App replay;
  Args restored;
  define(replay, restored);
  if (Status parsed =
          parseStoredConfig(replay, program, stored->configToml, commandLine, args.resume);
      !parsed)
    return parsed;
  restored.run.output = args.resume;
  args = std::move(restored);
  return finish(args, replay);
}

} // namespace mlgo::apps
