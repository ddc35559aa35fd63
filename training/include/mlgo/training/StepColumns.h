// Typed per-step records and the run file: each trainer's step record is a
// struct, and one table per record type maps its fields to the /steps
// datasets of the run file (results/README.md, "Run files"). The table is the
// only place a dataset name is spelled; appending a step is one call.
#pragma once

#include "mlgo/results/RunFile.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mlgo::training {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// A field as a /steps value: numbers as they are, flags as 0/1, an unset
// optional as NaN (the run file's "missing").
template <class T> double columnValue(const T& value) {
  if constexpr (std::is_same_v<T, bool>)
    return value ? 1.0 : 0.0;
  else if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(value);
  else
    return value ? columnValue(*value) : kNoValue;
}

// part / whole, NaN when there is no whole.
inline double share(size_t part, size_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : kNoValue;
}

template <class Record> class ColumnTable {
public:
  struct Column {
    std::string dataset;
    std::function<double(const Record&)> value;
  };

  // A column holding a field as it is.
  template <class T> static Column field(std::string dataset, T Record::*member) {
    return {std::move(dataset), [member](const Record& r) { return columnValue(r.*member); }};
  }

  ColumnTable(std::initializer_list<Column> columns) : columns_(columns) {}

  ColumnTable& add(Column column) {
    columns_.push_back(std::move(column));
    return *this;
  }

  // Adds every column of `table`, read from the part `member` of the record.
  template <class Part> ColumnTable& include(Part Record::*member, const ColumnTable<Part>& table) {
    for (const auto& column : table.columns())
      columns_.push_back({column.dataset, [member, value = column.value](const Record& r) {
                            return value(r.*member);
                          }});
    return *this;
  }

  // Appends one step: a value to each column's dataset.
  void append(const Record& record, results::RunRecord& run) const {
    for (const Column& column : columns_)
      run.stepScalars[column.dataset].push_back(column.value(record));
  }

  const std::vector<Column>& columns() const { return columns_; }

private:
  std::vector<Column> columns_;
};

// What every compiling step counts of its jobs (es-train and ppo-train).
struct CompileStats {
  size_t compilations = 0;
  size_t failed = 0;
  uint64_t decisions = 0; // answered, failed jobs included
  size_t okJobs = 0;
  size_t wins = 0;        // ok jobs smaller than -Oz
  size_t regressions = 0; // ok jobs larger than -Oz
  // Decision-sequence cache (in-process backend): compilations whose
  // decisions this run had seen before, and the compile time that saved.
  size_t cacheLookups = 0;
  size_t cacheHits = 0;
  double cacheSecondsSaved = 0;
  // Trajectory replay: jobs answered without a compiler (with
  // --replay-verify: replayable jobs, compiled anyway), the compile time that
  // saved, and the replays verified identical to their compile.
  size_t replays = 0;
  double replaySecondsSaved = 0;
  size_t replaysVerified = 0;
  // Jobs whose compiler ran the whole pipeline (neither replayed nor a
  // decision-cache hit).
  size_t fullCompiles = 0;
};
const ColumnTable<CompileStats>& compileColumns();
// Adds a step's counts to a run's totals.
CompileStats& operator+=(CompileStats& total, const CompileStats& step);

// The skeleton's own columns: wall time of the step and of the run so far.
struct StepTiming {
  double stepSeconds = 0;
  double elapsedSeconds = 0;
};
const ColumnTable<StepTiming>& timingColumns();

} // namespace mlgo::training
