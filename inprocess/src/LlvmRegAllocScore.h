// LLVM 22 exports calculateRegAllocScore from libLLVM but keeps its header
// (lib/CodeGen/RegAllocScore.h) private. Declared here as LLVM 22 defines
// them: the score is six doubles (copies, loads, stores, cheap
// rematerialisations, load-stores, expensive rematerialisations, in that
// order) whose weighted sum getScore() gives. Shared by the in-process
// measure and the tests' reference computation.
#pragma once

namespace llvm {
class MachineBlockFrequencyInfo;
class MachineFunction;

class RegAllocScore final {
public:
  double copies = 0, loads = 0, stores = 0, cheapRemats = 0, loadStores = 0, expensiveRemats = 0;
  double getScore() const;
};
RegAllocScore calculateRegAllocScore(const MachineFunction& MF,
                                     const MachineBlockFrequencyInfo& MBFI);
} // namespace llvm
