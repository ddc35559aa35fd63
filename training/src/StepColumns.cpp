#include "mlgo/training/StepColumns.h"

namespace mlgo::training {

const ColumnTable<CompileStats>& compileColumns() {
  using Table = ColumnTable<CompileStats>;
  static const Table table{
      {"win_share", [](const CompileStats& s) { return share(s.wins, s.okJobs); }},
      {"regression_share", [](const CompileStats& s) { return share(s.regressions, s.okJobs); }},
      Table::field("compilations", &CompileStats::compilations),
      Table::field("failed_compilations", &CompileStats::failed),
      Table::field("decisions", &CompileStats::decisions),
      Table::field("cache_lookups", &CompileStats::cacheLookups),
      Table::field("cache_hits", &CompileStats::cacheHits),
      Table::field("cache_seconds_saved", &CompileStats::cacheSecondsSaved),
      Table::field("replays", &CompileStats::replays),
      Table::field("replay_seconds_saved", &CompileStats::replaySecondsSaved),
      Table::field("replays_verified", &CompileStats::replaysVerified),
      Table::field("full_compiles", &CompileStats::fullCompiles),
  };
  return table;
}

CompileStats& operator+=(CompileStats& total, const CompileStats& step) {
  total.compilations += step.compilations;
  total.failed += step.failed;
  total.decisions += step.decisions;
  total.okJobs += step.okJobs;
  total.wins += step.wins;
  total.regressions += step.regressions;
  total.cacheLookups += step.cacheLookups;
  total.cacheHits += step.cacheHits;
  total.cacheSecondsSaved += step.cacheSecondsSaved;
  total.replays += step.replays;
  total.replaySecondsSaved += step.replaySecondsSaved;
  total.replaysVerified += step.replaysVerified;
  total.fullCompiles += step.fullCompiles;
  return total;
}

const ColumnTable<StepTiming>& timingColumns() {
  using Table = ColumnTable<StepTiming>;
  static const Table table{
      Table::field("seconds_step", &StepTiming::stepSeconds),
      Table::field("elapsed_seconds", &StepTiming::elapsedSeconds),
  };
  return table;
}

} // namespace mlgo::training
