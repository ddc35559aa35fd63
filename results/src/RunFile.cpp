#include "mlgo/results/RunFile.h"
#include "mlgo/support/Files.h"

#include "mlgo/results/Hdf5File.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <concepts>
#include <initializer_list>
#include <iterator>
#include <span>
#include <system_error>
#include <type_traits>
#include <utility>

namespace fs = std::filesystem;

namespace mlgo::results {

namespace {

// --- The schema (results/README.md, "Run files") ------------------------------

constexpr std::string_view kConfigToml = "/config/toml";
constexpr std::string_view kConfigKeys = "/config/keys";
constexpr std::string_view kConfigValues = "/config/values";
constexpr std::string_view kAttributeKeys = "/attributes/keys";
constexpr std::string_view kAttributeValues = "/attributes/values";

constexpr std::string_view kModuleNames = "/modules/name";
constexpr std::string_view kModuleBaselines = "/modules/baseline_size";
constexpr std::string_view kModuleBitcodeHashes = "/modules/bitcode_hash";
constexpr std::string_view kValidationModuleNames = "/validation_modules/name";
constexpr std::string_view kValidationModuleBaselines = "/validation_modules/baseline_size";

constexpr std::string_view kSteps = "/steps";
constexpr std::string_view kCandidateRewards = "/steps/candidate_rewards";
constexpr std::string_view kStepModules = "/steps/modules";
constexpr std::string_view kStepSizes = "/steps/sizes";
// The children of /steps that are not step scalars. A step scalar named like
// one of them is stored with its first character escaped ("%6Dodules").
constexpr std::array<std::string_view, 3> kStepTables = {"candidate_rewards", "modules", "sizes"};

constexpr std::string_view kFailureSteps = "/failures/step";
constexpr std::string_view kFailureCandidates = "/failures/candidate";
constexpr std::string_view kFailureModules = "/failures/module";
constexpr std::string_view kFailureStatuses = "/failures/status";
constexpr std::string_view kFailureMessages = "/failures/message";
constexpr std::string_view kFailureStderrTails = "/failures/stderr_tail";

constexpr std::string_view kValidationSteps = "/validation/step";
constexpr std::string_view kValidationSizes = "/validation/sizes";
constexpr std::string_view kValidationOk = "/validation/ok";
constexpr std::string_view kValidationMeanRewards = "/validation/mean_reward";
constexpr std::string_view kValidationTotalRewards = "/validation/total_reward";

constexpr std::string_view kSnapshotSteps = "/policies/snapshots/step";
constexpr std::string_view kSnapshotJson = "/policies/snapshots/json";
constexpr std::string_view kBestPolicy = "/policies/best";
constexpr std::string_view kBestPolicyJson = "/policies/best/json";
constexpr std::string_view kFinalPolicy = "/policies/final";
constexpr std::string_view kFinalPolicyJson = "/policies/final/json";

constexpr std::string_view kCheckpoint = "/checkpoint";
constexpr std::string_view kCheckpointPolicyJson = "/checkpoint/policy_json";
constexpr std::string_view kOptimizerState = "/checkpoint/optimizer_state";
constexpr std::string_view kTrainerState = "/checkpoint/trainer_state";

// The "step" attribute of an absent best or final policy or checkpoint. Only
// for people reading the file: absence is said by the json dataset's length.
constexpr int64_t kAbsentStep = -1;

std::string count(size_t n) {
  return std::to_string(n);
}

std::string describeShape(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string childPath(std::string_view group, std::string_view name) {
  return std::string(group) + "/" + std::string(name);
}

// --- Keys as HDF5 names ----------------------------------------------------------
//
// HDF5 link names cannot contain '/' and "." names the group itself, so keys
// that become names (step scalars, state values) are percent-encoded: '%',
// '/', control characters and bytes outside ASCII become %XX (upper-case
// hex), and so does the key ".". The empty key is stored as "%". Any other
// key is its own name, and Python's urllib.parse.unquote decodes every name
// but "%".

std::string percentEncoded(unsigned char byte) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return {'%', kHex[byte >> 4], kHex[byte & 0xF]};
}

std::string escapeName(std::string_view key) {
  if (key.empty())
    return "%";
  std::string name;
  name.reserve(key.size());
  for (char c : key) {
    auto byte = static_cast<unsigned char>(c);
    if (byte == '%' || byte == '/' || byte < 0x20 || byte >= 0x7F || key == ".")
      name += percentEncoded(byte);
    else
      name += c;
  }
  return name;
}

std::string escapeStepScalarName(std::string_view key) {
  std::string name = escapeName(key);
  if (std::ranges::find(kStepTables, name) != kStepTables.end())
    name = percentEncoded(static_cast<unsigned char>(name[0])) + name.substr(1);
  return name;
}

std::optional<std::string> unescapeName(std::string_view name) {
  if (name == "%")
    return std::string();
  std::string key;
  key.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') {
      key += name[i];
      continue;
    }
    unsigned value = 0;
    const char* digits = name.data() + i + 1;
    if (i + 2 >= name.size() || !std::isxdigit(static_cast<unsigned char>(digits[0])) ||
        !std::isxdigit(static_cast<unsigned char>(digits[1])))
      return std::nullopt;
    std::from_chars(digits, digits + 2, value, 16);
    key += static_cast<char>(value);
    i += 2;
  }
  return key;
}

