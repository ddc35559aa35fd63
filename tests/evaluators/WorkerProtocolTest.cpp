// The trainer-worker protocol: every message survives encode/decode exactly,
// frames cross a real pipe, and truncated or foreign bytes are errors, never
// crashes or silent garbage.
#include "mlgo/evaluators/WorkerProtocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

namespace mlgo::evaluators::protocol {
namespace {

ResultMessage sampleResult() {
  ResultMessage m;
  m.status = WorkerStatus::Ok;
  m.message = "module \"a.o\": fine";
  m.diagnostics = std::string("warning\0with nul", 16);
  m.sizeBytes = 12345;
  m.codeHash = 0xfeedfacecafebeefULL;
  m.comdat = {{0x1234, 40}, {0xfedc, 8}};
  m.decisions = 2;
  m.cacheHit = true;
  m.decisionsAfterQuery = true;
  policies::Trajectory t;
  t.featureSpecs = {{"callee_users", policies::TensorType::Int64, {1}, 0},
                    {"embedding", policies::TensorType::Float, {3}, 1}};
  t.width = 4;
  t.observations = {1, 0.5, -2, 3e300, 7, 8, 9, -0.0};
  t.defaultDecisions = {1, -1};
  t.actions = {0, 1};
  t.logProbabilities = {-0.25, -1.5};
  m.trajectory = t;
  m.reuse = {.reused = 40, .generated = 7, .retried = 1};
  m.times = {0.5, 0.01, 0.125, 0.03, 0.25, 0.002, 0.004};
  return m;
}

TEST(WorkerProtocol, MessagesRoundTripExactly) {
  JobMessage job;
  job.policyId = 7;
  job.mode = policies::DecisionMode::Sampling;
  job.rngKey = 0x123456789abcdefULL;
  job.recordTrajectory = true;
  job.recordDefaults = false;
  job.consultCache = true;
  job.defaultDecisionFeature = "inlining_default";
  job.sizeSections = {".text", ".text."};
  job.arguments = {"-cc1", "-Oz", "", "-o", "/dev/shm/x.o"};
  job.moduleName = "src/lvm.o";
  job.route = InProcessRoute::EvictionChannel;
  job.taskName = "a-task";
  job.adviceName = "an_advice";
  job.neutralAdvice = -32;
  job.trials = {{3, 0xfeedULL}, {17, 0xbeefULL}};
  job.trialSeconds = 12.5;
  Expected<JobMessage> j = decodeJob(encode(job));
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ(j->policyId, 7u);
  EXPECT_EQ(j->mode, policies::DecisionMode::Sampling);
  EXPECT_EQ(j->rngKey, job.rngKey);
  EXPECT_TRUE(j->recordTrajectory && j->consultCache);
  EXPECT_FALSE(j->recordDefaults);
  EXPECT_EQ(j->defaultDecisionFeature, job.defaultDecisionFeature);
  EXPECT_EQ(j->sizeSections, job.sizeSections);
  EXPECT_EQ(j->arguments, job.arguments);
  EXPECT_EQ(j->moduleName, job.moduleName);
  EXPECT_EQ(j->route, job.route);
  EXPECT_EQ(j->taskName, job.taskName);
  EXPECT_EQ(j->adviceName, job.adviceName);
  EXPECT_EQ(j->neutralAdvice, job.neutralAdvice);
  ASSERT_EQ(j->trials.size(), 2u);
  EXPECT_EQ(j->trials[1].position, 17u);
  EXPECT_EQ(j->trials[1].state, 0xbeefULL);
  EXPECT_EQ(j->trialSeconds, 12.5);

  Expected<PolicyMessage> p = decodePolicy(encode(PolicyMessage{3, 9, "{\"kind\":\"heuristic\"}"}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 3u);
  EXPECT_EQ(p->generation, 9u);
  EXPECT_EQ(p->json, "{\"kind\":\"heuristic\"}");

  Expected<CacheQueryMessage> q = decodeCacheQuery(encode(CacheQueryMessage{1, 2, 3}));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->hashLow, 1u);
  EXPECT_EQ(q->hashHigh, 2u);
  EXPECT_EQ(q->decisions, 3u);
  Expected<CacheAnswerMessage> a = decodeCacheAnswer(encode(CacheAnswerMessage{true}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->known);

  ResultMessage result = sampleResult();
  Expected<ResultMessage> r = decodeResult(encode(result));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, result.status);
  EXPECT_EQ(r->message, result.message);
  EXPECT_EQ(r->diagnostics, result.diagnostics);
  EXPECT_EQ(r->sizeBytes, result.sizeBytes);
  EXPECT_EQ(r->codeHash, result.codeHash);
  EXPECT_EQ(r->comdat, result.comdat);
  EXPECT_EQ(r->decisions, result.decisions);
  EXPECT_TRUE(r->cacheHit && r->decisionsAfterQuery);
  ASSERT_TRUE(r->trajectory);
  EXPECT_EQ(r->trajectory->featureSpecs, result.trajectory->featureSpecs);
  EXPECT_EQ(r->trajectory->width, 4u);
  EXPECT_EQ(r->trajectory->observations, result.trajectory->observations);
  EXPECT_TRUE(std::signbit(r->trajectory->observations.back()));
  EXPECT_EQ(r->trajectory->defaultDecisions, result.trajectory->defaultDecisions);
  EXPECT_EQ(r->trajectory->actions, result.trajectory->actions);
  EXPECT_EQ(r->trajectory->logProbabilities, result.trajectory->logProbabilities);
  EXPECT_EQ(r->reuse.reused, 40u);
  EXPECT_EQ(r->reuse.generated, 7u);
  EXPECT_EQ(r->reuse.retried, 1u);
  EXPECT_EQ(r->times.shared, 0.5);
  EXPECT_EQ(r->times.inliner, 0.125);
  EXPECT_EQ(r->times.handover, 0.004);
  EXPECT_DOUBLE_EQ(r->times.paid(), 0.01 + 0.125 + 0.03 + 0.25 + 0.002 + 0.004);

  // A trial job's answer: one result per trial, each whole.
  ResultMessage trials;
  trials.status = WorkerStatus::Ok;
  trials.trials = {sampleResult(), ResultMessage{}};
  trials.trials[1].status = WorkerStatus::NotIncremental;
  trials.trials[1].message = "state met before its position";
  Expected<ResultMessage> t = decodeResult(encode(trials));
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->trials.size(), 2u);
  EXPECT_EQ(t->trials[0].sizeBytes, result.sizeBytes);
  ASSERT_TRUE(t->trials[0].trajectory);
  EXPECT_EQ(t->trials[0].trajectory->actions, result.trajectory->actions);
  EXPECT_EQ(t->trials[1].status, WorkerStatus::NotIncremental);
  EXPECT_EQ(t->trials[1].message, trials.trials[1].message);
}

TEST(WorkerProtocol, TruncatedOrPaddedPayloadsAreRejected) {
  std::string bytes = encode(sampleResult());
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    Expected<ResultMessage> r = decodeResult(bytes.substr(0, cut));
    ASSERT_FALSE(r) << "accepted " << cut << " of " << bytes.size() << " bytes";
    EXPECT_NE(r.error().message.find("malformed result"), std::string::npos);
  }
  EXPECT_FALSE(decodeResult(bytes + "x"));
  // A length field far beyond the payload must not allocate or read past it.
  std::string hostile = encode(PolicyMessage{1, 1, "abc"});
  hostile[16] = '\xff';
  hostile[23] = '\x7f';
  EXPECT_FALSE(decodePolicy(hostile));
}

