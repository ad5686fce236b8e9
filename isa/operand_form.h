// Operand forms: which sources of a case are immediates and which are
// runtime values.
//
// A compiler sees an immediate (in ptxdiff's modules, a constant moved into
// a register) and may fold the instruction; a runtime value (a kernel
// parameter) it cannot know. With some sources runtime, whatever a compiler
// still computes at compile time is a claim about every value of those
// sources: the bugs this exposes do not show when every source is an
// immediate (docs/ptxas-folding-research.md, "Claimed constants"). A tuple's
// form is Tuple::runtime, one bit per source; the tuple's values of its
// runtime sources are the witness at which a claim is judged.

#ifndef PTXDIFF_ISA_OPERAND_FORM_H_
#define PTXDIFF_ISA_OPERAND_FORM_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/tuple.h"
#include "isa/variant.h"

namespace ptxdiff {

// True if source `i` of `v` may be a runtime value: a source written as an
// operand of a PTX instruction that PTX does not require to be an
// immediate (lop3's LUT must be one). The implicit CC.CF and the SIMD
// selectors (written as suffixes) have no form.
bool CanBeRuntime(const Variant& v, int i);

// The sources of `v` that may be runtime values, one bit each.
uint8_t RuntimeCapableSources(const Variant& v);

// True if every source of `v` that may be a runtime value is one in the
// form `runtime`: the register shape, which a worker that runs code runs in
// its variant's loop kernel (any other form it runs as written).
inline bool IsRegisterShape(const Variant& v, uint8_t runtime) {
  const uint8_t capable = RuntimeCapableSources(v);
  return (runtime & capable) == capable;
}

// The form of a case that does not say one (an untagged fuzz input, a
// systematic tuple): all immediates, or, where `runtime_by_default` (a
// worker that runs code, WorkerIdentity::runtime_by_default), every source
// that may be a runtime value one.
inline uint8_t DefaultForm(const Variant& v, bool runtime_by_default) {
  return runtime_by_default ? RuntimeCapableSources(v) : 0;
}

// True if every bit of `runtime` is a source that may be a runtime value.
inline bool IsLegalForm(const Variant& v, uint8_t runtime) {
  return (runtime & ~RuntimeCapableSources(v)) == 0;
}

// The runtime sources by name, comma-separated ("a", "a,c"; fns's "base"):
// the text form's `runtime:` line. Empty for an all-immediate form.
std::string RuntimeSourceNames(const Variant& v, uint8_t runtime);

// The form whose runtime sources are named in `names` (separated by commas
// or spaces; empty for none). InvalidArgument naming a source `v` does not
// have or one that cannot be a runtime value.
absl::StatusOr<uint8_t> ParseRuntimeSources(const Variant& v,
                                            absl::string_view names);

// The `.param` list of a kernel entry that runs `tuples`: `.param .u64 out`,
// then one parameter for each runtime source of each tuple in order, of its
// PtxParamType, named `param_name(t, i)` for source i of tuples[t]. What
// every module ptxdiff writes for a compiler declares its inputs with.
std::string KernelParamList(
    std::span<const Tuple> tuples,
    absl::FunctionRef<std::string(int t, int i)> param_name);

// The tuple as one instruction, its runtime sources as registers named after
// them and its immediates as values, the destination `d`:
// "bfe.s32 d, %a, 0x28, 0x8". What reports show a case as.
std::string FormattedInstruction(const Tuple& t);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_OPERAND_FORM_H_
