// The byte form of a program case: the input of the program fuzzer
// (fuzzers/program_fuzzer.cc), and so its crash files and corpus, which
// `ptxdiff program` and `ptxdiff repro` read as well as the text form.
//
// Every register is named by where it was set, not by its name: a source
// is "the k-th most recently set register that fits here", a guard the k-th
// most recent predicate. So every byte string after the tag decodes to a
// program the parser accepts (a pick wraps around the registers there are;
// a step that cannot be made whole is left out), and a mutation that adds,
// drops or moves a step keeps the others' sources meaningful:
//
//   bytes 0..7   kProgramInputTag, little-endian
//   u8           inputs (modulo 5)
//   per input    u8 type (modulo 6: .b16 .b32 .b64 .pred, then the thread
//                inputs %tid.x and %laneid, 32 bits), u64 witness (a
//                thread input's: its lane, modulo kProgramLanes)
//   u8           step records (at most kMaxProgramInputRecords)
//   per record   u8 op: bits 0-2 the kind (modulo 7: instruction, move,
//                `loop {`, `}`, `if {`, `} else {`, `}`), bit 3 guarded,
//                bit 4 the guard (or an if's condition) negated, bit 5 the
//                destination a register set before (else a new one)
//                [u8 the guard's pick, if guarded; an if's condition's]
//                [u8 the destination's pick, if set before]
//                instruction: u64 the variant's StableId, u8 its operand
//                  records, each u8 (bit 7 a register, bits 0-6 its pick)
//                  and, for an immediate, u64 its bits; one per source but
//                  CC.CF, a selector's as an immediate
//                move: u8 width (modulo 4, as an input's type), one
//                  operand record
//                `loop {`: u16 trip count (modulo 1025)
//                either `}` closes the innermost block, loop or if
//                bit 6 set: a jump or a label, bits 0-2 the kind (modulo 3:
//                `L<k>:`, `bra`, `exit`), bit 3 guarded and bit 4 negated
//                as for a step (a branch's or an exit's guard)
//                branch: u8 its label's pick among the labels after it in
//                  its block (a branch with none there is left out)
//   u8           outputs (modulo 4, plus 1), each u8: the pick among all
//                registers
//
// Little-endian throughout; bytes past the end read as zeros. Blocks nest at
// most kMaxProgramInputBlockDepth deep, loops kMaxProgramInputLoopDepth, and
// a nested loop's trips are cut so that the innermost runs at most
// kMaxLoopTrip times in all.
//
// Before thread inputs, an input's type was read modulo 4 and written as 0
// to 3, which read the same modulo 6: what was written then decodes to the
// same programs. Before labels, branches and exits, no record was written
// with bit 6 set, so those records read as they did.

#ifndef PTXDIFF_PROGRAM_PROGRAM_ENCODING_H_
#define PTXDIFF_PROGRAM_PROGRAM_ENCODING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "program/program.h"

namespace ptxdiff {

// "PXDPROG1"; not a tuple input's variant id or forms tag (a test checks).
inline constexpr uint64_t kProgramInputTag = 0x31474f5250445850;
inline constexpr int kMaxProgramInputRecords = 48;
inline constexpr int kMaxProgramInputLoopDepth = 3;
inline constexpr int kMaxProgramInputBlockDepth = 6;
inline constexpr int kMaxProgramInputs = 4;

// The records of an input, as read: what a mutation changes.
struct OperandRecord {
  bool is_register = true;
  uint8_t pick = 0;  // 0..127
  uint64_t value = 0;
};

struct StepRecord {
  ProgramStep::Kind kind = ProgramStep::kInstruction;
  bool guarded = false, guard_negated = false, dst_set_before = false;
  uint8_t guard_pick = 0, dst_pick = 0;
  uint64_t variant_id = 0;  // an instruction's
  uint8_t width_type = 1;   // a move's: 0 .b16, 1 .b32, 2 .b64, 3 .pred
  std::vector<OperandRecord> operands;  // an instruction's, or a move's one
  uint16_t trip = 0;                    // a loop's
  uint8_t target_pick = 0;  // a branch's: among the labels after it
};

// An input record's type past the widths' (0 .b16, 1 .b32, 2 .b64, 3
// .pred): a thread input, its witness the lane; then a loaded input
// (in[%tid.x]) of .b16, .b32 or .b64.
inline constexpr uint8_t kTidXInputType = 4;
inline constexpr uint8_t kLaneIdInputType = 5;
inline constexpr uint8_t kLoadedInputType = 6;  // + 0 .b16, 1 .b32, 2 .b64
inline constexpr uint8_t kNumInputTypes = 9;

struct InputRecord {
  uint8_t type = 1;  // 0 .b16, 1 .b32, 2 .b64, 3 .pred, a thread input's,
                     // or a loaded input's
  uint64_t witness = 0;
};

struct ProgramRecords {
  std::vector<InputRecord> inputs;
  std::vector<StepRecord> steps;
  std::vector<uint8_t> outputs;  // picks
};

// True if `bytes` opens with kProgramInputTag.
bool LooksLikeProgramInput(absl::string_view bytes);

// The records of `bytes`. InvalidArgument if it does not open with the tag.
absl::StatusOr<ProgramRecords> ReadProgramRecords(absl::string_view bytes);
// The bytes ReadProgramRecords reads back to `records` (counts and picks
// as they will be read: inputs and records cut to their limits).
std::string WriteProgramRecords(const ProgramRecords& records);

// The program `records` describe, made whole: a pick wraps around the
// registers that fit, an immediate ptxas would not take becomes a register
// where one fits, a step that cannot be made whole (a register source with
// none that fits, a variant not in PTX, an if with no predicate set
// before) is left out, as is a `}` that closes nothing and an else that
// follows no if, and blocks left open are closed at the end. Inputs are named
// %a..%d, the registers steps set %r<k> (%p<k> for predicates).
// InvalidArgument only for a program with no register to store.
absl::StatusOr<Program> DecodeProgramRecords(const ProgramRecords& records);

// ReadProgramRecords then DecodeProgramRecords.
absl::StatusOr<Program> DecodeProgramInput(absl::string_view bytes);

// The records of `program`, which decode to it with its registers renamed.
// InvalidArgument for what the byte form cannot say: more than
// kMaxProgramInputs inputs or kMaxProgramInputRecords steps, a loop nested
// deeper or running longer than it allows, a register more than 127 picks
// back.
absl::StatusOr<ProgramRecords> EncodeProgram(const Program& program);
// The bytes of EncodeProgram.
absl::StatusOr<std::string> ProgramInputBytes(const Program& program);

// A program case in either form: the text form (program.h) or the byte
// form (a program fuzzer's input or crash file).
bool LooksLikeProgramCase(absl::string_view contents);
absl::StatusOr<Program> ParseProgramCase(absl::string_view contents);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_ENCODING_H_
