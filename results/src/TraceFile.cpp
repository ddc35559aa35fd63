#include "mlgo/results/TraceFile.h"

#include <algorithm>
#include <charconv>

namespace fs = std::filesystem;

namespace mlgo::results {

namespace {

using policies::TensorSpec;
using policies::Trajectory;

// Extendible decision datasets compress well (small integers stored as
// float64); level 1 gets most of the gain for little CPU.
const ExtendibleOptions kDecisionStorage{.chunkRows = std::nullopt, .deflateLevel = 1};

constexpr std::string_view kFeatureNames = "/features/name";
constexpr std::string_view kFeatureTypes = "/features/type";
constexpr std::string_view kFeatureShapes = "/features/shape_json";
constexpr std::string_view kFeaturePorts = "/features/port";
constexpr std::string_view kFeatureColumns = "/features/column";
constexpr std::string_view kFeatureElementCounts = "/features/element_count";

constexpr std::string_view kObservations = "/decisions/observations";
constexpr std::string_view kDefaultDecisions = "/decisions/default_decision";
constexpr std::string_view kActions = "/decisions/action";
constexpr std::string_view kLogProbabilities = "/decisions/log_probability";
constexpr std::string_view kDecisionModules = "/decisions/module";

constexpr std::string_view kModuleNames = "/modules/name";
constexpr std::string_view kModuleStatuses = "/modules/status";
constexpr std::string_view kModuleMessages = "/modules/message";
constexpr std::string_view kModuleSizes = "/modules/size";
constexpr std::string_view kModuleBaselineSizes = "/modules/baseline_size";
constexpr std::string_view kModuleHasBaseline = "/modules/has_baseline";
constexpr std::string_view kModuleRewards = "/modules/reward";
constexpr std::string_view kModuleCodeHashes = "/modules/code_hash";
constexpr std::string_view kModuleSeconds = "/modules/seconds";
constexpr std::string_view kModuleFirstDecisions = "/modules/first_decision";
constexpr std::string_view kModuleDecisionCounts = "/modules/decision_count";

Error traceError(const fs::path& file, std::string_view what) {
  return makeError(file.string() + ": " + std::string(what));
}

Error datasetError(const fs::path& file, std::string_view dataset, std::string_view what) {
  return makeError(file.string() + ": " + std::string(dataset) + ": " + std::string(what));
}

size_t recordWidth(const std::vector<TensorSpec>& specs) {
  size_t width = 0;
  for (const TensorSpec& spec : specs)
    width += spec.elementCount();
  return width;
}

std::string shapeJson(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// Parses "[1]", "[2, 3]", "[]": a JSON list of non-negative integers.
std::optional<std::vector<int64_t>> parseShapeJson(std::string_view text) {
  auto skipSpace = [&] {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
      text.remove_prefix(1);
  };
  skipSpace();
  if (text.empty() || text.front() != '[')
    return std::nullopt;
  text.remove_prefix(1);
  std::vector<int64_t> shape;
  skipSpace();
  if (!text.empty() && text.front() == ']') {
    text.remove_prefix(1);
  } else {
    while (true) {
      skipSpace();
      int64_t dim = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), dim);
      if (ec != std::errc() || dim < 0)
        return std::nullopt;
      shape.push_back(dim);
      text.remove_prefix(static_cast<size_t>(end - text.data()));
      skipSpace();
      if (text.empty())
        return std::nullopt;
      char separator = text.front();
      text.remove_prefix(1);
      if (separator == ']')
        break;
      if (separator != ',')
        return std::nullopt;
    }
  }
  skipSpace();
  if (!text.empty())
    return std::nullopt;
  return shape;
}

// Why `actual` differs from `expected`, for the error message; empty if equal.
std::string describeSpecDifference(const std::vector<TensorSpec>& actual,
                                   const std::vector<TensorSpec>& expected) {
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i)
    if (!(actual[i] == expected[i]))
      return "feature " + std::to_string(i) + " is " + actual[i].describe() + " (port " +
             std::to_string(actual[i].port) + "), the trace has " + expected[i].describe() +
             " (port " + std::to_string(expected[i].port) + ")";
  if (actual.size() != expected.size())
    return "it has " + std::to_string(actual.size()) + " features, the trace has " +
           std::to_string(expected.size());
  return "";
}

