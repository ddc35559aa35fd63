#include "mlgo/results/TraceFile.h"

#include "ResultsTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace mlgo::results {
namespace {

using policies::TensorSpec;
using policies::TensorType;
using policies::Trajectory;
using testing::messageOf;

// Like clang's inliner header, shortened: two scalars, a vector feature (as
// IR2Vec embeddings are) and the default decision last.
std::vector<TensorSpec> makeSpecs() {
  return {TensorSpec{"callee_users", TensorType::Int64, {1}, 0},
          TensorSpec{"caller_embedding", TensorType::Float, {1, 2}, 0},
          TensorSpec{"cost_estimate", TensorType::Int32, {1}, 0},
          TensorSpec{"inlining_default", TensorType::Int64, {1}, 0}};
}
constexpr size_t kWidth = 5;

// A compile job as a trace records it: its outcome and its decisions.
struct Job {
  TraceModule outcome;
  std::optional<Trajectory> trajectory;
};

// Adds `job` as module `name` with a baseline size.
Status add(TraceWriter& writer, const std::string& name, Job job,
           std::optional<uint64_t> baselineBytes) {
  job.outcome.name = name;
  job.outcome.baselineBytes = baselineBytes;
  return writer.addModule(job.outcome, job.trajectory ? &*job.trajectory : nullptr);
}

// A job with `decisions` made-up decisions whose values encode (seed, d).
Job okJob(size_t decisions, double seed) {
  Job job;
  job.outcome.status = "ok";
  job.outcome.sizeBytes = 1000 + static_cast<uint64_t>(seed);
  job.outcome.codeHash = 0xfeedbeef00 + static_cast<uint64_t>(seed);
  job.outcome.reward = 0.01 * seed;
  job.outcome.seconds = 0.5 + seed;
  Trajectory& t = job.trajectory.emplace();
  t.featureSpecs = makeSpecs();
  t.width = kWidth;
  for (size_t d = 0; d < decisions; ++d) {
    double base = 100 * seed + static_cast<double>(d);
    int64_t label = static_cast<int64_t>(d % 2);
    t.observations.insert(t.observations.end(),
                          {base, base + 0.25, base + 0.5, base * 2, static_cast<double>(label)});
    t.defaultDecisions.push_back(label);
    t.actions.push_back(1 - label);
    t.logProbabilities.push_back(-0.1 * static_cast<double>(d + 1));
  }
  return job;
}

Job failedJob() {
  Job job;
  job.outcome.status = "timed-out";
  job.outcome.message = "module lua/lvm: timed out after 17 decisions";
  job.outcome.sizeBytes = 99; // not meaningful for a failed job: not recorded
  job.outcome.codeHash = 7;   // likewise
  job.outcome.reward = 0.5;   // likewise
  job.outcome.seconds = 300;
  return job;
}

TraceAttributes makeAttributes() {
  return {{"policy", "mlp 64x64, step 120"},
          {"corpus", "/corpora/lua"},
          {"compiler", "Debian clang version 22.1.8"}};
}

class TraceFileTest : public testing::ScratchDirectoryTest {
protected:
  // Writes the standard three-module trace: ok (3 decisions), failed without
  // a trajectory, ok (2 decisions, baseline unknown).
  void writeStandardTrace(const std::filesystem::path& path) {
    Expected<TraceWriter> writer = TraceWriter::create(path, makeSpecs(), makeAttributes());
    ASSERT_TRUE(writer) << messageOf(writer);
    Status added = add(*writer, "lua/lapi", okJob(3, 1), 1100);
    ASSERT_TRUE(added) << messageOf(added);
    added = add(*writer, "lua/lvm", failedJob(), 5000);
    ASSERT_TRUE(added) << messageOf(added);
    added = add(*writer, "lua/ltm", okJob(2, 2), std::nullopt);
    ASSERT_TRUE(added) << messageOf(added);
    EXPECT_EQ(writer->moduleCount(), 3u);
    EXPECT_EQ(writer->decisionCount(), 5u);
    Status closed = writer->close();
    ASSERT_TRUE(closed) << messageOf(closed);
  }
};

TEST_F(TraceFileTest, RoundTrip) {
  std::filesystem::path path = file("trace.h5");
  ASSERT_NO_FATAL_FAILURE(writeStandardTrace(path));

  Expected<Trace> read = readTrace(path);
  ASSERT_TRUE(read) << messageOf(read);
  const Trace& trace = *read;
  EXPECT_EQ(trace.version, kTraceVersion);
  EXPECT_EQ(trace.attributes, makeAttributes());
  EXPECT_EQ(trace.featureSpecs, makeSpecs());
  EXPECT_EQ(trace.width, kWidth);
  ASSERT_EQ(trace.decisions(), 5u);

  Job first = okJob(3, 1), third = okJob(2, 2);
  std::vector<double> observations = first.trajectory->observations;
  observations.insert(observations.end(), third.trajectory->observations.begin(),
                      third.trajectory->observations.end());
  EXPECT_EQ(trace.observations, observations);
  EXPECT_EQ(trace.defaultDecisions, (std::vector<int64_t>{0, 1, 0, 0, 1}));
  EXPECT_EQ(trace.actions, (std::vector<int64_t>{1, 0, 1, 1, 0}));
  EXPECT_EQ(trace.logProbabilities, (std::vector<double>{-0.1, -0.2, -0.1 * 3, -0.1, -0.2}));
  EXPECT_EQ(trace.decisionModules, (std::vector<int64_t>{0, 0, 0, 2, 2}));
  EXPECT_EQ(trace.row(3)[0], 200.0);

  ASSERT_EQ(trace.modules.size(), 3u);
  TraceModule lapi{.name = "lua/lapi",
                   .status = "ok",
                   .message = "",
                   .sizeBytes = 1001,
                   .baselineBytes = 1100,
                   .reward = 0.01,
                   .codeHash = 0xfeedbeef01,
                   .seconds = 1.5,
                   .firstDecision = 0,
                   .decisionCount = 3};
  EXPECT_EQ(trace.modules[0], lapi);
  EXPECT_TRUE(trace.modules[0].ok());
  const TraceModule& lvm = trace.modules[1];
  EXPECT_EQ(lvm.name, "lua/lvm");
  EXPECT_EQ(lvm.status, "timed-out");
  EXPECT_FALSE(lvm.ok());
  EXPECT_EQ(lvm.message, "module lua/lvm: timed out after 17 decisions");
  EXPECT_EQ(lvm.sizeBytes, 0u);
  EXPECT_EQ(lvm.baselineBytes, 5000u);
  EXPECT_TRUE(std::isnan(lvm.reward));
  EXPECT_EQ(lvm.codeHash, 0u);
  EXPECT_EQ(lvm.seconds, 300);
  EXPECT_EQ(lvm.firstDecision, 3u);
  EXPECT_EQ(lvm.decisionCount, 0u);
  const TraceModule& ltm = trace.modules[2];
  EXPECT_EQ(ltm.baselineBytes, std::nullopt);
  EXPECT_EQ(ltm.firstDecision, 3u);
  EXPECT_EQ(ltm.decisionCount, 2u);
}

TEST_F(TraceFileTest, MismatchedSpecsAreRejectedAndNothingIsWritten) {
  std::filesystem::path path = file("trace.h5");
  Expected<TraceWriter> writer = TraceWriter::create(path, makeSpecs());
  ASSERT_TRUE(writer) << messageOf(writer);
  ASSERT_TRUE(add(*writer, "zlib/adler32", okJob(2, 1), 10));

  Job renamed = okJob(2, 2);
  renamed.trajectory->featureSpecs[2].name = "callee_basic_block_count";
  Status rejected = add(*writer, "zlib/deflate", renamed, 10);
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().message,
            path.string() +
                ": module zlib/deflate: feature specs differ from the trace's: feature 2 is "
                "callee_basic_block_count: int32_t[1] (port 0), the trace has cost_estimate: "
                "int32_t[1] (port 0)");

