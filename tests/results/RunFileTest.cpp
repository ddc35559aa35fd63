#include "mlgo/results/RunFile.h"

#include "mlgo/results/Hdf5File.h"

#include "ResultsTestSupport.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mlgo::results {
namespace {

using testing::messageOf;

// The value, or T{} after a test failure naming the error.
template <class T> T valueOf(Expected<T> value) {
  EXPECT_TRUE(value) << messageOf(value);
  return value ? value.take() : T{};
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A NaN with a payload and the sign bit set: any NaN must read back as a NaN.
const double kOddNaN = std::bit_cast<double>(uint64_t{0xFFF8'0000'DEAD'BEEF});

// A policy file as policies::policyToJson writes it (one number a line).
std::string policyJson(size_t parameters, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> weight(0.0, 0.1);
  std::string json = "{\n \"format\": \"mlgo-es-policy\",\n \"version\": 1,\n \"kind\": \"mlp\",\n"
                     " \"description\": \"mlp[64,64] relu\",\n"
                     " \"architecture\": {\"hidden_layers\": [64, 64], \"activation\": "
                     "\"relu\", \"actions\": 2},\n \"parameters\": [";
  char number[32];
  for (size_t i = 0; i < parameters; ++i) {
    auto [end, ec] = std::to_chars(number, number + sizeof number, weight(random));
    json += i ? ",\n  " : "\n  ";
    json.append(number, end);
  }
  return json + "\n ]\n}";
}

// Every field set, with the awkward values: NaN (with a payload), -0.0,
// infinities, the extreme integers, keys that are not HDF5 names.
RunRecord makeFullRecord() {
  RunRecord r;
  r.trainer = "es-train";
  r.configToml = "[es]\noptimizer = \"gradient-es\"\nsigma = 0.02\n# λ ünïcödé\n";
  r.config = {{"es.optimizer", "gradient-es"},
              {"es.sigma", "0.02"},
              {"", "empty key"},
              {"paths/with/slashes", "a\tb\nc"}};
  r.attributes = {{"mlgo_es_version", "0.1.0"}, {"compiler", "Debian clang version 22.1.8"}};
  r.moduleNames = {"lua/lapi", "lua/lvm", "zlib/deflate"};
  r.baselineSizes = {1100, 0, std::numeric_limits<uint64_t>::max()};
  r.validationModuleNames = {"sqlite/sqlite3", "lua/ltm"};
  r.validationBaselineSizes = {900000, 4400};

  // Three steps of two candidates on two modules.
  r.stepScalars = {
      {"reward_mean", {0.01, kNaN, -0.0}},
      {"seconds_evaluate", {1.5, 2.25, kInf}},
      {"modules", {1, 2, 3}}, // named like a step table
      {"a/b%c", {-kInf, kOddNaN, 5e-324}},
      {".", {0, 0, 0}},
      {"", {1, 1, 1}},
      {"ünï\x01", {std::numeric_limits<double>::max(), 0, 0}},
  };
  r.candidateRewards = {{0.1, -0.2}, {kNaN, 0.3}, {-0.0, kOddNaN}};
  r.stepModules = {{0, 1}, {2, 0}, {1, 2}};
  r.stepSizes = {{1000, 5000, 1001, 5001}, {0, 1, 2, 3}, {7, 8, 9, 0}};

  r.failures = {
      {.step = 1,
       .candidate = 0,
       .module = "zlib/deflate",
       .status = "timed-out",
       .message = "timed out after 17 decisions",
       .stderrTail = "clang: warning: \xff\xfe not UTF-8\n"},
      {.step = -1,
       .candidate = -1,
       .module = "lua/lvm",
       .status = "baseline-unavailable",
       .message = "",
       .stderrTail = ""},
  };
  r.validations = {
      {.step = 0, .sizes = {890000, 4300}, .ok = {1, 1}, .meanReward = 0.02, .totalReward = 0.011},
      {.step = 2, .sizes = {0, 4200}, .ok = {0, 1}, .meanReward = kNaN, .totalReward = -0.0},
  };
  r.snapshots = {{0, policyJson(50, 1)}, {2, policyJson(50, 2)}};
  r.bestPolicy = PolicySnapshot{2, policyJson(50, 2)};
  r.bestPolicyMetric = "validation total reward";
  r.bestPolicyValue = 0.011;
  r.finalPolicy = PolicySnapshot{3, policyJson(50, 3)};

  Checkpoint& c = r.checkpoint.emplace();
  c.step = 3;
  c.optimizer = "gradient-es";
  c.optimizerState.setInteger("generation", 3);
  c.optimizerState.setInteger("rng/counter", std::numeric_limits<int64_t>::min());
  c.optimizerState.setInteger("", 7);
  c.optimizerState.setInteger("100%", -1);
  c.optimizerState.setVector("mean", {0.5, -0.0, kNaN});
  c.optimizerState.setVector("adam/m", {1e-300, -1e300});
  c.optimizerState.setVector("empty", std::vector<double>{});
  c.optimizerState.setVector(".", {1});
  c.optimizerState.setVector(std::string("nul\0key", 7), {2});
  c.policyJson = policyJson(50, 4);
  c.trainerState.setReal("best_value", 0.011);
  c.trainerState.setInteger("best_step", 2);
  c.elapsedSeconds = 123.5;
  return r;
}

class RunFileTest : public testing::ScratchDirectoryTest {
protected:
  void write(const std::filesystem::path& path, const RunRecord& record) {
    Status written = writeRunFile(path, record);
    ASSERT_TRUE(written) << messageOf(written);
  }
  void expectRoundTrip(const RunRecord& record, const std::string& name = "run.h5") {
    std::filesystem::path path = file(name);
    ASSERT_NO_FATAL_FAILURE(write(path, record));
    EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
    Expected<RunRecord> read = readRunFile(path);
    ASSERT_TRUE(read) << messageOf(read);
    std::optional<std::string> difference = firstDifference(record, *read);
    EXPECT_FALSE(difference) << *difference;
  }
  // The error writeRunFile gives for `record`; the test fails if it succeeds.
  std::string writeError(const std::filesystem::path& path, const RunRecord& record) {
    Status written = writeRunFile(path, record);
    EXPECT_FALSE(written);
    return messageOf(written);
  }
  std::string readError(const std::filesystem::path& path) {
    Expected<RunRecord> read = readRunFile(path);
    EXPECT_FALSE(read);
    return messageOf(read);
  }
  // Runs a Python script with Debian's h5py on `arguments`; expects "h5py ok".
  void runH5py(const std::string& scriptText, const std::vector<std::filesystem::path>& arguments) {
    std::filesystem::path script = file("check.py");
    std::ofstream(script) << scriptText;
    std::filesystem::path output = file("check.out");
    std::string command = std::string("'") + MLGO_H5PY_PYTHON + "' '" + script.string() + "'";
    for (const std::filesystem::path& argument : arguments)
      command += " '" + argument.string() + "'";
    command += " > '" + output.string() + "' 2>&1";
    int status = std::system(command.c_str());
    std::stringstream log;
    log << std::ifstream(output).rdbuf();
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << command << "\n"
        << log.str() << "(needs python3-h5py, see scripts/setup.sh)";
    EXPECT_EQ(log.str(), "h5py ok\n");
  }
};

TEST_F(RunFileTest, FullRecordRoundTripsExactly) {
  RunRecord record = makeFullRecord();
  ASSERT_NO_FATAL_FAILURE(expectRoundTrip(record));

  Expected<RunRecord> read = readRunFile(file("run.h5"));
  ASSERT_TRUE(read) << messageOf(read);
  // Bit for bit: the sign of zero and the NaNs survive.
  EXPECT_TRUE(std::signbit(read->stepScalars.at("reward_mean")[2]));
  EXPECT_TRUE(std::isnan(read->stepScalars.at("a/b%c")[1]));
  EXPECT_EQ(read->stepScalars.at("a/b%c")[2], 5e-324);
  EXPECT_TRUE(std::isnan(read->candidateRewards[1][0]));
  EXPECT_EQ(read->checkpoint->optimizerState.vectors().count(std::string("nul\0key", 7)), 1u);
  EXPECT_EQ(read->failures[0].stderrTail, "clang: warning: \xff\xfe not UTF-8\n");

  // Rewriting replaces the file whole.
  record.candidateRewards.push_back({0.5, 0.5});
  record.stepModules.push_back({0, 0});
  record.stepSizes.push_back({1, 2, 3, 4});
  for (auto& [name, values] : record.stepScalars)
    values.push_back(4);
  record.checkpoint->step = 4;
  record.failures.clear();
  ASSERT_NO_FATAL_FAILURE(expectRoundTrip(record));
}

TEST_F(RunFileTest, DifferencesAreFoundAndNamed) {
  RunRecord a = makeFullRecord();
  EXPECT_FALSE(firstDifference(a, a));
  EXPECT_TRUE(identical(a, a));
  EXPECT_FALSE(a == a); // operator== sees NaN != NaN; identical() is the one to use

  RunRecord b = a;
  b.stepScalars["reward_mean"][1] = 0.5;
  EXPECT_EQ(firstDifference(a, b), "stepScalars[\"reward_mean\"][1]: nan vs 0.5");
  b = a;
  b.stepScalars["reward_mean"][2] = 0.0;
  EXPECT_EQ(firstDifference(a, b), "stepScalars[\"reward_mean\"][2]: -0 vs 0");
  b = a;
  b.candidateRewards[1][0] = -kNaN; // another NaN is the same
  EXPECT_FALSE(firstDifference(a, b));
  b.checkpoint->optimizerState.erase("mean");
  EXPECT_EQ(firstDifference(a, b),
            "checkpoint.optimizerState.vectors[\"mean\"]: only in the first");
  b = a;
  b.bestPolicy.reset();
  EXPECT_EQ(firstDifference(a, b), "bestPolicy: present vs absent");
  b = a;
  b.validations[1].ok[0] = 2;
  EXPECT_EQ(firstDifference(a, b), "validations[1].ok[0]: 0 vs 2");
  b = a;
  b.snapshots[1].policyJson[100] = 'x';
  EXPECT_EQ(firstDifference(a, b), "snapshots[1].policyJson: strings of " +
                                       std::to_string(a.snapshots[1].policyJson.size()) + " and " +
                                       std::to_string(a.snapshots[1].policyJson.size()) +
                                       " bytes differ from byte 100");
  b = a;
  b.failures.pop_back();
  EXPECT_EQ(firstDifference(a, b), "failures: 2 entries vs 1");
}

TEST_F(RunFileTest, RunsAreComparedTimingsAside) {
  RunRecord a = makeFullRecord();
  RunRecord b = a;
  b.stepScalars["seconds_evaluate"][0] = 99;
  b.checkpoint->elapsedSeconds = 7;
  EXPECT_TRUE(firstDifference(a, b));
  EXPECT_FALSE(firstDifferenceButTimings(a, b));
  b.stepScalars["reward_mean"][1] = 0.5;
  EXPECT_EQ(firstDifferenceButTimings(a, b), "stepScalars[\"reward_mean\"][1]: nan vs 0.5");
  EXPECT_TRUE(isTimingScalar("seconds_step"));
  EXPECT_TRUE(isTimingScalar("elapsed_seconds"));
  EXPECT_TRUE(isTimingScalar("cache_seconds_saved"));
  EXPECT_FALSE(isTimingScalar("cache_hits"));
  EXPECT_FALSE(isTimingScalar("reward_seconds"));
}

TEST_F(RunFileTest, EmptyRecordIsWrittenAsZeroLengthDatasets) {
  RunRecord empty;
  ASSERT_NO_FATAL_FAILURE(expectRoundTrip(empty));

  Expected<Hdf5File> file = Hdf5File::open(this->file("run.h5"), OpenMode::ReadOnly);
  ASSERT_TRUE(file) << messageOf(file);
  for (const char* path : {"/config/keys",
                           "/config/values",
                           "/attributes/keys",
                           "/attributes/values",
                           "/modules/name",
                           "/modules/baseline_size",
                           "/validation_modules/name",
                           "/validation_modules/baseline_size",
                           "/failures/step",
                           "/failures/candidate",
                           "/failures/module",
                           "/failures/status",
                           "/failures/message",
                           "/failures/stderr_tail",
                           "/validation/step",
                           "/validation/mean_reward",
                           "/validation/total_reward",
                           "/policies/snapshots/step",
                           "/policies/snapshots/json",
                           "/policies/best/json",
                           "/policies/final/json",
                           "/checkpoint/policy_json"})
    EXPECT_EQ(valueOf(file->datasetShape(path)), Shape{0}) << path;
  for (const char* path : {"/steps/candidate_rewards", "/steps/modules", "/steps/sizes",
                           "/validation/sizes", "/validation/ok"})
    EXPECT_EQ(valueOf(file->datasetShape(path)), (Shape{0, 0})) << path;
  EXPECT_EQ(valueOf(file->datasetShape("/config/toml")), Shape{1});
  EXPECT_EQ(valueOf(file->readAttribute<int64_t>("/checkpoint", "step")), -1);
  EXPECT_EQ(valueOf(file->readAttribute<int64_t>("/policies/best", "step")), -1);
  EXPECT_EQ(valueOf(file->children("/checkpoint/optimizer_state")), std::vector<std::string>{});
}

TEST_F(RunFileTest, PartialRecordsRoundTrip) {
  // Behavioural cloning: losses per step, no candidates, no module tables.
  RunRecord bc;
  bc.trainer = "bc-train";
  bc.candidateRewards.assign(4, {});
  bc.stepScalars = {{"loss", {0.9, 0.5, 0.4, kNaN}}, {"accuracy", {0.5, 0.6, 0.7, 0.8}}};
  bc.finalPolicy = PolicySnapshot{4, ""};
  ASSERT_NO_FATAL_FAILURE(expectRoundTrip(bc, "bc.h5"));

  // Validation modules without validations, a checkpoint with empty state,
  // a best-policy metric chosen before any best policy.
  RunRecord early;
  early.validationModuleNames = {"a", "b"};
  early.validationBaselineSizes = {1, 2};
  early.bestPolicyMetric = "validation total reward";
  early.bestPolicyValue = -kInf;
  early.checkpoint = Checkpoint{};
  ASSERT_NO_FATAL_FAILURE(expectRoundTrip(early, "early.h5"));
  Expected<Hdf5File> file = Hdf5File::open(this->file("early.h5"), OpenMode::ReadOnly);
  ASSERT_TRUE(file) << messageOf(file);
  EXPECT_EQ(valueOf(file->datasetShape("/validation/sizes")), (Shape{0, 2}));
}

TEST_F(RunFileTest, KeysThatAreNotHdf5NamesAreEscaped) {
  std::filesystem::path path = file("run.h5");
  ASSERT_NO_FATAL_FAILURE(write(path, makeFullRecord()));
  Expected<Hdf5File> file = Hdf5File::open(path, OpenMode::ReadOnly);
  ASSERT_TRUE(file) << messageOf(file);
  EXPECT_EQ(valueOf(file->children("/steps")),
            (std::vector<std::string>{"%", "%2E", "%6Dodules", "%C3%BCn%C3%AF%01", "a%2Fb%25c",
                                      "candidate_rewards", "modules", "reward_mean",
                                      "seconds_evaluate", "sizes"}));
  EXPECT_EQ(valueOf(file->children("/checkpoint/optimizer_state")),
            (std::vector<std::string>{"%2E", "adam%2Fm", "empty", "mean", "nul%00key"}));
  EXPECT_EQ(valueOf(file->attributeNames("/checkpoint/optimizer_state")),
            (std::vector<std::string>{"%", "100%25", "generation", "rng%2Fcounter"}));
  // Config keys are stored as strings, as they are.
  EXPECT_EQ(valueOf(file->readVector<std::string>("/config/keys")),
            (std::vector<std::string>{"", "es.optimizer", "es.sigma", "paths/with/slashes"}));
}

TEST_F(RunFileTest, RecordsTheReaderWouldRefuseAreNotWritten) {
  std::filesystem::path path = file("run.h5");
  std::string prefix = path.string() + ": ";
  RunRecord good = makeFullRecord();

  RunRecord r = good;
  r.candidateRewards[2].push_back(0.5);
  EXPECT_EQ(writeError(path, r), prefix + "candidateRewards: step 2 has 3 values, step 0 has 2 "
                                          "(the rows of a run must have equal lengths)");
  r = good;
  r.stepSizes[1].pop_back();
  EXPECT_EQ(writeError(path, r), prefix + "stepSizes: step 1 has 3 values, step 0 has 4 (the "
                                          "rows of a run must have equal lengths)");
  r = good;
  r.stepScalars["reward_mean"].pop_back();
  EXPECT_EQ(writeError(path, r),
            prefix + "stepScalars[\"reward_mean\"]: has 2 values, expected 3 (one per step: "
                     "candidateRewards has 3 rows)");
  r = good;
  r.stepModules.pop_back();
  EXPECT_EQ(writeError(path, r), prefix + "stepModules: has 2 rows, expected 3 (one per step: "
                                          "candidateRewards has 3 rows) or none");
  r = good;
  for (auto& row : r.stepModules)
    row.push_back(0);
  EXPECT_EQ(writeError(path, r),
            prefix + "stepSizes: rows have 4 values, expected 2 candidates × 3 modules = 6");
  r = good;
  r.baselineSizes.pop_back();
  EXPECT_EQ(writeError(path, r), prefix + "baselineSizes: has 2 values, moduleNames has 3");
  r = good;
  r.validationModuleNames.push_back("extra");
  EXPECT_EQ(writeError(path, r),
            prefix + "validationBaselineSizes: has 2 values, validationModuleNames has 3");
  r = good;
  r.validations[1].ok.pop_back();
  EXPECT_EQ(writeError(path, r),
            prefix + "validations[1].ok: has 1 values, the run has 2 validation modules");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

TEST_F(RunFileTest, FailedWritesLeaveThePreviousFile) {
  std::filesystem::path path = file("run.h5");
  std::filesystem::path temporary = path.string() + ".tmp";
  RunRecord first = makeFullRecord();
  ASSERT_NO_FATAL_FAILURE(write(path, first));

  // Refused before writing: ragged rows.
  RunRecord ragged = first;
  ragged.stepSizes[0].push_back(1);
  EXPECT_NE(writeError(path, ragged).find(path.string() + ": stepSizes: step 1"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(temporary));

  // Refused by HDF5 halfway through the temporary file: a NUL in a string.
  RunRecord nul = first;
  nul.failures[0].stderrTail = std::string("core dumped\0", 12);
  EXPECT_EQ(writeError(path, nul),
            temporary.string() + ": /failures/stderr_tail: string 0 contains a NUL character, "
                                 "which HDF5 strings cannot hold");
  EXPECT_FALSE(std::filesystem::exists(temporary));

  // The temporary file cannot be created: a directory is in its way.
  std::filesystem::create_directory(temporary);
  EXPECT_NE(writeError(path, first).find(temporary.string()), std::string::npos);
  std::filesystem::remove(temporary);

  Expected<RunRecord> read = readRunFile(path);
  ASSERT_TRUE(read) << messageOf(read);
  EXPECT_TRUE(identical(*read, first)) << *firstDifference(*read, first);

  // A directory at `path`: refused before anything is written.
  std::filesystem::path directory = file("directory.h5");
  std::filesystem::create_directories(directory / "inside");
  EXPECT_EQ(writeError(directory, first),
            directory.string() + " is a directory; the output must be a regular file (it is "
                                 "written aside and renamed into place)");
  EXPECT_FALSE(std::filesystem::exists(directory.string() + ".tmp"));
}

// The disk fills while the new run file is written (RLIMIT_FSIZE makes
// writes past a size fail with EFBIG, as a full disk fails them with
// ENOSPC): the write reports an error and the previous run file is intact.
TEST_F(RunFileTest, DiskFullWhileWritingLeavesThePreviousFile) {
  std::filesystem::path path = file("run.h5");
  RunRecord first = makeFullRecord();
  ASSERT_NO_FATAL_FAILURE(write(path, first));
  RunRecord bigger = first;
  bigger.configToml = std::string(1 << 20, 'x'); // 1 MiB more than the limit allows
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {
      64 * 1024, 64 * 1024
    };
    setrlimit(RLIMIT_FSIZE, &limit);
    Status written = writeRunFile(path, bigger);
    _exit(written ? 0 : 3); // 3: the write failed, as it must
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "the write under a 64 KiB limit did not fail";
  Expected<RunRecord> read = readRunFile(path);
  ASSERT_TRUE(read) << messageOf(read);
  EXPECT_TRUE(identical(*read, first)) << *firstDifference(*read, first);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

// HDF5 locks open files, but the writer never opens `path` itself: a reader
// (h5py peeking at a running run) keeps the old file and does not block.
TEST_F(RunFileTest, OpenReadersDoNotBlockRewrites) {
  std::filesystem::path path = file("run.h5");
  RunRecord record = makeFullRecord();
  ASSERT_NO_FATAL_FAILURE(write(path, record));
  Expected<Hdf5File> reader = Hdf5File::open(path, OpenMode::ReadOnly);
  ASSERT_TRUE(reader) << messageOf(reader);

  record.trainer = "ppo-train";
  ASSERT_NO_FATAL_FAILURE(write(path, record));
  EXPECT_EQ(valueOf(reader->readAttribute<std::string>("/", "trainer")), "es-train");
  Expected<RunRecord> read = readRunFile(path);
  ASSERT_TRUE(read) << messageOf(read);
  EXPECT_EQ(read->trainer, "ppo-train");
}

TEST_F(RunFileTest, FilesThatAreNotRunFilesAreRejected) {
  std::filesystem::path missing = file("missing.h5");
  EXPECT_EQ(readError(missing), missing.string() + ": no such file");

  std::filesystem::path text = file("run.txt");
  std::ofstream(text) << "steps\n";
  EXPECT_EQ(readError(text), text.string() + ": not an HDF5 file");

  std::filesystem::path bare = file("bare.h5");
  ASSERT_TRUE(Hdf5File::create(bare));
  EXPECT_EQ(readError(bare), bare.string() + ": not an mlgo run file (no \"format\" attribute)");

  std::filesystem::path trace = file("trace.h5");
  {
    Expected<Hdf5File> file = Hdf5File::create(trace);
    ASSERT_TRUE(file) << messageOf(file);
    ASSERT_TRUE(file->writeAttribute("/", "format", "mlgo-trace"));
  }
  EXPECT_EQ(readError(trace),
            trace.string() +
                ": not an mlgo run file (format is \"mlgo-trace\", expected \"mlgo-run\")");

  std::filesystem::path newer = file("newer.h5");
  ASSERT_NO_FATAL_FAILURE(write(newer, makeFullRecord()));
  {
    Expected<Hdf5File> file = Hdf5File::open(newer, OpenMode::ReadWrite);
    ASSERT_TRUE(file) << messageOf(file);
    ASSERT_TRUE(file->writeAttribute<int64_t>("/", "version", kRunVersion + 1));
  }
  EXPECT_EQ(readError(newer), newer.string() + ": was written by a newer mlgo-es (run format "
                                               "version 2; this build reads 1)");
}

TEST_F(RunFileTest, InconsistentFilesAreRejected) {
  // Each case damages a fresh copy of a good file.
  auto damaged = [&](const std::string& name, auto damage) {
    std::filesystem::path path = file(name);
    write(path, makeFullRecord());
    Expected<Hdf5File> file = Hdf5File::open(path, OpenMode::ReadWrite);
    EXPECT_TRUE(file) << messageOf(file);
    if (!file)
      return path;
    damage(*file);
    EXPECT_TRUE(file->close());
    return path;
  };
  std::filesystem::path path = damaged("short-scalar.h5", [](Hdf5File& f) {
    ASSERT_TRUE(f.writeDataset<double>("/steps/loss", std::vector<double>{1, 2}));
  });
  EXPECT_EQ(readError(path), path.string() + ": /steps/loss: has 2 entries, expected 3 (one per "
                                             "row of /steps/candidate_rewards)");

  path = damaged("bad-name.h5", [](Hdf5File& f) {
    ASSERT_TRUE(f.writeDataset<double>("/steps/100%", std::vector<double>{1, 2, 3}));
  });
  EXPECT_EQ(readError(path), path.string() + ": /steps: \"100%\" is not a percent-encoded key");

  path = damaged("duplicate.h5", [](Hdf5File& f) {
    ASSERT_TRUE(f.writeDataset<double>("/steps/reward%5Fmean", std::vector<double>{1, 2, 3}));
  });
  EXPECT_EQ(readError(path), path.string() + ": /steps: key \"reward_mean\" appears twice");

  path = damaged("missing.h5", [](Hdf5File& f) {
    ASSERT_TRUE(f.writeDataset<double>("/failures/extra", std::vector<double>{}));
  });
  EXPECT_TRUE(readRunFile(path)) << "extra datasets outside /steps and states are ignored";

  // A file with the attributes but nothing else names the first dataset missing.
  path = file("hollow.h5");
  {
    Expected<Hdf5File> file = Hdf5File::create(path);
    ASSERT_TRUE(file) << messageOf(file);
    ASSERT_TRUE(file->writeAttribute("/", "format", "mlgo-run"));
    ASSERT_TRUE(file->writeAttribute<int64_t>("/", "version", 1));
    ASSERT_TRUE(file->writeAttribute("/", "trainer", "es-train"));
  }
  EXPECT_EQ(readError(path), path.string() + ": /config/toml: no such dataset");
}

// The size of a long ES run: 1000 steps of 64 candidates on 8 modules, and
// 100 snapshots of a 10k-parameter MLP.
TEST_F(RunFileTest, LargeRunWritesQuickly) {
  RunRecord r;
  r.trainer = "es-train";
  constexpr size_t kSteps = 1000, kCandidates = 64, kModules = 8, kSnapshots = 100;
  constexpr size_t kParameters = 10000;
  for (size_t m = 0; m < 200; ++m) {
    r.moduleNames.push_back("corpus/module" + std::to_string(m));
    r.baselineSizes.push_back(1000 + m);
  }
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> reward(-0.1, 0.1);
  for (const char* name : {"reward_mean", "reward_max", "reward_p50", "win_share", "gradient_norm",
                           "seconds_evaluate", "seconds_update"})
    r.stepScalars[name].reserve(kSteps);
  for (size_t s = 0; s < kSteps; ++s) {
    std::vector<double> rewards(kCandidates);
    for (double& value : rewards)
      value = reward(random);
    r.candidateRewards.push_back(std::move(rewards));
    std::vector<int64_t> modules(kModules);
    for (size_t m = 0; m < kModules; ++m)
      modules[m] = static_cast<int64_t>((s * 7 + m) % 200);
    r.stepModules.push_back(std::move(modules));
    std::vector<uint64_t> sizes(kCandidates * kModules);
    for (size_t i = 0; i < sizes.size(); ++i)
      sizes[i] = 1000 + (random() % 5000);
    r.stepSizes.push_back(std::move(sizes));
    for (auto& [name, values] : r.stepScalars)
      values.push_back(reward(random));
  }
  for (size_t s = 0; s < kSnapshots; ++s)
    r.snapshots.push_back({static_cast<int64_t>(s * 10), policyJson(kParameters, s)});
  r.finalPolicy = r.snapshots.back();
  r.bestPolicy = r.snapshots[50];
  Checkpoint& c = r.checkpoint.emplace();
  c.step = kSteps;
  c.optimizer = "sep-cma-es";
  c.policyJson = r.snapshots.back().policyJson;
  for (const char* name : {"mean", "sigma_path", "variance", "adam_m", "adam_v"})
    c.optimizerState.setVector(name, std::vector<double>(kParameters, 0.25));

  std::filesystem::path path = file("large.h5");
  auto start = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(write(path, r));
  auto written = std::chrono::steady_clock::now();
  Expected<RunRecord> read = readRunFile(path);
  auto readBack = std::chrono::steady_clock::now();
  ASSERT_TRUE(read) << messageOf(read);
  EXPECT_TRUE(identical(r, *read)) << *firstDifference(r, *read);

  auto milliseconds = [](auto duration) {
    return std::chrono::duration<double, std::milli>(duration).count();
  };
  std::printf("[          ] run file of %zu steps x %zu candidates x %zu modules and %zu "
              "snapshots (%.1f MB, %.0f KB per policy): written in %.1f ms, read in %.1f ms\n",
              kSteps, kCandidates, kModules, kSnapshots,
              static_cast<double>(std::filesystem::file_size(path)) / 1e6,
              static_cast<double>(r.snapshots[0].policyJson.size()) / 1e3,
              milliseconds(written - start), milliseconds(readBack - written));
}

// Researchers read run files with h5py: Debian's python3-h5py must see the
// schema of results/README.md.
TEST_F(RunFileTest, H5pyReadsTheRunFile) {
  std::filesystem::path path = file("run.h5");
  ASSERT_NO_FATAL_FAILURE(write(path, makeFullRecord()));
  std::filesystem::path empty = file("empty.h5");
  ASSERT_NO_FATAL_FAILURE(write(empty, RunRecord{}));

  ASSERT_NO_FATAL_FAILURE(runH5py(R"PY(
import json, math, sys
from urllib.parse import unquote
import h5py, numpy as np

with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["format"] == "mlgo-run" and isinstance(f.attrs["format"], str)
    assert f.attrs["version"] == 1 and f.attrs["version"].dtype == np.int64
    assert f.attrs["trainer"] == "es-train"
    assert f["config/toml"].asstr()[0].startswith("[es]\n")
    config = dict(zip(f["config/keys"].asstr()[()], f["config/values"].asstr()[()]))
    assert config["es.sigma"] == "0.02" and config["paths/with/slashes"] == "a\tb\nc", config

    # The learning curve, and every step scalar by its key.
    steps = f["steps"]
    curve = steps["reward_mean"][()]
    assert curve.dtype == np.float64 and curve.shape == (3,), (curve.dtype, curve.shape)
    assert curve[0] == 0.01 and math.isnan(curve[1]) and math.copysign(1, curve[2]) == -1
    tables = {"candidate_rewards", "modules", "sizes"}
    scalars = {unquote(name): steps[name][()] for name in steps if name not in tables}
    # unquote decodes every name but "%", the empty key.
    assert sorted(scalars) == ["%", ".", "a/b%c", "modules", "reward_mean", "seconds_evaluate",
                               "ünï\x01"], sorted(scalars)
    assert list(scalars["modules"]) == [1, 2, 3]
    assert scalars["a/b%c"][2] == 5e-324

    rewards = steps["candidate_rewards"]
    assert rewards.shape == (3, 2) and rewards.dtype == np.float64
    assert math.isnan(rewards[1, 0]) and rewards[0, 1] == -0.2
    assert steps["modules"].shape == (3, 2) and steps["modules"].dtype == np.int64
    sizes = steps["sizes"]
    assert sizes.shape == (3, 4) and sizes.dtype == np.uint64
    assert sizes[0].reshape(2, 2)[1, 0] == 1001  # candidate 1, module 0

    assert list(f["modules/name"].asstr()[()]) == ["lua/lapi", "lua/lvm", "zlib/deflate"]
    assert f["modules/baseline_size"][2] == 2**64 - 1

    failures = f["failures"]
    assert list(failures["step"][()]) == [1, -1] and list(failures["candidate"][()]) == [0, -1]
    assert list(failures["status"].asstr()[()]) == ["timed-out", "baseline-unavailable"]
    assert failures["message"].asstr()[0] == "timed out after 17 decisions"
    tail = failures["stderr_tail"].asstr(errors="replace")[0]
    assert tail.startswith("clang: warning: ") and tail.endswith(" not UTF-8\n"), tail

    v = f["validation"]
    assert list(v["step"][()]) == [0, 2]
    assert v["sizes"].shape == (2, 2) and v["sizes"].dtype == np.uint64
    assert v["ok"][()].tolist() == [[1, 1], [0, 1]]
    assert math.isnan(v["mean_reward"][1]) and v["total_reward"][0] == 0.011

    snapshots = f["policies/snapshots"]
    assert list(snapshots["step"][()]) == [0, 2]
    policy = json.loads(snapshots["json"].asstr()[1])
    assert policy["format"] == "mlgo-es-policy" and len(policy["parameters"]) == 50
    best = f["policies/best"]
    assert best.attrs["step"] == 2 and best.attrs["metric"] == "validation total reward"
    assert best.attrs["value"] == 0.011 and json.loads(best["json"].asstr()[0]) == policy
    assert f["policies/final"].attrs["step"] == 3 and len(f["policies/final/json"]) == 1

    c = f["checkpoint"]
    assert c.attrs["step"] == 3 and c.attrs["optimizer"] == "gradient-es"
    assert c.attrs["elapsed_seconds"] == 123.5
    assert json.loads(c["policy_json"].asstr()[0])["kind"] == "mlp"
    state = c["optimizer_state"]
    integers = {unquote(k): int(v) for k, v in state.attrs.items()}
    assert integers["generation"] == 3 and integers["rng/counter"] == -2**63, integers
    assert integers["100%"] == -1 and integers["%"] == 7  # "%" is the empty key
    vectors = {unquote(k): state[k][()] for k in state}
    assert vectors["adam/m"].tolist() == [1e-300, -1e300] and vectors["empty"].shape == (0,)
    assert c["trainer_state"].attrs["best_step"] == 2

# The snippet of results/README.md, as it is there.
import numpy as np
from urllib.parse import unquote

with h5py.File(sys.argv[1], "r") as f:
    steps = f["steps"]
    curve = steps["reward_mean"][()]                  # [S], NaN: no candidate compiled
    rewards = steps["candidate_rewards"][()]          # [S, K], NaN: that candidate failed
    scalars = {unquote(name): steps[name][()] for name in steps
               if name not in ("candidate_rewards", "modules", "sizes")}
    K, M = rewards.shape[1], steps["modules"].shape[1]
    sizes = steps["sizes"][()].reshape(len(steps["sizes"]), K, M)  # [S, K, M]
    validation = f["validation/step"][()], f["validation/total_reward"][()]
    failed = f["failures/status"].asstr()[()]
    final = f["policies/final/json"].asstr()[()]      # [1], or [0] while the run goes on
    policy = json.loads(final[0]) if len(final) else None
assert sizes[0, 1, 0] == 1001 and policy["kind"] == "mlp" and len(scalars) == 7

with h5py.File(sys.argv[2], "r") as f:
    sizes = f["steps/sizes"][()].reshape(len(f["steps/sizes"]), 0, 0)
    assert f["steps/candidate_rewards"].shape == (0, 0)
    assert [k for k in f["steps"]] == ["candidate_rewards", "modules", "sizes"]
    assert f["failures/module"].asstr()[()].shape == (0,)
    assert len(f["policies/snapshots/json"].asstr()[()]) == 0
    assert len(f["checkpoint/policy_json"]) == 0 and f["checkpoint"].attrs["step"] == -1
print("h5py ok")
)PY",
                                  {path, empty}));
}

} // namespace
} // namespace mlgo::results
