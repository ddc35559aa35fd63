// mlgo-results: read run files (es-train, ppo-train, bc-train) without
// writing code. summary: one row per run; compare: runs side by side per
// module and on a shared budget axis; show: one step; export: tidy CSV
// tables. The logic lives in mlgo::results (Analysis.h); this file parses
// flags and prints.
#include "TomlConfig.h"
#include "WriteLimits.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/results/Analysis.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/training/PolicyEvaluation.h"

#include "CommonOptions.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;
using namespace mlgo;
using results::PolicyChoice;
using results::RunRecord;

namespace {

int fail(const Error& error) {
  std::cerr << "mlgo-results: error: " << error.message << "\n";
  return 1;
}

Expected<std::vector<RunRecord>> loadRuns(const std::vector<std::string>& files) {
  std::vector<RunRecord> runs;
  for (const std::string& file : files) {
    Expected<RunRecord> run = results::readRunFile(file);
    if (!run)
      return run.error();
    runs.push_back(run.take());
  }
  return runs;
}

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
}

// --evaluate CORPUS: compiles runs' policies on a corpus with one evaluator
// (so -Oz baselines are compiled once).
struct EvaluateArgs {
  std::string corpus;
  apps::EvaluatorArgs evaluator;

  void addTo(CLI::App& command) {
    command.add_option("--evaluate", corpus,
                       "Compile the policies on this corpus for exact .text sizes (default: the "
                       "run's validation sizes, else the training candidates', approximate)");
    evaluator.addTo(command);
  }
};

class PolicyCompiler {
public:
  static Expected<PolicyCompiler> create(const EvaluateArgs& args) {
    Expected<corpus::Corpus> corpus = corpus::Corpus::load(args.corpus);
    if (!corpus)
      return corpus.error();
    Expected<evaluators::EvaluatorOptions> options = args.evaluator.toOptions();
    if (!options)
      return options.error();
    Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
        evaluators::Evaluator::create(*options, evaluators::CompilerTask::inliningForSize());
    if (!evaluator)
      return evaluator.error();
    return PolicyCompiler(corpus.take(), evaluator.take());
  }

  Expected<results::PolicySizes> sizes(const RunRecord& run, PolicyChoice choice,
                                       const std::string& file) {
    std::fprintf(stderr, "compiling the %s policy of %s on %s (%zu modules)\n",
                 std::string(results::policyChoiceName(choice)).c_str(), file.c_str(),
                 corpus_.directory().c_str(), corpus_.size());
    return training::evaluatePolicySizes(run, choice, corpus_, *evaluator_, file, true);
  }

private:
  PolicyCompiler(corpus::Corpus corpus, std::unique_ptr<evaluators::Evaluator> evaluator)
      : corpus_(std::move(corpus)), evaluator_(std::move(evaluator)) {}
  corpus::Corpus corpus_;
  std::unique_ptr<evaluators::Evaluator> evaluator_;
};

// --- summary ----------------------------------------------------------------------------

struct SummaryArgs {
  std::vector<std::string> files;
  std::vector<std::string> keys;
  std::string sort = "given";
  results::SummaryOptions options;
  bool csv = false;
  EvaluateArgs evaluate;
};