  Job shorter = okJob(1, 3);
  shorter.trajectory->featureSpecs.pop_back();
  rejected = add(*writer, "zlib/inflate", shorter, 10);
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().message,
            path.string() + ": module zlib/inflate: feature specs differ from the trace's: it "
                            "has 3 features, the trace has 4");

  Job malformed = okJob(2, 4);
  malformed.trajectory->logProbabilities.pop_back();
  rejected = add(*writer, "zlib/trees", malformed, 10);
  ASSERT_FALSE(rejected);
  EXPECT_NE(rejected.error().message.find("module zlib/trees: malformed trajectory"),
            std::string::npos)
      << rejected.error().message;

  // The writer goes on, and the file holds only the accepted modules.
  ASSERT_TRUE(add(*writer, "zlib/crc32", okJob(1, 5), 10));
  ASSERT_TRUE(writer->close());
  Expected<Trace> trace = readTrace(path);
  ASSERT_TRUE(trace) << messageOf(trace);
  ASSERT_EQ(trace->modules.size(), 2u);
  EXPECT_EQ(trace->modules[0].name, "zlib/adler32");
  EXPECT_EQ(trace->modules[1].name, "zlib/crc32");
  EXPECT_EQ(trace->decisions(), 3u);
}

TEST_F(TraceFileTest, CreationErrors) {
  std::filesystem::path path = file("trace.h5");
  Expected<TraceWriter> reserved =
      TraceWriter::create(path, makeSpecs(), TraceAttributes{{"format", "x"}});
  ASSERT_FALSE(reserved);
  EXPECT_EQ(reserved.error().message, path.string() + ": trace attribute \"format\" is reserved");
  Expected<TraceWriter> noFeatures = TraceWriter::create(path, {});
  ASSERT_FALSE(noFeatures);
  EXPECT_EQ(noFeatures.error().message,
            path.string() + ": a trace needs features with at least one value per decision");
}

