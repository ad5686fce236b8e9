// A program case: a short chain of instructions ptxdiff knows, with
// runtime inputs, constant-trip loops and if/else blocks, judged by the
// composed oracle
// (composed_oracle.h).
// Compilers' real bugs live between instructions (issue 31); a program is
// how a case holds several.
//
// The text form, one statement per line (`#` starts a comment):
//
//   # ptxdiff program 1
//   input %a .b32 0x7fffffff     a runtime input: name, width, witness value
//   input %b .b32 1
//   input %t .b32 %tid.x 20      a thread input (%tid.x, %laneid): each
//                                thread's own, the lane shown after it
//   add.cc.u32 %lo, %a, %b;      a step: any variant's PTX statement, its
//   addc.u32 %hi, 0, 0;          sources registers set before or immediates
//   output %lo                   1 to 4 outputs: registers the program stores
//   output %hi
//
// and, between steps:
//
//   mov.b32 %r, 0x7fffffff;      a move: a register or an immediate
//   loop 4 {                     the steps up to the matching `}`, 4 times
//     sub.u32 %r, %r, 1;         (a trip count from 0 to 1024; loops nest,
//                                the innermost running 1024 times at most)
//   }
//   @%p add.u32 %r, %r, 1;       a guarded step: runs only where %p is true
//   @!%p mov.b32 %r, 0;          (or false); otherwise %r keeps its value
//   if %p {                      the steps up to `} else {` where %p is true,
//     shl.b32 %s, %a, 24;        (`if !%p {`: false), the steps after it
//   } else {                     elsewhere; `} else {` may be left out.
//     mov.b32 %s, 0x80000000;    %p is a .pred register set before; blocks
//   }                            nest with loops and each other
//   @%p bra SKIP;                a forward branch (`bra SKIP;` always, or
//   add.u32 %r, %r, 1;           `@!%p`): to the label later in its own
//   SKIP:                        block, never into or out of a loop or if
//   @%p exit;                    the thread stops: it stores no output
//
// Labels are unique and may go unused: a bare label is a block boundary,
// which changes what ptxas does. Back edges are loops, so a branch only goes
// forward.
//
// Widths are `.b16`, `.b32`, `.b64` (or `.u`/`.s` of those) and `.pred`. A
// step's destination is a register as wide as the variant's result (a
// register may be set again, at the same width); a source register must be
// set earlier in the text and be as wide as the source reads (a 16-bit
// register for an 8-bit source). CC.CF is state between steps, set by `.cc`
// variants and read by the carry-in families (addc, subc, madc).
//
// A register is set wherever a step in the text before sets it, as for a
// loop: one first set inside a branch (or a loop) may be read after the
// block, and where the path taken did not set it (the other branch ran, the
// loop ran 0 times) it holds nothing the spec defines: the composed oracle
// leaves what reads it undefined, and such an output is not judged.

#ifndef PTXDIFF_PROGRAM_PROGRAM_H_
#define PTXDIFF_PROGRAM_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

inline constexpr char kProgramHeader[] = "# ptxdiff program 1";
inline constexpr int kMaxProgramOutputs = 4;
inline constexpr int kMaxLoopTrip = 1024;

// An input the hardware gives each thread. A program with one runs on every
// thread of a block of kProgramLanes threads (one warp: %tid.x is %laneid)
// and is judged on each.
enum class ThreadInput : uint8_t { kNone, kTidX, kLaneId };
inline constexpr int kProgramLanes = 32;

// "%tid.x", "%laneid"; "" for kNone.
absl::string_view ThreadInputName(ThreadInput t);

// How a loaded input is written: each thread reads its own word.
inline constexpr char kLoadedInputSource[] = "in[%tid.x]";

struct ProgramInput {
  std::string name;  // without the `%`
  int width = 32;    // bits; 1 for a predicate
  // A parameter's value the program is shown at; a thread input's lane.
  uint64_t witness = 0;
  ThreadInput thread = ThreadInput::kNone;  // a parameter unless set
  // Loaded from global memory, each thread its own word (kLoadedInputSource)
  // as reproducers read their inputs, rather than a kernel parameter: code
  // a compiler emits for a value that differs between threads.
  bool loaded = false;
};

// A step's source: a register (an input or an earlier step's destination)
// or an immediate.
struct ProgramOperand {
  bool is_register = false;
  std::string name;    // a register's, without the `%`
  uint64_t value = 0;  // an immediate's bits (masked when evaluated)
};

