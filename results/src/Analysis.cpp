#include "mlgo/results/Analysis.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

namespace mlgo::results {

namespace {

bool finite(double value) {
  return std::isfinite(value);
}

// Config keys the summary shows in columns of its own.
const std::vector<std::string> kShownKeys = {"run", "trainer", "optimizer", "steps"};

int64_t asInteger(uint64_t value) {
  return static_cast<int64_t>(value);
}

std::optional<int64_t> parseInteger(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

const std::vector<double>* scalar(const RunRecord& run, std::string_view name) {
  auto found = run.stepScalars.find(name);
  return found == run.stepScalars.end() ? nullptr : &found->second;
}

// The validation row taken after `step` steps, if any.
const ValidationRecord* validationAt(const RunRecord& run, int64_t step) {
  for (auto v = run.validations.rbegin(); v != run.validations.rend(); ++v)
    if (v->step == step)
      return &*v;
  return nullptr;
}

bool hasModuleSizes(const RunRecord& run) {
  return !run.stepSizes.empty() && !run.stepModules.empty() && run.steps() > 0;
}

// Candidates per step, from the sizes table (K·M per row).
size_t candidatesAt(const RunRecord& run, size_t step) {
  size_t modules = run.stepModules[step].size();
  return modules ? run.stepSizes[step].size() / modules : 0;
}

std::string stepText(int64_t step) {
  return std::to_string(step);
}

Column textColumn(std::string name, std::string title = "") {
  return Column{std::move(name), std::move(title), ValueFormat::Text, 0, ColumnVisibility::Both};
}
Column integerColumn(std::string name, std::string title = "",
                     ColumnVisibility visibility = ColumnVisibility::Both) {
  return Column{std::move(name), std::move(title), ValueFormat::Integer, 0, visibility};
}
Column numberColumn(std::string name, std::string title, ValueFormat format, int precision,
                    ColumnVisibility visibility = ColumnVisibility::Both) {
  return Column{std::move(name), std::move(title), format, precision, visibility};
}

// Which training compiles failed: those with a failure record, and, for
// trainers that record none, a size of 0 against a module that has code at
// -Oz. (A size of 0 alone is not a failure: a module can have no code.)
class TrainingFailures {
public:
  explicit TrainingFailures(const RunRecord& run) : run_(run) {
    for (const FailureRecord& f : run.failures)
      if (f.step >= 0 && f.candidate >= 0)
        recorded_.insert({f.step, f.candidate, f.module});
  }
  // Candidate `k`'s compile of the step's `position`-th module.
  bool failed(size_t step, size_t k, size_t position) const {
    size_t module = static_cast<size_t>(run_.stepModules[step][position]);
    uint64_t size = run_.stepSizes[step][k * run_.stepModules[step].size() + position];
    if (size == 0 && run_.baselineSizes.at(module) > 0)
      return true;
    return recorded_.count({static_cast<int64_t>(step), static_cast<int64_t>(k),
                            run_.moduleNames.at(module)}) > 0;
  }

private:
  const RunRecord& run_;
  std::set<std::tuple<int64_t, int64_t, std::string>> recorded_;
};

Value sizeValue(double size) {
  return finite(size) ? Value(size) : Value();
}

} // namespace

std::string_view policyChoiceName(PolicyChoice choice) {
  switch (choice) {
  case PolicyChoice::Final:
    return "final";
  case PolicyChoice::Best:
    return "best";
  }
  return "final";
}

std::string_view sizeSourceName(SizeSource source) {
  switch (source) {
  case SizeSource::Evaluated:
    return "evaluated";
  case SizeSource::Validation:
    return "validation";
  case SizeSource::Training:
    return "training (approx.)";
  }
  return "training (approx.)";
}

std::string_view summaryOrderName(SummaryOrder order) {
  switch (order) {
  case SummaryOrder::AsGiven:
    return "given";
  case SummaryOrder::FinalReward:
    return "final-reward";
  case SummaryOrder::BestReward:
    return "best-reward";
  }
  return "given";
}

std::string_view curveAxisName(CurveAxis axis) {
  switch (axis) {
  case CurveAxis::Compilations:
    return "compilations";
  case CurveAxis::WallSeconds:
    return "seconds";
  }
  return "compilations";
}

// --- policy sizes ---------------------------------------------------------------------

bool PolicySizes::compared(size_t module) const {
  return finite(sizes[module]) && baselines[module] > 0;
}

size_t PolicySizes::comparedModules() const {
  size_t count = 0;
  for (size_t m = 0; m < modules.size(); ++m)
    count += compared(m);
  return count;
}

double PolicySizes::totalBytes() const {
  double total = 0;
  for (size_t m = 0; m < modules.size(); ++m)
    if (compared(m))
      total += sizes[m];
  return total;
}

double PolicySizes::totalBaselineBytes() const {
  double total = 0;
  for (size_t m = 0; m < modules.size(); ++m)
    if (compared(m))
      total += static_cast<double>(baselines[m]);
  return total;
}

double PolicySizes::change() const {
  double baseline = totalBaselineBytes();
  return baseline > 0 ? totalBytes() / baseline - 1 : kNoValue;
}

std::optional<PolicySnapshot> choosePolicy(const RunRecord& run, PolicyChoice choice) {
  if (choice == PolicyChoice::Best)
    return run.bestPolicy;
  if (run.finalPolicy)
    return run.finalPolicy;
  if (run.checkpoint)
    return PolicySnapshot{run.checkpoint->step, run.checkpoint->policyJson};
  return std::nullopt;
}

std::optional<PolicySizes> recordedPolicySizes(const RunRecord& run, PolicyChoice choice) {
  std::optional<PolicySnapshot> policy = choosePolicy(run, choice);
  if (!policy)
    return std::nullopt;
  const int64_t step = policy->step;
  PolicySizes sizes;
  sizes.step = step;
  if (const ValidationRecord* v = validationAt(run, step);
      v && !run.validationModuleNames.empty()) {
    sizes.source = SizeSource::Validation;
    sizes.description = "validation after step " + stepText(step);
    sizes.modules = run.validationModuleNames;
    sizes.baselines = run.validationBaselineSizes;
    for (size_t m = 0; m < v->sizes.size(); ++m)
      sizes.sizes.push_back(v->ok[m] ? static_cast<double>(v->sizes[m]) : kNoValue);
    return sizes;
  }
  if (!hasModuleSizes(run) || step < 0)
    return std::nullopt;
  // Per module, the mean over the successful candidates of the latest step
  // up to `last` that compiled it (successfully, by at least one candidate).
  const size_t last = std::min(static_cast<size_t>(step), run.steps() - 1);
  const size_t moduleCount = run.moduleNames.size();
  std::vector<double> sum(moduleCount, 0), count(moduleCount, 0);
  std::vector<int64_t> latest(moduleCount, -1);
  std::vector<bool> seen(moduleCount, false);
  TrainingFailures failures(run);
  for (size_t s = last + 1; s-- > 0;) {
    const std::vector<int64_t>& modules = run.stepModules[s];
    size_t candidates = candidatesAt(run, s);
    for (size_t m = 0; m < modules.size(); ++m) {
      size_t module = static_cast<size_t>(modules[m]);
      if (module >= moduleCount)
        continue;
      seen[module] = true;
      if (latest[module] >= 0 && latest[module] != static_cast<int64_t>(s))
        continue;
      for (size_t k = 0; k < candidates; ++k) {
        if (failures.failed(s, k, m))
          continue;
        uint64_t size = run.stepSizes[s][k * modules.size() + m];
        latest[module] = static_cast<int64_t>(s);
        sum[module] += static_cast<double>(size);
        count[module] += 1;
      }
    }
  }
  sizes.source = SizeSource::Training;
  sizes.description =
      "training: mean size of the candidates around steps <= " + std::to_string(last) +
      " (approximate)";
  for (size_t module = 0; module < moduleCount; ++module) {
    if (!seen[module])
      continue;
    sizes.modules.push_back(run.moduleNames[module]);
    sizes.sizes.push_back(count[module] > 0 ? sum[module] / count[module] : kNoValue);
    sizes.baselines.push_back(run.baselineSizes[module]);
  }
  return sizes;
}

// --- summary --------------------------------------------------------------------------

RunSummary summarizeRun(std::string file, const RunRecord& run, const SummaryOptions& options) {
  RunSummary s;
  s.file = std::move(file);
  s.label = s.file;
  s.trainer = run.trainer;
  if (auto a = run.attributes.find("optimizer"); a != run.attributes.end())
    s.optimizer = a->second;
  else if (auto c = run.config.find("optimizer"); c != run.config.end())
    s.optimizer = c->second;
  else
    s.optimizer = run.trainer;
  if (auto m = run.attributes.find("measure"); m != run.attributes.end() && !m->second.empty())
    s.measure = m->second;
  s.config = run.config;
  // A run started from --initial-policy has that policy's layers; the
  // config's --hidden was not used. The policy's description says them
  // ("mlp[8,8] relu" → "8,8").
  auto initial = run.config.find("initial-policy");
  auto policy = run.attributes.find("policy");
  if (initial != run.config.end() && !initial->second.empty() && policy != run.attributes.end()) {
    size_t open = policy->second.find('['), close = policy->second.find(']');
    if (open != std::string::npos && close != std::string::npos && open < close)
      s.config["hidden"] = policy->second.substr(open + 1, close - open - 1);
  }
  s.steps = static_cast<int64_t>(run.steps());
  if (auto c = run.config.find("steps"); c != run.config.end())
    s.plannedSteps = parseInteger(c->second);
  s.finished = run.finalPolicy.has_value() ||
               (s.plannedSteps && run.checkpoint && run.checkpoint->step >= *s.plannedSteps);

  if (run.checkpoint) {
    s.wallSeconds = run.checkpoint->elapsedSeconds;
  } else if (const std::vector<double>* elapsed = scalar(run, "elapsed_seconds")) {
    for (double e : *elapsed)
      if (finite(e))
        s.wallSeconds = e;
  } else if (const std::vector<double>* stepSeconds = scalar(run, "seconds_step")) {
    s.wallSeconds = 0;
    for (double e : *stepSeconds)
      if (finite(e))
        s.wallSeconds += e;
  }

  for (const std::vector<uint64_t>& row : run.stepSizes)
    s.compilations += row.size();
  if (hasModuleSizes(run)) {
    TrainingFailures failures(run);
    for (size_t step = 0; step < run.steps(); ++step)
      for (size_t k = 0; k < candidatesAt(run, step); ++k)
        for (size_t m = 0; m < run.stepModules[step].size(); ++m)
          s.failedCompilations += failures.failed(step, k, m);
  }
  for (const ValidationRecord& v : run.validations) {
    s.compilations += v.ok.size();
    s.failedCompilations += static_cast<uint64_t>(std::ranges::count(v.ok, uint8_t{0}));
  }

  if (const std::vector<double>* reward = scalar(run, options.rewardScalar))
    for (double r : *reward)
      if (finite(r)) {
        s.finalReward = r;
        if (!finite(s.bestReward) || r > s.bestReward)
          s.bestReward = r;
      }
  s.finalSizes = recordedPolicySizes(run, PolicyChoice::Final);
  s.bestSizes = recordedPolicySizes(run, PolicyChoice::Best);
  return s;
}

std::vector<std::string> hyperparameterKeys(const std::vector<RunSummary>& runs,
                                            const SummaryTableOptions& options) {
  if (!options.keys.empty())
    return options.keys;
  std::vector<std::string> keys;
  if (runs.size() > 1) {
    std::set<std::string> all;
    for (const RunSummary& run : runs)
      for (const auto& [key, value] : run.config)
        all.insert(key);
    for (const std::string& key : all) {
      if (std::ranges::find(kOperationalKeys, key) != kOperationalKeys.end() ||
          std::ranges::find(kShownKeys, key) != kShownKeys.end())
        continue;
      auto valueIn = [&](const RunSummary& run) {
        auto found = run.config.find(key);
        return found == run.config.end() ? std::optional<std::string>() : found->second;
      };
      std::optional<std::string> first = valueIn(runs.front());
      if (std::ranges::any_of(runs, [&](const RunSummary& run) { return valueIn(run) != first; }))
        keys.push_back(key);
    }
  }
  if (keys.empty())
    for (const std::string& key : kKeyHyperparameters)
      if (std::ranges::any_of(runs, [&](const RunSummary& run) { return run.config.count(key); }))
        keys.push_back(key);
  return keys;
}

std::string sizeChangeLabel(const std::vector<RunSummary>& runs) {
  if (runs.empty() || std::ranges::any_of(runs, [&](const RunSummary& r) {
        return r.measure != runs.front().measure;
      }))
    return "measure vs baseline";
  const std::string& measure = runs.front().measure;
  return measure == "text-size vs -Oz" ? ".text vs -Oz" : measure;
}

Table summaryTable(std::vector<RunSummary> runs, const SummaryTableOptions& options) {
  if (options.order != SummaryOrder::AsGiven) {
    auto value = [&](const RunSummary& run) {
      return options.order == SummaryOrder::FinalReward ? run.finalReward : run.bestReward;
    };
    std::ranges::stable_sort(runs, [&](const RunSummary& a, const RunSummary& b) {
      double x = value(a), y = value(b);
      if (!finite(y))
        return finite(x);
      return finite(x) && x > y;
    });
  }
  std::vector<std::string> keys = hyperparameterKeys(runs, options);

  Table table;
  const auto csvOnly = ColumnVisibility::CsvOnly;
  const auto textOnly = ColumnVisibility::TextOnly;
  table.columns = {textColumn("label", "run"), textColumn("run"), textColumn("trainer"),
                   textColumn("optimizer")};
  table.columns[0].visibility = ColumnVisibility::TextOnly;
  table.columns[1].visibility = ColumnVisibility::CsvOnly;
  for (const std::string& key : keys)
    table.columns.push_back(textColumn(key));
  std::vector<Column> rest = {
      textColumn("steps_done", "steps"),
      integerColumn("steps", "", csvOnly),
      integerColumn("planned_steps", "", csvOnly),
      integerColumn("finished", "", csvOnly),
      numberColumn("wall_seconds", "wall s", ValueFormat::Decimal, 1),
      integerColumn("compilations"),
      integerColumn("failed_compilations", "failed"),
      numberColumn("final_reward", "final reward", ValueFormat::SignedDecimal, 5),
      numberColumn("best_reward", "best reward", ValueFormat::SignedDecimal, 5),
      numberColumn("final_size_change", "final " + sizeChangeLabel(runs), ValueFormat::Percent, 2),
      numberColumn("best_size_change", "best " + sizeChangeLabel(runs), ValueFormat::Percent, 2),
      textColumn("sizes_from", "sizes from"),
      integerColumn("final_policy_step", "", csvOnly),
      integerColumn("final_size_bytes", "", csvOnly),
      integerColumn("final_baseline_bytes", "", csvOnly),
      integerColumn("final_size_modules", "", csvOnly),
      textColumn("final_size_source"),
      integerColumn("best_policy_step", "", csvOnly),
      integerColumn("best_size_bytes", "", csvOnly),
      integerColumn("best_baseline_bytes", "", csvOnly),
      integerColumn("best_size_modules", "", csvOnly),
      textColumn("best_size_source"),
  };
  rest[0].visibility = textOnly;
  for (Column& c : rest) {
    if (c.name == "sizes_from")
      c.visibility = textOnly;
    if (c.name == "final_size_source" || c.name == "best_size_source")
      c.visibility = csvOnly;
    table.columns.push_back(std::move(c));
  }

  for (const RunSummary& run : runs) {
    std::vector<Value> row = {run.label, run.file, run.trainer, run.optimizer};
    for (const std::string& key : keys) {
      auto found = run.config.find(key);
      row.push_back(found == run.config.end() ? Value() : Value(found->second));
    }
    std::string done = std::to_string(run.steps);
    if (run.plannedSteps && !run.finished)
      done += "/" + std::to_string(*run.plannedSteps);
    row.push_back(done);
    row.push_back(run.steps);
    row.push_back(run.plannedSteps ? Value(*run.plannedSteps) : Value());
    row.push_back(int64_t{run.finished ? 1 : 0});
    row.push_back(run.wallSeconds);
    row.push_back(asInteger(run.compilations));
    row.push_back(asInteger(run.failedCompilations));
    row.push_back(run.finalReward);
    row.push_back(run.bestReward);
    auto change = [](const std::optional<PolicySizes>& sizes) {
      return sizes ? Value(sizes->change()) : Value();
    };
    row.push_back(change(run.finalSizes));
    row.push_back(change(run.bestSizes));
    std::string from;
    if (run.finalSizes)
      from = sizeSourceName(run.finalSizes->source);
    if (run.bestSizes && (!run.finalSizes || run.bestSizes->source != run.finalSizes->source))
      from += (from.empty() ? "best: " : ", best: ") +
              std::string(sizeSourceName(run.bestSizes->source));
    row.push_back(from.empty() ? Value() : Value(from));
    for (const std::optional<PolicySizes>* sizes : {&run.finalSizes, &run.bestSizes}) {
      if (*sizes) {
        row.push_back((*sizes)->step);
        row.push_back((*sizes)->totalBytes());
        row.push_back((*sizes)->totalBaselineBytes());
        row.push_back(static_cast<int64_t>((*sizes)->comparedModules()));
        row.push_back(std::string(sizeSourceName((*sizes)->source)));
      } else {
        row.insert(row.end(), 5, Value());
      }
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

// --- compare --------------------------------------------------------------------------

ModuleComparison compareModules(const std::vector<PolicySizes>& runs) {
  ModuleComparison c;
  std::map<std::string, size_t, std::less<>> index;
  for (const PolicySizes& run : runs)
    for (size_t m = 0; m < run.modules.size(); ++m) {
      auto [it, added] = index.emplace(run.modules[m], c.modules.size());
      if (added) {
        c.modules.push_back(run.modules[m]);
        c.baselines.push_back(0);
      }
      if (c.baselines[it->second] == 0)
        c.baselines[it->second] = run.baselines[m];
    }
  const size_t moduleCount = c.modules.size();
  c.sizes.assign(runs.size(), std::vector<double>(moduleCount, kNoValue));
  for (size_t r = 0; r < runs.size(); ++r)
    for (size_t m = 0; m < runs[r].modules.size(); ++m)
      c.sizes[r][index.at(runs[r].modules[m])] = runs[r].sizes[m];

  c.wins.assign(runs.size(), 0);
  c.totalBytes.assign(runs.size(), 0);
  for (size_t m = 0; m < moduleCount; ++m) {
    std::vector<std::pair<double, size_t>> present;
    for (size_t r = 0; r < runs.size(); ++r)
      if (finite(c.sizes[r][m]))
        present.emplace_back(c.sizes[r][m], r);
    std::ranges::sort(present);
    std::optional<size_t> winner;
    double margin = kNoValue;
    if (present.size() >= 2) {
      margin = present[1].first - present[0].first;
      if (margin > 0) {
        winner = present[0].second;
        ++c.wins[*winner];
      } else {
        ++c.ties;
      }
    }
    c.winner.push_back(winner);
    c.margin.push_back(margin);
    if (present.size() == runs.size() && c.baselines[m] > 0) {
      ++c.commonModules;
      c.totalBaselineBytes += static_cast<double>(c.baselines[m]);
      for (size_t r = 0; r < runs.size(); ++r)
        c.totalBytes[r] += c.sizes[r][m];
    }
  }
  return c;
}

Table moduleComparisonTable(const ModuleComparison& c, const std::vector<std::string>& labels) {
  Table table;
  table.columns = {textColumn("module"), integerColumn("baseline_size", "-Oz")};
  for (const std::string& label : labels)
    table.columns.push_back(integerColumn(label));
  table.columns.push_back(textColumn("winner"));
  table.columns.push_back(integerColumn("by_bytes", "by bytes"));
  auto winnerName = [&](std::optional<size_t> winner, double margin) {
    if (winner)
      return Value(labels[*winner]);
    return finite(margin) ? Value(std::string("tie")) : Value();
  };
  for (size_t m = 0; m < c.modules.size(); ++m) {
    std::vector<Value> row = {c.modules[m],
                              c.baselines[m] ? Value(asInteger(c.baselines[m])) : Value()};
    for (size_t r = 0; r < labels.size(); ++r)
      row.push_back(sizeValue(c.sizes[r][m]));
    row.push_back(winnerName(c.winner[m], c.margin[m]));
    row.push_back(sizeValue(c.margin[m]));
    table.rows.push_back(std::move(row));
  }
  if (c.commonModules > 0 && labels.size() >= 2) {
    std::vector<std::pair<double, size_t>> totals;
    for (size_t r = 0; r < labels.size(); ++r)
      totals.emplace_back(c.totalBytes[r], r);
    std::ranges::sort(totals);
    double margin = totals[1].first - totals[0].first;
    std::vector<Value> row = {"total (" + std::to_string(c.commonModules) +
                                  " modules all runs have)",
                              c.totalBaselineBytes};
    for (size_t r = 0; r < labels.size(); ++r)
      row.push_back(c.totalBytes[r]);
    row.push_back(winnerName(margin > 0 ? std::optional(totals[0].second) : std::nullopt, margin));
    row.push_back(margin);
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::vector<double> stepPositions(const RunRecord& run, CurveAxis axis) {
  const size_t steps = run.steps();
  std::vector<double> positions(steps, kNoValue);
  if (axis == CurveAxis::WallSeconds) {
    if (const std::vector<double>* elapsed = scalar(run, "elapsed_seconds"))
      return *elapsed;
    if (const std::vector<double>* stepSeconds = scalar(run, "seconds_step")) {
      double total = 0;
      for (size_t s = 0; s < steps; ++s) {
        if (finite((*stepSeconds)[s]))
          total += (*stepSeconds)[s];
        positions[s] = total;
      }
    }
    return positions;
  }
  const std::vector<double>* compilations = scalar(run, "compilations");
  if (run.stepSizes.empty() && !compilations)
    return positions;
  double total = 0;
  for (size_t s = 0; s < steps; ++s) {
    if (!run.stepSizes.empty())
      total += static_cast<double>(run.stepSizes[s].size());
    else if (finite((*compilations)[s]))
      total += (*compilations)[s];
    // The validation after this step is part of its cost.
    for (const ValidationRecord& v : run.validations)
      if (v.step == static_cast<int64_t>(s) + 1)
        total += static_cast<double>(v.ok.size());
    positions[s] = total;
  }
  return positions;
}

AlignedCurves alignCurves(const std::vector<const RunRecord*>& runs, CurveAxis axis,
                          std::string_view scalarName, size_t points) {
  AlignedCurves curves;
  curves.axis = axis;
  curves.scalar = std::string(scalarName);
  std::vector<std::vector<double>> positions;
  double end = kNoValue;
  for (const RunRecord* run : runs) {
    positions.push_back(stepPositions(*run, axis));
    for (double p : positions.back())
      if (finite(p) && (!finite(end) || p > end))
        end = p;
  }
  curves.values.assign(runs.size(), {});
  if (!finite(end) || end <= 0 || points == 0)
    return curves;
  for (size_t i = 0; i < points; ++i)
    curves.x.push_back(
        i + 1 == points ? end : end * static_cast<double>(i + 1) / static_cast<double>(points));
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<double>* values = scalar(*runs[r], scalarName);
    const std::vector<double>& at = positions[r];
    double runEnd = kNoValue;
    for (double p : at)
      if (finite(p) && (!finite(runEnd) || p > runEnd))
        runEnd = p;
    for (double x : curves.x) {
      const double reach = x * (1 + 1e-12) + 1e-9; // rounding of the grid
      double value = kNoValue;
      if (values && finite(runEnd) && runEnd >= x * (1 - 1e-12) - 1e-9)
        for (size_t s = 0; s < at.size() && finite(at[s]) && at[s] <= reach; ++s)
          if (finite((*values)[s]))
            value = (*values)[s];
      curves.values[r].push_back(value);
    }
  }
  return curves;
}

Table curvesTable(const AlignedCurves& curves, const std::vector<std::string>& labels) {
  Table table;
  if (curves.axis == CurveAxis::Compilations)
    table.columns.push_back(integerColumn("compilations"));
  else
    table.columns.push_back(numberColumn("seconds", "wall s", ValueFormat::Decimal, 1));
  for (const std::string& label : labels)
    table.columns.push_back(numberColumn(label, "", ValueFormat::SignedDecimal, 5));
  for (size_t i = 0; i < curves.x.size(); ++i) {
    std::vector<Value> row = {curves.axis == CurveAxis::Compilations
                                  ? Value(static_cast<int64_t>(std::llround(curves.x[i])))
                                  : Value(curves.x[i])};
    for (size_t r = 0; r < labels.size(); ++r)
      row.emplace_back(curves.values[r][i]);
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::vector<std::string> runLabels(const std::vector<std::string>& files) {
  std::vector<std::string> stems;
  for (const std::string& file : files) {
    std::filesystem::path path(file);
    stems.push_back(path.extension() == ".h5" ? path.stem().string() : path.filename().string());
  }
  std::set<std::string> unique(stems.begin(), stems.end());
  return unique.size() == stems.size() ? stems : files;
}

// --- show -----------------------------------------------------------------------------

Table stepScalarsTable(const RunRecord& run, size_t step) {
  Table table;
  table.columns = {textColumn("scalar"), numberColumn("value", "", ValueFormat::Text, 0)};
  for (const auto& [name, values] : run.stepScalars)
    table.rows.push_back({name, step < values.size() ? Value(values[step]) : Value()});
  return table;
}

Table stepCandidatesTable(const RunRecord& run, size_t step) {
  Table table;
  table.columns = {integerColumn("candidate"),
                   numberColumn("reward", "", ValueFormat::SignedDecimal, 5),
                   integerColumn("failed"),
                   integerColumn("size_bytes", "size"),
                   integerColumn("baseline_bytes", "-Oz"),
                   numberColumn("size_change", "vs -Oz", ValueFormat::Percent, 2)};
  const std::vector<double>& rewards = run.candidateRewards.at(step);
  const bool sizes = hasModuleSizes(run);
  TrainingFailures failures(run);
  for (size_t k = 0; k < rewards.size(); ++k) {
    std::vector<Value> row = {static_cast<int64_t>(k), rewards[k]};
    if (sizes) {
      const std::vector<int64_t>& modules = run.stepModules[step];
      int64_t failed = 0;
      uint64_t bytes = 0, baseline = 0;
      for (size_t m = 0; m < modules.size(); ++m) {
        uint64_t size = run.stepSizes[step][k * modules.size() + m];
        uint64_t base = run.baselineSizes.at(static_cast<size_t>(modules[m]));
        if (failures.failed(step, k, m)) {
          ++failed;
        } else if (base > 0) {
          bytes += size;
          baseline += base;
        }
      }
      row.push_back(failed);
      row.push_back(asInteger(bytes));
      row.push_back(asInteger(baseline));
      row.push_back(baseline ? Value(static_cast<double>(bytes) / static_cast<double>(baseline) - 1)
                             : Value());
    } else {
      row.insert(row.end(), 4, Value());
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table stepModulesTable(const RunRecord& run, size_t step) {
  Table table;
  table.columns = {textColumn("module"),
                   integerColumn("baseline_size", "-Oz"),
                   integerColumn("smallest"),
                   integerColumn("mean"),
                   integerColumn("largest"),
                   integerColumn("smaller_than_oz", "wins"),
                   integerColumn("larger_than_oz", "losses"),
                   integerColumn("failed")};
  if (!hasModuleSizes(run))
    return table;
  const std::vector<int64_t>& modules = run.stepModules.at(step);
  const size_t candidates = candidatesAt(run, step);
  TrainingFailures failures(run);
  for (size_t m = 0; m < modules.size(); ++m) {
    size_t module = static_cast<size_t>(modules[m]);
    uint64_t base = run.baselineSizes.at(module);
    double smallest = kNoValue, largest = kNoValue, sum = 0;
    int64_t ok = 0, wins = 0, losses = 0, failed = 0;
    for (size_t k = 0; k < candidates; ++k) {
      if (failures.failed(step, k, m)) {
        ++failed;
        continue;
      }
      uint64_t size = run.stepSizes[step][k * modules.size() + m];
      double bytes = static_cast<double>(size);
      smallest = finite(smallest) ? std::min(smallest, bytes) : bytes;
      largest = finite(largest) ? std::max(largest, bytes) : bytes;
      sum += bytes;
      ++ok;
      wins += base > 0 && size < base;
      losses += base > 0 && size > base;
    }
    table.rows.push_back({run.moduleNames.at(module), base ? Value(asInteger(base)) : Value(),
                          smallest, ok ? Value(sum / static_cast<double>(ok)) : Value(), largest,
                          wins, losses, failed});
  }
  return table;
}

Table stepFailuresTable(const RunRecord& run, size_t step) {
  Table table;
  table.columns = {textColumn("candidate"), textColumn("module"), textColumn("status"),
                   textColumn("message"), textColumn("stderr_tail", "stderr (last line)")};
  const int64_t s = static_cast<int64_t>(step);
  for (const FailureRecord& f : run.failures) {
    bool training = f.step == s && f.candidate >= 0;
    bool validation = f.step == s + 1 && f.candidate < 0;
    if (!training && !validation)
      continue;
    std::string tail = f.stderrTail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r'))
      tail.pop_back();
    if (size_t newline = tail.rfind('\n'); newline != std::string::npos)
      tail = tail.substr(newline + 1);
    table.rows.push_back({training ? std::to_string(f.candidate) : std::string("validation"),
                          f.module, f.status, f.message, tail});
  }
  return table;
}

// --- export ---------------------------------------------------------------------------

std::vector<NamedTable> exportTables(const std::vector<LabelledRun>& runs,
                                     const SummaryOptions& options) {
  std::vector<NamedTable> tables;
  auto add = [&](std::string name, std::vector<Column> columns) -> Table& {
    columns.insert(columns.begin(), textColumn("run"));
    tables.push_back({std::move(name), Table{std::move(columns), {}}});
    return tables.back().table;
  };

  {
    std::vector<RunSummary> summaries;
    for (const LabelledRun& run : runs)
      summaries.push_back(summarizeRun(run.label, *run.record, options));
    tables.push_back({"runs", summaryTable(std::move(summaries), {})});
  }

  Table& config = add("config", {textColumn("key"), textColumn("value")});
  for (const LabelledRun& run : runs)
    for (const auto& [key, value] : run.record->config)
      config.rows.push_back({run.label, key, value});

  Table& attributes = add("attributes", {textColumn("key"), textColumn("value")});
  for (const LabelledRun& run : runs)
    for (const auto& [key, value] : run.record->attributes)
      attributes.rows.push_back({run.label, key, value});

  Table& modules = add("modules", {textColumn("set"), integerColumn("index"), textColumn("module"),
                                   integerColumn("baseline_size")});
  for (const LabelledRun& run : runs) {
    const RunRecord& r = *run.record;
    for (size_t m = 0; m < r.moduleNames.size(); ++m)
      modules.rows.push_back({run.label, std::string("training"), static_cast<int64_t>(m),
                              r.moduleNames[m], asInteger(r.baselineSizes[m])});
    for (size_t m = 0; m < r.validationModuleNames.size(); ++m)
      modules.rows.push_back({run.label, std::string("validation"), static_cast<int64_t>(m),
                              r.validationModuleNames[m], asInteger(r.validationBaselineSizes[m])});
  }

  std::set<std::string> scalarNames;
  for (const LabelledRun& run : runs)
    for (const auto& [name, values] : run.record->stepScalars)
      scalarNames.insert(name);
  std::vector<Column> stepColumns = {integerColumn("step")};
  for (const std::string& name : scalarNames)
    stepColumns.push_back(numberColumn(name, "", ValueFormat::Text, 0));
  Table& steps = add("steps", std::move(stepColumns));
  for (const LabelledRun& run : runs)
    for (size_t s = 0; s < run.record->steps(); ++s) {
      std::vector<Value> row = {run.label, static_cast<int64_t>(s)};
      for (const std::string& name : scalarNames) {
        const std::vector<double>* values = scalar(*run.record, name);
        if (values && s < values->size())
          row.emplace_back((*values)[s]);
        else
          row.emplace_back();
      }
      steps.rows.push_back(std::move(row));
    }

  Table& candidates =
      add("candidates", {integerColumn("step"), integerColumn("candidate"),
                         numberColumn("reward", "", ValueFormat::SignedDecimal, 5)});
  for (const LabelledRun& run : runs)
    for (size_t s = 0; s < run.record->steps(); ++s)
      for (size_t k = 0; k < run.record->candidateRewards[s].size(); ++k)
        candidates.rows.push_back({run.label, static_cast<int64_t>(s), static_cast<int64_t>(k),
                                   run.record->candidateRewards[s][k]});

  Table& sizes =
      add("sizes", {integerColumn("step"), integerColumn("candidate"),
                    integerColumn("module_index"), textColumn("module"), integerColumn("size"),
                    integerColumn("baseline_size"), integerColumn("ok")});
  for (const LabelledRun& run : runs) {
    const RunRecord& r = *run.record;
    if (!hasModuleSizes(r))
      continue;
    TrainingFailures failures(r);
    for (size_t s = 0; s < r.steps(); ++s) {
      const std::vector<int64_t>& stepModules = r.stepModules[s];
      for (size_t k = 0; k < candidatesAt(r, s); ++k)
        for (size_t m = 0; m < stepModules.size(); ++m) {
          size_t module = static_cast<size_t>(stepModules[m]);
          uint64_t size = r.stepSizes[s][k * stepModules.size() + m];
          bool ok = !failures.failed(s, k, m);
          sizes.rows.push_back({run.label, static_cast<int64_t>(s), static_cast<int64_t>(k),
                                stepModules[m], r.moduleNames.at(module),
                                ok ? Value(asInteger(size)) : Value(),
                                asInteger(r.baselineSizes.at(module)), int64_t{ok ? 1 : 0}});
        }
    }
  }

  Table& failures =
      add("failures", {integerColumn("step"), integerColumn("candidate"), textColumn("module"),
                       textColumn("status"), textColumn("message"), textColumn("stderr_tail")});
  for (const LabelledRun& run : runs)
    for (const FailureRecord& f : run.record->failures)
      failures.rows.push_back(
          {run.label, f.step, f.candidate, f.module, f.status, f.message, f.stderrTail});

  Table& validation =
      add("validation", {integerColumn("step"), integerColumn("ok_modules"),
                         numberColumn("mean_reward", "", ValueFormat::SignedDecimal, 5),
                         numberColumn("total_reward", "", ValueFormat::SignedDecimal, 5)});
  Table& validationSizes =
      add("validation_sizes", {integerColumn("step"), textColumn("module"), integerColumn("size"),
                               integerColumn("baseline_size"), integerColumn("ok")});
  for (const LabelledRun& run : runs) {
    const RunRecord& r = *run.record;
    for (const ValidationRecord& v : r.validations) {
      validation.rows.push_back({run.label, v.step,
                                 static_cast<int64_t>(std::ranges::count(v.ok, uint8_t{1})),
                                 v.meanReward, v.totalReward});
      for (size_t m = 0; m < v.sizes.size(); ++m)
        validationSizes.rows.push_back({run.label, v.step, r.validationModuleNames[m],
                                        v.ok[m] ? Value(asInteger(v.sizes[m])) : Value(),
                                        asInteger(r.validationBaselineSizes[m]),
                                        int64_t{v.ok[m] ? 1 : 0}});
    }
  }

  Table& policies =
      add("policies", {textColumn("kind"), integerColumn("step"), textColumn("metric"),
                       numberColumn("value", "", ValueFormat::SignedDecimal, 5)});
  for (const LabelledRun& run : runs) {
    const RunRecord& r = *run.record;
    for (const PolicySnapshot& snapshot : r.snapshots)
      policies.rows.push_back(
          {run.label, std::string("snapshot"), snapshot.step, Value(), Value()});
    if (r.bestPolicy)
      policies.rows.push_back({run.label, std::string("best"), r.bestPolicy->step,
                               r.bestPolicyMetric, r.bestPolicyValue});
    if (r.finalPolicy)
      policies.rows.push_back(
          {run.label, std::string("final"), r.finalPolicy->step, Value(), Value()});
    if (r.checkpoint)
      policies.rows.push_back(
          {run.label, std::string("checkpoint"), r.checkpoint->step, Value(), Value()});
  }
  return tables;
}

} // namespace mlgo::results