TEST_F(TraceFileTest, FilesThatAreNotTracesAreRejected) {
  std::filesystem::path other = file("run.h5");
  {
    Expected<Hdf5File> file = Hdf5File::create(other);
    ASSERT_TRUE(file) << messageOf(file);
    ASSERT_TRUE(file->writeAttribute("/", "format", "mlgo-run"));
  }
  Expected<Trace> wrongFormat = readTrace(other);
  ASSERT_FALSE(wrongFormat);
  EXPECT_EQ(wrongFormat.error().message,
            other.string() +
                ": not an mlgo trace file (format is \"mlgo-run\", expected \"mlgo-trace\")");

  std::filesystem::path bare = file("bare.h5");
  ASSERT_TRUE(Hdf5File::create(bare));
  Expected<Trace> noFormat = readTrace(bare);
  ASSERT_FALSE(noFormat);
  EXPECT_EQ(noFormat.error().message,
            bare.string() + ": not an mlgo trace file (no \"format\" attribute)");

  std::filesystem::path newer = file("newer.h5");
  ASSERT_NO_FATAL_FAILURE(writeStandardTrace(newer));
  {
    Expected<Hdf5File> file = Hdf5File::open(newer, OpenMode::ReadWrite);
    ASSERT_TRUE(file) << messageOf(file);
    ASSERT_TRUE(file->writeAttribute<int64_t>("/", "version", kTraceVersion + 1));
  }
  Expected<Trace> tooNew = readTrace(newer);
  ASSERT_FALSE(tooNew);
  EXPECT_EQ(tooNew.error().message,
            newer.string() + ": trace version 2 is newer than this reader supports (1)");

  std::filesystem::path text = file("trace.txt");
  std::ofstream(text) << "observations\n";
  Expected<Trace> notHdf5 = readTrace(text);
  ASSERT_FALSE(notHdf5);
  EXPECT_EQ(notHdf5.error().message, text.string() + ": not an HDF5 file");

  Expected<Trace> missing = readTrace(file("missing.h5"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, file("missing.h5").string() + ": no such file");
}

TEST_F(TraceFileTest, InconsistentDatasetsAreRejected) {
  std::filesystem::path path = file("trace.h5");
  ASSERT_NO_FATAL_FAILURE(writeStandardTrace(path));
  {
    Expected<Hdf5File> file = Hdf5File::open(path, OpenMode::ReadWrite);
    ASSERT_TRUE(file) << messageOf(file);
    ASSERT_TRUE(file->appendRows<int64_t>("/decisions/action", std::vector<int64_t>{1}));
  }
  Expected<Trace> trace = readTrace(path);
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().message,
            path.string() + ": /decisions/action: has 6 entries, /decisions/observations has 5");
}

