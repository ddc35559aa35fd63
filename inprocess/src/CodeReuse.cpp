#include "CodeReuse.h"

#include <llvm/CodeGen/MachineFunction.h>
#include <llvm/CodeGen/MachineFunctionPass.h>
#include <llvm/IR/AssemblyAnnotationWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/GlobalIFunc.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ModuleSlotTracker.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace mlgo::inprocess {

namespace {

using Key = std::pair<uint64_t, uint64_t>; // xxh3-128 of a function's description

struct CachedCode {
  std::string bytes;
  uint64_t alignment = 1;
  // Calls to functions with local binding: the assembler resolves them, so
  // their 4-byte displacement depends on the layout. The placeholder writes
  // an expression there (`.long callee - . - 4`) for the assembler to
  // resolve again. (offset of the displacement, callee's symbol)
  std::vector<std::pair<uint32_t, std::string>> calls;
};

struct ModuleCache {
  std::map<Key, CachedCode> functions;
  size_t bytes = 0;
  uint64_t lastUse = 0;
};

// The worker's cache: one compile at a time uses it (a worker is
// single-threaded while it compiles), forked trials read their own copy.
struct Cache {
  std::unordered_map<std::string, ModuleCache> modules;
  size_t bytes = 0;
  size_t budget = size_t{256} << 20;
  uint64_t clock = 0;

  ModuleCache& use(const std::string& module) {
    ModuleCache& entry = modules[module];
    entry.lastUse = ++clock;
    return entry;
  }
  void add(ModuleCache& entry, const Key& key, CachedCode code) {
    size_t size = code.bytes.size() + sizeof(Key) + sizeof(CachedCode);
    for (const auto& call : code.calls)
      size += sizeof(call) + call.second.size();
    if (!entry.functions.emplace(key, std::move(code)).second)
      return;
    entry.bytes += size;
    bytes += size;
  }
  // Forgets the least recently used modules until the cache fits.
  void shrink(const std::string& keep) {
    while (bytes > budget && modules.size() > 1) {
      auto oldest = modules.end();
      for (auto it = modules.begin(); it != modules.end(); ++it)
        if (it->first != keep &&
            (oldest == modules.end() || it->second.lastUse < oldest->second.lastUse))
          oldest = it;
      if (oldest == modules.end())
        break;
      bytes -= oldest->second.bytes;
      modules.erase(oldest);
    }
  }
};

Cache& cache() {
  static Cache instance;
  return instance;
}

// Length-prefixed, so that no two descriptions run into each other.
void put(std::string& out, std::string_view text) {
  out += std::to_string(text.size());
  out += ':';
  out += text;
}

// The printed IR with module-wide numbers (metadata !N, attribute groups #N)
// left out: they change when other functions change. Quoted text is kept.
std::string withoutModuleNumbers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    out += c;
    if (c == '"' && (i == 0 || text[i - 1] != '\\'))
      quoted = !quoted;
    if (!quoted && (c == '!' || c == '#'))
      while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))
        ++i;
  }
  return out;
}

// Inline assembly the assembler may size by where it lands: any but the
// empty statement (a compiler barrier). Its text is the programmer's: it can
// align (zstd's loops `.p2align 5` themselves), set the location counter or
// name another function, none of which the key or the placeholder can see.
bool assemblesByPlace(const llvm::CallBase& call) {
  const auto* assembly = llvm::dyn_cast<llvm::InlineAsm>(call.getCalledOperand());
  return assembly && !llvm::StringRef(assembly->getAsmString()).trim().empty();
}

bool attributeInstruments(const llvm::Attribute& attribute) {
  if (!attribute.isStringAttribute())
    return false;
  const llvm::StringRef kind = attribute.getKindAsString();
  for (const char* word : {"patchable", "instrument", "xray", "fentry", "mcount", "prefix"})
    if (kind.contains(word))
      return true;
  return false;
}

// Every function's text from one printing of the module. (Printing
// instruction by instruction costs far more: each print makes an assembly
// writer, which scans the module's globals and, for a named type, all its
// types.)
class FunctionTexts final : public llvm::AssemblyAnnotationWriter {
public:
  explicit FunctionTexts(const llvm::Module& module) {
    llvm::raw_string_ostream os(text_);
    module.print(os, this);
  }

