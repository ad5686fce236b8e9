#include "triage/minimizer.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/minimize_rounds.h"
#include "common/status_macros.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

constexpr int kMaxRounds = 200;
constexpr int kConfirmations = 2;

// The number of axes on which `v` could be plainer (axes.inc's Plainer
// column): its modifiers, and its signed types.
int ModifierCount(const Variant& v) {
  int count = 0;
  for (const AxisInfo& axis : AllAxes()) {
    count += axis.plainer(axis.get(v)) != axis.get(v);
  }
  return count;
}

// The variants one modifier plainer than `v` that the table allows, one per
// axis, in the order of axes.inc.
std::vector<Variant> PlainerVariants(const Variant& v) {
  std::vector<Variant> out;
  for (const AxisInfo& axis : AllAxes()) {
    Variant p = v;
    axis.set(p, axis.plainer(axis.get(v)));
    if (!(p == v) && IsLegal(p)) out.push_back(p);
  }
  return out;
}

// Operand values simpler than x: 0, 1, its highest and lowest set bit alone,
// its high or low half cleared, x shifted right (toward small shift amounts
// and positions), and x with each one set bit cleared.
std::vector<uint64_t> SimplerValues(uint64_t x, int width) {
  std::vector<uint64_t> out;
  if (x == 0) return out;
  auto add = [&](uint64_t y) {
    y = Low(y, width);
    if (std::popcount(y) < std::popcount(x) ||
        (std::popcount(y) == std::popcount(x) && y < x)) {
      out.push_back(y);
    }
  };
  add(0);
  add(1);
  add(uint64_t{1} << (63 - std::countl_zero(x)));
  add(x & (0 - x));
  add(x & LowMask(width / 2));
  add(x & ~LowMask(width / 2));
  for (int k : {1, 2, 4, 8, 16, 32}) add(x >> k);
  for (int bit = width - 1; bit >= 0; --bit) {
    if ((x >> bit) & 1) add(x & ~(uint64_t{1} << bit));
  }
  return out;
}

// The candidates whose result the spec defines, or leaves open, as the
// failing tuple's is: minimizing keeps the kind of finding (a crash on a
// defined value is not stepped to a division by zero), and a value mismatch
// cannot show where the spec leaves the value open, while a tool that
// crashes on division by zero would crash on each such candidate, round
// after round.
std::vector<Tuple> SameDefinedness(std::vector<Tuple> candidates, bool defined,
                                   Reading reading) {
  std::erase_if(candidates, [&](const Tuple& t) {
    return EvaluateWithReading(reading, t.variant, t.operands).defined() !=
           defined;
  });
  return candidates;
}

// A tuple while minimizing, with what the backend showed on it.
struct ShownTuple {
  Tuple tuple;
  Judgement seen;
  std::string fault_message;  // of a fault
};

absl::Status FaultStatus(const BackendFault& fault) {
  if (fault.kind == FaultKind::kEnvironment)  // no verdict: said as it is
    return EnvironmentFailure(absl::UnavailableError(fault.detail));
  return absl::UnavailableError(
      absl::StrCat("backend ", FaultKindName(fault.kind),
                   " while minimizing: ", fault.detail));
}

}  // namespace

Complexity ComplexityOf(const Tuple& t) {
  Complexity c{std::popcount(t.runtime), ModifierCount(t.variant), 0, 0};
  for (int i = 0; i < NumSources(t.variant); ++i) {
    const uint64_t x = Low(t.operands.v[i], SourceWidth(t.variant, i));
    c.set_bits += std::popcount(x);
    c.value_sum += x;
  }
  return c;
}

std::vector<Tuple> Simplifications(const Tuple& t) {
  std::vector<Tuple> out;
  for (const Variant& v : PlainerVariants(t.variant)) {
    out.push_back({v, t.operands,
                   static_cast<uint8_t>(t.runtime & RuntimeCapableSources(v))});
  }
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (t.IsRuntime(i)) {  // an immediate instead
      Tuple s = t;
      s.runtime &= ~(1 << i);
      out.push_back(s);
    }
  }
  for (int i = 0; i < NumSources(t.variant); ++i) {
    for (uint64_t y :
         SimplerValues(t.operands.v[i], SourceWidth(t.variant, i))) {
      Tuple s = t;
      s.operands.v[i] = y & SourceMask(t.variant, i);  // a canonical selector
      if (s.operands.v[i] != t.operands.v[i]) out.push_back(s);
    }
  }
  return out;
}

std::optional<Tuple> InRegisters(const Tuple& t) {
  const uint8_t all = RuntimeCapableSources(t.variant);
  if ((t.runtime & all) == all) return std::nullopt;
  return Tuple{t.variant, t.operands, all};
}

