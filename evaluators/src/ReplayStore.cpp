#include "mlgo/evaluators/ReplayStore.h"

#include "mlgo/support/Random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <shared_mutex>
#include <vector>

namespace mlgo::evaluators {

namespace {

constexpr uint32_t kNoRow = std::numeric_limits<uint32_t>::max();

bool fitsInt32(double value) {
  return value == std::trunc(value) && value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

} // namespace

// One module's tree of decision prefixes; its rows in two arenas.
struct ReplayStore::ModuleTree {
  struct Node {
    uint32_t row = kNoRow;       // the features shown after this prefix
    int8_t defaultDecision = -1; // the compiler's own decision there; -1: not recorded
    bool ended = false;          // the compilation ended after this prefix
    uint64_t sizeBytes = 0;      // and produced this (ended nodes only)
    uint64_t codeHash = 0;
    std::optional<double> measured;                     // in the task's measure
    std::vector<std::pair<int64_t, uint32_t>> children; // decision → node
  };

  mutable std::shared_mutex mutex;
  std::atomic<uint64_t> lastUse{0};
  std::vector<policies::TensorSpec> specs; // of every row (the compiler's header)
  size_t width = 0;                        // values per row
  int defaultColumn = -1;
  std::vector<Node> nodes{Node{}}; // nodes[0]: the empty prefix
  // Row r: rowStart[r] >> 1 is its offset in `ints` (bit 0 clear) or in
  // `doubles` (bit 0 set).
  std::vector<uint64_t> rowStart;
  std::vector<int32_t> ints;
  std::vector<double> doubles;
  size_t trajectories = 0;
  double compileSeconds = 0;
  size_t compiles = 0;
  size_t bytes = sizeof(ModuleTree) + sizeof(Node);

  void readRow(uint32_t row, double* out) const {
    const uint64_t start = rowStart[row];
    if (start & 1) {
      std::copy_n(doubles.begin() + static_cast<ptrdiff_t>(start >> 1), width, out);
    } else {
      for (size_t i = 0; i < width; ++i)
        out[i] = ints[(start >> 1) + i];
    }
  }

  uint32_t storeRow(const double* values) {
    const bool integral = std::all_of(values, values + width, fitsInt32);
    if (integral) {
      rowStart.push_back(static_cast<uint64_t>(ints.size()) << 1);
      ints.insert(ints.end(), values, values + width);
      bytes += width * sizeof(int32_t);
    } else {
      rowStart.push_back((static_cast<uint64_t>(doubles.size()) << 1) | 1);
      doubles.insert(doubles.end(), values, values + width);
      bytes += width * sizeof(double);
    }
    bytes += sizeof(uint64_t);
    return static_cast<uint32_t>(rowStart.size() - 1);
  }

  // Equal but for the default decision's column (recorded or not).
  bool sameRow(uint32_t row, const double* values) const {
    std::vector<double> stored(width);
    readRow(row, stored.data());
    // NaN equals NaN here: the register allocator leaves NaN in the rows of
    // candidates it masks, the same NaN after the same decisions.
    for (size_t i = 0; i < width; ++i)
      if (static_cast<int>(i) != defaultColumn && stored[i] != values[i] &&
          !(std::isnan(stored[i]) && std::isnan(values[i])))
        return false;
    return true;
  }

  uint32_t child(uint32_t node, int64_t decision) const {
    for (const auto& [advice, index] : nodes[node].children)
      if (advice == decision)
        return index;
    return kNoRow;
  }

  uint32_t addChild(uint32_t node, int64_t decision) {
    const auto index = static_cast<uint32_t>(nodes.size());
    nodes.emplace_back(); // may move nodes: index, never references, across this
    nodes[node].children.emplace_back(decision, index);
    bytes += sizeof(Node) + sizeof(std::pair<int64_t, uint32_t>);
    return index;
  }

