// A DELIBERATELY WRONG ptxdiff worker, to see what a finding looks like: it
// implements the add family, but its add.sat.s32 wraps around instead of
// saturating (a classic emulator bug). Every other add variant is right, so
// only sums past INT32_MAX or below INT32_MIN disagree: `ptxdiff sweep` and a
// short `ptxdiff fuzz` catch it (see examples/cpp_worker/README.md).

#include <cstdint>
#include <string>

#include "ptxdiff_worker.h"

namespace {

using ptxdiff::kit::Answer;
using ptxdiff::kit::LowBits;
using ptxdiff::kit::TypeBits;
using ptxdiff::kit::Variant;

Answer Evaluate(const Variant& v, const uint64_t operands[4]) {
  const std::string& type = v.modifiers.back();
  const uint64_t a = operands[0], b = operands[1];
  if (type == "u16x2" || type == "s16x2") {
    return Answer::Value(LowBits(a + b, 16) | LowBits((a >> 16) + (b >> 16), 16)
                                                  << 16);
  }
  // THE BUG: .sat is ignored, so add.sat.s32 wraps like add.s32.
  const int width = TypeBits(type);
  const uint64_t d = LowBits(a + b, width);
  // add.cc's carry out is right: the sum wrapped below a.
  return Answer::Value(d, v.HasModifier("cc") && d < LowBits(a, width));
}

}  // namespace

int main() {
  ptxdiff::kit::WorkerInfo info;
  info.name = "wrong-example";
  info.version = "1";
  info.supports = {"add"};
  info.carry = true;
  return ptxdiff::kit::Serve(info, Evaluate);
}