  // The function's header and blocks as printed; empty if not found.
  std::string_view of(const llvm::Function& function) const {
    auto span = spans_.find(&function);
    if (span == spans_.end() || span->second.second <= span->second.first ||
        span->second.second > text_.size())
      return {};
    return std::string_view(text_).substr(span->second.first,
                                          span->second.second - span->second.first);
  }

  void emitFunctionAnnot(const llvm::Function* function, llvm::formatted_raw_ostream& os) override {
    spans_[function] = {os.tell(), os.tell()};
  }
  void emitBasicBlockEndAnnot(const llvm::BasicBlock* block,
                              llvm::formatted_raw_ostream& os) override {
    spans_[block->getParent()].second = os.tell();
  }

private:
  std::string text_;
  std::unordered_map<const llvm::Function*, std::pair<uint64_t, uint64_t>> spans_;
};

// Describes what code generation reads of one function; `reusable` false
// where its bytes can depend on where it lands or on more than that.
class Describer {
public:
  explicit Describer(const llvm::Module& module)
      : module_(module), slots_(&module, false), texts_(module),
        // Calls to local functions are patched by CodeReuse::learn, which
        // reads x86-64 code only.
        localCalls_(module.getTargetTriple().getArch() == llvm::Triple::x86_64) {
    llvm::raw_string_ostream os(context_);
    os << module.getTargetTriple().str() << '\n' << module.getDataLayoutStr() << '\n';
    put(context_, module.getModuleInlineAsm());
    std::map<const llvm::Metadata*, size_t> seen;
    llvm::SmallVector<llvm::Module::ModuleFlagEntry, 8> flags;
    module.getModuleFlagsMetadata(flags);
    for (const llvm::Module::ModuleFlagEntry& flag : flags) {
      put(context_, flag.Key->getString());
      context_ += std::to_string(static_cast<int>(flag.Behavior));
      writeMetadata(flag.Val, context_, seen);
      const llvm::StringRef key = flag.Key->getString();
      if (key.starts_with("cf-protection") || key == "kcfi" || key.contains("sanitize"))
        if (const auto* value = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(flag.Val);
            !value || !value->isZero())
          moduleReusable_ = false;
    }
  }

  bool moduleReusable() const { return moduleReusable_; }

  struct Description {
    Key key;
    bool reusable = false;
  };

  // The function's key, and whether its bytes may be reused.
  Description describe(const llvm::Function& function) {
    std::string out = context_;
    bool reusable = moduleReusable_ && !function.hasPrefixData() && !function.hasPrologueData() &&
                    !function.hasMetadata(llvm::LLVMContext::MD_func_sanitize) &&
                    !function.hasMetadata(llvm::LLVMContext::MD_kcfi_type);
    for (const llvm::Attribute& attribute : function.getAttributes().getFnAttrs())
      reusable &= !attributeInstruments(attribute);
    out += global(function);
    llvm::SmallVector<std::pair<unsigned, llvm::MDNode*>, 4> attached;
    function.getAllMetadata(attached);
    std::map<const llvm::Metadata*, size_t> seen;
    for (const auto& [kind, node] : attached)
      if (kind != llvm::LLVMContext::MD_dbg) {
        out += 'M' + std::to_string(kind);
        writeMetadata(node, out, seen);
      }
    if (function.hasPersonalityFn())
      reusable &= constant(function.getPersonalityFn(), out);
    // The body as printed (local numbering), then what printing leaves out
    // or numbers module-wide, instruction by instruction.
    const std::string_view text = texts_.of(function);
    if (text.empty())
      reusable = false;
    put(out, withoutModuleNumbers(text));
    slots_.incorporateFunction(function);
    std::unordered_set<const llvm::GlobalValue*> referenced;
    for (const llvm::BasicBlock& block : function) {
      out += "\nblock";
      for (const llvm::Instruction& instruction : block) {
        out += ';';
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction)) {
          put(out, attributes(call->getAttributes()));
          reusable &= !assemblesByPlace(*call);
        }
        llvm::SmallVector<std::pair<unsigned, llvm::MDNode*>, 4> metadata;
        instruction.getAllMetadataOtherThanDebugLoc(metadata);
        for (const auto& [kind, node] : metadata) {
          out += 'M' + std::to_string(kind);
          writeMetadata(node, out, seen);
        }
        for (const llvm::Use& operand : instruction.operands()) {
          if (const auto* value = llvm::dyn_cast<llvm::MetadataAsValue>(operand.get()))
            writeMetadata(value->getMetadata(), out, seen);
          else if (const auto* c = llvm::dyn_cast<llvm::Constant>(operand.get())) {
            // A call of a local function becomes a `call` whose
            // displacement learn() finds and the placeholder recomputes, or
            // (in tail position) a jump the assembler sizes by distance,
            // which learn() finds too and then keeps nothing.
            const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
            const bool localCallee = localCalls_ && call && call->isCallee(&operand) &&
                                     llvm::isa<llvm::Function>(c) &&
                                     llvm::cast<llvm::Function>(c)->hasLocalLinkage();
            reusable &= constant(c, out, &referenced, localCallee);
          }
        }
      }
    }
    return {hash(out), reusable};
  }

