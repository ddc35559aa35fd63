// Command-line options shared by the tools that compile under policies:
// one place that maps flags onto EvaluatorOptions.
#pragma once

#include "ClusterSession.h"
#include "FilterOptions.h"
#include "SchemaFlags.h"
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
  bool incremental = true; // exact and verified (docs/ARCHITECTURE.md): on unless --no-incremental
  bool incrementalVerify = false;
  size_t incrementalMemoryMiB = defaults.incrementalMemoryBytes >> 20;
  std::string clang = defaults.clang;
  size_t workers = 0; // 0: the hardware threads, shared by the MPI ranks on a node
  double timeoutSeconds = defaults.compileTimeout.count();
  double rankDeadlineSeconds = defaults.rankDeadline.count();
  std::string scratch = defaults.scratchDirectory.string();
  std::string baselineCache = evaluators::defaultBaselineCacheDirectory().string();
  bool noBaselineCache = false;
  FilterArgs filters;
  // The binding of a command that has only these flags bound (addTo(app)).
  std::shared_ptr<SchemaFlags> ownFlags;

  // Every evaluator flag, in --help's and the stored config's order. The
  // resumable ones say where and how fast compilations run, never the
  // numbers: --resume may change them (the run's results stay the same).
  static const OptionSchema<EvaluatorArgs>& schema() {
    static const OptionSchema<EvaluatorArgs> schema = [] {
      OptionSchema<EvaluatorArgs> s;
      s.group("Evaluator");
      s.choice(
          "backend",
          "How modules are compiled: inprocess (clang's cc1 inside long-lived worker "
          "processes, the policy called directly) or clang (a clang-22 process per module, "
          "the policy over a pipe)",
          [](auto& a) -> auto& { return a.backend; },
          {std::string("inprocess"), std::string("clang")},
          [](const std::string& name) { return name; });
      s.choice(
          "task", "What the compiler decides: " + taskChoices(),
          [](auto& a) -> auto& { return a.task; }, evaluators::CompilerTask::names(),
          [](const std::string& name) { return name; });
      s.value(
          "measure",
          "What jobs are measured and rewarded by (lower is better), one of " +
              evaluators::alternatives(evaluators::measureNames()) + "; default: the task's (" +
              taskMeasures() +
              "); run-cost is of benchmark programs (report, and es-train "
              "--programs)",
          [](auto& a) -> auto& { return a.measure; });
      s.value(
          "ir2vec-vocabulary",
          "IR2Vec vocabulary (JSON, from mlgo-eval ir2vec-vocab): the inliner also sends "
          "caller_embedding and callee_embedding; policies trained with them need the same "
          "vocabulary wherever they run",
          [](auto& a) -> auto& { return a.ir2vecVocabulary; });
      s.value(
          "inprocess-worker", "mlgo-inprocess-worker executable (in-process backend)",
          [](auto& a) -> auto& { return a.inprocessWorker; });
      s.flag(
          "no-decision-cache",
          "In-process backend: always compile to the end, even when this run has seen the "
          "module's decision sequence before",
          [](auto& a) -> auto& { return a.noDecisionCache; });
      s.flag(
           "no-replay",
           "Compile every job, even when its policy follows a trajectory this run has "
           "compiled before to the end (replay answers those without a compiler)",
           [](auto& a) -> auto& { return a.noReplay; })
          .resumable();
      s.value(
           "replay-memory",
           "MiB the known trajectories may take; the least recently used modules are "
           "forgotten first",
           [](auto& a) -> auto& { return a.replayMemoryMiB; })
          .atLeast(1)
          .resumable();
      s.flag(
           "replay-verify",
           "Compile every replayed job anyway and stop the run at the first difference",
           [](auto& a) -> auto& { return a.replayVerify; })
          .resumable();
      s.flag(
           "incremental",
           "Incremental evaluation, on by default (exact: the same results; in-process "
           "backend, inlining task): code generation only for the functions a worker has "
           "not generated before for the module, and a search's tried decisions forked from "
           "one compile of their module (docs/ARCHITECTURE.md 'Incremental evaluation'); "
           "--no-incremental compiles every job in full",
           [](auto& a) -> auto& { return a.incremental; })
          .negatable()
          .resumable();
      s.value(
           "incremental-memory",
           "MiB of generated code each worker keeps for --incremental; the least recently "
           "used modules are forgotten first",
           [](auto& a) -> auto& { return a.incrementalMemoryMiB; })
          .atLeast(1)
          .resumable();
      s.flag(
           "verify-incremental",
           "With --incremental: compile every incrementally answered decision in full as well "
           "and stop at the first difference, naming its module and decision",
           [](auto& a) -> auto& { return a.incrementalVerify; })
          .resumable();
      s.value(
           "clang", "clang-22 executable", [](auto& a) -> auto& { return a.clang; })
          .resumable();
      s.value(
           "workers",
           "Concurrent compilations (under MPI: per rank); 0: one per hardware thread, "
           "shared by the ranks on a node",
           [](auto& a) -> auto& { return a.workers; })
          .shortName("j")
          .resumable();
      s.value(
           "timeout", "Per-compilation deadline in seconds",
           [](auto& a) -> auto& { return a.timeoutSeconds; })
          .resumable();
      s.value(
           "rank-deadline",
           "Under MPI: end the job when a rank has sent nothing for this many seconds "
           "(stopped, hung, cut off; ranks send a heartbeat every second)",
           [](auto& a) -> auto& { return a.rankDeadlineSeconds; })
          .resumable();
      s.value(
           "scratch", "Directory for FIFOs and objects of running jobs",
           [](auto& a) -> auto& { return a.scratch; })
          .resumable();
      s.value(
           "baseline-cache", "On-disk cache of -Oz sizes",
           [](auto& a) -> auto& { return a.baselineCache; })
          .resumable();
      s.flag(
           "no-baseline-cache", "Compile every baseline afresh",
           [](auto& a) -> auto& { return a.noBaselineCache; })
          .resumable();
      s.include(
          FilterArgs::schema(), [](auto& a) -> auto& { return a.filters; });
      return s;
    }();
    return schema;
  }

  // The evaluator flags on `app`, bound with the command's other schemas.
  void addTo(CLI::App& app, SchemaFlags& flags) { flags.bind(app, schema(), *this); }
  // A command whose only schema these flags are.
  void addTo(CLI::App& app) { ownFlags = SchemaFlags::bindAlone(app, schema(), *this); }
  // A flag's error, when this command's own binding found one.
  Status flagStatus() const { return ownFlags ? ownFlags->status() : Status::ok(); }

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
    MLGO_TRY(flagStatus());
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
    MLGO_TRY(flagStatus());
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
    options.incremental = incremental;
    options.incrementalVerify = incrementalVerify;
    options.incrementalMemoryBytes = incrementalMemoryMiB << 20;
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