TEST_F(TraceFileTest, FeatureSamplesForVocabularies) {
  std::filesystem::path path = file("trace.h5");
  ASSERT_NO_FATAL_FAILURE(writeStandardTrace(path));
  Expected<Trace> trace = readTrace(path);
  ASSERT_TRUE(trace) << messageOf(trace);

  policies::FeatureSamples samples = featureSamples(*trace);
  // Scalars, and the float vector caller_embedding with its elements pooled
  // (one vocabulary entry for all of them).
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples["caller_embedding"],
            (std::vector<double>{100.25, 100.5, 101.25, 101.5, 102.25, 102.5, 200.25, 200.5, 201.25,
                                 201.5}));
  EXPECT_EQ(samples["callee_users"], (std::vector<double>{100, 101, 102, 200, 201}));
  EXPECT_EQ(samples["cost_estimate"], (std::vector<double>{200, 202, 204, 400, 402}));
  EXPECT_EQ(samples["inlining_default"], (std::vector<double>{0, 1, 0, 0, 1}));

  appendFeatureSamples(*trace, samples); // pooling a second trace
  EXPECT_EQ(samples["callee_users"].size(), 10u);
}

// Researchers read traces with h5py: Debian's python3-h5py must see the
// schema of results/README.md, with str attributes and decodable strings.
TEST_F(TraceFileTest, H5pyReadsTheTrace) {
  std::filesystem::path path = file("trace.h5");
  ASSERT_NO_FATAL_FAILURE(writeStandardTrace(path));

  std::filesystem::path script = file("check.py");
  std::ofstream(script) << R"PY(
import json, math, sys
import h5py, numpy as np

with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["format"] == "mlgo-trace", f.attrs["format"]
    assert isinstance(f.attrs["format"], str)
    assert f.attrs["version"] == 1
    assert f.attrs["compiler"] == "Debian clang version 22.1.8"
    assert sorted(f.keys()) == ["decisions", "features", "modules"], list(f.keys())

    names = list(f["features/name"].asstr()[()])
    assert names == ["callee_users", "caller_embedding", "cost_estimate", "inlining_default"], names
    assert isinstance(f["features/name"][0], bytes)
    assert list(f["features/type"].asstr()[()]) == ["int64_t", "float", "int32_t", "int64_t"]
    shapes = [json.loads(s) for s in f["features/shape_json"].asstr()[()]]
    assert shapes == [[1], [1, 2], [1], [1]], shapes
    assert list(f["features/column"][()]) == [0, 1, 3, 4]
    assert list(f["features/element_count"][()]) == [1, 2, 1, 1]

    obs = f["decisions/observations"]
    assert obs.shape == (5, 5) and obs.dtype == np.float64, (obs.shape, obs.dtype)
    assert obs[3, 0] == 200.0 and obs[0, 2] == 100.5
    for name, dtype in [("default_decision", np.int64), ("action", np.int64),
                        ("log_probability", np.float64), ("module", np.int64)]:
        d = f["decisions/" + name]
        assert d.shape == (5,) and d.dtype == dtype, (name, d.shape, d.dtype)
    assert list(f["decisions/module"][()]) == [0, 0, 0, 2, 2]

    m = f["modules"]
    assert list(m["name"].asstr()[()]) == ["lua/lapi", "lua/lvm", "lua/ltm"]
    assert list(m["status"].asstr()[()]) == ["ok", "timed-out", "ok"]
    assert m["message"].asstr()[1] == "module lua/lvm: timed out after 17 decisions"
    for name, dtype in [("size", np.uint64), ("baseline_size", np.uint64),
                        ("has_baseline", np.int64), ("reward", np.float64),
                        ("code_hash", np.uint64), ("seconds", np.float64),
                        ("first_decision", np.uint64), ("decision_count", np.uint64)]:
        assert m[name].shape == (3,) and m[name].dtype == dtype, (name, m[name].shape, m[name].dtype)
    assert list(m["baseline_size"][()]) == [1100, 5000, 0]
    assert list(m["has_baseline"][()]) == [1, 1, 0]
    assert math.isnan(m["reward"][1]) and m["reward"][0] == 0.01
    assert list(m["decision_count"][()]) == [3, 0, 2]
print("h5py ok")
)PY";

  std::filesystem::path output = file("check.out");
  std::string command = std::string("'") + MLGO_H5PY_PYTHON + "' '" + script.string() + "' '" +
                        path.string() + "' > '" + output.string() + "' 2>&1";
  int status = std::system(command.c_str());
  std::stringstream log;
  log << std::ifstream(output).rdbuf();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << command << "\n"
      << log.str() << "(needs python3-h5py, see scripts/setup.sh)";
  EXPECT_EQ(log.str(), "h5py ok\n");
}

} // namespace
} // namespace mlgo::results
