// mlgo-inprocess-worker --module-features (mlgo/inprocess/Worker.h).
#include "ModuleFeatures.h"
#include "mlgo/inprocess/Worker.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdio>

namespace mlgo::inprocess {

int printModuleFeatures(int files, char** paths) {
  std::printf("module");
  for (const std::string& name : policies::moduleCountNames())
    std::printf("\t%s", name.c_str());
  std::printf("\n");
  for (int i = 0; i < files; ++i) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(paths[i]);
    if (!buffer) {
      std::fprintf(stderr, "%s: %s\n", paths[i], buffer.getError().message().c_str());
      return 1;
    }
    llvm::LLVMContext context;
    llvm::Expected<std::unique_ptr<llvm::Module>> module =
        llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), context);
    if (!module) {
      std::fprintf(stderr, "%s: not LLVM bitcode: %s\n", paths[i],
                   llvm::toString(module.takeError()).c_str());
      return 1;
    }
    std::printf("%s", paths[i]);
    for (uint64_t value : countModule(**module))
      std::printf("\t%llu", static_cast<unsigned long long>(value));
    std::printf("\n");
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace mlgo::inprocess