// A tool's exit status once its standard output is flushed: output that
// could not be written (a full disk, a closed pipe) is an error, not exit 0.
// Incremental evaluation's totals, one line ("" when nothing was reused or
// verified).
inline std::string incrementalLine(const evaluators::EvaluatorStatistics& s) {
  const uint64_t functions = s.reuse.reused + s.reuse.generated;
  if (functions == 0 && s.incrementalVerified == 0)
    return "";
  char line[200];
  std::snprintf(
      line, sizeof line,
      "incremental: %llu of %llu functions' code taken from earlier compiles (%.1f%%)",
      static_cast<unsigned long long>(s.reuse.reused), static_cast<unsigned long long>(functions),
      functions ? 100.0 * static_cast<double>(s.reuse.reused) / static_cast<double>(functions)
                : 0.0);
  std::string text = line;
  if (s.reuse.retried)
    text += ", " + std::to_string(s.reuse.retried) +
            " compiles again in full (a reused function's size or alignment came out unlike "
            "its own)";
  if (s.incrementalVerified)
    text += ", " + std::to_string(s.incrementalVerified) + " compiles verified identical in full";
  return text + "\n";
}

// Where the in-process workers' compiles spent their time, full compiles and
// forked trials side by side (`--time-report`): milliseconds per compile and
// the share of what a compile paid.
inline std::string timeReport(const evaluators::EvaluatorStatistics& s) {
  using evaluators::CompileTimes;
  struct Column {
    const CompileTimes& times;
    size_t count;
  };
  const Column columns[] = {{s.compileTimes, s.timedCompiles}, {s.trialTimes, s.timedTrials}};
  const std::pair<const char*, double CompileTimes::*> phases[] = {
      {"before the inliner", &CompileTimes::beforeInliner},
      {"inliner (a trial: from its decision)", &CompileTimes::inliner},
      {"optimisation after the inliner", &CompileTimes::afterInliner},
      {"code generation", &CompileTimes::codeGeneration},
      {"code reuse (keys, placeholders, reading)", &CompileTimes::codeReuse},
      {"fork and hand-over", &CompileTimes::handover},
  };
  auto cell = [](const Column& column, double seconds, double total) {
    char text[64];
    if (column.count == 0)
      return std::string(24, ' ');
    std::snprintf(text, sizeof text, "%9.1f ms %7.1f%%  ",
                  1000.0 * seconds / static_cast<double>(column.count),
                  total > 0 ? 100.0 * seconds / total : 0.0);
    return std::string(text);
  };
  char head[160];
  std::snprintf(head, sizeof head, "%-42s %-24s%s\n", "where the workers' time went",
                ("full compiles (" + std::to_string(s.timedCompiles) + ")").c_str(),
                ("forked trials (" + std::to_string(s.timedTrials) + ")").c_str());
  std::string text = head;
  auto row = [&](const char* name, auto seconds) {
    char label[64];
    std::snprintf(label, sizeof label, "  %-40s ", name);
    text += label;
    for (const Column& column : columns)
      text += cell(column, seconds(column.times), column.times.paid());
    text += "\n";
  };
  for (const auto& [name, phase] : phases)
    row(name, [phase](const CompileTimes& t) { return t.*phase; });
  row("paid per compile", [](const CompileTimes& t) { return t.paid(); });
  row("shared with the base (not paid)", [](const CompileTimes& t) { return t.shared; });
  return text;
}

