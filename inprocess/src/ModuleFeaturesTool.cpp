// mlgo-inprocess-worker --module-features (mlgo/inprocess/Worker.h).
#include "ModuleFeatures.h"
#include "mlgo/inprocess/Worker.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdio>
#include <memory>
#include <string_view>

namespace mlgo::inprocess {

int printModuleFeatures(int files, char** paths) {
  // --embedding VOCAB.json: the IR2Vec part too (policies::moduleEmbeddingNames).
  std::unique_ptr<ModuleEmbedder> embedder;
  size_t dimension = 0;
  if (files >= 2 && std::string_view(paths[0]) == "--embedding") {
    Expected<policies::Ir2VecVocabulary> vocabulary = policies::readIr2VecVocabulary(paths[1]);
    if (!vocabulary) {
      std::fprintf(stderr, "%s\n", vocabulary.error().message.c_str());
      return 1;
    }
    dimension = policies::ir2VecDimension(*vocabulary);
    embedder = std::make_unique<ModuleEmbedder>(*vocabulary);
    files -= 2;
    paths += 2;
  }
  std::printf("module");
  for (const std::string& name : policies::moduleCountNames())
    std::printf("\t%s", name.c_str());
  for (const std::string& name : policies::moduleEmbeddingNames(dimension))
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
    if (embedder)
      for (double value : embedder->embed(**module))
        std::printf("\t%.17g", value);
    std::printf("\n");
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace mlgo::inprocess