private:
  static Key hash(const std::string& text) {
    llvm::XXH128_hash_t h = llvm::xxh3_128bits(
        llvm::ArrayRef(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return {h.low64, h.high64};
  }

  static std::string attributes(const llvm::AttributeList& list) {
    std::string out;
    for (unsigned index : list.indexes()) {
      out += std::to_string(index) + '=';
      out += list.getAttributes(index).getAsString(true);
      out += '|';
    }
    return out;
  }

  // What code generation reads of a global: its linkage and placement, a
  // function's convention and attributes, a constant's initialiser.
  const std::string& global(const llvm::GlobalValue& value) {
    auto [it, fresh] = globals_.try_emplace(&value);
    if (!fresh)
      return it->second;
    std::string& out = it->second;
    put(out, value.getName());
    out += std::to_string(value.getLinkage()) + ',' + std::to_string(value.getVisibility()) + ',' +
           std::to_string(value.isDSOLocal()) + ',' + std::to_string(value.getThreadLocalMode()) +
           ',' + std::to_string(static_cast<int>(value.getUnnamedAddr())) + ',' +
           std::to_string(value.isDeclaration()) + ',' + std::to_string(value.getAddressSpace()) +
           ',' + std::to_string(value.getDLLStorageClass());
    if (const llvm::GlobalObject* object = llvm::dyn_cast<llvm::GlobalObject>(&value)) {
      put(out, object->getSection());
      llvm::MaybeAlign align;
      if (const auto* f = llvm::dyn_cast<llvm::Function>(object))
        align = f->getAlign();
      else if (const auto* v = llvm::dyn_cast<llvm::GlobalVariable>(object))
        align = v->getAlign();
      out += std::to_string(align ? align->value() : 0);
      put(out, object->hasComdat() ? object->getComdat()->getName() : "");
    }
    std::string type;
    llvm::raw_string_ostream os(type);
    value.getValueType()->print(os);
    put(out, type);
    if (const auto* function = llvm::dyn_cast<llvm::Function>(&value)) {
      out += std::to_string(function->getCallingConv());
      put(out, attributes(function->getAttributes()));
    } else if (const auto* variable = llvm::dyn_cast<llvm::GlobalVariable>(&value)) {
      out += std::to_string(variable->isConstant()) +
             std::to_string(variable->isExternallyInitialized());
      if (variable->isConstant() && variable->hasInitializer()) {
        std::string initialiser;
        llvm::raw_string_ostream is(initialiser);
        variable->getInitializer()->printAsOperand(is, true, &module_);
        Key key = hash(initialiser);
        out += std::to_string(key.first) + ',' + std::to_string(key.second);
      }
    }
    return out;
  }

  // Adds the globals a constant refers to; false if any makes the bytes
  // depend on the layout (a function or alias with local binding, a block
  // address).
  bool constant(const llvm::Constant* c, std::string& out,
                std::unordered_set<const llvm::GlobalValue*>* referenced = nullptr,
                bool localCallee = false) {
    std::unordered_set<const llvm::GlobalValue*> own;
    if (!referenced)
      referenced = &own;
    bool reusable = true;
    std::vector<const llvm::Constant*> stack{c};
    std::unordered_set<const llvm::Constant*> visited;
    while (!stack.empty()) {
      const llvm::Constant* next = stack.back();
      stack.pop_back();
      if (!visited.insert(next).second)
        continue;
      if (llvm::isa<llvm::BlockAddress>(next) || llvm::isa<llvm::GlobalAlias>(next) ||
          llvm::isa<llvm::GlobalIFunc>(next) || llvm::isa<llvm::DSOLocalEquivalent>(next) ||
          llvm::isa<llvm::NoCFIValue>(next))
        reusable = false;
      if (const auto* value = llvm::dyn_cast<llvm::GlobalValue>(next)) {
        if (llvm::isa<llvm::Function>(value) && value->hasLocalLinkage() &&
            !(localCallee && next == c))
          reusable = false;
        if (referenced->insert(value).second)
          out += global(*value);
        continue; // a global's initialiser is its own matter
      }
      for (const llvm::Use& operand : next->operands())
        if (const auto* inner = llvm::dyn_cast<llvm::Constant>(operand.get()))
          stack.push_back(inner);
    }
    return reusable;
  }

  // Metadata by content: nodes numbered in the order met (so shared scopes
  // stay shared), strings and constants as printed; debug-info nodes only by
  // kind (they place no code).
  void writeMetadata(const llvm::Metadata* md, std::string& out,
                     std::map<const llvm::Metadata*, size_t>& seen) {
    if (!md) {
      out += "null;";
      return;
    }
    if (const auto* text = llvm::dyn_cast<llvm::MDString>(md)) {
      out += 'S';
      put(out, text->getString());
      return;
    }
    if (const auto* value = llvm::dyn_cast<llvm::ValueAsMetadata>(md)) {
      std::string printed;
      llvm::raw_string_ostream os(printed);
      value->getValue()->printAsOperand(os, true, slots_);
      out += 'V';
      put(out, printed);
      return;
    }
    const auto* node = llvm::dyn_cast<llvm::MDNode>(md);
    if (!node) {
      out += "?" + std::to_string(md->getMetadataID()) + ';';
      return;
    }
    auto [it, fresh] = seen.try_emplace(md, seen.size());
    if (!fresh) {
      out += 'R' + std::to_string(it->second) + ';';
      return;
    }
    out += (node->isDistinct() ? 'N' : 'U') + std::to_string(node->getMetadataID());
    if (llvm::isa<llvm::DINode>(node) || llvm::isa<llvm::DILocation>(node)) {
      out += ';';
      return;
    }
    out += '(';
    for (const llvm::MDOperand& operand : node->operands())
      writeMetadata(operand.get(), out, seen);
    out += ')';
  }

  const llvm::Module& module_;
  llvm::ModuleSlotTracker slots_;
  FunctionTexts texts_;
  std::string context_;
  bool moduleReusable_ = true;
  bool localCalls_ = false;
  std::unordered_map<const llvm::GlobalValue*, std::string> globals_;
};

// The naked function whose body is `code`'s bytes.
void replaceByBytes(llvm::Function& function, const CachedCode& code) {
  llvm::SmallVector<std::pair<unsigned, llvm::MDNode*>, 4> metadata;
  function.getAllMetadata(metadata);
  function.dropAllReferences();
  for (const auto& [kind, node] : metadata) // e.g. a section prefix
    function.setMetadata(kind, node);
  std::string text;
  static const char* digits = "0123456789abcdef";
  auto bytes = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const auto byte = static_cast<unsigned char>(code.bytes[i]);
      text += i == from ? "\n.byte 0x" : ",0x";
      text += digits[byte >> 4];
      text += digits[byte & 15];
    }
  };
  size_t at = 0;
  for (const auto& [offset, callee] : code.calls) {
    bytes(at, offset);
    text += "\n.long \"";
    for (char c : callee)
      text += c == '$' ? std::string("$$") : std::string(1, c); // inline asm's escape
    text += "\" - . - 4";
    at = offset + 4;
  }
  bytes(at, code.bytes.size());
  llvm::LLVMContext& context = function.getContext();
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "", &function));
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  builder.CreateCall(type, llvm::InlineAsm::get(type, text, "", /*hasSideEffects=*/true));
  builder.CreateUnreachable();
  function.addFnAttr(llvm::Attribute::Naked);
  function.addFnAttr(llvm::Attribute::NoInline);
  function.setAlignment(llvm::Align(code.alignment));
}