// --- Checking a record before writing ---------------------------------------------

// The first row whose length differs from row 0's, if any.
template <class T> std::optional<size_t> raggedRow(const std::vector<std::vector<T>>& rows) {
  for (size_t s = 1; s < rows.size(); ++s)
    if (rows[s].size() != rows[0].size())
      return s;
  return std::nullopt;
}

template <class T> size_t rowWidth(const std::vector<std::vector<T>>& rows) {
  return rows.empty() ? 0 : rows[0].size();
}

// Whatever readRunFile would refuse, so that every file written reads back.
Status checkRecord(const fs::path& path, const RunRecord& record) {
  auto fail = [&](std::string_view field, const std::string& what) -> Status {
    return makeError(path.string() + ": " + std::string(field) + ": " + what);
  };
  auto checkRows = [&](std::string_view field, const auto& rows) -> Status {
    if (std::optional<size_t> step = raggedRow(rows))
      return fail(field, "step " + count(*step) + " has " + count(rows[*step].size()) +
                             " values, step 0 has " + count(rows[0].size()) +
                             " (the rows of a run must have equal lengths)");
    return Status::ok();
  };
  size_t steps = record.steps();
  std::string perStep = " (one per step: candidateRewards has " + count(steps) + " rows)";

  if (record.baselineSizes.size() != record.moduleNames.size())
    return fail("baselineSizes", "has " + count(record.baselineSizes.size()) +
                                     " values, moduleNames has " +
                                     count(record.moduleNames.size()));
  if (!record.bitcodeHashes.empty() && record.bitcodeHashes.size() != record.moduleNames.size())
    return fail("bitcodeHashes", "has " + count(record.bitcodeHashes.size()) +
                                     " values, moduleNames has " +
                                     count(record.moduleNames.size()) + " (or give none)");
  if (record.validationBaselineSizes.size() != record.validationModuleNames.size())
    return fail("validationBaselineSizes", "has " + count(record.validationBaselineSizes.size()) +
                                               " values, validationModuleNames has " +
                                               count(record.validationModuleNames.size()));

  if (Status rows = checkRows("candidateRewards", record.candidateRewards); !rows)
    return rows;
  for (const auto& [name, values] : record.stepScalars)
    if (values.size() != steps)
      return fail("stepScalars[\"" + name + "\"]",
                  "has " + count(values.size()) + " values, expected " + count(steps) + perStep);
  if (!record.stepModules.empty() && record.stepModules.size() != steps)
    return fail("stepModules", "has " + count(record.stepModules.size()) + " rows, expected " +
                                   count(steps) + perStep + " or none");
  if (Status rows = checkRows("stepModules", record.stepModules); !rows)
    return rows;
  if (!record.stepSizes.empty() && record.stepSizes.size() != steps)
    return fail("stepSizes", "has " + count(record.stepSizes.size()) + " rows, expected " +
                                 count(steps) + perStep + " or none");
  if (Status rows = checkRows("stepSizes", record.stepSizes); !rows)
    return rows;
  if (!record.stepModules.empty() && !record.stepSizes.empty()) {
    size_t candidates = rowWidth(record.candidateRewards);
    size_t modules = rowWidth(record.stepModules);
    if (rowWidth(record.stepSizes) != candidates * modules)
      return fail("stepSizes", "rows have " + count(rowWidth(record.stepSizes)) +
                                   " values, expected " + count(candidates) + " candidates × " +
                                   count(modules) + " modules = " + count(candidates * modules));
  }

  size_t validationModules = record.validationModuleNames.size();
  for (size_t v = 0; v < record.validations.size(); ++v) {
    const ValidationRecord& validation = record.validations[v];
    std::string field = "validations[" + count(v) + "]";
    if (validation.sizes.size() != validationModules)
      return fail(field + ".sizes", "has " + count(validation.sizes.size()) +
                                        " values, the run has " + count(validationModules) +
                                        " validation modules");
    if (validation.ok.size() != validationModules)
      return fail(field + ".ok", "has " + count(validation.ok.size()) + " values, the run has " +
                                     count(validationModules) + " validation modules");
  }
  return Status::ok();
}

// --- Writing ------------------------------------------------------------------------

template <class T> std::vector<T> flatten(const std::vector<std::vector<T>>& rows) {
  std::vector<T> values;
  values.reserve(rows.size() * rowWidth(rows));
  for (const std::vector<T>& row : rows)
    values.insert(values.end(), row.begin(), row.end());
  return values;
}

// A string dataset of one row, or of none when `value` is null.
std::span<const std::string> optionalRow(const std::string* value) {
  return std::span<const std::string>(value, value ? 1 : 0);
}

// One field of every row, e.g. the steps of the failures.
template <class T, class Field> auto columnOf(const std::vector<T>& rows, Field field) {
  std::vector<std::decay_t<std::invoke_result_t<Field, const T&>>> values;
  values.reserve(rows.size());
  for (const T& row : rows)
    values.push_back(field(row));
  return values;
}