template <class T> std::span<const T> one(const T& value) {
  return std::span<const T>(&value, 1);
}

} // namespace

bool TraceModule::operator==(const TraceModule& other) const {
  bool sameReward = reward == other.reward || (std::isnan(reward) && std::isnan(other.reward));
  return name == other.name && status == other.status && message == other.message &&
         sizeBytes == other.sizeBytes && baselineBytes == other.baselineBytes && sameReward &&
         codeHash == other.codeHash && seconds == other.seconds &&
         firstDecision == other.firstDecision && decisionCount == other.decisionCount;
}

// --- Writing -------------------------------------------------------------------

Expected<TraceWriter> TraceWriter::create(const fs::path& path,
                                          std::vector<TensorSpec> featureSpecs,
                                          const TraceAttributes& attributes) {
  for (const auto& [key, value] : attributes) {
    if (key.empty())
      return traceError(path, "trace attribute names must not be empty");
    if (key == "format" || key == "version")
      return traceError(path, "trace attribute \"" + key + "\" is reserved");
  }
  size_t width = recordWidth(featureSpecs);
  if (width == 0)
    return traceError(path, "a trace needs features with at least one value per decision");

  Expected<Hdf5File> created = Hdf5File::create(path);
  if (!created)
    return created.error();
  Hdf5File file = created.take();

  std::vector<std::string> names, types, shapes;
  std::vector<int64_t> ports;
  std::vector<uint64_t> columns, elementCounts;
  uint64_t column = 0;
  for (const TensorSpec& spec : featureSpecs) {
    names.push_back(spec.name);
    types.emplace_back(policies::tensorTypeName(spec.type));
    shapes.push_back(shapeJson(spec.shape));
    ports.push_back(spec.port);
    columns.push_back(column);
    elementCounts.push_back(spec.elementCount());
    column += spec.elementCount();
  }

  // Every step is checked; the first failure ends creation.
  Status status = file.writeAttribute("/", "format", std::string(kTraceFormat));
  auto then = [&](auto&& step) {
    if (status)
      status = step();
  };
  then([&] { return file.writeAttribute<int64_t>("/", "version", kTraceVersion); });
  for (const auto& [key, value] : attributes)
    then([&] { return file.writeAttribute<std::string>("/", key, value); });

  then([&] { return file.writeDataset<std::string>(kFeatureNames, names); });
  then([&] { return file.writeDataset<std::string>(kFeatureTypes, types); });
  then([&] { return file.writeDataset<std::string>(kFeatureShapes, shapes); });
  then([&] { return file.writeDataset<int64_t>(kFeaturePorts, ports); });
  then([&] { return file.writeDataset<uint64_t>(kFeatureColumns, columns); });
  then([&] { return file.writeDataset<uint64_t>(kFeatureElementCounts, elementCounts); });

  then([&] {
    return file.createExtendibleDataset<double>(kObservations, {width}, kDecisionStorage);
  });
  then([&] {
    return file.createExtendibleDataset<int64_t>(kDefaultDecisions, {}, kDecisionStorage);
  });
  then([&] { return file.createExtendibleDataset<int64_t>(kActions, {}, kDecisionStorage); });
  then([&] {
    return file.createExtendibleDataset<double>(kLogProbabilities, {}, kDecisionStorage);
  });
  then([&] {
    return file.createExtendibleDataset<int64_t>(kDecisionModules, {}, kDecisionStorage);
  });

  for (std::string_view dataset : {kModuleNames, kModuleStatuses, kModuleMessages})
    then([&] { return file.createExtendibleDataset<std::string>(dataset, {}); });
  for (std::string_view dataset : {kModuleSizes, kModuleBaselineSizes, kModuleCodeHashes,
                                   kModuleFirstDecisions, kModuleDecisionCounts})
    then([&] { return file.createExtendibleDataset<uint64_t>(dataset, {}); });
  then([&] { return file.createExtendibleDataset<int64_t>(kModuleHasBaseline, {}); });
  for (std::string_view dataset : {kModuleRewards, kModuleSeconds})
    then([&] { return file.createExtendibleDataset<double>(dataset, {}); });

  if (!status)
    return status.error();
  return TraceWriter(std::move(file), std::move(featureSpecs), width);
}