TEST(WorkerProtocol, FramesCrossAPipeAndEndCleanly) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_TRUE(writeFrame(fds[1], MessageKind::CacheAnswer, encode(CacheAnswerMessage{true})));
  ASSERT_TRUE(writeFrame(fds[1], MessageKind::Job, ""));
  ::close(fds[1]);
  Expected<std::optional<Frame>> first = readFrame(fds[0]);
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->kind, MessageKind::CacheAnswer);
  EXPECT_TRUE(decodeCacheAnswer((*first)->payload)->known);
  Expected<std::optional<Frame>> second = readFrame(fds[0]);
  ASSERT_TRUE(second && *second);
  EXPECT_EQ((*second)->kind, MessageKind::Job);
  EXPECT_TRUE((*second)->payload.empty());
  Expected<std::optional<Frame>> end = readFrame(fds[0]);
  ASSERT_TRUE(end);
  EXPECT_FALSE(*end) << "a clean end of file is not a frame";
  ::close(fds[0]);

  // A writer that dies inside a frame leaves an error, not a short frame.
  ASSERT_EQ(::pipe(fds), 0);
  std::string header(12, '\0');
  header[0] = 2;
  header[4] = 100; // promises 100 bytes
  ASSERT_EQ(::write(fds[1], header.data(), header.size()), 12);
  ASSERT_EQ(::write(fds[1], "abc", 3), 3);
  ::close(fds[1]);
  Expected<std::optional<Frame>> cut = readFrame(fds[0]);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("3 of 100"), std::string::npos) << cut.error().message;
  ::close(fds[0]);
}

} // namespace
} // namespace mlgo::evaluators::protocol
