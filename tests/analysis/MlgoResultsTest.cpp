// mlgo-results on two tiny real es-train runs on zlib (the analysis.runs
// fixture, tests/analysis/make-runs.sh): a.h5 without and b.h5 with a
// validation corpus. Every number the tool prints as CSV is checked against
// the values read back from the files with readRunFile, computed here
// independently; --evaluate is checked against the run's own validation
// compiles of the same policies (they must be byte-identical).
#include "TestSupport.h"
#include "mlgo/results/Hdf5File.h"
#include "mlgo/results/RunFile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>

extern char** environ;

namespace fs = std::filesystem;

namespace mlgo::results {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  EXPECT_TRUE(value) << name << " is not set (run through ctest)";
  return value ? value : "";
}

fs::path runFile(const std::string& name) {
  return fs::path(environment("MLGO_ANALYSIS_RUNS")) / name;
}

fs::path zlibCorpus() {
  return fs::path(environment("MLGO_CORPORA_DIR")) / "zlib" / "corpus";
}

struct Output {
  int code = -1;
  std::string out, err;
};

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs mlgo-results with `arguments`, capturing stdout and stderr.
Output mlgoResults(const std::vector<std::string>& arguments, const fs::path& scratch) {
  std::string program = environment("MLGO_RESULTS");
  std::vector<char*> argv{program.data()};
  std::vector<std::string> copies = arguments;
  for (std::string& a : copies)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  fs::path out = scratch / "stdout", err = scratch / "stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Output result;
  pid_t pid;
  if (posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  result.out = readText(out);
  result.err = readText(err);
  return result;
}

using CsvRow = std::map<std::string, std::string>;

// RFC 4180, as renderCsv writes it.
std::vector<CsvRow> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      records.back().push_back(std::move(field));
      field.clear();
      records.emplace_back();
    } else {
      field += c;
    }
    any = true;
  }
  if (!any)
    return {};
  records.pop_back(); // after the last "\n"
  std::vector<CsvRow> rows;
  for (size_t r = 1; r < records.size(); ++r) {
    EXPECT_EQ(records[r].size(), records[0].size()) << "CSV row " << r;
    CsvRow row;
    for (size_t c = 0; c < records[0].size() && c < records[r].size(); ++c)
      row[records[0][c]] = records[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

// A CSV number; empty is NaN. Doubles are written in their shortest exact form.
double number(const CsvRow& row, const std::string& column) {
  auto found = row.find(column);
  EXPECT_NE(found, row.end()) << "no column " << column;
  if (found == row.end() || found->second.empty())
    return std::nan("");
  return std::stod(found->second);
}

void expectSame(double actual, double expected, const std::string& what) {
  if (std::isnan(expected))
    EXPECT_TRUE(std::isnan(actual)) << what << ": " << actual << ", expected no value";
  else
    EXPECT_EQ(actual, expected) << what;
}

RunRecord load(const fs::path& file) {
  Expected<RunRecord> run = readRunFile(file);
  EXPECT_TRUE(run) << (run ? "" : run.error().message);
  return run ? run.take() : RunRecord{};
}

double sum(const std::vector<double>& values) {
  double total = 0;
  for (double v : values)
    if (!std::isnan(v))
      total += v;
  return total;
}

// Independently of Analysis.cpp: per training module, the mean size of the
// successful candidates of the latest step that compiled it.
std::map<std::string, double> trainingSizes(const RunRecord& run) {
  std::map<std::string, double> latest;
  for (size_t s = 0; s < run.steps(); ++s) {
    const std::vector<int64_t>& modules = run.stepModules[s];
    size_t candidates = run.stepSizes[s].size() / modules.size();
    std::map<std::string, std::pair<double, int>> step;
    for (size_t k = 0; k < candidates; ++k)
      for (size_t m = 0; m < modules.size(); ++m)
        if (uint64_t size = run.stepSizes[s][k * modules.size() + m]) {
          auto& [total, count] = step[run.moduleNames[static_cast<size_t>(modules[m])]];
          total += static_cast<double>(size);
          ++count;
        }
    for (const auto& [name, totals] : step)
      latest[name] = totals.first / totals.second;
  }
  return latest;
}

uint64_t baselineOf(const RunRecord& run, const std::string& module) {
  for (size_t m = 0; m < run.moduleNames.size(); ++m)
    if (run.moduleNames[m] == module)
      return run.baselineSizes[m];
  for (size_t m = 0; m < run.validationModuleNames.size(); ++m)
    if (run.validationModuleNames[m] == module)
      return run.validationBaselineSizes[m];
  ADD_FAILURE() << "no module " << module;
  return 0;
}

const ValidationRecord& validationAt(const RunRecord& run, int64_t step) {
  for (const ValidationRecord& v : run.validations)
    if (v.step == step)
      return v;
  ADD_FAILURE() << "no validation after step " << step;
  return run.validations.front();
}

std::pair<double, double> validationTotals(const RunRecord& run, int64_t step) {
  const ValidationRecord& v = validationAt(run, step);
  double bytes = 0, baseline = 0;
  for (size_t m = 0; m < v.sizes.size(); ++m)
    if (v.ok[m] && run.validationBaselineSizes[m] > 0) {
      bytes += static_cast<double>(v.sizes[m]);
      baseline += static_cast<double>(run.validationBaselineSizes[m]);
    }
  return {bytes, baseline};
}

class RealRuns : public ::testing::Test {
protected:
  void SetUp() override {
    aFile = runFile("a.h5").string();
    bFile = runFile("b.h5").string();
    a = load(aFile);
    b = load(bFile);
    ASSERT_EQ(a.steps(), 2u);
    ASSERT_EQ(b.steps(), 3u);
    ASSERT_FALSE(b.validations.empty());
  }
  Output tool(const std::vector<std::string>& arguments) {
    return mlgoResults(arguments, scratch.path());
  }

  mlgo::testing::ScratchDirectory scratch;
  std::string aFile, bFile;
  RunRecord a, b;
};

TEST_F(RealRuns, SummaryMatchesTheFiles) {
  Output o = tool({"summary", aFile, bFile, "--csv"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::vector<CsvRow> rows = parseCsv(o.out);
  ASSERT_EQ(rows.size(), 2u) << o.out;
  for (auto [row, run, file] : {std::tuple(&rows[0], &a, aFile), std::tuple(&rows[1], &b, bFile)}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(row->at("run"), file);
    EXPECT_EQ(row->at("trainer"), "es-train");
    EXPECT_EQ(row->at("optimizer"), run->attributes.at("optimizer"));
    EXPECT_EQ(row->at("learning-rate"), run->config.at("learning-rate")); // the varied key
    EXPECT_EQ(number(*row, "steps"), static_cast<double>(run->steps()));
    EXPECT_EQ(row->at("planned_steps"), run->config.at("steps"));
    EXPECT_EQ(row->at("finished"), "1");
    EXPECT_EQ(number(*row, "wall_seconds"), run->checkpoint->elapsedSeconds);
    double compilations = sum(run->stepScalars.at("compilations"));
    double failed = sum(run->stepScalars.at("failed_compilations"));
    for (const ValidationRecord& v : run->validations)
      for (uint8_t ok : v.ok) {
        compilations += 1;
        failed += ok ? 0 : 1;
      }
    EXPECT_EQ(number(*row, "compilations"), compilations);
    EXPECT_EQ(number(*row, "failed_compilations"), failed);
    const std::vector<double>& reward = run->stepScalars.at("reward_mean");
    double best = -INFINITY;
    for (double r : reward)
      best = std::max(best, r);
    expectSame(number(*row, "final_reward"), reward.back(), "final_reward");
    expectSame(number(*row, "best_reward"), best, "best_reward");
    EXPECT_EQ(number(*row, "final_policy_step"), static_cast<double>(run->finalPolicy->step));
    EXPECT_EQ(number(*row, "best_policy_step"), static_cast<double>(run->bestPolicy->step));
  }

  // b validated its final and best policies: their exact sizes.
  const CsvRow& rb = rows[1];
  EXPECT_EQ(rb.at("final_size_source"), "validation");
  EXPECT_EQ(rb.at("best_size_source"), "validation");
  for (auto [prefix, step] :
       {std::pair("final", b.finalPolicy->step), std::pair("best", b.bestPolicy->step)}) {
    auto [bytes, baseline] = validationTotals(b, step);
    std::string p = prefix;
    EXPECT_EQ(number(rb, p + "_size_bytes"), bytes) << p;
    EXPECT_EQ(number(rb, p + "_baseline_bytes"), baseline) << p;
    EXPECT_DOUBLE_EQ(number(rb, p + "_size_change"), bytes / baseline - 1) << p;
  }

  // a has only its training candidates' sizes.
  const CsvRow& ra = rows[0];
  EXPECT_EQ(ra.at("final_size_source"), "training (approx.)");
  double bytes = 0, baseline = 0;
  for (const auto& [module, size] : trainingSizes(a))
    if (uint64_t base = baselineOf(a, module)) {
      bytes += size;
      baseline += static_cast<double>(base);
    }
  EXPECT_DOUBLE_EQ(number(ra, "final_size_bytes"), bytes);
  EXPECT_EQ(number(ra, "final_baseline_bytes"), baseline);
  EXPECT_DOUBLE_EQ(number(ra, "final_size_change"), bytes / baseline - 1);

  // Text: short labels, the columns people read.
  Output text = tool({"summary", aFile, bFile, "--sort", "final-reward"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("final .text vs -Oz"), std::string::npos) << text.out;
  size_t first = text.out.find("\na "), second = text.out.find("\nb ");
  ASSERT_NE(first, std::string::npos) << text.out;
  ASSERT_NE(second, std::string::npos) << text.out;
  bool aFirst = a.stepScalars.at("reward_mean").back() > b.stepScalars.at("reward_mean").back();
  EXPECT_EQ(first < second, aFirst) << "sorted by final reward:\n" << text.out;
}

TEST_F(RealRuns, EvaluateCompilesThePoliciesExactlyAsValidationDid) {
  Output o =
      tool({"summary", bFile, "--csv", "--evaluate", zlibCorpus().string(), "--workers", "2"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::vector<CsvRow> rows = parseCsv(o.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("final_size_source"), "evaluated");
  EXPECT_EQ(rows[0].at("best_size_source"), "evaluated");
  // b's validation corpus is zlib: compiling its final and best policies
  // again must give the very sizes its validation recorded.
  for (auto [prefix, step] :
       {std::pair("final", b.finalPolicy->step), std::pair("best", b.bestPolicy->step)}) {
    auto [bytes, baseline] = validationTotals(b, step);
    std::string p = prefix;
    EXPECT_EQ(number(rows[0], p + "_size_bytes"), bytes) << p;
    EXPECT_EQ(number(rows[0], p + "_baseline_bytes"), baseline) << p;
  }
}

TEST_F(RealRuns, CompareModulesMatchesTheFiles) {
  Output o = tool({"compare", aFile, bFile, "--csv", "--table", "modules"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::vector<CsvRow> rows = parseCsv(o.out);
  const ValidationRecord& last = validationAt(b, b.finalPolicy->step);
  std::map<std::string, double> aSizes = trainingSizes(a);
  std::map<std::string, double> bSizes;
  for (size_t m = 0; m < b.validationModuleNames.size(); ++m)
    bSizes[b.validationModuleNames[m]] =
        last.ok[m] ? static_cast<double>(last.sizes[m]) : std::nan("");
  ASSERT_EQ(rows.size(), bSizes.size() + 1) << o.out; // every module and the total
  size_t compared = 0;
  for (const CsvRow& row : rows) {
    const std::string& module = row.at("module");
    if (module.rfind("total", 0) == 0)
      continue;
    SCOPED_TRACE(module);
    EXPECT_EQ(number(row, "baseline_size"), static_cast<double>(baselineOf(b, module)));
    double sa = aSizes.count(module) ? aSizes[module] : std::nan("");
    double sb = bSizes.at(module);
    expectSame(number(row, "a"), sa, "a");
    expectSame(number(row, "b"), sb, "b");
    if (std::isnan(sa) || std::isnan(sb)) {
      EXPECT_EQ(row.at("winner"), "");
      continue;
    }
    ++compared;
    EXPECT_EQ(row.at("winner"), sa < sb ? "a" : sb < sa ? "b" : "tie");
    EXPECT_DOUBLE_EQ(number(row, "by_bytes"), std::abs(sa - sb));
  }
  EXPECT_EQ(compared, aSizes.size());
  EXPECT_EQ(rows.back().at("module"),
            "total (" + std::to_string(compared) + " modules all runs have)");

  Output text = tool({"compare", aFile, bFile});
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* part : {"wins: a ", "at equal compilations", "at equal wall time"})
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
}

TEST_F(RealRuns, CompareCurvesAtEqualBudgets) {
  // Where each step ends: cumulative compiles (training + the validation
  // after it), or elapsed seconds.
  auto compilations = [](const RunRecord& run) {
    std::vector<double> at;
    double total = 0;
    for (size_t s = 0; s < run.steps(); ++s) {
      total += run.stepScalars.at("compilations")[s];
      for (const ValidationRecord& v : run.validations)
        if (v.step == static_cast<int64_t>(s) + 1)
          total += static_cast<double>(v.ok.size());
      at.push_back(total);
    }
    return at;
  };
  const size_t points = 7;
  for (std::string axis : {"compilations", "seconds"}) {
    SCOPED_TRACE(axis);
    Output o = tool(
        {"compare", aFile, bFile, "--csv", "--table", axis, "--points", std::to_string(points)});
    ASSERT_EQ(o.code, 0) << o.err;
    std::vector<CsvRow> rows = parseCsv(o.out);
    ASSERT_EQ(rows.size(), points);
    std::vector<std::vector<double>> at;
    for (const RunRecord* run : {&a, &b})
      at.push_back(axis == "seconds" ? run->stepScalars.at("elapsed_seconds") : compilations(*run));
    double end = std::max(at[0].back(), at[1].back());
    for (size_t i = 0; i < points; ++i) {
      double x = i + 1 == points ? end : end * static_cast<double>(i + 1) / points;
      if (axis == "seconds")
        EXPECT_EQ(number(rows[i], "seconds"), x);
      else
        EXPECT_EQ(number(rows[i], "compilations"), std::round(x));
      for (auto [label, run, positions] :
           {std::tuple("a", &a, &at[0]), std::tuple("b", &b, &at[1])}) {
        double expected = std::nan("");
        if (positions->back() >= x * (1 - 1e-12))
          for (size_t s = 0; s < positions->size(); ++s)
            if ((*positions)[s] <= x * (1 + 1e-12))
              expected = run->stepScalars.at("reward_mean")[s];
        expectSame(number(rows[i], label), expected,
                   std::string(label) + " at point " + std::to_string(i));
      }
    }
    // The longest run's curve ends on its last value.
    const RunRecord& longest = at[0].back() >= at[1].back() ? a : b;
    EXPECT_EQ(number(rows.back(), &longest == &a ? "a" : "b"),
              longest.stepScalars.at("reward_mean").back());
  }
}

TEST_F(RealRuns, ShowMatchesTheFile) {
  Output o = tool({"show", bFile, "--step", "1", "--csv"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::vector<CsvRow> rows = parseCsv(o.out);
  ASSERT_EQ(rows.size(), b.candidateRewards[1].size());
  const std::vector<int64_t>& modules = b.stepModules[1];
  for (size_t k = 0; k < rows.size(); ++k) {
    expectSame(number(rows[k], "reward"), b.candidateRewards[1][k], "reward");
    double bytes = 0;
    for (size_t m = 0; m < modules.size(); ++m)
      bytes += static_cast<double>(b.stepSizes[1][k * modules.size() + m]);
    EXPECT_EQ(number(rows[k], "size_bytes"), bytes) << "candidate " << k;
  }

  Output scalars = tool({"show", bFile, "--csv", "--table", "scalars"}); // the last step
  ASSERT_EQ(scalars.code, 0) << scalars.err;
  std::vector<CsvRow> values = parseCsv(scalars.out);
  ASSERT_EQ(values.size(), b.stepScalars.size());
  for (const CsvRow& row : values)
    expectSame(number(row, "value"), b.stepScalars.at(row.at("scalar")).back(), row.at("scalar"));

  Output text = tool({"show", bFile, "--step", "1"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("step 1 of 3"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("validation after this step"), std::string::npos) << text.out;

  Output outOfRange = tool({"show", bFile, "--step", "3"});
  EXPECT_EQ(outOfRange.code, 1);
  EXPECT_NE(outOfRange.err.find(bFile + ": has 3 steps"), std::string::npos) << outOfRange.err;
}

TEST_F(RealRuns, ExportMatchesTheFiles) {
  fs::path dir = scratch / "csv";
  Output o = tool({"export", aFile, bFile, "--csv", "-o", dir.string()});
  ASSERT_EQ(o.code, 0) << o.err;
  std::map<std::string, const RunRecord*> runs = {{aFile, &a}, {bFile, &b}};
  auto table = [&](const std::string& name) { return parseCsv(readText(dir / (name + ".csv"))); };

  std::vector<CsvRow> steps = table("steps");
  ASSERT_EQ(steps.size(), a.steps() + b.steps());
  for (const CsvRow& row : steps) {
    const RunRecord& run = *runs.at(row.at("run"));
    size_t s = static_cast<size_t>(number(row, "step"));
    for (const auto& [name, values] : run.stepScalars)
      expectSame(number(row, name), values[s], row.at("run") + " " + name);
  }

  std::vector<CsvRow> candidates = table("candidates");
  size_t expectedCandidates = 0, expectedSizes = 0;
  for (const RunRecord* run : {&a, &b})
    for (size_t s = 0; s < run->steps(); ++s) {
      expectedCandidates += run->candidateRewards[s].size();
      expectedSizes += run->stepSizes[s].size();
    }
  ASSERT_EQ(candidates.size(), expectedCandidates);
  for (const CsvRow& row : candidates) {
    const RunRecord& run = *runs.at(row.at("run"));
    expectSame(number(row, "reward"),
               run.candidateRewards[static_cast<size_t>(number(row, "step"))]
                                   [static_cast<size_t>(number(row, "candidate"))],
               "reward");
  }

  std::vector<CsvRow> sizes = table("sizes");
  ASSERT_EQ(sizes.size(), expectedSizes);
  std::map<std::pair<std::string, size_t>, size_t> seen; // (run, step) → rows
  for (const CsvRow& row : sizes) {
    const RunRecord& run = *runs.at(row.at("run"));
    size_t s = static_cast<size_t>(number(row, "step"));
    size_t k = static_cast<size_t>(number(row, "candidate"));
    size_t position = seen[{row.at("run"), s}]++ % run.stepModules[s].size();
    size_t module = static_cast<size_t>(run.stepModules[s][position]);
    EXPECT_EQ(row.at("module"), run.moduleNames[module]);
    uint64_t size = run.stepSizes[s][k * run.stepModules[s].size() + position];
    expectSame(number(row, "size"), size ? static_cast<double>(size) : std::nan(""), "size");
    EXPECT_EQ(number(row, "baseline_size"), static_cast<double>(run.baselineSizes[module]));
  }

  std::vector<CsvRow> validation = table("validation_sizes");
  ASSERT_EQ(validation.size(), b.validations.size() * b.validationModuleNames.size());
  for (size_t i = 0; i < validation.size(); ++i) {
    const ValidationRecord& v = b.validations[i / b.validationModuleNames.size()];
    size_t m = i % b.validationModuleNames.size();
    EXPECT_EQ(number(validation[i], "step"), static_cast<double>(v.step));
    EXPECT_EQ(validation[i].at("module"), b.validationModuleNames[m]);
    expectSame(number(validation[i], "size"),
               v.ok[m] ? static_cast<double>(v.sizes[m]) : std::nan(""), "validation size");
  }

  std::vector<CsvRow> config = table("config");
  ASSERT_EQ(config.size(), a.config.size() + b.config.size());
  for (const CsvRow& row : config)
    EXPECT_EQ(row.at("value"), runs.at(row.at("run"))->config.at(row.at("key")));
  EXPECT_EQ(table("failures").size(), a.failures.size() + b.failures.size());
  EXPECT_EQ(table("runs").size(), 2u);

  Output unknown = tool({"export", aFile, "--table", "nope"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("no table \"nope\"; tables: runs, config"), std::string::npos)
      << unknown.err;
}

TEST_F(RealRuns, DiffTellsWhetherRunsHoldTheSameNumbers) {
  Output same = tool({"diff", aFile, aFile});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("identical (timings aside)"), std::string::npos) << same.out;
  Output different = tool({"diff", aFile, bFile});
  EXPECT_EQ(different.code, 1) << different.err;
  EXPECT_NE(different.out.find("differ: "), std::string::npos) << different.out;
  Output missing = tool({"diff", aFile, (scratch / "none.h5").string()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("none.h5"), std::string::npos) << missing.err;
}

TEST_F(RealRuns, ErrorsNameTheFile) {
  fs::path text = scratch / "notes.txt";
  std::ofstream(text) << "not a run\n";
  fs::path trace = scratch / "trace.h5";
  {
    Expected<Hdf5File> file = Hdf5File::create(trace);
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->writeAttribute("/", "format", "mlgo-trace"));
    ASSERT_TRUE(file->writeAttribute("/", "version", int64_t{1}));
  }
  fs::path newer = scratch / "newer.h5";
  fs::copy_file(aFile, newer);
  {
    Expected<Hdf5File> file = Hdf5File::open(newer, OpenMode::ReadWrite);
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->writeAttribute("/", "version", int64_t{kRunVersion + 1}));
  }
  fs::path missing = scratch / "missing.h5";
  std::vector<std::pair<fs::path, std::string>> cases = {
      {text, ": not an HDF5 file"},
      {trace, ": not an mlgo run file (format is \"mlgo-trace\", expected \"mlgo-run\")"},
      {newer, ": was written by a newer mlgo-es (run format version 2; this build reads 1)"},
      {missing, ": no such file"}};
  for (const auto& [file, message] : cases) {
    for (std::vector<std::string> command :
         {std::vector<std::string>{"summary", aFile, file.string()},
          {"compare", aFile, file.string()},
          {"show", file.string()},
          {"export", file.string(), "--table", "runs"}}) {
      SCOPED_TRACE(command.front() + " " + file.string());
      Output o = tool(command);
      EXPECT_EQ(o.code, 1);
      EXPECT_EQ(o.out, "");
      EXPECT_NE(o.err.find("mlgo-results: error: " + file.string() + message), std::string::npos)
          << o.err;
    }
  }
}

} // namespace
} // namespace mlgo::results