Status TraceWriter::addModule(const TraceModule& row, const Trajectory* trajectory) {
  const fs::path& path = file_.path();
  std::string module = "module " + row.name;
  if (!file_.isOpen())
    return traceError(path, module + ": the trace is closed");

  uint64_t decisions = 0;
  if (trajectory) {
    std::string difference = describeSpecDifference(trajectory->featureSpecs, featureSpecs_);
    if (!difference.empty())
      return traceError(path, module + ": feature specs differ from the trace's: " + difference);
    decisions = trajectory->decisions();
    if (trajectory->width != width_ || trajectory->observations.size() != decisions * width_ ||
        trajectory->defaultDecisions.size() != decisions ||
        trajectory->logProbabilities.size() != decisions)
      return traceError(
          path, module + ": malformed trajectory: " + std::to_string(decisions) +
                    " actions, width " + std::to_string(trajectory->width) +
                    " (trace: " + std::to_string(width_) + "), " +
                    std::to_string(trajectory->observations.size()) + " observation values, " +
                    std::to_string(trajectory->defaultDecisions.size()) + " default decisions, " +
                    std::to_string(trajectory->logProbabilities.size()) + " log-probabilities");
  }

  // Decisions first, then the module row that points at them, so that a
  // module row never refers to rows that are not there.
  Status status = Status::ok();
  auto then = [&](auto&& step) {
    if (status)
      status = step();
  };
  int64_t moduleIndex = static_cast<int64_t>(modules_);
  if (decisions > 0) {
    std::vector<int64_t> moduleColumn(decisions, moduleIndex);
    then([&] { return file_.appendRows<double>(kObservations, trajectory->observations); });
    then(
        [&] { return file_.appendRows<int64_t>(kDefaultDecisions, trajectory->defaultDecisions); });
    then([&] { return file_.appendRows<int64_t>(kActions, trajectory->actions); });
    then([&] { return file_.appendRows<double>(kLogProbabilities, trajectory->logProbabilities); });
    then([&] { return file_.appendRows<int64_t>(kDecisionModules, moduleColumn); });
  }

  const bool ok = row.ok();
  uint64_t size = ok ? row.sizeBytes : 0;
  uint64_t codeHash = ok ? row.codeHash : 0;
  double reward = ok ? row.reward : std::numeric_limits<double>::quiet_NaN();
  uint64_t baseline = row.baselineBytes.value_or(0);
  int64_t hasBaseline = row.baselineBytes.has_value() ? 1 : 0;
  uint64_t firstDecision = decisions_;
  then([&] { return file_.appendRows<std::string>(kModuleNames, one(row.name)); });
  then([&] { return file_.appendRows<std::string>(kModuleStatuses, one(row.status)); });
  then([&] { return file_.appendRows<std::string>(kModuleMessages, one(row.message)); });
  then([&] { return file_.appendRows<uint64_t>(kModuleSizes, one(size)); });
  then([&] { return file_.appendRows<uint64_t>(kModuleBaselineSizes, one(baseline)); });
  then([&] { return file_.appendRows<int64_t>(kModuleHasBaseline, one(hasBaseline)); });
  then([&] { return file_.appendRows<double>(kModuleRewards, one(reward)); });
  then([&] { return file_.appendRows<uint64_t>(kModuleCodeHashes, one(codeHash)); });
  then([&] { return file_.appendRows<double>(kModuleSeconds, one(row.seconds)); });
  then([&] { return file_.appendRows<uint64_t>(kModuleFirstDecisions, one(firstDecision)); });
  then([&] { return file_.appendRows<uint64_t>(kModuleDecisionCounts, one(decisions)); });
  if (!status) {
    // Some datasets may have grown and others not: the file no longer
    // follows the schema, so refuse further modules.
    Status closed = file_.close();
    return traceError(path,
                      module + ": " + status.error().message +
                          (closed ? " (the trace is closed; modules added before are intact)"
                                  : " (closing the trace failed too: " + closed.error().message +
                                        "; the file may be unreadable)"));
  }
  ++modules_;
  decisions_ += decisions;
  return Status::ok();
}

