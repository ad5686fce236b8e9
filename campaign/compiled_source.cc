#include "campaign/compiled_source.h"

#include <algorithm>

#include "campaign/systematic_source.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"

namespace ptxdiff {

Tuple InRegisterShape(Tuple t) {
  t.runtime = RuntimeCapableSources(t.variant);
  return t;
}

void CompiledSource::Add(const Tuple& witness) {
  variants_.push_back({.witness = InRegisterShape(witness),
                       .count = SystematicCount(witness.variant)});
}

void CompiledSource::Refill(Compiled& c) {
  constexpr uint64_t kRefill = 8;
  const Variant& v = c.witness.variant;
  std::vector<Tuple>& out = c.ready;
  out.clear();
  if (c.next < c.count) SystematicTuples(v, c.next, kRefill, out);
  if (out.size() < kRefill) {
    TailTuples(v, c.next + out.size() - c.count, kRefill - out.size(), out);
  }
  c.next += kRefill;
  const uint8_t shape = c.witness.runtime;
  for (Tuple& t : out) {
    t.runtime = shape;
    // The sources that cannot be runtime values are the compiled code's.
    for (int s = 0; s < NumSources(v); ++s) {
      if (!IsRuntimeSource(shape, s)) t.operands.v[s] = c.witness.operands.v[s];
    }
  }
  std::reverse(out.begin(), out.end());  // taken from the back, in order
}

bool CompiledSource::NextRun(size_t n, std::vector<Tuple>& out) {
  if (variants_.empty()) return false;
  for (size_t i = 0; i < n; ++i) {
    Compiled& c = variants_[turn_++ % variants_.size()];
    if (c.ready.empty()) Refill(c);
    out.push_back(c.ready.back());
    c.ready.pop_back();
  }
  return true;
}

}  // namespace ptxdiff
