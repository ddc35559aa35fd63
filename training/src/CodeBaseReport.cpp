#include "mlgo/training/CodeBaseReport.h"

#include "TrainerSupport.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace mlgo::training {

namespace {

Expected<std::vector<std::string>> names(const toml::node& node, const std::string& where) {
  const toml::array* array = node.as_array();
  if (!array)
    return makeError(where + ": must be an array of code base names");
  std::vector<std::string> result;
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<std::string> name = (*array)[i].value<std::string>();
    if (!name || name->empty())
      return makeError(where + "[" + std::to_string(i) + "]: must be a non-empty string");
    result.push_back(*name);
  }
  return result;
}

bool lessByRegression(const ModuleDelta& a, const ModuleDelta& b) {
  if (a.delta() != b.delta())
    return a.delta() > b.delta();
  return a.module < b.module;
}

void keepLargest(std::vector<ModuleDelta>& regressions, size_t count) {
  std::sort(regressions.begin(), regressions.end(), lessByRegression);
  if (regressions.size() > count)
    regressions.resize(count);
}

} // namespace

std::string percentText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.3f %%", value);
  return text;
}

Expected<CodeBaseSplit> CodeBaseSplit::read(const std::filesystem::path& file) {
  const std::string origin = file.string();
  toml::table parsed;
  try {
    // Debian's toml++ is built with exceptions: a syntax error throws.
    parsed = toml::parse_file(origin);
  } catch (const toml::parse_error& error) {
    return makeError(origin + ":" + std::to_string(error.source().begin.line) + ": " +
                     std::string(error.description()));
  }
  CodeBaseSplit split;
  std::map<std::string, std::vector<std::string>*> sets{
      {"train", &split.train}, {"validation", &split.validation}, {"test", &split.test}};
  for (const auto& [key, node] : parsed) {
    auto target = sets.find(std::string(key.str()));
    if (target == sets.end())
      return makeError(origin + ": unknown key \"" + std::string(key.str()) +
                       "\" (expected train, validation, test)");
    Expected<std::vector<std::string>> list = names(node, origin + ": " + target->first);
    if (!list)
      return list.error();
    *target->second = list.take();
  }
  if (split.test.empty())
    return makeError(origin + ": test: no code bases (a split needs code bases to judge on)");
  std::map<std::string, std::string> seen;
  for (const auto& [set, list] : sets)
    for (const std::string& name : *list) {
      auto [at, inserted] = seen.emplace(name, set);
      if (!inserted)
        return makeError(origin + ": code base \"" + name + "\" is in both " + at->second +
                         " and " + set);
    }
  return split;
}

Expected<std::vector<std::string>> CodeBaseSplit::set(std::string_view name) const {
  if (name == "train")
    return train;
  if (name == "validation")
    return validation;
  if (name == "test")
    return test;
  return makeError("unknown set \"" + std::string(name) + "\" (expected train, validation, test)");
}

std::filesystem::path codeBaseCorpus(const std::string& codeBase,
                                     const std::filesystem::path& corporaDir) {
  if (codeBase.find('/') != std::string::npos)
    return codeBase;
  return corporaDir / codeBase / "corpus";
}

double CodeBaseReport::deltaPercent() const {
  if (baseline == 0)
    return 0;
  return 100.0 * (policy / baseline - 1);
}

std::optional<double> CodeBaseReport::aloneDeltaPercent() const {
  if (!policyAlone)
    return std::nullopt;
  return baseline == 0 ? 0 : 100.0 * (*policyAlone / baseline - 1);
}