Status TraceWriter::flush() {
  return file_.flush();
}

Status TraceWriter::close() {
  return file_.close();
}

// --- Reading -------------------------------------------------------------------

namespace {

// Reads a 1-D dataset that must have `expected` entries (if given).
template <Hdf5Element T>
Expected<std::vector<T>> readColumn(const Hdf5File& file, std::string_view dataset,
                                    std::optional<size_t> expected, std::string_view expectedFrom) {
  Expected<std::vector<T>> values = file.readVector<T>(dataset);
  if (!values)
    return values.error();
  if (expected && values->size() != *expected)
    return datasetError(file.path(), dataset,
                        "has " + std::to_string(values->size()) + " entries, " +
                            std::string(expectedFrom) + " has " + std::to_string(*expected));
  return values;
}

Status checkFormat(const Hdf5File& file, int64_t* version) {
  const fs::path& path = file.path();
  MLGO_ASSIGN_OR_RETURN(bool hasFormat, file.hasAttribute("/", "format"));
  if (!hasFormat)
    return traceError(path, "not an mlgo trace file (no \"format\" attribute)");
  Expected<std::string> format = file.readAttribute<std::string>("/", "format");
  if (!format)
    return traceError(path, "not an mlgo trace file (" + format.error().message + ")");
  if (*format != kTraceFormat)
    return traceError(path, "not an mlgo trace file (format is \"" + *format + "\", expected \"" +
                                std::string(kTraceFormat) + "\")");
  MLGO_ASSIGN_OR_RETURN(int64_t stored, file.readAttribute<int64_t>("/", "version"));
  if (stored > kTraceVersion)
    return traceError(path, "trace version " + std::to_string(stored) +
                                " is newer than this reader supports (" +
                                std::to_string(kTraceVersion) + ")");
  if (stored < 1)
    return traceError(path, "invalid trace version " + std::to_string(stored));
  *version = stored;
  return Status::ok();
}

} // namespace

