// The code-base report and the split file it reads: sums, counts and
// regressions on made-up results; every way a split file can be wrong.
#include "mlgo/training/CodeBaseReport.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <fstream>

namespace mlgo::training {
namespace {

using mlgo::testing::ScratchDirectory;
using mlgo::testing::writeText;

Expected<CodeBaseSplit> splitFrom(const std::string& text) {
  ScratchDirectory dir;
  writeText(dir / "split.toml", text);
  return CodeBaseSplit::read(dir / "split.toml");
}

std::string errorOf(const std::string& text) {
  Expected<CodeBaseSplit> split = splitFrom(text);
  return split ? "(accepted)" : split.error().message;
}

TEST(CodeBaseSplit, ReadsTheThreeSets) {
  Expected<CodeBaseSplit> split = splitFrom("# comment\n"
                                            "train = [\"busybox\", \"yaml-cpp\"]\n"
                                            "validation = [\"lua\"]\n"
                                            "test = [\"xz\", \"/abs/corpus\"]\n");
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_EQ(split->train, (std::vector<std::string>{"busybox", "yaml-cpp"}));
  EXPECT_EQ(split->validation, (std::vector<std::string>{"lua"}));
  EXPECT_EQ(*split->set("test"), (std::vector<std::string>{"xz", "/abs/corpus"}));
  EXPECT_FALSE(split->set("tests"));
  EXPECT_EQ(codeBaseCorpus("xz", "/c"), std::filesystem::path("/c/xz/corpus"));
  EXPECT_EQ(codeBaseCorpus("/abs/corpus", "/c"), std::filesystem::path("/abs/corpus"));
}

TEST(CodeBaseSplit, BadFilesAreRefusedNamingTheKey) {
  EXPECT_NE(errorOf("test = [\"xz\",\n").find("split.toml:"), std::string::npos);
  EXPECT_NE(errorOf("test = [\"xz\"]\ntset = [\"a\"]\n").find("unknown key \"tset\""),
            std::string::npos);
  EXPECT_NE(errorOf("test = \"xz\"\n").find("test: must be an array"), std::string::npos);
  EXPECT_NE(errorOf("test = [\"xz\", 3]\n").find("test[1]: must be a non-empty string"),
            std::string::npos);
  EXPECT_NE(errorOf("train = [\"xz\"]\n").find("test: no code bases"), std::string::npos);
  EXPECT_NE(errorOf("train = [\"xz\"]\ntest = [\"xz\"]\n").find("\"xz\" is in both"),
            std::string::npos);
}

// Module m: baseline 1000 + m; sizes chosen per module; one failure.
TEST(CodeBaseReport, CountsSumsAndOrdersRegressions) {
  std::vector<corpus::ModuleSpec> specs(5);
  std::vector<const corpus::ModuleSpec*> modules;
  for (size_t m = 0; m < specs.size(); ++m) {
    specs[m].name = "m" + std::to_string(m);
    modules.push_back(&specs[m]);
  }
  evaluators::EvaluationResult result;
  result.candidateCount = 1;
  result.moduleCount = 5;
  result.jobs.resize(5);
  const uint64_t sizes[] = {990, 1001, 1012, 1003, 0};
  for (size_t m = 0; m < 5; ++m) {
    result.baselineBytes.push_back(1000 + m);
    result.baselineMeasures.push_back(1000.0 + static_cast<double>(m)); // the size is the measure
    result.jobs[m].status =
        m == 4 ? evaluators::JobStatus::CompilerFailed : evaluators::JobStatus::Ok;
    result.jobs[m].sizeBytes = sizes[m];
    result.jobs[m].measured = static_cast<double>(sizes[m]);
  }
  CodeBaseReport report = summariseCodeBase("lib", result, 0, modules, 1);
  EXPECT_EQ(report.modules, 5u);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_EQ(report.baseline, 1000.0 + 1001 + 1002 + 1003);
  EXPECT_EQ(report.policy, 990.0 + 1001 + 1012 + 1003);
  EXPECT_EQ(report.smaller, 1u);
  EXPECT_EQ(report.larger, 1u);
  EXPECT_EQ(report.same, 2u);
  ASSERT_EQ(report.largestRegressions.size(), 1u);
  EXPECT_EQ(report.largestRegressions[0].module, "m2");
  EXPECT_EQ(report.largestRegressions[0].delta(), 10.0);
  EXPECT_NEAR(report.deltaPercent(), 100.0 * (4006.0 / 4006.0 - 1), 1e-12);

  // Best of policy and -Oz per module: m2's regression is gone, m0's gain stays.
  CodeBaseReport bestOf = summariseCodeBase("lib", result, 0, modules, 1, "-Oz", true);
  EXPECT_EQ(bestOf.policy, 990.0 + 1001 + 1002 + 1003);
  EXPECT_EQ(bestOf.smaller, 1u);
  EXPECT_EQ(bestOf.larger, 0u);
  EXPECT_EQ(bestOf.same, 3u);
  EXPECT_TRUE(bestOf.largestRegressions.empty());
  // …and says what the policy does alone.
  ASSERT_TRUE(bestOf.policyAlone);
  EXPECT_EQ(*bestOf.policyAlone, report.policy);
  EXPECT_FALSE(report.policyAlone);
  const std::string table = formatReportMarkdown(std::span(&bestOf, 1), "guarded");
  EXPECT_NE(table.find("| policy alone vs -Oz |"), std::string::npos) << table;
  EXPECT_NE(table.find(percentText(*bestOf.aloneDeltaPercent())), std::string::npos) << table;

  // Best of alternatives (mlgo-cc --mlgo-best-of-set): each module the
  // smallest of the policy's and the alternatives', a failed one passed over.
  result.candidateCount = 2;
  result.jobs.resize(10);
  const uint64_t alternative[] = {995, 980, 0, 1003, 900};
  for (size_t m = 0; m < 5; ++m) {
    evaluators::JobResult& job = result.jobs[5 + m];
    job.status = m == 2 ? evaluators::JobStatus::CompilerFailed : evaluators::JobStatus::Ok;
    job.sizeBytes = alternative[m];
    job.measured = static_cast<double>(alternative[m]);
  }
  const size_t alternatives[] = {1};
  CodeBaseReport set = summariseCodeBase("lib", result, 0, modules, 1, "-Oz", false, alternatives);
  EXPECT_EQ(set.policy, 990.0 + 980 + 1012 + 1003); // m4: the policy failed
  EXPECT_EQ(set.failed, 1u);
  EXPECT_EQ(set.larger, 1u); // m2: its alternative failed
  ASSERT_TRUE(set.policyAlone);
  EXPECT_EQ(*set.policyAlone, report.policy);
  result.candidateCount = 1;
  result.jobs.resize(5);

  CodeBaseReport other = report;
  other.name = "app";
  other.largestRegressions[0].module = "main";
  other.largestRegressions[0].policy += 5;
  std::vector<CodeBaseReport> both{report, other};
  CodeBaseReport total = totalOf(both, 5);
  EXPECT_EQ(total.modules, 10u);
  EXPECT_EQ(total.policy, 2 * report.policy);
  ASSERT_EQ(total.largestRegressions.size(), 2u);
  EXPECT_EQ(total.largestRegressions[0].module, "app: main");

  std::string markdown = formatReportMarkdown(both, "P");
  EXPECT_NE(markdown.find("| lib | 5 | 1 | 4006 | 4006 | +0.000 % | 1 | 1 | 2 |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| **total** | 10 | 2 |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- lib: `m2` +10 (+1.0 %)"), std::string::npos) << markdown;
}

// The eviction task's report is in its measure (the RegAllocScore) against
// -O2, whatever the sizes do.
TEST(CodeBaseReport, ReportsTheTasksMeasure) {
  std::vector<corpus::ModuleSpec> specs(2);
  std::vector<const corpus::ModuleSpec*> modules;
  for (size_t m = 0; m < specs.size(); ++m) {
    specs[m].name = "f" + std::to_string(m);
    modules.push_back(&specs[m]);
  }
  evaluators::EvaluationResult result;
  result.candidateCount = 1;
  result.moduleCount = 2;
  result.measure = evaluators::Measure::RegAllocScore;
  result.jobs.resize(2);
  const double scores[] = {90.5, 212.25};
  for (size_t m = 0; m < 2; ++m) {
    result.baselineBytes.push_back(500);
    result.baselineMeasures.push_back(100.0 * static_cast<double>(m + 1));
    result.jobs[m].status = evaluators::JobStatus::Ok;
    result.jobs[m].sizeBytes = 400; // smaller, but the score decides
    result.jobs[m].measured = scores[m];
  }
  CodeBaseReport report = summariseCodeBase("evict", result, 0, modules, 3, "-O2");
  EXPECT_EQ(report.baseline, 300.0);
  EXPECT_EQ(report.policy, 302.75);
  EXPECT_EQ(report.smaller, 1u);
  EXPECT_EQ(report.larger, 1u);
  std::vector<CodeBaseReport> one{report};
  std::string markdown = formatReportMarkdown(one, "E");
  EXPECT_NE(markdown.find("| code base | modules | failed | -O2 score | policy score | vs -O2 | "
                          "better | worse | same |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| evict | 2 | 0 | 300.0 | 302.8 | +0.917 % | 1 | 1 | 0 |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("- evict: `f1` +12.2 (+6.1 %)"), std::string::npos) << markdown;
}

CodeBaseReport codeBase(std::string name, double baseline, double policy) {
  CodeBaseReport r;
  r.name = std::move(name);
  r.modules = 10;
  r.baseline = baseline;
  r.policy = policy;
  r.smaller = policy < baseline;
  r.larger = policy > baseline;
  r.same = 10 - r.smaller - r.larger;
  return r;
}

// What mlgo-eval report --values writes, read back exactly (a value with
// every digit, the measure, the baseline); what is not such a file is
// refused naming the file and line.
TEST(ReportValues, RoundTripExactlyAndRefuseOtherFiles) {
  ScratchDirectory dir;
  std::vector<CodeBaseReport> reports = {codeBase("zlib", 43040, 43012.5),
                                         codeBase("lua", 1.0 / 3.0, 0.1)};
  for (CodeBaseReport& r : reports) {
    r.measure = evaluators::Measure::RegAllocScore;
    r.baselineName = "-O2";
    r.failed = 1;
  }
  ASSERT_TRUE(writeReportValues(reports, dir / "v.tsv"));
  Expected<std::vector<CodeBaseReport>> read = readReportValues(dir / "v.tsv");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const CodeBaseReport &a = reports[i], &b = (*read)[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.baseline, a.baseline);
    EXPECT_EQ(b.policy, a.policy);
    EXPECT_EQ(b.modules, a.modules);
    EXPECT_EQ(b.failed, a.failed);
    EXPECT_EQ(b.smaller, a.smaller);
    EXPECT_EQ(b.larger, a.larger);
    EXPECT_EQ(b.same, a.same);
    EXPECT_EQ(b.measure, evaluators::Measure::RegAllocScore);
    EXPECT_EQ(b.baselineName, "-O2");
  }
  EXPECT_FALSE((*read)[0].comdatOnce);
  reports[1].comdatOnce = reports[0].comdatOnce = true;
  ASSERT_TRUE(writeReportValues(reports, dir / "once.tsv"));
  Expected<std::vector<CodeBaseReport>> once = readReportValues(dir / "once.tsv");
  ASSERT_TRUE(once) << once.error().message;
  EXPECT_TRUE((*once)[1].comdatOnce);
  EXPECT_NE(formatReportMarkdown(*once, "t").find("(COMDAT once)"), std::string::npos);
  std::ofstream(dir / "md.tsv") << "| code base | modules |\n";
  Expected<std::vector<CodeBaseReport>> markdown = readReportValues(dir / "md.tsv");
  ASSERT_FALSE(markdown);
  EXPECT_NE(markdown.error().message.find("md.tsv:1"), std::string::npos);
  std::ifstream in(dir / "v.tsv");
  std::string header;
  std::getline(in, header);
  std::ofstream(dir / "short.tsv") << header << "\nzlib\t10\t0\t5\n";
  Expected<std::vector<CodeBaseReport>> truncated = readReportValues(dir / "short.tsv");
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message.find("short.tsv:2"), std::string::npos);
}

// Modules a, b and c of one code base. Baselines: a 100 bytes outside groups
// and group g (40); b 50 and g (40) and h (10); c 30 and no group. Policy:
// a inlines g away and shrinks its own code to 90; b emits a new group k
// (20) beside g and h; c stops inlining g and emits a third copy of it.
// Counted once in module order, a group's bytes go to its first holder: g
// to a at the baseline, to b under the policy (a no longer holds it).
TEST(ComdatOnce, EachGroupCountsOnceFromItsFirstHolder) {
  std::vector<corpus::ModuleSpec> specs(3);
  std::vector<const corpus::ModuleSpec*> modules;
  for (size_t m = 0; m < 3; ++m) {
    specs[m].name = std::string(1, static_cast<char>('a' + m));
    modules.push_back(&specs[m]);
  }
  using Groups = std::vector<evaluators::ComdatCode>;
  const uint64_t g = 7, h = 9, k = 3;
  const Groups baselines[] = {{{g, 40}}, {{g, 40}, {h, 10}}, {}};
  const uint64_t baselineBytes[] = {140, 100, 30};
  const Groups policies[] = {{}, {{k, 20}, {g, 40}, {h, 10}}, {{g, 40}}};
  const uint64_t policyBytes[] = {90, 120, 70};
  evaluators::EvaluationResult result;
  result.candidateCount = 1;
  result.moduleCount = 3;
  result.jobs.resize(3);
  for (size_t m = 0; m < 3; ++m) {
    result.baselineBytes.push_back(baselineBytes[m]);
    result.baselineMeasures.push_back(static_cast<double>(baselineBytes[m]));
    result.baselineComdat.push_back(baselines[m]);
    result.jobs[m].status = evaluators::JobStatus::Ok;
    result.jobs[m].sizeBytes = policyBytes[m];
    result.jobs[m].measured = static_cast<double>(policyBytes[m]);
    result.jobs[m].comdat = policies[m];
  }
  evaluators::EvaluationResult counted = result;
  ASSERT_TRUE(countComdatOnce(counted, modules));
  EXPECT_EQ(*counted.baselineMeasure(0), 140);
  EXPECT_EQ(*counted.baselineMeasure(1), 60); // g is a's
  EXPECT_EQ(*counted.baselineMeasure(2), 30);
  EXPECT_EQ(*counted.job(0, 0).measured, 90);
  EXPECT_EQ(*counted.job(0, 1).measured, 120); // g is now b's, k too
  EXPECT_EQ(*counted.job(0, 2).measured, 30);  // c's copy of g is discarded
  EXPECT_DOUBLE_EQ(counted.job(0, 0).reward, counted.reward(90, 140));
  CodeBaseReport report = summariseCodeBase("lib", counted, 0, modules, 3);
  // What a linker keeps: outside groups, then g, h and k once each.
  EXPECT_EQ(report.baseline, 100 + 50 + 30 + 40 + 10);
  EXPECT_EQ(report.policy, 90 + 50 + 30 + 40 + 10 + 20);
  EXPECT_EQ(report.smaller, 1u);
  EXPECT_EQ(report.larger, 1u);
  EXPECT_EQ(report.same, 1u);

  // Kept objects as mlgo-cc --mlgo-best-of keeps them: per module the
  // smaller .text (b's baseline, 100 < 120), then its groups once: g from
  // b's baseline, which is b's now that a does not hold it.
  evaluators::EvaluationResult best = keptObjects(result, 0, true, {});
  ASSERT_EQ(best.candidateCount, 2u);
  EXPECT_EQ(best.job(0, 1).sizeBytes, 100u);
  EXPECT_EQ(best.job(1, 1).sizeBytes, 120u); // the policy alone
  ASSERT_TRUE(countComdatOnce(best, modules));
  EXPECT_EQ(*best.job(0, 0).measured, 90);
  EXPECT_EQ(*best.job(0, 1).measured, 100);
  EXPECT_EQ(*best.job(0, 2).measured, 30);
  EXPECT_EQ(*best.job(1, 1).measured, 120);

  // Groups that are not known (a cached or replayed answer) are an error
  // naming the module; so is a measure other than the size.
  evaluators::EvaluationResult replayed = result;
  replayed.jobs[1].comdat.reset();
  Status unknown = countComdatOnce(replayed, modules);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("module \"b\""), std::string::npos);
  evaluators::EvaluationResult noBaseline = result;
  noBaseline.baselineComdat[2].reset();
  ASSERT_FALSE(countComdatOnce(noBaseline, modules));
  evaluators::EvaluationResult score = result;
  score.measure = evaluators::Measure::RegAllocScore;
  ASSERT_FALSE(countComdatOnce(score, modules));
}

// No code base above the baseline first, then the smallest total; the
// verdict names the total and the code bases above.
TEST(ChooseCandidate, NoCodeBaseAboveTheBaselineThenTheSmallestTotal) {
  const std::vector<std::vector<CodeBaseReport>> candidates = {
      {codeBase("zlib", 1000, 900), codeBase("lua", 2000, 2001)}, // smallest, but Lua larger
      {codeBase("zlib", 1000, 990), codeBase("lua", 2000, 2000)},
      {codeBase("zlib", 1000, 995), codeBase("lua", 2000, 1990)}, // the smallest eligible
      {codeBase("zlib", 1000, 995), codeBase("lua", 2000, 1990)}, // a tie: the first wins
  };
  EXPECT_EQ(chooseCandidate(candidates), std::optional<size_t>(2));
  EXPECT_EQ(codeBasesAboveBaseline(candidates[0]), std::vector<std::string>{"lua +0.050 %"});
  const std::vector<std::vector<CodeBaseReport>> none = {candidates[0]};
  EXPECT_FALSE(chooseCandidate(none));
  EXPECT_EQ(reportVerdict(candidates[2]),
            "-0.500 % total .text vs -Oz, smaller than -Oz; no code base above -Oz");
  EXPECT_EQ(reportVerdict(candidates[0]), "-3.300 % total .text vs -Oz, smaller than -Oz; code "
                                          "bases above -Oz: lua +0.050 %");
  const std::vector<CodeBaseReport> same = {codeBase("zlib", 1000, 1000)};
  EXPECT_EQ(reportVerdict(same),
            "+0.000 % total .text vs -Oz, no better than -Oz; no code base above -Oz");
}

} // namespace
} // namespace mlgo::training
