// Inputs in volume for code a backend compiled once: compile once, run
// every input.
//
// A backend that compiles a case and runs the code (ptxas with its SASS
// evaluator) and keeps the code (backends/ptxas/compiled_code.h)
// answers a tuple of a variant's register shape (every source that may be
// a runtime value one) with a run of the code, once that shape is
// compiled: ~1,000x cheaper than the compile a folding check costs. The
// source gives such tuples for each variant the backend compiled so: its
// systematic set (first tier, relations, middle values, edge pairs) in the
// register shape, then its endless random tail; a tuple of each variant in
// turn, in the order they were compiled. The backend runs a kernel (of
// variants compiled together) once for a tuple at each of its slots, so
// variants compiled side by side are best given side by side.
// The sources that cannot be runtime values (lop3's LUT, a SIMD selector,
// the carry-in) keep the compiled tuple's values, so that every tuple given
// runs on the code already compiled.

#ifndef PTXDIFF_CAMPAIGN_COMPILED_SOURCE_H_
#define PTXDIFF_CAMPAIGN_COMPILED_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "isa/tuple.h"

namespace ptxdiff {

// `t` in its variant's register shape: every source that may be a runtime
// value one, the operands as they are.
Tuple InRegisterShape(Tuple t);

class CompiledSource {
 public:
  // A variant whose register shape the backend compiled, for `witness` (a
  // tuple in that shape): its tuples join the turn.
  void Add(const Tuple& witness);

  // Appends `n` tuples, one of each variant in turn; false if no variant
  // was added.
  bool NextRun(size_t n, std::vector<Tuple>& out);

  size_t variants() const { return variants_.size(); }

 private:
  struct Compiled {
    Tuple witness;
    uint64_t count = 0;  // SystematicCount
    uint64_t next = 0;   // into the systematic set, then its tail
    // Its next few tuples, made together (a systematic set's tuples cost
    // less so than one at a time); `ready` of them left, from the back.
    std::vector<Tuple> ready;
  };
  // Makes c's next kRefill tuples.
  static void Refill(Compiled& c);
  std::vector<Compiled> variants_;
  size_t turn_ = 0;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_COMPILED_SOURCE_H_
