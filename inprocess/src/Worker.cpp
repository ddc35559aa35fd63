#include "mlgo/inprocess/Worker.h"

#include "EvictionCompiler.h"
#include "InProcessCompiler.h"
#include "PipelineCompiler.h"
#include "RegAllocMeasure.h"
#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/CompilerTask.h"

#include "mlgo/evaluators/WorkerProtocol.h"
#include "mlgo/policies/PolicyFile.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

namespace mlgo::inprocess {

namespace {

namespace protocol = evaluators::protocol;

// A test hook, so the crash and hang paths are exercised with a real worker:
// MLGO_WORKER_FAULT=abort:<module>, kill:<module> or hang:<module> makes this
// worker abort, die by SIGKILL (as by the OOM killer) or stop answering when
// it is given that module under a policy (plain -Oz compiles of it still
// work, so its baseline can be measured). random-kill:<p> kills the worker
// before a policy job with probability p (a soak test of the pool).
void injectFault(const std::string& module) {
  const char* fault = std::getenv("MLGO_WORKER_FAULT");
  if (!fault)
    return;
  std::string spec = fault;
  if (spec == "abort:" + module)
    std::abort();
  if (spec == "kill:" + module)
    ::raise(SIGKILL);
  if (spec.rfind("random-kill:", 0) == 0) {
    static std::mt19937_64 draws{std::random_device{}()};
    if (std::uniform_real_distribution<double>(0, 1)(draws) < std::atof(spec.c_str() + 12))
      ::raise(SIGKILL);
  }
  if (spec == "hang:" + module)
    std::this_thread::sleep_for(std::chrono::hours(1));
}

// The job by its task's route; `policy` null: the task's baseline.
protocol::ResultMessage runJob(const protocol::JobMessage& job, const policies::Policy* policy,
                               const CacheQuestion& askCache) {
  switch (job.route) {
  case evaluators::InProcessRoute::InlineAdvisor:
    return compileModule(job, policy, askCache);
  case evaluators::InProcessRoute::EvictionChannel:
    return compileEviction(job, policy);
  case evaluators::InProcessRoute::PassPipeline:
    return compilePipeline(job, policy);
  case evaluators::InProcessRoute::None:
    break;
  }
  protocol::ResultMessage refused;
  refused.status = protocol::WorkerStatus::Unsupported;
  refused.message = "the in-process worker cannot run the task " + job.taskName + " (route " +
                    std::to_string(static_cast<int>(job.route)) + ")";
  return refused;
}

struct StoredPolicy {
  std::unique_ptr<policies::Policy> policy;
  std::string error; // why the JSON did not give a policy
};

} // namespace

int runWorker(int input, int output) {
  initialiseTargets();
  std::map<uint64_t, StoredPolicy> policies;
  uint64_t generation = 0;
  auto protocolError = [](const std::string& what) {
    std::fprintf(stderr, "mlgo-inprocess-worker: %s\n", what.c_str());
    return 2;
  };

  // The trainer answers a cache question before anything else on the pipe.
  CacheQuestion askCache = [&](const protocol::CacheQueryMessage& query) {
    if (!protocol::writeFrame(output, protocol::MessageKind::CacheQuery, protocol::encode(query)))
      return false;
    Expected<std::optional<protocol::Frame>> frame = protocol::readFrame(input);
    if (!frame || !*frame || (*frame)->kind != protocol::MessageKind::CacheAnswer)
      std::exit(protocolError("expected a cache answer"));
    Expected<protocol::CacheAnswerMessage> answer = protocol::decodeCacheAnswer((*frame)->payload);
    return answer && answer->known;
  };

  while (true) {
    Expected<std::optional<protocol::Frame>> frame = protocol::readFrame(input);
    if (!frame)
      return protocolError(frame.error().message);
    if (!*frame)
      return 0; // the trainer is done with this worker
    switch ((*frame)->kind) {
    case protocol::MessageKind::Policy: {
      Expected<protocol::PolicyMessage> message = protocol::decodePolicy((*frame)->payload);
      if (!message)
        return protocolError(message.error().message);
      if (message->generation > generation) {
        policies.clear();
        generation = message->generation;
      }
      StoredPolicy stored;
      Expected<std::unique_ptr<policies::Policy>> policy =
          policies::policyFromJson(message->json, "policy " + std::to_string(message->id));
      if (policy)
        stored.policy = policy.take();
      else
        stored.error = policy.error().message;
      policies[message->id] = std::move(stored);
      break;
    }
    case protocol::MessageKind::Job: {
      Expected<protocol::JobMessage> job = protocol::decodeJob((*frame)->payload);
      if (!job)
        return protocolError(job.error().message);
      if (job->policyId != 0)
        injectFault(job->moduleName);
      protocol::ResultMessage result;
      const policies::Policy* policy = nullptr;
      if (job->policyId != 0) {
        auto it = policies.find(job->policyId);
        if (it == policies.end()) {
          result.status = protocol::WorkerStatus::SetupFailed;
          result.message = "policy " + std::to_string(job->policyId) + " was never sent";
        } else if (!it->second.policy) {
          result.status = protocol::WorkerStatus::SetupFailed;
          result.message = it->second.error;
        } else {
          policy = it->second.policy.get();
        }
      }
      if (job->policyId == 0 || policy)
        result = runJob(*job, policy, askCache);
      if (!protocol::writeFrame(output, protocol::MessageKind::Result, protocol::encode(result)))
        return protocolError("cannot send a result");
      break;
    }
    default:
      return protocolError("unexpected message kind " +
                           std::to_string(static_cast<uint32_t>((*frame)->kind)));
    }
  }
}

int printRegAllocMeasures(const char* corpusDirectory) {

  Expected<corpus::Corpus> loaded = corpus::Corpus::load(corpusDirectory);
  if (!loaded) {
    std::fprintf(stderr, "error: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const std::string object =
      std::getenv("MLGO_KEEP_OBJECT")
          ? std::string(std::getenv("MLGO_KEEP_OBJECT"))
          : "/dev/shm/mlgo-regalloc-measure-" + std::to_string(getpid()) + ".o";
  int failures = 0;
  for (const corpus::ModuleSpec& module : loaded->modules()) {
    Expected<std::vector<std::string>> command =
        corpus::buildCompileCommand(module, corpus::CommandLineFilters{}, object);
    std::string diagnostics;
    Expected<RegAllocMeasure> measure =
        command ? measureRegAlloc(*command, {".text", ".text."}, diagnostics)
                : Expected<RegAllocMeasure>(command.error());
    if (!measure) {
      std::printf("%s\terror: %s\n", module.name.c_str(), measure.error().message.c_str());
      ++failures;
      continue;
    }
    std::printf("%s\t%.17g\t%zu\t%llu\t%016llx\n", module.name.c_str(), measure->score,
                measure->functions, static_cast<unsigned long long>(measure->code.bytes),
                static_cast<unsigned long long>(measure->code.hash));
  }
  if (!std::getenv("MLGO_KEEP_OBJECT"))
    std::remove(object.c_str());
  return failures == 0 ? 0 : 1;
}

} // namespace mlgo::inprocess