int runSummary(SummaryArgs& args) {
  Expected<std::vector<RunRecord>> runs = loadRuns(args.files);
  if (!runs)
    return fail(runs.error());
  std::optional<PolicyCompiler> compiler;
  if (!args.evaluate.corpus.empty()) {
    Expected<PolicyCompiler> created = PolicyCompiler::create(args.evaluate);
    if (!created)
      return fail(created.error());
    compiler.emplace(created.take());
  }
  std::vector<results::RunSummary> summaries;
  std::vector<std::string> labels = results::runLabels(args.files);
  for (size_t r = 0; r < runs->size(); ++r) {
    const RunRecord& run = (*runs)[r];
    results::RunSummary summary = results::summarizeRun(args.files[r], run, args.options);
    summary.label = labels[r];
    if (compiler) {
      summary.finalSizes.reset();
      summary.bestSizes.reset();
      if (results::choosePolicy(run, PolicyChoice::Final)) {
        Expected<results::PolicySizes> sizes =
            compiler->sizes(run, PolicyChoice::Final, args.files[r]);
        if (!sizes)
          return fail(sizes.error());
        summary.finalSizes = sizes.take();
      }
      std::optional<results::PolicySnapshot> best = results::choosePolicy(run, PolicyChoice::Best);
      std::optional<results::PolicySnapshot> final =
          results::choosePolicy(run, PolicyChoice::Final);
      if (best && final && best->policyJson == final->policyJson && summary.finalSizes) {
        summary.bestSizes = summary.finalSizes;
        summary.bestSizes->step = best->step;
      } else if (best) {
        Expected<results::PolicySizes> sizes =
            compiler->sizes(run, PolicyChoice::Best, args.files[r]);
        if (!sizes)
          return fail(sizes.error());
        summary.bestSizes = sizes.take();
      }
    }
    summaries.push_back(std::move(summary));
  }
  results::SummaryTableOptions tableOptions;
  tableOptions.keys = args.keys;
  if (args.sort == "final-reward")
    tableOptions.order = results::SummaryOrder::FinalReward;
  else if (args.sort == "best-reward")
    tableOptions.order = results::SummaryOrder::BestReward;
  results::Table table = results::summaryTable(summaries, tableOptions);
  if (args.csv) {
    print(results::renderCsv(table));
    return 0;
  }
  print(results::renderText(table));
  std::printf(
      "\nfinal / best reward: the last / largest %s over the steps.\n"
      "%s: sum of the measure / sum of the baseline's - 1 for the final / best policy; sizes "
      "from: %s.\n",
      args.options.rewardScalar.c_str(), results::sizeChangeLabel(summaries).c_str(),
      compiler ? ("compiling each policy on " + args.evaluate.corpus).c_str()
               : "validation = the run's validation compile of that policy; training (approx.) "
                 "= mean size of the candidates evaluated around it (add --evaluate CORPUS for "
                 "exact sizes)");
  return 0;
}

// --- compare ----------------------------------------------------------------------------

struct CompareArgs {
  std::vector<std::string> files;
  std::string policy = "final";
  std::string scalar = "reward_mean";
  size_t points = 10;
  bool csv = false;
  std::string table = "modules";
  EvaluateArgs evaluate;
};

int runCompare(CompareArgs& args) {
  Expected<std::vector<RunRecord>> runs = loadRuns(args.files);
  if (!runs)
    return fail(runs.error());
  PolicyChoice choice = args.policy == "best" ? PolicyChoice::Best : PolicyChoice::Final;
  std::vector<std::string> labels = results::runLabels(args.files);

  std::vector<results::PolicySizes> sizes;
  std::vector<std::string> sources;
  bool needModules = !args.csv || args.table == "modules";
  if (needModules && !args.evaluate.corpus.empty()) {
    Expected<PolicyCompiler> compiler = PolicyCompiler::create(args.evaluate);
    if (!compiler)
      return fail(compiler.error());
    for (size_t r = 0; r < runs->size(); ++r) {
      Expected<results::PolicySizes> s = compiler->sizes((*runs)[r], choice, args.files[r]);
      if (!s)
        return fail(s.error());
      sources.push_back(s->description);
      sizes.push_back(s.take());
    }
  } else if (needModules) {
    for (const RunRecord& run : *runs) {
      std::optional<results::PolicySizes> s = results::recordedPolicySizes(run, choice);
      sources.push_back(s ? s->description : "no " + args.policy + " policy with sizes");
      sizes.push_back(s ? std::move(*s) : results::PolicySizes{});
    }
  }

  std::vector<const RunRecord*> pointers;
  for (const RunRecord& run : *runs)
    pointers.push_back(&run);
  auto curves = [&](results::CurveAxis axis) {
    return results::curvesTable(results::alignCurves(pointers, axis, args.scalar, args.points),
                                labels);
  };

  if (args.csv) {
    if (args.table == "modules")
      print(results::renderCsv(
          results::moduleComparisonTable(results::compareModules(sizes), labels)));
    else
      print(results::renderCsv(curves(args.table == "seconds" ? results::CurveAxis::WallSeconds
                                                              : results::CurveAxis::Compilations)));
    return 0;
  }

  results::ModuleComparison comparison = results::compareModules(sizes);
  std::printf("%s policies per module, bytes (smaller wins):\n", args.policy.c_str());
  for (size_t r = 0; r < labels.size(); ++r)
    std::printf("  %s: %s\n", labels[r].c_str(), sources[r].c_str());
  std::printf("\n");
  print(results::renderText(results::moduleComparisonTable(comparison, labels)));
  std::string wins;
  for (size_t r = 0; r < labels.size(); ++r)
    wins += labels[r] + " " + std::to_string(comparison.wins[r]) + ", ";
  std::printf("wins: %sties %zu\n", wins.c_str(), comparison.ties);

  std::printf("\n%s at equal compilations (training + validation compiles; '-': the run had "
              "not started or had ended):\n",
              args.scalar.c_str());
  print(results::renderText(curves(results::CurveAxis::Compilations)));
  std::printf("\n%s at equal wall time:\n", args.scalar.c_str());
  print(results::renderText(curves(results::CurveAxis::WallSeconds)));
  return 0;
}

