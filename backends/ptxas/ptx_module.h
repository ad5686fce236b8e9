// The PTX module the ptxas backend compiles for a list of tuples, and the
// way back from what the compiled kernels store to each tuple's result.
//
// Every tuple becomes a few lines of one kernel: its operands moved into
// registers as constants (so ptxas may fold them, and no operand is ever an
// immediate that ptxas could silently truncate) or, for its runtime sources
// (isa/operand_form.h), loaded from kernel parameters of their own
// (`t<index in the kernel>_<source name>`), the instruction itself
// (PtxInstruction), and a store of the destination to the kernel's output
// pointer at the tuple's own offset. A predicate source (selp's c) is set by
// a `setp.ne.u32` of its constant, and a predicate result (setp's) stored as
// one byte, 1 or 0, through `selp.u16`; 8-bit values live in 16-bit
// registers and are stored as one byte. An extended-precision tuple sets
// CC.CF from its `cf` constant just before the instruction and reads it back
// just after (backends/carry_support.h); a `.cc` tuple stores the flag
// word as 4 bytes at 8 past its result. A kernel holds up to
// `tuples_per_kernel` tuples, or the sizes given kernel by kernel; a module
// holds as many kernels as it takes.
// The module records which lines belong to which tuple, so that ptxas's
// "line N" errors name the tuple to drop.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_PTX_MODULE_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_PTX_MODULE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/ptxas/sass_constants.h"
#include "isa/tuple.h"
#include "isa/variant.h"

namespace ptxdiff {

// The tuples a module holds: legal variants of PTX families (not vISA).
using PtxTuple = Tuple;

struct ModuleOptions {
  std::string target = "sm_90";  // `.target`, the -arch it is compiled for
  int ptx_version = 90;          // `.version`, as major * 10 + minor
  int tuples_per_kernel = 64;    // at least 1
  // If not empty: the tuples of each kernel in turn, instead of
  // tuples_per_kernel each (they sum to the number of tuples).
  std::vector<int> kernel_sizes;
};

// Where one tuple's result is stored, and where the tuple is in the text.
struct ResultSlot {
  int kernel = 0;      // index into PtxModule::kernels
  int64_t offset = 0;  // bytes from the kernel's output pointer
  int bytes = 0;       // ResultWidth / 8: 1, 2, 4 or 8 (a predicate: 1)
  // A `.cc` tuple's flag word: 4 bytes at offset + kFlagWordOffset.
  bool flag_word = false;
  int first_line = 0;  // the tuple's lines of the module text, 1-based
  int last_line = 0;
};

struct PtxModule {
  std::string text;
  std::vector<std::string> kernels;  // entry names, one `.text.<name>` each
  std::vector<ResultSlot> slots;     // one per tuple, in tuple order
  // The tuples of kernel k are slots [kernel_begin[k], kernel_begin[k + 1]).
  std::vector<int> kernel_begin;
};

PtxModule BuildPtxModule(std::span<const PtxTuple> tuples,
                         const ModuleOptions& options);

// The index of the tuple whose lines include `line` (1-based), or -1 for a
// line of no tuple (module or kernel boilerplate).
int TupleAtLine(const PtxModule& module, int line);

// Where a `.cc` tuple's flag word is, from its slot's offset.
inline constexpr int kFlagWordOffset = 8;

// One tuple's stored result: its bits, and a `.cc` tuple's flag word (what
// the CC.CF reader left; carry_support.h decodes it).
struct SlotValue {
  uint64_t bits = 0;
  std::optional<uint32_t> flag_word;

  friend bool operator==(const SlotValue&, const SlotValue&) = default;
};

// The results of kernel `kernel`'s tuples, in order, read from its decoded
// stores; nullopt unless the stores write every result and flag word byte
// exactly once and nothing else.
std::optional<std::vector<SlotValue>> KernelResults(
    const PtxModule& module, int kernel, std::span<const ConstantStore> stores);

// The same into `results`, false where KernelResults is nullopt; `image`
// is scratch. Both keep their memory, for a kernel run many times.
bool ReadKernelResults(const PtxModule& module, int kernel,
                       std::span<const ConstantStore> stores,
                       std::vector<int>& image,
                       std::vector<SlotValue>& results);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_PTX_MODULE_H_