// Writes the schema call by call; the first failure is kept and every call
// after it does nothing.
class SchemaWriter {
public:
  explicit SchemaWriter(Hdf5File& file) : file_(file) {}

  template <Hdf5Element T>
  void dataset(std::string_view path, const Shape& shape, std::span<const T> values) {
    if (status_)
      status_ = file_.writeDataset<T>(path, shape, values);
  }
  template <Hdf5Element T> void column(std::string_view path, std::span<const T> values) {
    dataset<T>(path, Shape{values.size()}, values);
  }
  template <Hdf5Element T>
  void attribute(std::string_view object, std::string_view name, const T& value) {
    if (status_)
      status_ = file_.writeAttribute<T>(object, name, value);
  }
  void group(std::string_view path) {
    if (status_)
      status_ = file_.createGroup(path);
  }
  void stringMap(std::string_view keysPath, std::string_view valuesPath,
                 const std::map<std::string, std::string, std::less<>>& map) {
    std::vector<std::string> keys, values;
    for (const auto& [key, value] : map) {
      keys.push_back(key);
      values.push_back(value);
    }
    column<std::string>(keysPath, keys);
    column<std::string>(valuesPath, values);
  }
  void state(std::string_view groupPath, const StateArchive& state) {
    group(groupPath);
    for (const auto& [key, value] : state.integers())
      attribute<int64_t>(groupPath, escapeName(key), value);
    for (const auto& [key, values] : state.vectors())
      column<double>(childPath(groupPath, escapeName(key)), values);
  }

  const Status& status() const { return status_; }

private:
  Hdf5File& file_;
  Status status_;
};

Status writeRecord(Hdf5File& file, const RunRecord& record) {
  SchemaWriter out(file);
  out.attribute<std::string>("/", "format", std::string(kRunFormat));
  out.attribute<int64_t>("/", "version", kRunVersion);
  out.attribute<std::string>("/", "trainer", record.trainer);

  out.column<std::string>(kConfigToml, optionalRow(&record.configToml));
  out.stringMap(kConfigKeys, kConfigValues, record.config);
  out.stringMap(kAttributeKeys, kAttributeValues, record.attributes);

  out.column<std::string>(kModuleNames, record.moduleNames);
  out.column<uint64_t>(kModuleBaselines, record.baselineSizes);
  out.column<uint64_t>(kModuleBitcodeHashes, record.bitcodeHashes);
  out.column<std::string>(kValidationModuleNames, record.validationModuleNames);
  out.column<uint64_t>(kValidationModuleBaselines, record.validationBaselineSizes);

  // Steps.
  auto table = [&]<class T>(std::string_view path, const std::vector<std::vector<T>>& rows) {
    out.dataset<T>(path, Shape{rows.size(), rowWidth(rows)}, flatten(rows));
  };
  table(kCandidateRewards, record.candidateRewards);
  table(kStepModules, record.stepModules);
  table(kStepSizes, record.stepSizes);
  for (const auto& [name, values] : record.stepScalars)
    out.column<double>(childPath(kSteps, escapeStepScalarName(name)), values);

  // Failures.
  const std::vector<FailureRecord>& failures = record.failures;
  out.column<int64_t>(kFailureSteps, columnOf(failures, [](const auto& f) { return f.step; }));
  out.column<int64_t>(kFailureCandidates,
                      columnOf(failures, [](const auto& f) { return f.candidate; }));
  out.column<std::string>(kFailureModules,
                          columnOf(failures, [](const auto& f) { return f.module; }));
  out.column<std::string>(kFailureStatuses,
                          columnOf(failures, [](const auto& f) { return f.status; }));
  out.column<std::string>(kFailureMessages,
                          columnOf(failures, [](const auto& f) { return f.message; }));
  out.column<std::string>(kFailureStderrTails,
                          columnOf(failures, [](const auto& f) { return f.stderrTail; }));

  // Validation: one row per evaluation, one column per validation module.
  const std::vector<ValidationRecord>& validations = record.validations;
  Shape validationShape{validations.size(), record.validationModuleNames.size()};
  std::vector<uint64_t> validationSizes;
  std::vector<int64_t> validationOk;
  for (const ValidationRecord& validation : validations) {
    validationSizes.insert(validationSizes.end(), validation.sizes.begin(), validation.sizes.end());
    validationOk.insert(validationOk.end(), validation.ok.begin(), validation.ok.end());
  }
  out.column<int64_t>(kValidationSteps,
                      columnOf(validations, [](const auto& v) { return v.step; }));
  out.dataset<uint64_t>(kValidationSizes, validationShape, validationSizes);
  out.dataset<int64_t>(kValidationOk, validationShape, validationOk);
  out.column<double>(kValidationMeanRewards,
                     columnOf(validations, [](const auto& v) { return v.meanReward; }));
  out.column<double>(kValidationTotalRewards,
                     columnOf(validations, [](const auto& v) { return v.totalReward; }));

  // Policies.
  out.column<int64_t>(kSnapshotSteps,
                      columnOf(record.snapshots, [](const auto& s) { return s.step; }));
  out.column<std::string>(kSnapshotJson,
                          columnOf(record.snapshots, [](const auto& s) { return s.policyJson; }));

  const std::optional<PolicySnapshot>& best = record.bestPolicy;
  out.column<std::string>(kBestPolicyJson, optionalRow(best ? &best->policyJson : nullptr));
  out.attribute<int64_t>(kBestPolicy, "step", best ? best->step : kAbsentStep);
  out.attribute<std::string>(kBestPolicy, "metric", record.bestPolicyMetric);
  out.attribute<double>(kBestPolicy, "value", record.bestPolicyValue);
  const std::optional<PolicySnapshot>& finalPolicy = record.finalPolicy;
  out.column<std::string>(kFinalPolicyJson,
                          optionalRow(finalPolicy ? &finalPolicy->policyJson : nullptr));
  out.attribute<int64_t>(kFinalPolicy, "step", finalPolicy ? finalPolicy->step : kAbsentStep);

  // Checkpoint: always the same objects; an absent one has no policy row.
  const std::optional<Checkpoint>& checkpoint = record.checkpoint;
  Checkpoint none;
  const Checkpoint& written = checkpoint ? *checkpoint : none;
  out.column<std::string>(kCheckpointPolicyJson,
                          optionalRow(checkpoint ? &checkpoint->policyJson : nullptr));
  out.attribute<int64_t>(kCheckpoint, "step", checkpoint ? checkpoint->step : kAbsentStep);
  out.attribute<std::string>(kCheckpoint, "optimizer", written.optimizer);
  out.attribute<double>(kCheckpoint, "elapsed_seconds", written.elapsedSeconds);
  out.state(kOptimizerState, written.optimizerState);
  out.state(kTrainerState, written.trainerState);
  return out.status();
}