// --- diff -------------------------------------------------------------------------------

// Exit 0 when the two runs agree (timings aside, or everything with
// --timings), 1 with the first difference otherwise: same seed and config
// must give the same run, at any number of workers, resumed or not.
int runDiff(const std::vector<std::string>& files, bool timings,
            const std::vector<std::string>& ignored) {
  Expected<RunRecord> a = results::readRunFile(files[0]);
  if (!a)
    return fail(a.error());
  Expected<RunRecord> b = results::readRunFile(files[1]);
  if (!b)
    return fail(b.error());
  std::optional<std::string> difference =
      timings ? results::firstDifference(*a, *b)
              : results::firstDifferenceButTimings(*a, *b, {ignored.begin(), ignored.end()});
  if (!difference) {
    std::printf("identical%s: %s and %s\n", timings ? "" : " (timings aside)", files[0].c_str(),
                files[1].c_str());
    return 0;
  }
  std::printf("differ: %s\n", difference->c_str());
  return 1;
}

// --- show -------------------------------------------------------------------------------

struct ShowArgs {
  std::string file;
  int64_t step = -1;
  bool csv = false;
  std::string table = "candidates";
};

int runShow(const ShowArgs& args) {
  Expected<RunRecord> run = results::readRunFile(args.file);
  if (!run)
    return fail(run.error());
  const int64_t steps = static_cast<int64_t>(run->steps());
  if (steps == 0)
    return fail(makeError(args.file + ": has no steps yet"));
  const int64_t step = args.step < 0 ? steps - 1 : args.step;
  if (step >= steps)
    return fail(makeError(args.file + ": has " + std::to_string(steps) + " steps (0 to " +
                          std::to_string(steps - 1) + "); --step " + std::to_string(step) +
                          " is out of range"));
  const size_t s = static_cast<size_t>(step);
  if (args.csv) {
    if (args.table == "scalars")
      print(results::renderCsv(results::stepScalarsTable(*run, s)));
    else if (args.table == "modules")
      print(results::renderCsv(results::stepModulesTable(*run, s)));
    else if (args.table == "failures")
      print(results::renderCsv(results::stepFailuresTable(*run, s)));
    else
      print(results::renderCsv(results::stepCandidatesTable(*run, s)));
    return 0;
  }
  std::printf("%s: step %lld of %lld (numbered from 0); %s\n\n", args.file.c_str(),
              static_cast<long long>(step), static_cast<long long>(steps), run->trainer.c_str());
  print(results::renderText(results::stepScalarsTable(*run, s)));
  std::printf("\ncandidates:\n");
  print(results::renderText(results::stepCandidatesTable(*run, s)));
  results::Table modules = results::stepModulesTable(*run, s);
  if (!modules.rows.empty()) {
    std::printf("\nmodules (sizes over the candidates; wins / losses: candidates smaller / larger "
                "than -Oz):\n");
    print(results::renderText(modules));
  }
  results::Table failures = results::stepFailuresTable(*run, s);
  if (failures.rows.empty()) {
    std::printf("\nno failed compiles\n");
  } else {
    std::printf("\n%zu failed compiles:\n", failures.rows.size());
    print(results::renderText(failures));
  }
  for (const results::ValidationRecord& v : run->validations)
    if (v.step == step + 1)
      std::printf("\nvalidation after this step: total reward %+.5f, mean reward %+.5f\n",
                  v.totalReward, v.meanReward);
  return 0;
}