struct Recorded {
  uint64_t alignment = 1;
  uint64_t largestBlockAlignment = 1;
};

// The alignment the function is emitted with, as AsmPrinter computes it
// (getGVAlignment): the machine function's, raised to the IR function's own
// (e.g. C++ methods are `align 2`), or the IR function's alone when it has a
// section. A placeholder gets this as its IR alignment, so it lands where
// the function would (its own machine alignment is never larger: same
// attributes).
llvm::Align emittedAlignment(const llvm::MachineFunction& function) {
  const llvm::Function& ir = function.getFunction();
  const llvm::MaybeAlign own = ir.getAlign();
  if (!own)
    return function.getAlignment();
  if (ir.hasSection())
    return *own;
  return std::max(function.getAlignment(), *own);
}

// Records each machine function's emitted alignment and its blocks'
// largest, at the end of code generation.
class AlignmentRecorder final : public llvm::MachineFunctionPass {
public:
  static char ID;
  explicit AlignmentRecorder(std::unordered_map<std::string, Recorded>& out)
      : MachineFunctionPass(ID), out_(out) {}
  llvm::StringRef getPassName() const override { return "mlgo code reuse: alignments"; }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override {
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  bool runOnMachineFunction(llvm::MachineFunction& function) override {
    Recorded r;
    r.alignment = emittedAlignment(function).value();
    for (const llvm::MachineBasicBlock& block : function)
      r.largestBlockAlignment = std::max(r.largestBlockAlignment, block.getAlignment().value());
    out_[function.getName().str()] = r;
    return false;
  }

private:
  std::unordered_map<std::string, Recorded>& out_;
};
char AlignmentRecorder::ID = 0;

// Finds the calls in a function's x86-64 code that the assembler resolved
// (their displacement is not zero: a relocated call's is) and names their
// callees from the symbols at the targets; nullopt if some control transfer
// leaves the function otherwise, or a target has no function symbol, or the
// code does not decode.
std::optional<std::vector<std::pair<uint32_t, std::string>>>
resolvedCalls(const llvm::Triple& triple, llvm::StringRef code, uint64_t start,
              const std::map<uint64_t, std::string>& functionsAt) {
  struct Decoder {
    std::unique_ptr<llvm::MCRegisterInfo> registers;
    std::unique_ptr<llvm::MCAsmInfo> asmInfo;
    std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
    std::unique_ptr<llvm::MCContext> context;
    std::unique_ptr<llvm::MCDisassembler> disassembler;
    std::unique_ptr<llvm::MCInstrInfo> instructions;
    std::unique_ptr<llvm::MCInstrAnalysis> analysis;
  };
  static std::map<std::string, std::unique_ptr<Decoder>> decoders;
  std::unique_ptr<Decoder>& decoder = decoders[triple.str()];
  if (!decoder) {
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return std::nullopt;
    auto d = std::make_unique<Decoder>();
    d->registers.reset(target->createMCRegInfo(triple));
    d->asmInfo.reset(target->createMCAsmInfo(*d->registers, triple, llvm::MCTargetOptions()));
    d->subtarget.reset(target->createMCSubtargetInfo(triple, "", ""));
    d->context = std::make_unique<llvm::MCContext>(triple, d->asmInfo.get(), d->registers.get(),
                                                   d->subtarget.get());
    d->disassembler.reset(target->createMCDisassembler(*d->subtarget, *d->context));
    d->instructions.reset(target->createMCInstrInfo());
    d->analysis.reset(target->createMCInstrAnalysis(d->instructions.get()));
    if (!d->disassembler || !d->analysis)
      return std::nullopt;
    decoder = std::move(d);
  }
  std::vector<std::pair<uint32_t, std::string>> calls;
  const auto* data = reinterpret_cast<const uint8_t*>(code.data());
  const uint64_t end = start + code.size();
  for (uint64_t offset = 0; offset < code.size();) {
    llvm::MCInst instruction;
    uint64_t size = 0;
    const uint64_t address = start + offset;
    if (decoder->disassembler->getInstruction(
            instruction, size, llvm::ArrayRef(data + offset, code.size() - offset), address,
            llvm::nulls()) != llvm::MCDisassembler::Success ||
        size == 0)
      return std::nullopt;
    uint64_t target = 0;
    if (decoder->analysis->evaluateBranch(instruction, address, size, target)) {
      const bool call = decoder->analysis->isCall(instruction);
      if (call && target != address + size) {
        // A resolved call: E8 and a 4-byte displacement.
        auto callee = functionsAt.find(target);
        if (size != 5 || data[offset] != 0xe8 || callee == functionsAt.end())
          return std::nullopt;
        calls.emplace_back(static_cast<uint32_t>(offset + 1), callee->second);
      } else if (!call && (target < start || target >= end) &&
                 !(target == address + size && size >= 5)) {
        // A jump to another function the assembler resolved (a tail call):
        // sized by distance. A near jump with a zero displacement is a
        // relocation (a resolved one that short would have been relaxed to
        // two bytes), the same wherever it lands.
        return std::nullopt;
      }
    }
    offset += size;
  }
  return calls;
}

} // namespace