// --- Reading ------------------------------------------------------------------------

Error fileError(const fs::path& path, std::string_view what) {
  return makeError(path.string() + ": " + std::string(what));
}

Status checkFormat(const Hdf5File& file) {
  const fs::path& path = file.path();
  Expected<bool> hasFormat = file.hasAttribute("/", "format");
  if (!hasFormat)
    return hasFormat.error();
  if (!*hasFormat)
    return fileError(path, "not an mlgo run file (no \"format\" attribute)");
  Expected<std::string> format = file.readAttribute<std::string>("/", "format");
  if (!format)
    return fileError(path, "not an mlgo run file (" + format.error().message + ")");
  if (*format != kRunFormat)
    return fileError(path, "not an mlgo run file (format is \"" + *format + "\", expected \"" +
                               std::string(kRunFormat) + "\")");
  Expected<int64_t> version = file.readAttribute<int64_t>("/", "version");
  if (!version)
    return version.error();
  if (*version > kRunVersion)
    return fileError(path, "was written by a newer mlgo-es (run format version " +
                               std::to_string(*version) + "; this build reads " +
                               std::to_string(kRunVersion) + ")");
  if (*version < 1)
    return fileError(path, "invalid run format version " + std::to_string(*version));
  return Status::ok();
}

template <class T> std::vector<std::vector<T>> rowsOf(Array<T>&& table) {
  std::vector<std::vector<T>> rows(table.shape[0]);
  size_t width = table.shape[1];
  for (size_t r = 0; r < rows.size(); ++r)
    rows[r].assign(table.values.begin() + static_cast<ptrdiff_t>(r * width),
                   table.values.begin() + static_cast<ptrdiff_t>((r + 1) * width));
  return rows;
}

// Reads the schema call by call; the first failure is kept, and every call
// after it does nothing and returns an empty value.
class SchemaReader {
public:
  explicit SchemaReader(const Hdf5File& file) : file_(file) {}

  bool ok() const { return !error_; }
  const Error& error() const { return *error_; }
  void fail(std::string_view object, const std::string& what) {
    if (!error_)
      error_ = makeError(file_.path().string() + ": " + std::string(object) + ": " + what);
  }

  // A 1-D dataset; with `length`, it must have that many entries, `why`.
  template <Hdf5Element T>
  std::vector<T> column(std::string_view path, std::optional<uint64_t> length = std::nullopt,
                        std::string_view why = {}) {
    if (!ok())
      return {};
    Expected<std::vector<T>> values = file_.readVector<T>(path);
    if (!values) {
      error_ = values.error();
      return {};
    }
    if (length && values->size() != *length) {
      fail(path, "has " + count(values->size()) + " entries, expected " + count(*length) + " (" +
                     std::string(why) + ")");
      return {};
    }
    return values.take();
  }

  // A 2-D dataset; an error gives a [0, 0] table.
  template <Hdf5Element T> Array<T> table(std::string_view path) {
    Array<T> empty{Shape{0, 0}, {}};
    if (!ok())
      return empty;
    Expected<Array<T>> array = file_.readDataset<T>(path);
    if (!array) {
      error_ = array.error();
      return empty;
    }
    if (array->shape.size() != 2) {
      fail(path, "expected a 2-D dataset, found shape " + describeShape(array->shape));
      return empty;
    }
    return array.take();
  }