CodeBaseReport summariseCodeBase(std::string name, const evaluators::EvaluationResult& result,
                                 size_t candidate,
                                 std::span<const corpus::ModuleSpec* const> modules,
                                 size_t regressions, std::string baselineName, bool bestOf,
                                 std::span<const size_t> alternatives) {
  CodeBaseReport report;
  report.name = std::move(name);
  report.measure = result.measure;
  report.baselineName = std::move(baselineName);
  report.modules = modules.size();
  if (bestOf || !alternatives.empty())
    report.policyAlone = 0.0;
  for (size_t m = 0; m < modules.size(); ++m) {
    const evaluators::JobResult& job = result.job(candidate, m);
    const std::optional<double> baseline = result.baselineMeasure(m);
    if (!job.ok() || !baseline) {
      ++report.failed;
      continue;
    }
    double measured = bestOf ? std::min(result.measured(job), *baseline) : result.measured(job);
    for (size_t alternative : alternatives)
      if (const evaluators::JobResult& other = result.job(alternative, m); other.ok())
        measured = std::min(measured, result.measured(other));
    report.baseline += *baseline;
    report.policy += measured;
    if (report.policyAlone)
      *report.policyAlone += result.measured(job);
    if (measured < *baseline)
      ++report.smaller;
    else if (measured > *baseline) {
      ++report.larger;
      report.largestRegressions.push_back({modules[m]->name, *baseline, measured});
    } else
      ++report.same;
  }
  keepLargest(report.largestRegressions, regressions);
  return report;
}

namespace {

// The bytes of `comdat`'s groups that `kept` already holds (copies a linker
// discards); the others it holds from now on.
uint64_t discardedCopies(const std::vector<evaluators::ComdatCode>& comdat,
                         std::unordered_set<uint64_t>& kept) {
  uint64_t bytes = 0;
  for (const evaluators::ComdatCode& code : comdat)
    if (!kept.insert(code.group).second)
      bytes += code.bytes;
  return bytes;
}

} // namespace

evaluators::EvaluationResult keptObjects(const evaluators::EvaluationResult& result,
                                         size_t candidate, bool bestOf,
                                         std::span<const size_t> alternatives) {
  evaluators::EvaluationResult kept = result;
  kept.candidateCount = 2;
  kept.jobs.assign(2 * result.moduleCount, {});
  for (size_t m = 0; m < result.moduleCount; ++m) {
    const evaluators::JobResult& own = result.job(candidate, m);
    kept.jobs[result.moduleCount + m] = own;
    const evaluators::JobResult* chosen = &own;
    evaluators::JobResult baseline;
    if (bestOf && result.baselineBytes[m] && result.baselineMeasure(m)) {
      baseline.status = evaluators::JobStatus::Ok;
      baseline.sizeBytes = *result.baselineBytes[m];
      baseline.measured = result.baselineMeasure(m);
      if (m < result.baselineComdat.size())
        baseline.comdat = result.baselineComdat[m];
      if (!chosen->ok() || baseline.sizeBytes < chosen->sizeBytes)
        chosen = &baseline;
    }
    for (size_t alternative : alternatives)
      if (const evaluators::JobResult& other = result.job(alternative, m);
          other.ok() && (!chosen->ok() || other.sizeBytes < chosen->sizeBytes))
        chosen = &other;
    kept.jobs[m] = *chosen;
  }
  return kept;
}

Status countComdatOnce(evaluators::EvaluationResult& result,
                       std::span<const corpus::ModuleSpec* const> modules) {
  if (result.measure != evaluators::Measure::TextSize)
    return makeError("COMDAT groups counted once: only for the text-size measure, not " +
                     std::string(evaluators::measureName(result.measure)));
  auto unknown = [&](size_t m, std::string_view what) {
    return makeError("module \"" + modules[m]->name + "\": its " + std::string(what) +
                     " object's COMDAT groups are unknown (keep them: EvaluatorOptions::comdat, "
                     "without replay or caches)");
  };
  std::unordered_set<uint64_t> keptByBaselines;
  std::vector<std::unordered_set<uint64_t>> keptBy(result.candidateCount);
  for (size_t m = 0; m < result.moduleCount; ++m) {
    if (!result.baselineBytes[m])
      continue;
    if (m >= result.baselineComdat.size() || !result.baselineComdat[m])
      return unknown(m, "baseline");
    const double baseline = static_cast<double>(
        *result.baselineBytes[m] - discardedCopies(*result.baselineComdat[m], keptByBaselines));
    result.baselineMeasures[m] = baseline;
    for (size_t c = 0; c < result.candidateCount; ++c) {
      evaluators::JobResult& job = result.jobs[c * result.moduleCount + m];
      if (!job.ok())
        continue;
      if (!job.comdat)
        return unknown(m, "policy's");
      job.measured = static_cast<double>(job.sizeBytes - discardedCopies(*job.comdat, keptBy[c]));
      job.reward = result.reward(*job.measured, baseline);
    }
  }
  return Status::ok();
}