Expected<Trace> readTrace(const fs::path& path) {
  MLGO_ASSIGN_OR_RETURN(Hdf5File opened, Hdf5File::open(path, OpenMode::ReadOnly));
  const Hdf5File& file = opened;
  Trace trace;
  if (Status format = checkFormat(file, &trace.version); !format)
    return format.error();

  MLGO_ASSIGN_OR_RETURN(std::vector<std::string> attributeNames, file.attributeNames("/"));
  for (const std::string& name : attributeNames) {
    if (name == "format" || name == "version")
      continue;
    Expected<ElementType> type = file.attributeType("/", name);
    if (!type || *type != ElementType::String)
      continue; // not one of the free-form string attributes
    MLGO_ASSIGN_OR_RETURN(std::string value, file.readAttribute<std::string>("/", name));
    trace.attributes.emplace(name, std::move(value));
  }

  // Features.
  MLGO_ASSIGN_OR_RETURN(std::vector<std::string> names,
                        readColumn<std::string>(file, kFeatureNames, std::nullopt, ""));
  size_t featureCount = names.size();
  MLGO_ASSIGN_OR_RETURN(std::vector<std::string> types,
                        readColumn<std::string>(file, kFeatureTypes, featureCount, kFeatureNames));
  MLGO_ASSIGN_OR_RETURN(std::vector<std::string> shapes,
                        readColumn<std::string>(file, kFeatureShapes, featureCount, kFeatureNames));
  MLGO_ASSIGN_OR_RETURN(std::vector<int64_t> ports,
                        readColumn<int64_t>(file, kFeaturePorts, featureCount, kFeatureNames));
  for (size_t i = 0; i < featureCount; ++i) {
    TensorSpec spec;
    spec.name = names[i];
    Expected<policies::TensorType> type = policies::parseTensorType(types[i]);
    if (!type)
      return datasetError(path, std::string(kFeatureTypes) + "[" + std::to_string(i) + "]",
                          type.error().message);
    spec.type = *type;
    std::optional<std::vector<int64_t>> shape = parseShapeJson(shapes[i]);
    if (!shape)
      return datasetError(path, std::string(kFeatureShapes) + "[" + std::to_string(i) + "]",
                          "\"" + shapes[i] + "\" is not a JSON list of non-negative integers");
    spec.shape = std::move(*shape);
    spec.port = static_cast<int>(ports[i]);
    trace.featureSpecs.push_back(std::move(spec));
  }
  trace.width = recordWidth(trace.featureSpecs);

  // Decisions.
  MLGO_ASSIGN_OR_RETURN(Array<double> observations, file.readDataset<double>(kObservations));
  if (observations.shape.size() != 2 || observations.shape[1] != trace.width)
    return datasetError(
        path, kObservations,
        "has shape " +
            shapeJson(std::vector<int64_t>(observations.shape.begin(), observations.shape.end())) +
            ", expected [N," + std::to_string(trace.width) +
            "] (N decisions of the features' element count)");
  size_t decisions = observations.shape[0];
  trace.observations = std::move(observations.values);
  MLGO_ASSIGN_OR_RETURN(std::vector<int64_t> defaults,
                        readColumn<int64_t>(file, kDefaultDecisions, decisions, kObservations));
  trace.defaultDecisions = std::move(defaults);
  MLGO_ASSIGN_OR_RETURN(std::vector<int64_t> actions,
                        readColumn<int64_t>(file, kActions, decisions, kObservations));
  trace.actions = std::move(actions);
  MLGO_ASSIGN_OR_RETURN(std::vector<double> logProbabilities,
                        readColumn<double>(file, kLogProbabilities, decisions, kObservations));
  trace.logProbabilities = std::move(logProbabilities);
  MLGO_ASSIGN_OR_RETURN(std::vector<int64_t> decisionModules,
                        readColumn<int64_t>(file, kDecisionModules, decisions, kObservations));
  trace.decisionModules = std::move(decisionModules);

  // Modules.
  MLGO_ASSIGN_OR_RETURN(std::vector<std::string> moduleNames,
                        readColumn<std::string>(file, kModuleNames, std::nullopt, ""));
  size_t moduleCount = moduleNames.size();
  auto strings = [&](std::string_view dataset) {
    return readColumn<std::string>(file, dataset, moduleCount, kModuleNames);
  };
  auto unsignedColumn = [&](std::string_view dataset) {
    return readColumn<uint64_t>(file, dataset, moduleCount, kModuleNames);
  };
  auto doubles = [&](std::string_view dataset) {
    return readColumn<double>(file, dataset, moduleCount, kModuleNames);
  };
  Expected<std::vector<std::string>> statuses = strings(kModuleStatuses);
  Expected<std::vector<std::string>> messages = strings(kModuleMessages);
  Expected<std::vector<uint64_t>> sizes = unsignedColumn(kModuleSizes);
  Expected<std::vector<uint64_t>> baselines = unsignedColumn(kModuleBaselineSizes);
  Expected<std::vector<int64_t>> hasBaseline =
      readColumn<int64_t>(file, kModuleHasBaseline, moduleCount, kModuleNames);
  Expected<std::vector<double>> rewards = doubles(kModuleRewards);
  Expected<std::vector<uint64_t>> codeHashes = unsignedColumn(kModuleCodeHashes);
  Expected<std::vector<double>> seconds = doubles(kModuleSeconds);
  Expected<std::vector<uint64_t>> firstDecisions = unsignedColumn(kModuleFirstDecisions);
  Expected<std::vector<uint64_t>> decisionCounts = unsignedColumn(kModuleDecisionCounts);
  for (const Error* error :
       {statuses ? nullptr : &statuses.error(), messages ? nullptr : &messages.error(),
        sizes ? nullptr : &sizes.error(), baselines ? nullptr : &baselines.error(),
        hasBaseline ? nullptr : &hasBaseline.error(), rewards ? nullptr : &rewards.error(),
        codeHashes ? nullptr : &codeHashes.error(), seconds ? nullptr : &seconds.error(),
        firstDecisions ? nullptr : &firstDecisions.error(),
        decisionCounts ? nullptr : &decisionCounts.error()})
    if (error)
      return *error;

  for (size_t m = 0; m < moduleCount; ++m) {
    TraceModule module;
    module.name = moduleNames[m];
    module.status = (*statuses)[m];
    module.message = (*messages)[m];
    module.sizeBytes = (*sizes)[m];
    if ((*hasBaseline)[m] != 0)
      module.baselineBytes = (*baselines)[m];
    module.reward = (*rewards)[m];
    module.codeHash = (*codeHashes)[m];
    module.seconds = (*seconds)[m];
    module.firstDecision = (*firstDecisions)[m];
    module.decisionCount = (*decisionCounts)[m];
    if (module.firstDecision > decisions || module.decisionCount > decisions - module.firstDecision)
      return datasetError(path, kModuleDecisionCounts,
                          "module " + std::to_string(m) + " (" + module.name + ") claims rows " +
                              std::to_string(module.firstDecision) + "+" +
                              std::to_string(module.decisionCount) + " of " +
                              std::to_string(decisions) + " decisions");
    for (uint64_t d = module.firstDecision; d < module.firstDecision + module.decisionCount; ++d)
      if (trace.decisionModules[d] != static_cast<int64_t>(m))
        return datasetError(path, kDecisionModules,
                            "decision " + std::to_string(d) + " belongs to module " +
                                std::to_string(trace.decisionModules[d]) + ", but module " +
                                std::to_string(m) + " (" + module.name + ") claims it");
    trace.modules.push_back(std::move(module));
  }
  uint64_t claimed = 0;
  for (const TraceModule& module : trace.modules)
    claimed += module.decisionCount;
  if (claimed != decisions)
    return datasetError(path, kModuleDecisionCounts,
                        "modules claim " + std::to_string(claimed) + " decisions, " +
                            std::string(kObservations) + " has " + std::to_string(decisions));
  for (size_t d = 0; d < decisions; ++d)
    if (trace.decisionModules[d] < 0 ||
        static_cast<size_t>(trace.decisionModules[d]) >= moduleCount)
      return datasetError(path, kDecisionModules,
                          "decision " + std::to_string(d) + " refers to module " +
                              std::to_string(trace.decisionModules[d]) + " of " +
                              std::to_string(moduleCount));
  return trace;
}

// --- Vocabulary samples -------------------------------------------------------

void appendFeatureSamples(const Trace& trace, policies::FeatureSamples& samples) {
  size_t column = 0;
  for (const TensorSpec& spec : trace.featureSpecs) {
    // Scalars, and every element of a float vector (an embedding) pooled.
    if (spec.elementCount() == 1 || spec.isFloatVector()) {
      std::vector<double>& values = samples[spec.name];
      values.reserve(values.size() + trace.decisions() * spec.elementCount());
      for (size_t d = 0; d < trace.decisions(); ++d)
        for (size_t e = 0; e < spec.elementCount(); ++e)
          values.push_back(trace.row(d)[column + e]);
    }
    column += spec.elementCount();
  }
}

policies::FeatureSamples featureSamples(const Trace& trace) {
  policies::FeatureSamples samples;
  appendFeatureSamples(trace, samples);
  return samples;
}

} // namespace mlgo::results
