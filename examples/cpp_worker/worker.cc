// An example ptxdiff worker built on the kit (kit/ptxdiff_worker.h): a small
// "implementation under test" of the PTX integer families add, sub, min, max
// and bfe, written from the PTX ISA text (sections 9.7.1.1, 9.7.1.2,
// 9.7.1.12, 9.7.1.13, 9.7.1.19; add.cc and sub.cc from 9.7.2.1, 9.7.2.3). Every
// other family is declined through the `supports` lines, so ptxdiff never sends
// it.
//
//   c++ -std=c++17 -O2 -I kit examples/cpp_worker/worker.cc -o cpp_worker
//   ptxdiff sweep --backend exec:$PWD/cpp_worker --family add --family bfe

#include <algorithm>
#include <cstdint>
#include <string>

#include "ptxdiff_worker.h"

namespace {

using ptxdiff::kit::Answer;
using ptxdiff::kit::DeclineCode;
using ptxdiff::kit::IsSignedType;
using ptxdiff::kit::LowBits;
using ptxdiff::kit::SignExtend;
using ptxdiff::kit::TypeBits;
using ptxdiff::kit::Variant;

// For these families the type is the last modifier: add.sat.s32,
// min.relu.s16x2.
bool IsPacked(const std::string& type) {
  return type == "u16x2" || type == "s16x2";
}

// Applies `op` to each 16-bit half of packed operands, as the spec says for
// .u16x2 / .s16x2: each half is an independent 16-bit operation.
template <typename Op>
uint64_t PerHalf(uint64_t a, uint64_t b, bool is_signed, Op op) {
  uint64_t out = 0;
  for (int shift = 0; shift < 32; shift += 16) {
    const uint64_t ha = LowBits(a >> shift, 16), hb = LowBits(b >> shift, 16);
    const int64_t x = is_signed ? SignExtend(ha, 16) : static_cast<int64_t>(ha);
    const int64_t y = is_signed ? SignExtend(hb, 16) : static_cast<int64_t>(hb);
    out |= LowBits(static_cast<uint64_t>(op(x, y)), 16) << shift;
  }
  return out;
}

// add / sub: wrapping, except .sat (only on .s32) clamps to MININT..MAXINT.
// With .cc (PTX ISA 9.7.2.1, 9.7.2.3) the carry out of the sum, or for sub
// the borrow (a < b), also goes back: "the same for unsigned and signed".
Answer AddSub(const Variant& v, const uint64_t* o, bool sub) {
  const std::string& type = v.modifiers.back();
  if (v.HasModifier("cc")) {
    const int width = TypeBits(type);
    const uint64_t a = LowBits(o[0], width), b = LowBits(o[1], width);
    const uint64_t d = LowBits(sub ? a - b : a + b, width);
    return Answer::Value(d, sub ? a < b : d < a);  // the sum wrapped below a
  }
  if (IsPacked(type)) {
    return Answer::Value(
        PerHalf(o[0], o[1], false,
                [sub](int64_t a, int64_t b) { return sub ? a - b : a + b; }));
  }
  if (v.HasModifier("sat")) {
    const int64_t a = SignExtend(o[0], 32), b = SignExtend(o[1], 32);
    const int64_t exact = sub ? a - b : a + b;  // fits in 64 bits
    const int64_t clamped = std::clamp<int64_t>(exact, INT32_MIN, INT32_MAX);
    return Answer::Value(LowBits(static_cast<uint64_t>(clamped), 32));
  }
  return Answer::Value(
      LowBits(sub ? o[0] - o[1] : o[0] + o[1], TypeBits(type)));
}

// min / max, signed or unsigned by type; .relu clamps a negative result to 0.
Answer MinMax(const Variant& v, const uint64_t* o, bool is_max) {
  const std::string& type = v.modifiers.back();
  const bool is_signed = IsSignedType(type), relu = v.HasModifier("relu");
  auto pick = [is_max, relu](int64_t a, int64_t b) {
    const int64_t r = is_max ? std::max(a, b) : std::min(a, b);
    return relu ? std::max<int64_t>(r, 0) : r;
  };
  if (IsPacked(type))
    return Answer::Value(PerHalf(o[0], o[1], is_signed, pick));
  const int width = TypeBits(type);
  if (is_signed) {
    return Answer::Value(
        LowBits(static_cast<uint64_t>(
                    pick(SignExtend(o[0], width), SignExtend(o[1], width))),
                width));
  }
  const uint64_t a = LowBits(o[0], width), b = LowBits(o[1], width);
  return Answer::Value(is_max ? std::max(a, b) : std::min(a, b));
}

// bfe, as the spec's pseudocode writes it: bits pos..pos+len-1 of a, the rest
// filled with the field's sign bit for .s32/.s64 (0 when len is 0).
Answer Bfe(const Variant& v, const uint64_t* o) {
  const std::string& type = v.modifiers.back();
  const int msb = TypeBits(type) - 1;
  const uint64_t a = o[0];
  const int pos = static_cast<int>(o[1] & 0xff),
            len = static_cast<int>(o[2] & 0xff);
  const uint64_t sbit = !IsSignedType(type) || len == 0
                            ? 0
                            : (a >> std::min(pos + len - 1, msb)) & 1;
  uint64_t d = 0;
  for (int i = 0; i <= msb; ++i) {
    const uint64_t bit =
        i < len && pos + i <= msb ? (a >> (pos + i)) & 1 : sbit;
    d |= bit << i;
  }
  return Answer::Value(d);
}

ptxdiff::kit::Answer Evaluate(const Variant& v, const uint64_t operands[4]) {
  if (v.opcode == "add") return AddSub(v, operands, false);
  if (v.opcode == "sub") return AddSub(v, operands, true);
  if (v.opcode == "min") return MinMax(v, operands, false);
  if (v.opcode == "max") return MinMax(v, operands, true);
  if (v.opcode == "bfe") return Bfe(v, operands);
  // Not reached while the supports lines below are right.
  return Answer::Decline(DeclineCode::kUnsupported,
                         "not implemented: " + v.opcode);
}

}  // namespace

int main() {
  ptxdiff::kit::WorkerInfo info;
  info.name = "cpp-example";
  info.version = "1";
  info.device = "the CPU (examples/cpp_worker)";
  info.supports = {"add", "sub", "min", "max", "bfe"};
  info.carry = true;  // add.cc and sub.cc answer their carry-out
  return ptxdiff::kit::Serve(info, Evaluate);
}