// --- export -----------------------------------------------------------------------------

struct ExportArgs {
  std::vector<std::string> files;
  bool csv = true;
  std::string output;
  std::string table;
  results::SummaryOptions options;
};

int runExport(const ExportArgs& args) {
  if (!args.csv)
    return fail(makeError("export: CSV is the only format; drop --no-csv"));
  if (args.output.empty() && args.table.empty())
    return fail(makeError("export: give -o DIR (every table) or --table NAME (one, to stdout)"));
  Expected<std::vector<RunRecord>> runs = loadRuns(args.files);
  if (!runs)
    return fail(runs.error());
  std::vector<results::LabelledRun> labelled;
  for (size_t r = 0; r < runs->size(); ++r)
    labelled.push_back({args.files[r], &(*runs)[r]});
  std::vector<results::NamedTable> tables = results::exportTables(labelled, args.options);
  if (!args.table.empty()) {
    for (const results::NamedTable& t : tables)
      if (t.name == args.table) {
        print(results::renderCsv(t.table));
        return 0;
      }
    std::string names;
    for (const results::NamedTable& t : tables)
      names += (names.empty() ? "" : ", ") + t.name;
    return fail(makeError("export: no table \"" + args.table + "\"; tables: " + names));
  }
  std::error_code ec;
  fs::create_directories(args.output, ec);
  if (ec)
    return fail(makeError(args.output + ": cannot create directory: " + ec.message()));
  for (const results::NamedTable& t : tables) {
    fs::path file = fs::path(args.output) / (t.name + ".csv");
    std::ofstream out(file, std::ios::binary);
    out << results::renderCsv(t.table);
    out.close();
    if (!out)
      return fail(makeError(file.string() + ": cannot write"));
    std::printf("%-28s %zu rows\n", file.c_str(), t.table.rows.size());
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  mlgo::apps::reportFileSizeLimitsAsWriteErrors();
  CLI::App app{"mlgo-results: summarise, compare, inspect and export training run files "
               "(HDF5, results/README.md)"};
  app.set_config("--config", "", "Read options from a TOML file (keys are the long flag names)");
  mlgo::apps::useStrictTomlConfig(app);
  app.require_subcommand(1);

  SummaryArgs summary;
  CLI::App* summaryCmd = app.add_subcommand(
      "summary", "One row per run: optimiser, key hyperparameters, steps, wall time, "
                 "compilations, failures, final and best reward, .text vs -Oz");
  summaryCmd->add_option("runs", summary.files, "Run files")->required();
  summaryCmd
      ->add_option("--keys", summary.keys,
                   "Config keys to show (default: those that differ between the runs)")
      ->delimiter(',');
  summaryCmd->add_option("--sort", summary.sort, "Row order (best first)")
      ->check(CLI::IsMember({"given", "final-reward", "best-reward"}))
      ->capture_default_str();
  summaryCmd
      ->add_option("--reward-scalar", summary.options.rewardScalar,
                   "Step scalar the final and best reward are read from")
      ->capture_default_str();
  summaryCmd->add_flag("--csv", summary.csv, "CSV instead of aligned text");
  summary.evaluate.addTo(*summaryCmd);

  CompareArgs compare;
  CLI::App* compareCmd = app.add_subcommand(
      "compare", "Runs side by side: per module, which policy wins and by how many bytes; "
                 "learning curves at equal compilations and equal wall time");
  compareCmd->add_option("runs", compare.files, "Run files")->required()->expected(2, -1);
  compareCmd->add_option("--policy", compare.policy, "Which policy of each run")
      ->check(CLI::IsMember({"final", "best"}))
      ->capture_default_str();
  compareCmd->add_option("--scalar", compare.scalar, "Step scalar of the learning curves")
      ->capture_default_str();
  compareCmd->add_option("--points", compare.points, "Points of the aligned curves")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  compareCmd->add_flag("--csv", compare.csv, "CSV of one table (--table) instead of text");
  compareCmd->add_option("--table", compare.table, "With --csv: which table")
      ->check(CLI::IsMember({"modules", "compilations", "seconds"}))
      ->capture_default_str();
  compare.evaluate.addTo(*compareCmd);

  ShowArgs show;
  CLI::App* showCmd =
      app.add_subcommand("show", "One step: scalars, candidates, modules and failures");
  showCmd->add_option("run", show.file, "Run file")->required();
  showCmd->add_option("--step", show.step, "Step, numbered from 0 (default: the last)");
  showCmd->add_flag("--csv", show.csv, "CSV of one table (--table) instead of text");
  showCmd->add_option("--table", show.table, "With --csv: which table")
      ->check(CLI::IsMember({"scalars", "candidates", "modules", "failures"}))
      ->capture_default_str();

  ExportArgs exporting;
  CLI::App* exportCmd = app.add_subcommand(
      "export", "Tidy CSV tables (runs, config, attributes, modules, steps, candidates, sizes, "
                "failures, validation, validation_sizes, policies), each with a run column");
  exportCmd->add_option("runs", exporting.files, "Run files")->required();
  exportCmd->add_flag("--csv,!--no-csv", exporting.csv, "Write CSV (the only format)");
  exportCmd->add_option("-o,--output", exporting.output, "Directory for <table>.csv files");
  exportCmd->add_option("--table", exporting.table, "Print only this table to stdout");
  exportCmd
      ->add_option("--reward-scalar", exporting.options.rewardScalar,
                   "Step scalar the runs table's final and best reward are read from")
      ->capture_default_str();

  std::vector<std::string> diffFiles;
  bool diffTimings = false;
  CLI::App* diffCmd = app.add_subcommand(
      "diff", "Whether two runs hold the same numbers (timings aside): the first difference, "
              "exit status 1, or \"identical\"");
  diffCmd->add_option("runs", diffFiles, "Two run files")->required()->expected(2);
  diffCmd->add_flag("--timings", diffTimings, "Compare the wall-time scalars too");
  std::vector<std::string> diffIgnored;
  diffCmd
      ->add_option("--ignore", diffIgnored,
                   "Leave out this step scalar or config key (repeatable), e.g. a flag that "
                   "changes only how the run computed and the counters it changes")
      ->take_all();

  std::string configFile;
  CLI::App* configCmd = app.add_subcommand(
      "config", "A run's stored config: every option's value as TOML, which --config reads "
                "(es-train --config <(mlgo-results config RUN.h5) --steps 200 -o NEW.h5)");
  configCmd->add_option("run", configFile, "Run file")->required();

  CLI11_PARSE(app, argc, argv);
  if (*configCmd) {
    Expected<RunRecord> run = results::readRunFile(configFile);
    if (!run)
      return fail(run.error());
    print(run->configToml);
    return mlgo::apps::withStdoutWritten(0, "mlgo-results");
  }
  if (*diffCmd)
    return mlgo::apps::withStdoutWritten(runDiff(diffFiles, diffTimings, diffIgnored),
                                         "mlgo-results");
  if (*summaryCmd)
    return mlgo::apps::withStdoutWritten(runSummary(summary), "mlgo-results");
  if (*compareCmd)
    return mlgo::apps::withStdoutWritten(runCompare(compare), "mlgo-results");
  if (*showCmd)
    return mlgo::apps::withStdoutWritten(runShow(show), "mlgo-results");
  if (*exportCmd)
    return mlgo::apps::withStdoutWritten(runExport(exporting), "mlgo-results");
  return 1;
}