struct CodeReuse::Impl {
  std::string moduleKey;
  llvm::Module* module = nullptr;
  struct Entry {
    Key key;
    bool reusable = false;
    bool placeholder = false;
    uint64_t alignment = 1; // the placeholder's, as remembered
    size_t size = 0;
  };
  std::unordered_map<std::string, Entry> functions; // by name
  std::unordered_map<std::string, Recorded> recorded;
  ReuseCounts counts;
  std::vector<std::pair<Key, CachedCode>> learned; // by this compile
};

CodeReuse::CodeReuse(std::string moduleKey) : impl_(std::make_unique<Impl>()) {
  impl_->moduleKey = std::move(moduleKey);
}

CodeReuse::~CodeReuse() = default;

void CodeReuse::setBudget(size_t bytes) {
  cache().budget = bytes;
}

void CodeReuse::prepare(llvm::Module& module) {
  impl_->module = &module;
  Describer describer(module);
  ModuleCache& known = cache().use(impl_->moduleKey);
  for (llvm::Function& function : module) {
    if (function.isDeclaration() || function.hasAvailableExternallyLinkage() ||
        function.getName().empty())
      continue;
    Describer::Description described = describer.describe(function);
    Impl::Entry entry{described.key, described.reusable};
    auto hit = entry.reusable ? known.functions.find(entry.key) : known.functions.end();
    if (hit != known.functions.end()) {
      entry.placeholder = true;
      entry.alignment = hit->second.alignment;
      entry.size = hit->second.bytes.size();
      replaceByBytes(function, hit->second);
      ++impl_->counts.reused;
    } else {
      ++impl_->counts.generated;
    }
    impl_->functions.emplace(function.getName().str(), entry);
  }
}

