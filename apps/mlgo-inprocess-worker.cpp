// mlgo-inprocess-worker: started by the evaluator (--backend=inprocess), never
// by hand. Reads jobs on file descriptor 3 and writes results on 4 (see
// evaluators/WorkerProtocol.h); clang's diagnostics and crash reports go to
// stderr, which the evaluator keeps in a log for the record.
#include "mlgo/inprocess/Worker.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Signals.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: %s [--llvm-option=OPTION]...\n  An in-process compile worker of mlgo-es: "
                "reads jobs on fd 3,\n  writes results on fd 4. Started by the evaluator "
                "(--backend=inprocess).\n  --llvm-option: a process-global LLVM option the "
                "task needs (as clang's -mllvm),\n  applied once before the first job.\n"
                "  --module-features [--embedding VOCAB.json] FILE.bc...: each module's counts\n"
                "  (a TSV) for a module-level pipeline policy, with the vocabulary also its\n"
                "  IR2Vec embedding per instruction, and exit.\n",
                argv[0]);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[1], "--measure-regalloc") == 0)
    return mlgo::inprocess::printRegAllocMeasures(argv[2]);
  if (argc > 1 && std::strcmp(argv[1], "--module-features") == 0)
    return mlgo::inprocess::printModuleFeatures(argc - 2, argv + 2);
  if (fcntl(3, F_GETFD) < 0 || fcntl(4, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "%s: expects the job pipe on fd 3 and the result pipe on fd 4; it is "
                 "started by the evaluator, not by hand\n",
                 argv[0]);
    return 2;
  }
  // The task's process-global LLVM options (e.g. IR2Vec's vocabulary), once.
  constexpr std::string_view prefix = "--llvm-option=";
  std::vector<const char*> llvmArguments{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string_view argument = argv[i];
    if (argument.substr(0, prefix.size()) != prefix) {
      std::fprintf(stderr, "%s: unknown argument %s\n", argv[0], argv[i]);
      return 2;
    }
    llvmArguments.push_back(argv[i] + prefix.size());
  }
  if (llvmArguments.size() > 1 &&
      !llvm::cl::ParseCommandLineOptions(static_cast<int>(llvmArguments.size()),
                                         llvmArguments.data(), "", &llvm::errs()))
    return 2;
  // A crash prints LLVM's stack trace to the log before the signal ends us.
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  return mlgo::inprocess::runWorker(3, 4);
}