CodeBaseReport totalOf(std::span<const CodeBaseReport> reports, size_t regressions) {
  CodeBaseReport total;
  total.name = "total";
  if (!reports.empty()) {
    total.measure = reports.front().measure;
    total.baselineName = reports.front().baselineName;
    total.comdatOnce = reports.front().comdatOnce;
  }
  for (const CodeBaseReport& r : reports) {
    total.modules += r.modules;
    total.failed += r.failed;
    total.baseline += r.baseline;
    total.policy += r.policy;
    if (r.policyAlone)
      total.policyAlone = total.policyAlone.value_or(0) + *r.policyAlone;
    total.smaller += r.smaller;
    total.larger += r.larger;
    total.same += r.same;
    for (ModuleDelta delta : r.largestRegressions) {
      delta.module = r.name + ": " + delta.module;
      total.largestRegressions.push_back(delta);
    }
  }
  keepLargest(total.largestRegressions, regressions);
  return total;
}

std::string formatReportMarkdown(std::span<const CodeBaseReport> reports, std::string_view title) {
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(
      reports.empty() ? evaluators::Measure::TextSize : reports.front().measure);
  const std::string base = reports.empty() ? "-Oz" : reports.front().baselineName;
  const std::string what = std::string(measure.column) +
                           (!reports.empty() && reports.front().comdatOnce ? " (COMDAT once)" : "");
  auto value = [&](double v) { return measure.format(v); };
  // Behind the guard: the policy alone gets a column of its own.
  const bool guarded = !reports.empty() && reports.front().policyAlone.has_value();
  std::ostringstream out;
  out << "### " << title << "\n\n"
      << "| code base | modules | failed | " << base << " " << what << " | policy " << what
      << " | vs " << base << (guarded ? " | policy alone vs " + base : "") << " | " << measure.lower
      << " | " << measure.higher << " | same |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: |" << (guarded ? " ---: |" : "")
      << " ---: | ---: | ---: |\n";
  auto row = [&](const CodeBaseReport& r, bool bold) {
    std::string name = bold ? "**" + r.name + "**" : r.name;
    std::string delta =
        bold ? "**" + percentText(r.deltaPercent()) + "**" : percentText(r.deltaPercent());
    out << "| " << name << " | " << r.modules << " | " << r.failed << " | " << value(r.baseline)
        << " | " << value(r.policy) << " | " << delta
        << (guarded ? " | " + percentText(r.aloneDeltaPercent().value_or(0)) : "") << " | "
        << r.smaller << " | " << r.larger << " | " << r.same << " |\n";
  };
  for (const CodeBaseReport& r : reports)
    row(r, false);
  if (reports.size() > 1)
    row(totalOf(reports, 0), true);
  bool any = false;
  for (const CodeBaseReport& r : reports) {
    if (r.largestRegressions.empty())
      continue;
    if (!any)
      out << "\nLargest regressions (" << measure.unit << " over " << base << "):\n\n";
    any = true;
    out << "- " << r.name << ":";
    for (size_t i = 0; i < r.largestRegressions.size(); ++i) {
      const ModuleDelta& d = r.largestRegressions[i];
      char change[48];
      std::snprintf(change, sizeof change, " (%+.1f %%)", 100.0 * (d.policy / d.baseline - 1));
      out << (i ? "," : "") << " `" << d.module << "` +" << value(d.delta()) << change;
    }
    out << "\n";
  }
  return out.str();
}

} // namespace mlgo::training