struct ProgramStep {
  enum Kind : uint8_t {
    kInstruction,  // `variant`: dst, sources (NumSources entries)
    kMove,         // mov.b<width> dst, sources[0]
    kLoopBegin,    // `loop <trip> {`
    kLoopEnd,      // `}` of a loop
    kIfBegin,      // `if %guard {` (`if !%guard {` when guard_negated)
    kElse,         // `} else {`
    kIfEnd,        // `}` of an if
    kLabel,        // `label:`
    kBranch,       // `bra label;` forward, under `guard` if it has one
    kExit,         // `exit;`, under `guard` if it has one
  } kind = kInstruction;
  Variant variant;
  std::string dst;  // without the `%`
  std::string label;  // a label's name, a branch's target
  // An instruction's NumSources(variant) sources (CC.CF's entry unused, a
  // selector's as an immediate); a move's one.
  std::vector<ProgramOperand> sources;
  int width = 0;  // a move's
  int trip = 0;   // a loop's
  int line = 0;   // in the text, for messages
  // `@%p` (or `@!%p` when negated): an instruction, a move, a branch or an
  // exit that runs only where the predicate register `guard` is true
  // (false); empty: always. An if's condition, the same way.
  std::string guard;
  bool guard_negated = false;
};

// "@%p ", "@!%p ", or "" for a step without a guard.
std::string GuardText(const ProgramStep& step);

// True if a register `width` bits wide may be source `i` of `v`: as wide as
// it reads, 16 bits for an 8-bit source, or for cvt any wider register (PTX
// ISA 9.4.1: cvt reads the low bits of a wider source).
bool RegisterFitsSource(const Variant& v, int i, int width);

// True for an instruction or a move: a step that sets a register.
bool SetsRegister(const ProgramStep& step);

// Where a block's parts are, for balanced steps (as parsed): `begin` the
// index of its `loop N {` or `if %p {`, `end` of its `}`, and for an if
// `else_at` of its `} else {` (its `}` when it has none: where the path
// where the condition fails goes on).
struct ProgramBlock {
  size_t begin = 0, else_at = 0, end = 0;
};
// For each step that opens, splits or closes a block, that block; a default
// ProgramBlock for the others.
std::vector<ProgramBlock> BlocksOf(const std::vector<ProgramStep>& steps);

// For each branch, the index of the step that is its label (steps.size()
// if there is none); steps.size() for the other steps.
std::vector<size_t> BranchTargets(const std::vector<ProgramStep>& steps);

// True for a label, a branch or an exit: unstructured control flow.
bool IsJumpOrLabel(const ProgramStep& step);

// The bits a register `width` bits wide holds.
uint64_t WidthMask(int width);

// The width of the register a step sets (an instruction's or a move's).
int DestinationWidth(const ProgramStep& step);

struct Program {
  std::vector<ProgramInput> inputs;
  std::vector<ProgramStep> steps;
  std::vector<std::string> outputs;  // register names
};

// The width of the register a tuple's source `i` of `v` is given as a
// program input: its own, 16 bits for an 8-bit source.
int TupleSourceRegisterWidth(const Variant& v, int i);

// One tuple of `v` as a one-step program: each source that may be a
// register an input (`%in<i>`, its witness the tuple's operand, an 8-bit
// source in a 16-bit register), a selector or immLut an immediate; the
// output `%d`. A carry-in variant's CC.CF is left unset.
Program TupleAsProgram(const Variant& v, const Operands& operands);

// The instruction and move steps (not the blocks' brackets): what "a
// program of N steps" counts.
int CountSteps(const Program& program);

// "loops", "if/else", "branches" (or "labels" with none), "exit", joined
// by ", ", or "": the kinds of control flow it has.
std::string BlockKinds(const Program& program);

// The inputs' witness values, in order (every thread input on the first
// one's lane).
std::vector<uint64_t> WitnessInputs(const Program& program);

// True if the program has an exit: a thread may store nothing.
bool HasExit(const Program& program);

// True if an input is a thread input: the program runs on every lane.
bool HasThreadInputs(const Program& program);
// Whether an input is loaded from memory (ProgramInput::loaded).
bool HasLoadedInputs(const Program& program);

// `inputs` with every thread input at `lane`: a thread's inputs.
std::vector<uint64_t> AtLane(const Program& program,
                             std::vector<uint64_t> inputs, uint32_t lane);

// The lane of a thread's `inputs` (any thread input's value; 0 if none).
uint32_t LaneOf(const Program& program, const std::vector<uint64_t>& inputs);

// The width of register `name` (an input or a step's destination), 0 if
// the program has none.
int RegisterWidth(const Program& program, absl::string_view name);

// True if `text` opens with kProgramHeader.
bool LooksLikeProgram(absl::string_view text);

// Parses a program. InvalidArgument names the line and what is wrong: an
// unknown instruction (with the nearest spellings), a register used before
// it is set or set twice, a width that does not fit its use, a brace that
// does not balance, an `else` without its `if`, a condition that is not a
// .pred register, no output, a label set twice, a branch that goes back or
// into or out of a block.
absl::StatusOr<Program> ParseProgram(absl::string_view text);
// ParseProgram's verdict alone: OK, or why `text` is no program. The check
// a triage store is given for its program entries' case.txt
// (TriageStore::Open: triage/ is below program/ and cannot parse one).
absl::Status CheckProgramText(absl::string_view text);

// The text form, which ParseProgram reads back to the same program.
std::string FormatProgram(const Program& program);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_H_