  // A string dataset of 0 rows (nullopt) or 1.
  std::optional<std::string> optionalText(std::string_view path) {
    std::vector<std::string> rows = column<std::string>(path);
    if (rows.size() > 1)
      fail(path, "has " + count(rows.size()) + " entries, expected 0 (absent) or 1");
    if (rows.size() != 1)
      return std::nullopt;
    return std::move(rows[0]);
  }

  template <Hdf5Element T> T attribute(std::string_view object, std::string_view name) {
    if (!ok())
      return T{};
    Expected<T> value = file_.readAttribute<T>(object, name);
    if (!value) {
      error_ = value.error();
      return T{};
    }
    return value.take();
  }

  std::vector<std::string> children(std::string_view group) { return names(file_.children(group)); }
  std::vector<std::string> attributeNames(std::string_view object) {
    return names(file_.attributeNames(object));
  }

  // The key stored as `name` in `object`.
  std::string key(std::string_view object, std::string_view name) {
    std::optional<std::string> key = unescapeName(name);
    if (!key)
      fail(object, "\"" + std::string(name) + "\" is not a percent-encoded key");
    return key.value_or(std::string());
  }

  template <class Value>
  void insert(std::map<std::string, Value, std::less<>>& map, std::string_view object,
              std::string key, Value value) {
    if (!ok())
      return;
    if (!map.emplace(key, std::move(value)).second)
      fail(object, "key \"" + key + "\" appears twice");
  }

  std::map<std::string, std::string, std::less<>> stringMap(std::string_view keysPath,
                                                            std::string_view valuesPath) {
    std::vector<std::string> keys = column<std::string>(keysPath);
    std::vector<std::string> values =
        column<std::string>(valuesPath, keys.size(), "one per entry of " + std::string(keysPath));
    std::map<std::string, std::string, std::less<>> map;
    for (size_t i = 0; i < keys.size() && ok(); ++i)
      insert(map, keysPath, std::move(keys[i]), std::move(values[i]));
    return map;
  }

  StateArchive state(std::string_view groupPath) {
    StateArchive::Integers integers;
    StateArchive::Vectors vectors;
    for (const std::string& name : attributeNames(groupPath))
      insert(integers, groupPath, key(groupPath, name), attribute<int64_t>(groupPath, name));
    for (const std::string& name : children(groupPath)) {
      std::string path = childPath(groupPath, name);
      insert(vectors, groupPath, key(groupPath, name), column<double>(path));
    }
    StateArchive state;
    for (const auto& [name, value] : integers)
      state.setInteger(name, value);
    for (auto& [name, values] : vectors)
      state.setVector(name, std::move(values));
    return state;
  }

private:
  std::vector<std::string> names(Expected<std::vector<std::string>> listed) {
    if (!ok())
      return {};
    if (!listed) {
      error_ = listed.error();
      return {};
    }
    return listed.take();
  }

  const Hdf5File& file_;
  std::optional<Error> error_;
};