namespace mlgo::training {

namespace {

constexpr std::string_view kValuesHeader = "# mlgo-eval report values v1";

} // namespace

Status writeReportValues(std::span<const CodeBaseReport> reports,
                         const std::filesystem::path& file) {
  const evaluators::Measure measure =
      reports.empty() ? evaluators::Measure::TextSize : reports.front().measure;
  const std::string baseline = reports.empty() ? "-Oz" : reports.front().baselineName;
  std::ostringstream out;
  out << kValuesHeader << "\tmeasure=" << evaluators::measureName(measure)
      << "\tbaseline=" << baseline
      << (!reports.empty() && reports.front().comdatOnce ? "\tcount=comdat-once" : "") << "\n";
  for (const CodeBaseReport& r : reports)
    out << r.name << "\t" << r.modules << "\t" << r.failed << "\t"
        << detail::exactDecimal(r.baseline) << "\t" << detail::exactDecimal(r.policy) << "\t"
        << r.smaller << "\t" << r.larger << "\t" << r.same << "\n";
  std::ofstream file_(file);
  file_ << out.str();
  if (!file_.flush())
    return makeError(file.string() + ": could not write the report's values");
  return Status::ok();
}

Expected<std::vector<CodeBaseReport>> readReportValues(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in)
    return makeError(file.string() + ": cannot read");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = detail::splitTabs(line);
  if (header.size() < 3 || header.size() > 4 || header[0] != kValuesHeader ||
      !header[1].starts_with("measure=") || !header[2].starts_with("baseline=") ||
      (header.size() == 4 && header[3] != "count=comdat-once"))
    return makeError(file.string() + ":1: not a report's values (mlgo-eval report --values)");
  Expected<evaluators::Measure> measure = evaluators::parseMeasure(header[1].substr(8));
  if (!measure)
    return makeError(file.string() + ":1: " + measure.error().message);
  std::vector<CodeBaseReport> reports;
  for (size_t number = 2; std::getline(in, line); ++number) {
    std::vector<std::string> f = detail::splitTabs(line);
    CodeBaseReport r;
    r.measure = *measure;
    r.baselineName = header[2].substr(9);
    r.comdatOnce = header.size() == 4;
    try {
      if (f.size() != 8 || f[0].empty())
        throw std::invalid_argument("fields");
      r.name = f[0];
      r.modules = std::stoul(f[1]);
      r.failed = std::stoul(f[2]);
      r.baseline = std::stod(f[3]);
      r.policy = std::stod(f[4]);
      r.smaller = std::stoul(f[5]);
      r.larger = std::stoul(f[6]);
      r.same = std::stoul(f[7]);
    } catch (const std::exception&) {
      return makeError(file.string() + ":" + std::to_string(number) +
                       ": expected 8 tab-separated fields (name, modules, failed, baseline, "
                       "policy, smaller, larger, same)");
    }
    reports.push_back(std::move(r));
  }
  if (reports.empty())
    return makeError(file.string() + ": no code base");
  return reports;
}

std::vector<std::string> codeBasesAboveBaseline(std::span<const CodeBaseReport> reports) {
  std::vector<std::string> above;
  for (const CodeBaseReport& r : reports)
    if (r.policy > r.baseline)
      above.push_back(r.name + " " + percentText(r.deltaPercent()));
  return above;
}

std::optional<size_t> chooseCandidate(std::span<const std::vector<CodeBaseReport>> candidates) {
  std::optional<size_t> chosen;
  double best = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (candidates[c].empty() || !codeBasesAboveBaseline(candidates[c]).empty())
      continue;
    const double total = totalOf(candidates[c], 0).policy;
    if (!chosen || total < best) {
      chosen = c;
      best = total;
    }
  }
  return chosen;
}

std::string reportVerdict(std::span<const CodeBaseReport> reports) {
  const CodeBaseReport total = totalOf(reports, 0);
  const std::string base = reports.empty() ? "-Oz" : reports.front().baselineName;
  const evaluators::MeasureTraits& measure = evaluators::traitsOf(
      reports.empty() ? evaluators::Measure::TextSize : reports.front().measure);
  const std::string delta = percentText(total.deltaPercent());
  const std::string verdict = delta.starts_with("-")        ? std::string(measure.lower)
                              : delta.starts_with("+0.000") ? "no better"
                                                            : std::string(measure.higher);
  std::vector<std::string> above = codeBasesAboveBaseline(reports);
  std::string list;
  for (const std::string& a : above)
    list += (list.empty() ? "" : ", ") + a;
  return delta + " total " + std::string(measure.column) + " vs " + base + ", " + verdict +
         " than " + base + "; " +
         (above.empty() ? "no code base above " + base : "code bases above " + base + ": " + list);
}

} // namespace mlgo::training
