// Running a kernel's SASS on the CPU, for one thread: what makes ptxas
// testable without a GPU on the code it emits, not only on what it folds.
//
// The machine holds the thread's registers, uniform registers and
// predicates, the kernel's constant bank 0 (its parameters at the arch's
// parameter base) and the global memory the launch gives it, and runs the
// decoded instructions (sass_decoder.h) from offset 0 to an EXIT. It never
// guesses: an instruction the decoder did not understand, a register read
// before any write, a word of the constant bank that the driver fills (the
// stack pointer, a memory descriptor) used as a value, an access outside
// the launch's memory, or a run past its step budget ends the run "not
// run", naming the instruction and why, and what stopped it
// (SassRun::blocker) is a key a census counts.

#ifndef PTXDIFF_SASS_SASS_MACHINE_H_
#define PTXDIFF_SASS_SASS_MACHINE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sass/sass_decoder.h"
#include "sass/sass_instruction.h"

namespace ptxdiff {

// Global memory a launch gives the kernel.
struct SassBuffer {
  uint64_t address = 0;
  std::vector<uint8_t> bytes;
  bool writable = false;
};

struct SassLaunch {
  // Bank 0's bytes. Those below `known_from` are the driver's (the stack
  // pointer, memory descriptors): they may be loaded, not used as values.
  std::vector<uint8_t> constant_bank;
  uint32_t known_from = 0;
  std::vector<SassBuffer> buffers;
  int64_t max_steps = int64_t{1} << 20;
  bool trace = false;  // keep SassRun::trace
  // The thread run: its %tid.x in a one-dimensional block of at most one
  // warp, so also its %laneid (threads run one at a time: the programs
  // ptxdiff compiles share nothing between threads).
  uint32_t thread = 0;
};

// S2R's special registers the machine knows.
inline constexpr int kSassSrLaneId = 0x00;
inline constexpr int kSassSrTidX = 0x21;

// One store the kernel made, in program order.
struct SassStore {
  uint32_t pc = 0;
  int64_t step = 0;  // its index in SassRun::trace, where traced
  uint64_t address = 0;
  int size = 0;                        // bytes: 1, 2, 4, 8 or 16
  std::array<uint32_t, 4> words = {};  // little-endian, past size 0
};

// A register or predicate an instruction read or wrote, with its value:
// the data flow of a traced run (sass_departure.h follows it).
struct SassAccess {
  enum Kind : uint8_t { kRegister, kUniform, kPredicate, kUniformPredicate };
  Kind kind = kRegister;
  int index = 0;
  uint32_t value = 0;  // a predicate's: 0 or 1
  bool stored = false;  // read as the data of a store
};

// One instruction run, with what it wrote to its destination register.
struct SassTraceStep {
  uint32_t pc = 0;
  std::string text;                   // SassText
  uint64_t word_lo = 0, word_hi = 0;  // its encoding
  bool executed = false;              // its guard held
  uint32_t dst_value = 0;
  std::vector<SassAccess> reads, writes;  // in the order it made them
};

struct SassRun {
  bool ran = false;  // reached an EXIT
  std::vector<SassStore> stores;
  int64_t steps = 0;
  // When not run: why, naming the instruction, and the census key of what
  // stopped it ("op 0x21f", "ISETP: a second predicate destination").
  std::string why_not;
  std::string blocker;
  std::vector<SassTraceStep> trace;  // SassLaunch::trace
};

// Runs `kernel` (a decoded `.text`) for one thread.
SassRun RunSass(const std::vector<SassSlot>& kernel, const SassLaunch& launch);

// The same into `run`, whose vectors keep their memory: a kernel run for
// many inputs allocates nothing per run once warm.
void RunSass(const std::vector<SassSlot>& kernel, const SassLaunch& launch,
             SassRun& run);

}  // namespace ptxdiff

#endif  // PTXDIFF_SASS_SASS_MACHINE_H_
