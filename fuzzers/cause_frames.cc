#include "fuzzers/cause_frames.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "sass/sass_instruction.h"

// A frame must stay on the stack: not inlined into its caller, not replaced
// by a jump to its callee (a tail call would drop it), and not folded into
// another frame's identical code by the linker (each writes its own number).
#define PTXDIFF_CAUSE_FRAME __attribute__((noinline, disable_tail_calls))

namespace ptxdiff::cause {
namespace {
volatile int frame_number = 0;  // written by each frame: no two bodies alike
}  // namespace

// The frames have external linkage (outside the anonymous namespace), so
// that a symbolizer names them ptxdiff::cause::X, with nothing in between.
using KindFrame = void (*)();

// One per FindingKind.
[[noreturn]] PTXDIFF_CAUSE_FRAME void ValueMismatch() {
  frame_number = 1;
  std::abort();
}
[[noreturn]] PTXDIFF_CAUSE_FRAME void Crash() {
  frame_number = 2;
  std::abort();
}
[[noreturn]] PTXDIFF_CAUSE_FRAME void Hang() {
  frame_number = 3;
  std::abort();
}
[[noreturn]] PTXDIFF_CAUSE_FRAME void ProtocolError() {
  frame_number = 4;
  std::abort();
}
[[noreturn]] PTXDIFF_CAUSE_FRAME void DeviceFault() {
  frame_number = 5;
  std::abort();
}

namespace {

struct KindFrameInfo {
  KindFrame frame;
  const char* name;
};

KindFrameInfo KindFrameOf(FindingKind kind) {
  switch (kind) {  // -Werror=switch: a new kind needs its frame
    case FindingKind::kValueMismatch:
      return {ValueMismatch, "ValueMismatch"};
    case FindingKind::kCrash:
      return {Crash, "Crash"};
    case FindingKind::kHang:
      return {Hang, "Hang"};
    case FindingKind::kProtocolError:
      return {ProtocolError, "ProtocolError"};
    case FindingKind::kDeviceFault:
      return {DeviceFault, "DeviceFault"};
  }
  return {Crash, "Crash"};  // not reached: the switch names every kind
}

}  // namespace

// A cause's class calls its kind's frame: one per family, from the family
// table (and for programs below, one per SASS operation). The abort after
// the call is never reached (the kind frame aborts); it keeps the call out
// of tail position.
using ClassFrame = void (*)(KindFrame);
#define PTXDIFF_FAMILY(Name, opcode)                                 \
  [[noreturn]] PTXDIFF_CAUSE_FRAME void InFamily##Name(KindFrame k) { \
    frame_number = 100 + static_cast<int>(Family::k##Name);          \
    k();                                                             \
    std::abort();                                                    \
  }
#include "isa/families.inc"
#undef PTXDIFF_FAMILY

namespace {

struct ClassFrameInfo {
  ClassFrame frame;
  const char* name;
};
constexpr ClassFrameInfo kFamilyFrames[] = {
#define PTXDIFF_FAMILY(Name, opcode) {InFamily##Name, "InFamily" #Name},
#include "isa/families.inc"
#undef PTXDIFF_FAMILY
};
static_assert(std::size(kFamilyFrames) == kNumFamilies);

}  // namespace

// Programs: one per SASS operation executed code departs at (sass_ops.inc),
// and one for a finding with no cause key.
#define PTXDIFF_SASS_OP(Name, mnemonic)                                  \
  [[noreturn]] PTXDIFF_CAUSE_FRAME void DepartingAt##Name(KindFrame k) { \
    frame_number = 1000 + static_cast<int>(SassOp::k##Name);             \
    k();                                                                 \
    std::abort();                                                        \
  }
#include "sass/sass_ops.inc"
#undef PTXDIFF_SASS_OP

[[noreturn]] PTXDIFF_CAUSE_FRAME void InUnkeyedProgram(KindFrame k) {
  frame_number = 2000;
  k();
  std::abort();
}

namespace {

constexpr ClassFrameInfo kDepartureFrames[] = {
#define PTXDIFF_SASS_OP(Name, mnemonic) \
  {DepartingAt##Name, "DepartingAt" #Name},
#include "sass/sass_ops.inc"
#undef PTXDIFF_SASS_OP
};
static_assert(std::size(kDepartureFrames) == kNumSassOps);

void PrintFirstLine(absl::string_view first_line) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(first_line.size()),
               first_line.data());
  std::fflush(stderr);
}

}  // namespace

std::string CauseText(FindingKind kind, Family family) {
  return absl::StrCat(FindingKindName(kind), " in ",
                      InfoOf(family).opcode);
}

std::string KindFrameName(FindingKind kind) {
  return absl::StrCat("ptxdiff::cause::", KindFrameOf(kind).name);
}

std::string FamilyFrameName(Family family) {
  return absl::StrCat("ptxdiff::cause::",
                      kFamilyFrames[static_cast<int>(family)].name);
}

std::string DepartureCauseText(FindingKind kind, SassOp op) {
  return absl::StrCat(FindingKindName(kind), " departing at ",
                      SassOpName(op, /*uniform=*/false));
}

std::string DepartureFrameName(SassOp op) {
  return absl::StrCat("ptxdiff::cause::",
                      kDepartureFrames[static_cast<int>(op)].name);
}

std::string UnkeyedCauseText(FindingKind kind) {
  return absl::StrCat(FindingKindName(kind), " in an unkeyed program");
}

std::string UnkeyedFrameName() { return "ptxdiff::cause::InUnkeyedProgram"; }

PTXDIFF_CAUSE_FRAME void AbortWithDepartureInFrames(
    FindingKind kind, SassOp op, absl::string_view first_line) {
  PrintFirstLine(first_line);
  kDepartureFrames[static_cast<int>(op)].frame(KindFrameOf(kind).frame);
  std::abort();
}

PTXDIFF_CAUSE_FRAME void AbortUnkeyedInFrames(FindingKind kind,
                                              absl::string_view first_line) {
  PrintFirstLine(first_line);
  InUnkeyedProgram(KindFrameOf(kind).frame);
  std::abort();
}

PTXDIFF_CAUSE_FRAME void AbortWithCauseInFrames(FindingKind kind,
                                                Family family,
                                                absl::string_view first_line) {
  PrintFirstLine(first_line);
  kFamilyFrames[static_cast<int>(family)].frame(KindFrameOf(kind).frame);
  std::abort();
}

}  // namespace ptxdiff::cause