Expected<RunRecord> readRecord(const Hdf5File& file) {
  SchemaReader in(file);
  RunRecord record;
  record.trainer = in.attribute<std::string>("/", "trainer");
  std::vector<std::string> configToml = in.column<std::string>(kConfigToml, 1, "the config text");
  record.configToml = configToml.empty() ? std::string() : std::move(configToml[0]);
  record.config = in.stringMap(kConfigKeys, kConfigValues);
  record.attributes = in.stringMap(kAttributeKeys, kAttributeValues);

  record.moduleNames = in.column<std::string>(kModuleNames);
  record.baselineSizes = in.column<uint64_t>(kModuleBaselines, record.moduleNames.size(),
                                             "one per entry of " + std::string(kModuleNames));
  // Files written before bitcode hashes were recorded have none.
  if (file.exists(kModuleBitcodeHashes)) {
    record.bitcodeHashes = in.column<uint64_t>(kModuleBitcodeHashes);
    if (!record.bitcodeHashes.empty() && record.bitcodeHashes.size() != record.moduleNames.size())
      return makeError(file.path().string() + ": " + std::string(kModuleBitcodeHashes) + ": has " +
                       count(record.bitcodeHashes.size()) + " entries, expected " +
                       count(record.moduleNames.size()) + " or none");
  }
  record.validationModuleNames = in.column<std::string>(kValidationModuleNames);
  record.validationBaselineSizes =
      in.column<uint64_t>(kValidationModuleBaselines, record.validationModuleNames.size(),
                          "one per entry of " + std::string(kValidationModuleNames));

  // Steps: candidate_rewards has a row per step.
  Array<double> rewards = in.table<double>(kCandidateRewards);
  uint64_t steps = rewards.shape[0], candidates = rewards.shape[1];
  std::string perStep = "one per row of " + std::string(kCandidateRewards);
  Array<int64_t> modules = in.table<int64_t>(kStepModules);
  Array<uint64_t> sizes = in.table<uint64_t>(kStepSizes);
  for (auto [path, rows] :
       {std::pair(kStepModules, modules.shape[0]), std::pair(kStepSizes, sizes.shape[0])})
    if (rows != 0 && rows != steps)
      in.fail(path, "has " + count(rows) + " rows, expected " + count(steps) + " (" + perStep +
                        ") or none");
  if (modules.shape[0] != 0 && sizes.shape[0] != 0 &&
      sizes.shape[1] != candidates * modules.shape[1])
    in.fail(kStepSizes, "has " + count(sizes.shape[1]) + " columns, expected " + count(candidates) +
                            " candidates × " + count(modules.shape[1]) +
                            " modules = " + count(candidates * modules.shape[1]));
  for (const std::string& name : in.children(kSteps)) {
    if (std::ranges::find(kStepTables, name) != kStepTables.end())
      continue;
    std::string path = childPath(kSteps, name);
    in.insert(record.stepScalars, kSteps, in.key(kSteps, name),
              in.column<double>(path, steps, perStep));
  }
  if (!in.ok())
    return in.error();
  record.candidateRewards = rowsOf(std::move(rewards));
  record.stepModules = rowsOf(std::move(modules));
  record.stepSizes = rowsOf(std::move(sizes));

  // Failures.
  std::vector<int64_t> failureSteps = in.column<int64_t>(kFailureSteps);
  size_t failureCount = failureSteps.size();
  std::string perFailure = "one per entry of " + std::string(kFailureSteps);
  std::vector<int64_t> failureCandidates =
      in.column<int64_t>(kFailureCandidates, failureCount, perFailure);
  auto strings = [&](std::string_view path) {
    return in.column<std::string>(path, failureCount, perFailure);
  };
  std::vector<std::string> failureModules = strings(kFailureModules);
  std::vector<std::string> failureStatuses = strings(kFailureStatuses);
  std::vector<std::string> failureMessages = strings(kFailureMessages);
  std::vector<std::string> failureStderrTails = strings(kFailureStderrTails);
  if (!in.ok())
    return in.error();
  for (size_t f = 0; f < failureCount; ++f)
    record.failures.push_back(FailureRecord{.step = failureSteps[f],
                                            .candidate = failureCandidates[f],
                                            .module = std::move(failureModules[f]),
                                            .status = std::move(failureStatuses[f]),
                                            .message = std::move(failureMessages[f]),
                                            .stderrTail = std::move(failureStderrTails[f])});

  // Validation.
  std::vector<int64_t> validationSteps = in.column<int64_t>(kValidationSteps);
  size_t validationCount = validationSteps.size();
  size_t validationModules = record.validationModuleNames.size();
  std::string perValidation = "one per entry of " + std::string(kValidationSteps);
  Array<uint64_t> validationSizes = in.table<uint64_t>(kValidationSizes);
  Array<int64_t> validationOk = in.table<int64_t>(kValidationOk);
  Shape validationShape{validationCount, validationModules};
  for (auto [path, shape] : {std::pair(kValidationSizes, validationSizes.shape),
                             std::pair(kValidationOk, validationOk.shape)})
    if (in.ok() && shape != validationShape)
      in.fail(path, "has shape " + describeShape(shape) + ", expected " +
                        describeShape(validationShape) + " (a row per entry of " +
                        std::string(kValidationSteps) + ", a column per entry of " +
                        std::string(kValidationModuleNames) + ")");
  for (size_t i = 0; i < validationOk.values.size() && in.ok(); ++i)
    if (validationOk.values[i] < 0 || validationOk.values[i] > 255)
      in.fail(kValidationOk, "entry " + count(i) + " is " + std::to_string(validationOk.values[i]) +
                                 ", not a flag (0 to 255)");
  std::vector<double> meanRewards =
      in.column<double>(kValidationMeanRewards, validationCount, perValidation);
  std::vector<double> totalRewards =
      in.column<double>(kValidationTotalRewards, validationCount, perValidation);
  if (!in.ok())
    return in.error();
  for (size_t v = 0; v < validationCount; ++v) {
    auto row = [&](const auto& values) {
      auto begin = values.begin() + static_cast<ptrdiff_t>(v * validationModules);
      return std::span(begin, begin + static_cast<ptrdiff_t>(validationModules));
    };
    ValidationRecord validation{.step = validationSteps[v],
                                .sizes = {},
                                .ok = {},
                                .meanReward = meanRewards[v],
                                .totalReward = totalRewards[v]};
    std::ranges::copy(row(validationSizes.values), std::back_inserter(validation.sizes));
    for (int64_t ok : row(validationOk.values))
      validation.ok.push_back(static_cast<uint8_t>(ok));
    record.validations.push_back(std::move(validation));
  }

  // Policies.
  std::vector<int64_t> snapshotSteps = in.column<int64_t>(kSnapshotSteps);
  std::vector<std::string> snapshotJson = in.column<std::string>(
      kSnapshotJson, snapshotSteps.size(), "one per entry of " + std::string(kSnapshotSteps));
  for (size_t s = 0; s < snapshotSteps.size() && in.ok(); ++s)
    record.snapshots.push_back(PolicySnapshot{snapshotSteps[s], std::move(snapshotJson[s])});
  if (std::optional<std::string> json = in.optionalText(kBestPolicyJson))
    record.bestPolicy = PolicySnapshot{in.attribute<int64_t>(kBestPolicy, "step"), *json};
  record.bestPolicyMetric = in.attribute<std::string>(kBestPolicy, "metric");
  record.bestPolicyValue = in.attribute<double>(kBestPolicy, "value");
  if (std::optional<std::string> json = in.optionalText(kFinalPolicyJson))
    record.finalPolicy = PolicySnapshot{in.attribute<int64_t>(kFinalPolicy, "step"), *json};

  // Checkpoint.
  if (std::optional<std::string> json = in.optionalText(kCheckpointPolicyJson)) {
    Checkpoint& checkpoint = record.checkpoint.emplace();
    checkpoint.step = in.attribute<int64_t>(kCheckpoint, "step");
    checkpoint.optimizer = in.attribute<std::string>(kCheckpoint, "optimizer");
    checkpoint.optimizerState = in.state(kOptimizerState);
    checkpoint.policyJson = std::move(*json);
    checkpoint.trainerState = in.state(kTrainerState);
    checkpoint.elapsedSeconds = in.attribute<double>(kCheckpoint, "elapsed_seconds");
  }
  if (!in.ok())
    return in.error();
  return record;
}

