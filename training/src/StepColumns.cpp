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
  };
  return table;
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
