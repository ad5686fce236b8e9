#include "fuzzers/cause_frames.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"

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

// One per family, from the family table. The abort after the call is never
// reached (the kind frame aborts); it keeps the call out of tail position.
using FamilyFrame = void (*)(KindFrame);
#define PTXDIFF_FAMILY(Name, opcode)                                 \
  [[noreturn]] PTXDIFF_CAUSE_FRAME void InFamily##Name(KindFrame k) { \
    frame_number = 100 + static_cast<int>(Family::k##Name);          \
    k();                                                             \
    std::abort();                                                    \
  }
#include "isa/families.inc"
#undef PTXDIFF_FAMILY

namespace {

struct FamilyFrameInfo {
  FamilyFrame frame;
  const char* name;
};
constexpr FamilyFrameInfo kFamilyFrames[] = {
#define PTXDIFF_FAMILY(Name, opcode) {InFamily##Name, "InFamily" #Name},
#include "isa/families.inc"
#undef PTXDIFF_FAMILY
};
static_assert(std::size(kFamilyFrames) == kNumFamilies);

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

PTXDIFF_CAUSE_FRAME void AbortWithCauseInFrames(FindingKind kind,
                                                Family family,
                                                absl::string_view first_line) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(first_line.size()),
               first_line.data());
  std::fflush(stderr);
  kFamilyFrames[static_cast<int>(family)].frame(KindFrameOf(kind).frame);
  std::abort();
}

}  // namespace ptxdiff::cause