  Status learn(const policies::Trajectory& t, uint64_t sizeBytes, uint64_t codeHash,
               std::optional<double> measured);
  std::optional<JobResult> replay(const policies::Policy& policy, policies::DecisionMode mode,
                                  uint64_t rngKey, bool withTrajectory) const;
};

Status ReplayStore::ModuleTree::learn(const policies::Trajectory& t, uint64_t sizeBytes,
                                      uint64_t codeHash, std::optional<double> measured) {
  if (t.width != width || t.featureSpecs != specs)
    return makeError("the compiler's features differ from the module's earlier compilations");
  uint32_t node = 0;
  for (size_t d = 0; d < t.decisions(); ++d) {
    const std::string at = " at decision " + std::to_string(d);
    if (nodes[node].ended)
      return makeError("the compilation went on where an earlier one with the same decisions "
                       "ended" +
                       at);
    if (nodes[node].row == kNoRow)
      nodes[node].row = storeRow(t.row(d));
    else if (!sameRow(nodes[node].row, t.row(d)))
      return makeError("the compiler showed other features after the same decisions" + at);
    const int64_t recordedDefault = d < t.defaultDecisions.size() ? t.defaultDecisions[d] : -1;
    if (recordedDefault >= 0) {
      int8_t& stored = nodes[node].defaultDecision;
      if (stored >= 0 && stored != recordedDefault)
        return makeError("the compiler's own decision differs after the same decisions" + at);
      stored = static_cast<int8_t>(recordedDefault);
    }
    uint32_t next = child(node, t.actions[d]);
    node = next != kNoRow ? next : addChild(node, t.actions[d]);
  }
  Node& end = nodes[node];
  if (end.row != kNoRow)
    return makeError("the compilation ended after " + std::to_string(t.decisions()) +
                     " decisions where an earlier one with the same decisions went on");
  if (end.ended &&
      (end.sizeBytes != sizeBytes || end.codeHash != codeHash || end.measured != measured))
    return makeError("the same decisions gave other code (" + std::to_string(sizeBytes) +
                     " bytes, earlier " + std::to_string(end.sizeBytes) + ")");
  if (!end.ended)
    ++trajectories;
  end.ended = true;
  end.sizeBytes = sizeBytes;
  end.codeHash = codeHash;
  end.measured = measured;
  return Status::ok();
}

std::optional<JobResult> ReplayStore::ModuleTree::replay(const policies::Policy& policy,
                                                         policies::DecisionMode mode,
                                                         uint64_t rngKey,
                                                         bool withTrajectory) const {
  policies::ChannelHeader header{specs, {}};
  Expected<std::vector<size_t>> inputs = policies::bindPolicyInputs(policy, header);
  if (!inputs)
    return std::nullopt; // the job's own compile reports the mismatch
  std::vector<size_t> firstColumn;
  for (size_t i = 0, column = 0; i < specs.size(); column += specs[i++].elementCount())
    firstColumn.push_back(column);
  const bool readsDefault =
      defaultColumn >= 0 && std::any_of(inputs->begin(), inputs->end(), [&](size_t i) {
        return static_cast<int>(firstColumn[i]) == defaultColumn;
      });
  const bool needsDefault = readsDefault || withTrajectory;

  JobResult result;
  // Actions and log-probabilities always (verification compares them);
  // features and defaults only when asked for.
  policies::Trajectory& t = result.trajectory.emplace();
  if (withTrajectory) {
    t.featureSpecs = specs;
    t.width = width;
  }
  RandomStream rng(rngKey);
  std::vector<double> row(width), values;
  for (uint32_t node = 0;;) {
    const Node& n = nodes[node];
    if (n.ended) {
      result.status = JobStatus::Ok;
      result.sizeBytes = n.sizeBytes;
      result.codeHash = n.codeHash;
      result.measured = n.measured;
      return result;
    }
    if (n.row == kNoRow || (needsDefault && defaultColumn >= 0 && n.defaultDecision < 0))
      return std::nullopt;
    readRow(n.row, row.data());
    if (defaultColumn >= 0 && n.defaultDecision >= 0)
      row[static_cast<size_t>(defaultColumn)] = n.defaultDecision;
    values.clear();
    for (size_t input : *inputs)
      for (size_t e = 0; e < specs[input].elementCount(); ++e)
        values.push_back(row[firstColumn[input] + e]);
    policies::Decision decision = policy.decide(values, mode, rng);
    if (withTrajectory) {
      t.observations.insert(t.observations.end(), row.begin(), row.end());
      t.defaultDecisions.push_back(n.defaultDecision);
    }
    t.actions.push_back(decision.advice);
    t.logProbabilities.push_back(decision.logProbability);
    ++result.decisions;
    node = child(node, decision.advice);
    if (node == kNoRow)
      return std::nullopt;
  }
}

ReplayStore::ReplayStore(size_t memoryBytes, std::string defaultFeature)
    : budget_(memoryBytes), defaultFeature_(std::move(defaultFeature)) {}

ReplayStore::~ReplayStore() = default;

std::shared_ptr<ReplayStore::ModuleTree> ReplayStore::find(const std::string& module) const {
  std::lock_guard lock(mutex_);
  auto it = modules_.find(module);
  return it == modules_.end() ? nullptr : it->second;
}

std::optional<JobResult> ReplayStore::replay(const std::string& module,
                                             const policies::Policy& policy,
                                             policies::DecisionMode mode, uint64_t rngKey,
                                             bool withTrajectory) {
  std::shared_ptr<ModuleTree> tree = find(module);
  if (!tree)
    return std::nullopt;
  tree->lastUse = ++clock_;
  std::shared_lock lock(tree->mutex);
  if (tree->specs.empty())
    return std::nullopt;
  return tree->replay(policy, mode, rngKey, withTrajectory);
}

Status ReplayStore::learn(const std::string& module, const policies::Trajectory& trajectory,
                          uint64_t sizeBytes, uint64_t codeHash, double seconds, bool fullCompile,
                          std::optional<double> measured) {
  // Learning is short next to the compile it follows; one at a time keeps
  // the byte count and the eviction order exact.
  std::lock_guard lock(mutex_);
  std::shared_ptr<ModuleTree>& tree = modules_[module];
  if (!tree) {
    tree = std::make_shared<ModuleTree>();
    bytes_ += tree->bytes;
  }
  tree->lastUse = ++clock_;
  std::unique_lock treeLock(tree->mutex);
  const size_t before = tree->bytes;
  if (tree->specs.empty()) {
    tree->specs = trajectory.featureSpecs;
    tree->width = trajectory.width;
    for (size_t i = 0, column = 0; i < tree->specs.size();
         column += tree->specs[i++].elementCount())
      if (tree->specs[i].name == defaultFeature_)
        tree->defaultColumn = static_cast<int>(column);
  }
  Status learned = tree->learn(trajectory, sizeBytes, codeHash, measured);
  if (!learned) {
    bytes_ -= before;
    treeLock.unlock();
    modules_.erase(module);
    return makeError("module \"" + module + "\": replay: " + learned.error().message);
  }
  if (fullCompile) {
    tree->compileSeconds += seconds;
    ++tree->compiles;
  }
  bytes_ += tree->bytes - before;
  treeLock.unlock();
  if (bytes_ > budget_)
    evictBeyondBudget(module);
  return Status::ok();
}

// Forgets the modules used least recently until the store fits its budget;
// `keep` (just learned) goes last. The caller holds mutex_.
void ReplayStore::evictBeyondBudget(const std::string& keep) {
  std::vector<std::pair<uint64_t, std::string>> byAge;
  for (const auto& [name, tree] : modules_)
    byAge.emplace_back(name == keep ? std::numeric_limits<uint64_t>::max() : tree->lastUse.load(),
                       name);
  std::sort(byAge.begin(), byAge.end());
  for (const auto& [age, name] : byAge) {
    if (bytes_ <= budget_)
      break;
    auto it = modules_.find(name);
    {
      std::unique_lock treeLock(it->second->mutex);
      bytes_ -= it->second->bytes;
    }
    modules_.erase(it);
    ++evicted_;
  }
}

double ReplayStore::meanCompileSeconds(const std::string& module) const {
  std::shared_ptr<ModuleTree> tree = find(module);
  if (!tree)
    return 0;
  std::shared_lock lock(tree->mutex);
  return tree->compiles ? tree->compileSeconds / static_cast<double>(tree->compiles) : 0;
}

ReplayStatistics ReplayStore::statistics() const {
  std::lock_guard lock(mutex_);
  ReplayStatistics s;
  s.modules = modules_.size();
  for (const auto& [name, tree] : modules_) {
    std::shared_lock treeLock(tree->mutex);
    s.nodes += tree->nodes.size();
    s.trajectories += tree->trajectories;
  }
  s.bytes = bytes_;
  s.evictedModules = evicted_;
  return s;
}

} // namespace mlgo::evaluators