inline int withStdoutWritten(int status, const char* program) {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%s: error: writing standard output failed: %s\n", program,
                 std::strerror(errno ? errno : EIO));
    return status == 0 ? 1 : status;
  }
  return status;
}

// What --resume may change (the evaluator schema's resumable fields: where
// and how fast compilations run), as CLI11 names them.
inline std::vector<std::string> resumableFlags() {
  std::vector<std::string> names;
  for (const OptionField<EvaluatorArgs>& field : EvaluatorArgs::schema().fields())
    if (field.resumable)
      names.push_back("--" + field.name);
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

// The evaluator flags of a resumed run: those of its stored config
// (`stored`), with the resumable flags given on `commandLine` (into
// `given`) on top.
inline Expected<EvaluatorArgs> resumedEvaluatorArgs(ConfigValues stored, const std::string& origin,
                                                    const EvaluatorArgs& given,
                                                    const CLI::App& commandLine) {
  for (const OptionField<EvaluatorArgs>& field : EvaluatorArgs::schema().fields()) {
    if (!field.resumable || commandLine.count("--" + field.name) == 0)
      continue;
    std::erase_if(stored, [&](const auto& entry) { return entry.first == field.name; });
    stored.emplace_back(field.name, field.get(given));
  }
  EvaluatorArgs restored;
  OptionNotes notes;
  if (Status applied = EvaluatorArgs::schema().apply(restored, stored, notes); !applied)
    return makeError(origin + ": " + applied.error().message);
  return restored;
}

} // namespace mlgo::apps
