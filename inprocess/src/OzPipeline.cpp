#include "OzPipeline.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace mlgo::inprocess {

const std::string& ozPipelineText() {
  // clang-22.1 -Oz for x86-64, C or C++ (`clang-22 -Oz -mllvm
  // -print-pipeline-passes`), its first vector-combine renamed: the
  // function simplification's VectorCombinePass(TryEarlyFoldsOnly), which
  // the text prints as a full one. PipelineHooks.OzTextIsClangsOwn checks
  // it against clang; ClangsPrintedOzPipelineIsOzExactly checks it against
  // -Oz's code.
  static const std::string text =
      "memprof-remove-attributes,annotation2metadata,forceattrs,declare-to-assign,inferattrs,"
      "coro-early,function<eager-inv>(ee-instrument<>,lower-expect,"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-"
      "to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-"
      "with-cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>,"
      "sroa<modify-cfg>,early-cse<>),openmp-opt,ipsccp,called-value-propagation,globalopt,"
      "function<eager-inv>(mem2reg,instcombine<max-iterations=1;no-verify-fixpoint>,"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-"
      "arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-"
      "cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>),"
      "always-inline,require<globals-aa>,function(invalidate<aa>),require<profile-summary>,"
      "cgscc(devirt<4>(inline,function-attrs<skip-non-recursive-function-attrs>,"
      "function<eager-inv;no-rerun>(sroa<modify-cfg>,early-cse<memssa>,"
      "speculative-execution<only-if-divergent-target>,jump-threading,correlated-propagation,"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-"
      "arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-"
      "cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>,"
      "instcombine<max-iterations=1;no-verify-fixpoint>,aggressive-instcombine,tailcallelim,"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-"
      "arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-"
      "cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>,"
      "reassociate,constraint-elimination,loop-mssa(loop-instsimplify,loop-simplifycfg,"
      "licm<no-allowspeculation>,loop-rotate<no-header-duplication;no-prepare-for-lto>,"
      "licm<allowspeculation>,simple-loop-unswitch<no-nontrivial;trivial>),"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-"
      "arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-"
      "cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>,"
      "instcombine<max-iterations=1;no-verify-fixpoint>,loop(loop-idiom,indvars,"
      "extra-simple-loop-unswitch-passes,loop-deletion,loop-unroll-full),sroa<modify-cfg>,"
      "vector-combine-early,mldst-motion<no-split-footer-bb>,gvn<>,sccp,bdce,"
      "instcombine<max-iterations=1;no-verify-fixpoint>,jump-threading,correlated-propagation,"
      "adce,memcpyopt,dse,move-auto-init,loop-mssa(licm<allowspeculation>),coro-elide,"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-"
      "arithmetic;no-switch-to-lookup;keep-loops;hoist-common-insts;no-hoist-loads-stores-with-"
      "cond-faulting;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>,"
      "instcombine<max-iterations=1;no-verify-fixpoint>),function-attrs,"
      "function(require<should-not-run-function-passes>),coro-split,coro-annotation-elide)),"
      "deadargelim,coro-cleanup,globalopt,globaldce,elim-avail-extern,rpo-function-attrs,"
      "recompute-globalsaa,function<eager-inv>(drop-unnecessary-assumes,float2int,"
      "lower-constant-intrinsics,loop(loop-rotate<no-header-duplication;no-prepare-for-lto>,"
      "loop-deletion),loop-distribute,inject-tli-mappings,"
      "loop-vectorize<no-interleave-forced-only;vectorize-forced-only;>,"
      "drop-unnecessary-assumes,infer-alignment,loop-load-elim,"
      "instcombine<max-iterations=1;no-verify-fixpoint>,"
      "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-"
      "arithmetic;switch-to-lookup;no-keep-loops;hoist-common-insts;no-hoist-loads-stores-with-"
      "cond-faulting;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-"
      "unpredictables>,"
      "slp-vectorizer,vector-combine,instcombine<max-iterations=1;no-verify-fixpoint>,"
      "loop-unroll<O2>,transform-warning,sroa<preserve-cfg>,infer-alignment,"
      "instcombine<max-iterations=1;no-verify-fixpoint>,loop-mssa(licm<allowspeculation>),"
      "alignment-from-assumptions,loop-sink,instsimplify,div-rem-pairs,tailcallelim,"
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-"
      "arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;hoist-loads-stores-with-"
      "cond-faulting;no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-"
      "unpredictables>),"
      "alloc-token,globaldce,constmerge,cg-profile,rel-lookup-table-converter,"
      "function(annotation-remarks)";
  return text;
}