// --- Comparing records -------------------------------------------------------------

// Each `of` returns where below the compared values they differ and how
// (e.g. `[3]: 0.5 vs nan`), or nullopt. Members of a class, so that every
// overload sees every other one.
class Differences {
public:
  using Found = std::optional<std::string>;

  static Found of(double a, double b) {
    if ((std::isnan(a) && std::isnan(b)) ||
        std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b))
      return std::nullopt;
    return ": " + show(a) + " vs " + show(b);
  }
  template <std::integral T> static Found of(T a, T b) {
    if (a == b)
      return std::nullopt;
    return ": " + std::to_string(a) + " vs " + std::to_string(b);
  }
  static Found of(const std::string& a, const std::string& b) {
    if (a == b)
      return std::nullopt;
    constexpr size_t kShown = 60;
    if (a.size() <= kShown && b.size() <= kShown)
      return ": \"" + a + "\" vs \"" + b + "\"";
    size_t at = static_cast<size_t>(std::ranges::mismatch(a, b).in1 - a.begin());
    return ": strings of " + count(a.size()) + " and " + count(b.size()) +
           " bytes differ from byte " + count(at);
  }
  template <class T> static Found of(const std::vector<T>& a, const std::vector<T>& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (Found found = of(a[i], b[i]))
        return "[" + count(i) + "]" + *found;
    if (a.size() != b.size())
      return ": " + count(a.size()) + " entries vs " + count(b.size());
    return std::nullopt;
  }
  template <class T>
  static Found of(const std::map<std::string, T, std::less<>>& a,
                  const std::map<std::string, T, std::less<>>& b) {
    auto ia = a.begin(), ib = b.begin();
    for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
      if (ia->first != ib->first) {
        bool firstOnly = ia->first < ib->first;
        return "[\"" + (firstOnly ? ia->first : ib->first) + "\"]: only in the " +
               (firstOnly ? "first" : "second");
      }
      if (Found found = of(ia->second, ib->second))
        return "[\"" + ia->first + "\"]" + *found;
    }
    if (ia != a.end())
      return "[\"" + ia->first + "\"]: only in the first";
    if (ib != b.end())
      return "[\"" + ib->first + "\"]: only in the second";
    return std::nullopt;
  }
  template <class T> static Found of(const std::optional<T>& a, const std::optional<T>& b) {
    if (a && b)
      return of(*a, *b);
    if (a.has_value() != b.has_value())
      return a ? ": present vs absent" : ": absent vs present";
    return std::nullopt;
  }

  static Found of(const StateArchive& a, const StateArchive& b) {
    return first({member("integers", of(a.integers(), b.integers())),
                  member("vectors", of(a.vectors(), b.vectors()))});
  }
  static Found of(const FailureRecord& a, const FailureRecord& b) {
    return first(
        {member("step", of(a.step, b.step)), member("candidate", of(a.candidate, b.candidate)),
         member("module", of(a.module, b.module)), member("status", of(a.status, b.status)),
         member("message", of(a.message, b.message)),
         member("stderrTail", of(a.stderrTail, b.stderrTail))});
  }
  static Found of(const PolicySnapshot& a, const PolicySnapshot& b) {
    return first(
        {member("step", of(a.step, b.step)), member("policyJson", of(a.policyJson, b.policyJson))});
  }
  static Found of(const ValidationRecord& a, const ValidationRecord& b) {
    return first({member("step", of(a.step, b.step)), member("sizes", of(a.sizes, b.sizes)),
                  member("ok", of(a.ok, b.ok)),
                  member("meanReward", of(a.meanReward, b.meanReward)),
                  member("totalReward", of(a.totalReward, b.totalReward))});
  }
  static Found of(const Checkpoint& a, const Checkpoint& b) {
    return first({member("step", of(a.step, b.step)),
                  member("optimizer", of(a.optimizer, b.optimizer)),
                  member("optimizerState", of(a.optimizerState, b.optimizerState)),
                  member("policyJson", of(a.policyJson, b.policyJson)),
                  member("trainerState", of(a.trainerState, b.trainerState)),
                  member("elapsedSeconds", of(a.elapsedSeconds, b.elapsedSeconds))});
  }
  // Every field of RunRecord, in declaration order.
  static Found of(const RunRecord& a, const RunRecord& b) {
    return first(
        {member("trainer", of(a.trainer, b.trainer)),
         member("configToml", of(a.configToml, b.configToml)),
         member("config", of(a.config, b.config)),
         member("attributes", of(a.attributes, b.attributes)),
         member("moduleNames", of(a.moduleNames, b.moduleNames)),
         member("baselineSizes", of(a.baselineSizes, b.baselineSizes)),
         member("bitcodeHashes", of(a.bitcodeHashes, b.bitcodeHashes)),
         member("validationModuleNames", of(a.validationModuleNames, b.validationModuleNames)),
         member("validationBaselineSizes",
                of(a.validationBaselineSizes, b.validationBaselineSizes)),
         member("stepScalars", of(a.stepScalars, b.stepScalars)),
         member("candidateRewards", of(a.candidateRewards, b.candidateRewards)),
         member("stepModules", of(a.stepModules, b.stepModules)),
         member("stepSizes", of(a.stepSizes, b.stepSizes)),
         member("failures", of(a.failures, b.failures)),
         member("validations", of(a.validations, b.validations)),
         member("snapshots", of(a.snapshots, b.snapshots)),
         member("bestPolicy", of(a.bestPolicy, b.bestPolicy)),
         member("bestPolicyMetric", of(a.bestPolicyMetric, b.bestPolicyMetric)),
         member("bestPolicyValue", of(a.bestPolicyValue, b.bestPolicyValue)),
         member("finalPolicy", of(a.finalPolicy, b.finalPolicy)),
         member("checkpoint", of(a.checkpoint, b.checkpoint))});
  }