void CodeReuse::recordPass(llvm::legacy::PassManager& passes) {
  passes.add(new AlignmentRecorder(impl_->recorded));
}

namespace {

// A function symbol of an object: its name, section, address and size.
struct FunctionSymbol {
  std::string name;
  llvm::object::SectionRef section;
  uint64_t address = 0;
  uint64_t size = 0;
};

std::vector<FunctionSymbol> functionSymbols(const llvm::object::ELFObjectFileBase& elf) {
  std::vector<FunctionSymbol> functions;
  for (const llvm::object::ELFSymbolRef symbol : elf.symbols()) {
    if (symbol.getELFType() != llvm::ELF::STT_FUNC)
      continue;
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    llvm::Expected<llvm::object::section_iterator> section = symbol.getSection();
    llvm::Expected<uint64_t> address = symbol.getAddress();
    if (name && section && address && *section != elf.section_end())
      functions.push_back({name->str(), **section, *address, symbol.getSize()});
    if (!name)
      llvm::consumeError(name.takeError());
    if (!section)
      llvm::consumeError(section.takeError());
    if (!address)
      llvm::consumeError(address.takeError());
  }
  return functions;
}

} // namespace

bool CodeReuse::learn(std::string_view object) {
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> binary =
      llvm::object::ObjectFile::createObjectFile(
          llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "object"));
  if (!binary) {
    llvm::consumeError(binary.takeError());
    return false;
  }
  const auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(binary->get());
  if (!elf)
    return false; // sizes of function symbols are read from ELF only
  const bool decodable = impl_->module->getTargetTriple().getArch() == llvm::Triple::x86_64;
  ModuleCache& known = cache().use(impl_->moduleKey);
  const std::vector<FunctionSymbol> symbols = functionSymbols(*elf);
  // Function symbols by section and address: the callees of resolved calls.
  std::map<uint64_t, std::map<uint64_t, std::string>> functionsAt;
  for (const FunctionSymbol& symbol : symbols)
    functionsAt[symbol.section.getIndex()].emplace(symbol.address, symbol.name);
  for (const FunctionSymbol& symbol : symbols) {
    auto entry = impl_->functions.find(symbol.name);
    auto recorded = impl_->recorded.find(symbol.name);
    if (entry == impl_->functions.end() || recorded == impl_->recorded.end())
      continue;
    const Impl::Entry& e = entry->second;
    if (e.placeholder) {
      // It must sit where the function would: same size, same alignment.
      if (symbol.size != e.size || recorded->second.alignment != e.alignment)
        return false;
      continue;
    }
    if (!e.reusable || recorded->second.largestBlockAlignment > recorded->second.alignment)
      continue;
    llvm::Expected<llvm::StringRef> contents = symbol.section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    if (symbol.size == 0 || symbol.address + symbol.size > contents->size())
      continue;
    CachedCode code{
        contents->substr(symbol.address, symbol.size).str(), recorded->second.alignment, {}};
    // Every function's code is read, not only those calling a local function
    // in the IR: a call the assembler resolved must never be kept as bytes.
    if (decodable) {
      std::optional<std::vector<std::pair<uint32_t, std::string>>> calls =
          resolvedCalls(impl_->module->getTargetTriple(), code.bytes, symbol.address,
                        functionsAt[symbol.section.getIndex()]);
      if (!calls)
        continue;
      code.calls = std::move(*calls);
    }
    impl_->learned.emplace_back(e.key, code);
    cache().add(known, e.key, std::move(code));
  }
  cache().shrink(impl_->moduleKey);
  return true;
}