namespace {

bool isNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

} // namespace

namespace {

// Where an extension point's passes go in -Oz's text (opt-22's
// -passes-ep-NAME placement, printed): before the anchor's first
// occurrence, or after it.
struct TextPoint {
  policies::ExtensionPoint point;
  std::string_view anchor;
  bool after;
};
constexpr TextPoint kTextPoints[] = {
    {policies::ExtensionPoint::OptimizerLast, "globaldce,constmerge,cg-profile", false},
    {policies::ExtensionPoint::ScalarOptimizerLate, "coro-elide,", true},
};

} // namespace

Expected<std::string> parameterisedOzPipeline(const policies::PassPipeline& pipeline) {
  const auto& parameters = pipeline.parameters;
  std::string text = ozPipelineText();
  for (const auto& [pass, values] : parameters) {
    for (const char* adaptor :
         {"function", "cgscc", "devirt", "loop", "loop-mssa", "require", "invalidate", "module"})
      if (pass == adaptor)
        return makeError("parameters of \"" + pass + "\": an adaptor of the pipeline, not a pass");
    std::string edited;
    size_t found = 0;
    for (size_t at = 0; at < text.size();) {
      // A pipeline element's name starts the text or follows a delimiter,
      // and ends at one; its parameters, if any, are the <…> after it.
      const size_t start = at;
      while (at < text.size() && isNameCharacter(text[at]))
        ++at;
      const std::string_view name(text.data() + start, at - start);
      if (name == pass) {
        ++found;
        edited += pass + "<" + values + ">";
        if (at < text.size() && text[at] == '<')
          at = text.find('>', at) + 1;
      } else {
        edited += name;
      }
      // Up to the next name: delimiters, and another element's parameters.
      while (at < text.size() && !isNameCharacter(text[at])) {
        if (text[at] == '<') {
          const size_t close = text.find('>', at);
          edited.append(text, at, close + 1 - at);
          at = close + 1;
          continue;
        }
        edited += text[at++];
      }
    }
    if (found == 0)
      return makeError("parameters of \"" + pass + "\": -Oz's pipeline runs no pass of that name");
    text = std::move(edited);
  }
  // The inliner's walk needs its advisor set up as the wrapper does (an
  // inliner policy decides only through it).
  const std::string walk = "cgscc(devirt<4>(inline,";
  const size_t at = text.find(walk);
  if (at == std::string::npos)
    return makeError("-Oz's pipeline text has no inliner walk (\"" + walk + "\")");
  text.insert(at, "mlgo-inline-advisor,");
  // Added passes, between markers as at an extension point (a skip rule
  // does not reach them), in the order they were listed; a point the text
  // has no place for is refused, never dropped.
  for (const auto& [point, passes] : pipeline.additions)
    if (std::none_of(std::begin(kTextPoints), std::end(kTextPoints),
                     [&](const TextPoint& known) { return known.point == point; }))
      return makeError("added passes at " + std::string(policies::extensionPointName(point)) +
                       ": -Oz's text has no place for them (yet)");
  for (const TextPoint& known : kTextPoints) {
    std::string added;
    for (const auto& [point, passes] : pipeline.additions)
      if (point == known.point)
        added += "mlgo-addition-begin," + passes + ",mlgo-addition-end,";
    if (added.empty())
      continue;
    const size_t anchor = text.find(known.anchor);
    if (anchor == std::string::npos)
      return makeError("-Oz's pipeline text has no \"" + std::string(known.anchor) + "\"");
    text.insert(known.after ? anchor + known.anchor.size() : anchor, added);
  }
  return text;
}

} // namespace mlgo::inprocess
