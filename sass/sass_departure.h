// Where optimized code first goes wrong: the root-cause key of a value that
// ptxas's code computes wrong (docs/sass-evaluator.md, "Where the code
// departs").
//
// Two traced runs of one program at the same inputs are compared: the
// optimized code, whose store is wrong, and a reference whose stores are
// right (the -O0 code, which runs to the oracle's values). Registers do not
// correspond between the two, but values do: every value the right
// computation needs is one the reference computes somewhere. Following the
// wrong store's data back through the registers each instruction read, the
// instructions whose written value the reference never computes form the
// wrong value's history; the earliest of them read only values the
// reference computes too, and is where the code departs. The same miscompile
// reached from different programs (`neg` or `abs` before one clamp) departs
// at the same instruction, so its text with the registers unnamed (SassKey)
// is a root cause's key.
//
// It is a reading of the data flow, not a proof: a wrong value that the
// reference happens to compute elsewhere is not seen as departing, so a
// wrong selection between right values (a predicate gone wrong) has no
// departure, and FirstDeparture says so with nullopt.

#ifndef PTXDIFF_SASS_SASS_DEPARTURE_H_
#define PTXDIFF_SASS_SASS_DEPARTURE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "sass/sass_instruction.h"
#include "sass/sass_machine.h"

namespace ptxdiff {

struct SassDeparture {
  int64_t step = 0;  // its index in the optimized run's trace
  uint32_t pc = 0;
  std::string text;  // as it ran: "VIMNMX.U32 R5, R4, 0xffff, PT"
  std::string key;   // SassKey(text)
  uint32_t value = 0;  // what it wrote that the reference never computes
  // The instruction that wrote a predicate it read (a SEL's condition, a
  // guard), as it ran; empty if it read none.
  std::string condition;
};

// The instruction where `optimized` (a traced run) first departs from
// `reference` (a traced run of right code at the same inputs) on the way
// to its store `wrong`; nullopt where the store's data is a value the
// reference computes too.
std::optional<SassDeparture> FirstDeparture(const SassRun& optimized,
                                            const SassStore& wrong,
                                            const SassRun& reference);

// "departs first at +0x0080 `SEL R0, R0, 0xffff, !P1`, which wrote 0xffff,
// a value its -O0 code never computes (its condition from `ISETP...`)":
// where the reference is a run of the same PTX's -O0 code.
std::string DescribeDeparture(const SassDeparture& d);

// "executed code that departs first at `SEL R, R, 0xffff, !P`": the root
// cause a finding of code departing at `d` is filed under.
std::string DepartureCause(const SassDeparture& d);

// The operation of the instruction a DepartureCause names (kSel for the
// one above): what crash mode's frames name (fuzzers/cause_frames.h).
// nullopt for a text that is no departure cause, or whose instruction is
// none of sass_ops.inc's.
std::optional<SassOp> DepartingOperation(absl::string_view cause);

// An instruction's text as what two programs' instructions share when they
// do the same thing: register and predicate numbers dropped, constant-bank
// offsets unnamed, and the uniform datapath's forms read as the others
// (ptxas chooses it by where a value lives): "UIADD3 UR5, UP0, UR4,
// c[0x0][0x384], URZ" reads "IADD3 R, P, R, c[0x0][...], RZ". RZ and PT
// stay: they are values.
std::string SassKey(absl::string_view text);

}  // namespace ptxdiff

#endif  // PTXDIFF_SASS_SASS_DEPARTURE_H_