private:
  static std::string show(double value) {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, end);
  }
  static Found member(std::string_view name, Found found) {
    if (!found)
      return std::nullopt;
    return "." + std::string(name) + *found;
  }
  static Found first(std::initializer_list<Found> found) {
    for (const Found& each : found)
      if (each)
        return each;
    return std::nullopt;
  }
};

} // namespace

Status writeRunFile(const fs::path& path, const RunRecord& record) {
  if (Status valid = checkRecord(path, record); !valid)
    return valid;
  if (Status replaceable = checkReplaceable(path); !replaceable)
    return replaceable;
  fs::path temporary = path;
  temporary += ".tmp";
  Status written = [&]() -> Status {
    Expected<Hdf5File> created = Hdf5File::create(temporary);
    if (!created)
      return created.error();
    Status status = writeRecord(*created, record);
    Status closed = created->close();
    return status ? closed : status;
  }();
  std::error_code ec;
  if (written) {
    // rename(2) replaces `path` in one step: readers see the old file or the new.
    fs::rename(temporary, path, ec);
    if (!ec)
      return Status::ok();
    written = fileError(path, "cannot replace it with " + temporary.string() + ": " + ec.message());
  }
  if (!fs::is_directory(temporary, ec)) // not ours to remove
    fs::remove(temporary, ec);
  return written;
}

Expected<RunRecord> readRunFile(const fs::path& path) {
  Expected<Hdf5File> opened = Hdf5File::open(path, OpenMode::ReadOnly);
  if (!opened)
    return opened.error();
  if (Status format = checkFormat(*opened); !format)
    return format.error();
  return readRecord(*opened);
}

bool isTimingScalar(std::string_view name) {
  return name.starts_with("seconds_") || name == "elapsed_seconds" ||
         name == "cache_seconds_saved" || name == "replay_seconds_saved";
}

std::optional<std::string> firstDifferenceButTimings(RunRecord a, RunRecord b,
                                                     const std::set<std::string>& ignored) {
  for (RunRecord* r : {&a, &b}) {
    std::erase_if(r->stepScalars, [&](const auto& entry) {
      return isTimingScalar(entry.first) || ignored.count(entry.first);
    });
    std::erase_if(r->config, [&](const auto& entry) { return ignored.count(entry.first) > 0; });
    // The config as TOML: one "key = value" line per key.
    std::string toml;
    for (size_t begin = 0; begin < r->configToml.size();) {
      size_t end = r->configToml.find('\n', begin);
      end = end == std::string::npos ? r->configToml.size() : end + 1;
      std::string line = r->configToml.substr(begin, end - begin);
      if (!ignored.count(line.substr(0, line.find(" = "))))
        toml += line;
      begin = end;
    }
    r->configToml = toml;
    if (r->checkpoint)
      r->checkpoint->elapsedSeconds = 0;
  }
  return firstDifference(a, b);
}

std::optional<std::string> firstDifference(const RunRecord& a, const RunRecord& b) {
  std::optional<std::string> found = Differences::of(a, b);
  if (found)
    found->erase(0, 1); // the leading '.' of the member
  return found;
}

} // namespace mlgo::results