namespace {

// `t` with its 64-bit immediates cut to their low 32 bits, sign-extended or
// not; nullopt if it has none that the cut changes.
std::optional<Operands> Immediates64ReadAs32(const Tuple& t, bool sign) {
  Operands o = t.operands;
  bool changed = false;
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (!CanBeRuntime(t.variant, i) || t.IsRuntime(i) ||
        SourceWidth(t.variant, i) != 64)
      continue;
    const uint64_t low = o.v[i] & 0xffffffff;
    const uint64_t cut =
        sign ? static_cast<uint64_t>(SignExtend(low, 32)) : low;
    changed |= cut != o.v[i];
    o.v[i] = cut;
  }
  return changed ? std::optional<Operands>(o) : std::nullopt;
}

using TupleRunner = std::function<BatchOutcome(std::span<const Tuple>)>;

// `start` minimized in rounds (common/minimize_rounds.h): a candidate shows
// if it has start's verdict and `fault`, and the least complex of a round
// is kept. A hang costs a timeout per candidate that hangs: kept as found.
absl::StatusOr<ShownTuple> SimplestThatShows(const TupleRunner& run,
                                             ShownTuple start, CaseFault fault,
                                             Reading reading) {
  const Verdict verdict = start.seen.verdict;
  const bool defined = start.seen.oracle.defined();
  auto candidates = [&](const ShownTuple& best) {
    std::vector<ShownTuple> out;
    for (Tuple& t :
         SameDefinedness(Simplifications(best.tuple), defined, reading)) {
      out.push_back({.tuple = t});
    }
    return out;
  };
  auto shows =
      [&](std::span<ShownTuple> batch) -> absl::StatusOr<std::vector<bool>> {
    std::vector<Tuple> tuples;
    for (const ShownTuple& c : batch) tuples.push_back(c.tuple);
    const BatchOutcome out = run(tuples);
    if (out.fault) return FaultStatus(*out.fault);
    std::vector<bool> still(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      const TupleResult& r = out.results[i];
      const Judgement j = JudgeTuple(tuples[i], r, reading);
      still[i] = j.verdict == verdict && r.fault == fault;
      if (!still[i]) continue;
      batch[i].seen = j;
      if (fault != CaseFault::kNone) {
        batch[i].fault_message = out.messages[r.message];
      }
    }
    return still;
  };
  auto less_complex = [](const ShownTuple& a, const ShownTuple& b) {
    return ComplexityOf(a.tuple) < ComplexityOf(b.tuple);
  };
  const int rounds = fault == CaseFault::kHang ? 0 : kMaxRounds;
  PTXDIFF_ASSIGN_OR_RETURN(
      MinimizeRoundsResult<ShownTuple> min,
      MinimizeInRounds(std::move(start), candidates, shows, less_complex,
                       {.max_rounds = rounds}));
  return std::move(min.best);
}

}  // namespace

std::string ImmediatesCause(const Tuple& t, uint64_t backend_bits,
                            Reading reading) {
  constexpr absl::string_view kContrast =
      " (the same operands in registers agree)";
  // A reading of the immediates that gives exactly the backend's value is
  // one cause in every family (a tool's lexer); anything else is told apart
  // by family (a compiler folds each operation by its own rules).
  for (const bool sign : {false, true}) {
    const std::optional<Operands> cut = Immediates64ReadAs32(t, sign);
    if (!cut) continue;
    // Its bits even where the spec leaves them open (rem of a negative
    // operand): the same bits are the evidence.
    const Result r = EvaluateWithReading(reading, t.variant, *cut);
    if (r.bits == backend_bits) {
      return absl::StrCat("64-bit immediates read as their low 32 bits",
                          sign ? ", sign-extended" : "", kContrast);
    }
  }
  int widest = 0;
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (CanBeRuntime(t.variant, i) && !t.IsRuntime(i))
      widest = std::max(widest, SourceWidth(t.variant, i));
  }
  return absl::StrCat("wrong only with ", widest, "-bit immediates in ",
                      InfoOf(t.variant.family).opcode, kContrast);
}