ReuseCounts CodeReuse::counts() const {
  return impl_->counts;
}

namespace {

void putNumber(std::string& out, uint64_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

std::optional<uint64_t> takeNumber(std::string_view& in) {
  uint64_t value = 0;
  if (in.size() < sizeof value)
    return std::nullopt;
  std::memcpy(&value, in.data(), sizeof value);
  in.remove_prefix(sizeof value);
  return value;
}

std::optional<std::string> takeText(std::string_view& in) {
  std::optional<uint64_t> size = takeNumber(in);
  if (!size || in.size() < *size)
    return std::nullopt;
  std::string text(in.substr(0, *size));
  in.remove_prefix(*size);
  return text;
}

} // namespace

std::string CodeReuse::learned() const {
  std::string out;
  for (const auto& [key, code] : impl_->learned) {
    putNumber(out, key.first);
    putNumber(out, key.second);
    putNumber(out, code.alignment);
    putNumber(out, code.bytes.size());
    out += code.bytes;
    putNumber(out, code.calls.size());
    for (const auto& [offset, callee] : code.calls) {
      putNumber(out, offset);
      putNumber(out, callee.size());
      out += callee;
    }
  }
  return out;
}

void CodeReuse::absorb(const std::string& moduleKey, std::string_view in) {
  ModuleCache& known = cache().use(moduleKey);
  while (!in.empty()) {
    std::optional<uint64_t> low = takeNumber(in), high = takeNumber(in), alignment = takeNumber(in);
    std::optional<std::string> bytes = takeText(in);
    std::optional<uint64_t> calls = takeNumber(in);
    if (!low || !high || !alignment || !bytes || !calls)
      return; // a torn message: what came before it stays
    CachedCode code{std::move(*bytes), *alignment, {}};
    for (uint64_t c = 0; c < *calls; ++c) {
      std::optional<uint64_t> offset = takeNumber(in);
      std::optional<std::string> callee = takeText(in);
      if (!offset || !callee)
        return;
      code.calls.emplace_back(static_cast<uint32_t>(*offset), std::move(*callee));
    }
    cache().add(known, Key{*low, *high}, std::move(code));
  }
  cache().shrink(moduleKey);
}

} // namespace mlgo::inprocess
