// A program (program.h) as a PTX kernel: what ptxas, a GPU or a PTX tool
// runs. Only the outputs are stored: storing intermediates would change what
// a compiler may do, and can hide the bug under test.
//
//   .visible .entry ptxdiff_program(.param .u64 ptxdiff_out[, .param .bW
//   in_<name>...])
//
// Output k is stored zero-extended to 64 bits at ptxdiff_out + 8k (by each
// thread of a program with thread inputs at ptxdiff_out + 8k +
// ThreadOutputBytes * %tid.x, launched as one block of kProgramLanes). The
// inputs are runtime values (kernel parameters, loaded with ld.param: what a
// compiler cannot know; a loaded input's parameter points to a buffer whose
// word at %tid.x it loads) or immediates (moved into their registers: a
// constant expression). A loop is a counted loop; an if branches to its else
// part where its condition fails (`@!%p bra $ptxdiff_else<k>`) and from the
// end of its then part over it (`bra.uni $ptxdiff_fi<k>`), its labels
// numbered across the kernel (across the module for a tool's). A program's
// label L is `$ptxdiff_L_L`, its branches `bra` or `@%p bra` to it, its
// exit `exit` (in a tool's module, where programs share a thread, a branch
// past its program's stores to where it stores 0 in its slots: kernel ABI 2
// wants every byte of {out} written).

#ifndef PTXDIFF_PROGRAM_PROGRAM_PTX_H_
#define PTXDIFF_PROGRAM_PROGRAM_PTX_H_

#include <span>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "backends/cuda/kernel_gen.h"
#include "program/program.h"

namespace ptxdiff {

inline constexpr char kProgramEntry[] = "ptxdiff_program";

enum class ProgramInputs : uint8_t {
  kRuntime,    // kernel parameters
  kImmediate,  // the witness values, moved into the registers
};

// The bytes of outputs each thread stores: 8 per output.
inline int ThreadOutputBytes(const Program& program) {
  return 8 * static_cast<int>(program.outputs.size());
}

// The kernel `entry` for `program`.
std::string ProgramKernel(const Program& program, absl::string_view entry,
                          ProgramInputs inputs);

// A module of that one kernel (kProgramEntry) for `target`, its `.version`
// the lowest the target and every step need.
std::string ProgramModule(const Program& program, const PtxTarget& target,
                          ProgramInputs inputs);

// Many programs in one module (one ptxas run for all), program k's kernel
// named ProgramEntry(k).
std::string ProgramsModule(std::span<const Program> programs,
                           const PtxTarget& target, ProgramInputs inputs);
std::string ProgramEntry(size_t k);  // "ptxdiff_program_3"

// Programs for a tool that runs PTX (kernel ABI 2's command and launch,
// docs/kernel-abi.md, "Programs"): one entry, ptxdiff_register(in, out, n),
// whose first thread runs each program in turn. Program k fills two of
// the ABI's slots, so {n} is twice the programs: it takes its inputs from
// {in} + 64k + 8j (runtime) or as immediates, and stores its outputs
// zero-extended at {out} + 32k + 8j (0 where it has none). At most 4
// inputs each.
//
// With `lanes` (a GPU: its module is launched on a block of kProgramLanes
// threads), a program with thread inputs runs on each of the grid's first
// kProgramLanes threads and fills 2 x kProgramLanes slots, lane L's outputs
// at {out} + 16 first(k) + 32 L + 8j (SlotsOf); the others still run on
// the first thread alone. Such a program's input loaded from memory
// (`in[%tid.x]`) is read by lane L from its own word,
// {in} + 32 first(k) + LaneWordsOffset(j) + (width / 8) L.
std::string ProgramToolModule(std::span<const Program> programs,
                              const PtxTarget& target, ProgramInputs inputs,
                              bool lanes = false);

// Where the lane words of a loaded input j of a program on lanes begin,
// from its first slot's {in}: past its inputs' 32 bytes, 256 bytes (32
// lanes of 8 bytes) an input, inside the 2 x kProgramLanes slots it fills.
constexpr int LaneWordsOffset(size_t j) {
  return 256 * (static_cast<int>(j) + 1);
}

// Where each program sits in a tool's module: its first slot (`first[k]`,
// `first` ending with the total).
struct ProgramSlots {
  std::vector<size_t> first;
  bool lanes = false;
  size_t total() const { return first.back(); }
  bool OnLanes(const Program& p) const { return lanes && HasThreadInputs(p); }
};
ProgramSlots SlotsOf(std::span<const Program> programs, bool lanes);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_PTX_H_