absl::StatusOr<Finding> MinimizeMismatch(WorkerClient& client,
                                         const Tuple& failing,
                                         Reading reading) {
  const absl::Time start = absl::Now();
  int64_t calls = 0;
  auto run = [&](std::span<const Tuple> tuples) {
    ++calls;
    return client.Run(tuples);
  };
  BatchOutcome first = run({&failing, 1});
  if (first.fault) return FaultStatus(*first.fault);
  Judgement best_seen = JudgeTuple(failing, first.results[0], reading);
  if (best_seen.verdict != Verdict::kMismatch &&
      best_seen.verdict != Verdict::kFault) {
    return absl::FailedPreconditionError(
        absl::StrCat("no disagreement: ", client.identity().name,
                     " agrees with the oracle on ", Spell(failing.variant),
                     ", declines it, or the oracle leaves it unspecified"));
  }
  // What every simpler tuple must still show: any value mismatch (not only
  // the same differing bits: the aim is the plainest tuple that still shows
  // the cause), or a fault of the same kind.
  const CaseFault fault = first.results[0].fault;
  ShownTuple found{.tuple = failing, .seen = best_seen};
  if (best_seen.verdict == Verdict::kFault) {
    found.fault_message = first.messages[first.results[0].message];
  }
  PTXDIFF_ASSIGN_OR_RETURN(
      ShownTuple min, SimplestThatShows(run, std::move(found), fault, reading));
  const Tuple best = min.tuple;
  best_seen = min.seen;
  std::string fault_message = std::move(min.fault_message);
  // Confirm: the minimized tuple must disagree the same way every time (a
  // hang is not run again: it would cost another timeout). A value mismatch
  // with immediates is also run with them in registers, in the same batch:
  // if that agrees, the cause is the immediates, whatever the variant.
  bool repeats = true;
  std::string note;  // how the backend obtained the minimized tuple's value
  std::string cause;
  if (fault != CaseFault::kHang) {
    std::vector<Tuple> again(kConfirmations, best);
    const std::optional<Tuple> contrast =
        fault == CaseFault::kNone && client.identity().forms ? InRegisters(best)
                                                             : std::nullopt;
    if (contrast) again.push_back(*contrast);
    const BatchOutcome confirm = run(again);
    repeats = !confirm.fault.has_value();
    if (repeats) note = std::string(confirm.NoteOf(0));
    if (repeats && contrast &&
        JudgeTuple(*contrast, confirm.results.back(), reading).verdict ==
            Verdict::kAgree) {
      cause = ImmediatesCause(best, best_seen.backend_bits, reading);
    }
    for (size_t i = 0; repeats && i < kConfirmations; ++i) {
      const TupleResult& r = confirm.results[i];
      repeats = fault != CaseFault::kNone
                    ? r.kind == ResultKind::kFault && r.fault == fault
                    : r.kind == ResultKind::kValue &&
                          r.bits == best_seen.backend_bits &&
                          (!HasCarryOut(best.variant) ||
                           r.carry == best_seen.backend_carry);
    }
  }
  Finding f;
  f.kind = fault == CaseFault::kNone   ? FindingKind::kValueMismatch
           : fault == CaseFault::kHang ? FindingKind::kHang
                                       : FindingKind::kCrash;
  f.tuple = best;
  f.oracle = best_seen.oracle;
  f.reading = reading;
  if (fault == CaseFault::kNone) {
    f.backend_bits = best_seen.backend_bits;
    f.backend_carry = best_seen.backend_carry;
    f.backend_note = std::move(note);
  } else {
    f.batch = {best};
    f.detail = fault_message;
  }
  f.cause = std::move(cause);
  f.backend = client.identity().name;
  f.backend_identity = client.identity().Describe();
  f.minimize_backend_calls = calls;
  f.minimize_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  f.flaky = !repeats;
  return f;
}

absl::StatusOr<Finding> IsolateFault(WorkerClient& client,
                                     std::span<const Tuple> batch,
                                     absl::Time deadline) {
  const absl::Time start = absl::Now();
  // Why isolation must end now, if it must.
  const auto out_of_time = [&]() -> std::optional<absl::Status> {
    if (client.interrupted()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "isolating the fault was cut short (the client was told to stop) "
          "with ",
          batch.size(), " tuple(s) left"));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "isolating the fault reached the campaign's deadline with ",
          batch.size(), " tuple(s) left"));
    }
    return std::nullopt;
  };
  if (auto stop = out_of_time()) return *stop;
  int64_t calls = 1;
  BatchOutcome out = client.Run(batch);
  if (client.interrupted()) return *out_of_time();
  if (!out.fault) {
    return absl::FailedPreconditionError("the batch no longer faults (flaky)");
  }
  if (out.fault->kind == FaultKind::kEnvironment)
    return FaultStatus(*out.fault);
  BackendFault fault = *out.fault;
  while (batch.size() > 1) {
    const size_t half = batch.size() / 2;
    bool narrowed = false;
    for (auto part : {batch.subspan(0, half), batch.subspan(half)}) {
      if (auto stop = out_of_time()) return *stop;
      ++calls;
      const BatchOutcome o = client.Run(part);
      if (client.interrupted()) return *out_of_time();
      if (o.fault && o.fault->kind == FaultKind::kEnvironment)
        return FaultStatus(*o.fault);
      if (o.fault && o.fault->kind == fault.kind) {
        batch = part, fault = *o.fault, narrowed = true;
        break;
      }
    }
    if (!narrowed) break;  // only the combination faults
  }
  Finding f;
  f.kind = FromFault(fault.kind);
  f.tuple = batch[0];
  f.batch.assign(batch.begin(), batch.end());
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend = client.identity().name;
  f.backend_identity = client.identity().Describe();
  f.detail = fault.detail;
  f.minimize_backend_calls = calls;
  f.minimize_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return f;
}

}  // namespace ptxdiff
