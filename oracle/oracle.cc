#include "oracle/oracle.h"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/bits.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

constexpr Result Defined(uint64_t bits) { return {bits, Undefined::kDefined}; }

using EvalFn = Result (*)(const Variant&, const Operands&);
constexpr Result WithCarry(uint64_t bits, bool carry) {
  return {bits, Undefined::kDefined, carry};
}

// ---------------------------------------------------------------------------
// Helpers of more than one section
// ---------------------------------------------------------------------------

// Reads source `x` of type `t` as a mathematical integer.
inline int64_t Value(uint64_t x, Type t) {
  const int w = TypeWidth(t);
  return IsSigned(t) ? SignExtend(x, w) : static_cast<int64_t>(Low(x, w));
}

// x clamped to the s32 range, as `.sat` does.
inline int64_t ClampS32(i128 x) {
  return static_cast<int64_t>(std::clamp<i128>(x, INT32_MIN, INT32_MAX));
}

// Byte i of x as a signed or unsigned value.
inline int64_t Byte(uint64_t x, int i, bool s) {
  const uint64_t b = (x >> (8 * i)) & 0xff;
  return s ? SignExtend(b, 8) : static_cast<int64_t>(b);
}

inline i128 Clamp(i128 x, i128 lo, i128 hi) { return std::clamp(x, lo, hi); }

// The evaluators, one file per PTX ISA section. They are parts of this
// translation unit rather than files compiled on their own so that each
// batch loop below (Loop<kEval>) can inline its evaluator.
#include "oracle/eval_integer.inc"
#include "oracle/eval_logic_compare.inc"
#include "oracle/eval_video.inc"
#include "oracle/eval_visa.inc"

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

// One evaluator per family, set by name: a family added to families.inc
// without one fails the static_assert below.
constexpr std::array<EvalFn, kNumFamilies> BuildEvaluators() {
  std::array<EvalFn, kNumFamilies> evaluators{};
  auto set = [&](Family f, EvalFn fn) { evaluators[static_cast<int>(f)] = fn; };
  set(Family::kAdd, EvalAddSub);
  set(Family::kSub, EvalAddSub);
  set(Family::kMul, EvalMul);
  set(Family::kMad, EvalMad);
  set(Family::kMul24, EvalMul24);
  set(Family::kMad24, EvalMad24);
  set(Family::kSad, EvalSad);
  set(Family::kDiv, EvalDivRem);
  set(Family::kRem, EvalDivRem);
  set(Family::kAbs, EvalAbsNeg);
  set(Family::kNeg, EvalAbsNeg);
  set(Family::kMin, EvalMinMax);
  set(Family::kMax, EvalMinMax);
  set(Family::kPopc, EvalPopc);
  set(Family::kClz, EvalClz);
  set(Family::kBfind, EvalBfind);
  set(Family::kFns, EvalFns);
  set(Family::kBrev, EvalBrev);
  set(Family::kBfe, EvalBfe);
  set(Family::kBfi, EvalBfi);
  set(Family::kBmsk, EvalBmsk);
  set(Family::kSzext, EvalSzext);
  set(Family::kDp4a, EvalDp4a);
  set(Family::kDp2a, EvalDp2a);
  set(Family::kShf, EvalShf);
  set(Family::kAnd, EvalLogic);
  set(Family::kOr, EvalLogic);
  set(Family::kXor, EvalLogic);
  set(Family::kNot, EvalLogic);
  set(Family::kCnot, EvalLogic);
  set(Family::kLop3, EvalLop3);
  set(Family::kShl, EvalShift);
  set(Family::kShr, EvalShift);
  set(Family::kPrmt, EvalPrmt);
  set(Family::kSet, EvalSet);
  set(Family::kSetp, EvalSetp);
  set(Family::kSelp, EvalSelp);
  set(Family::kSlct, EvalSlct);
  set(Family::kCvt, EvalCvt);
  set(Family::kAddc, EvalAddc);
  set(Family::kSubc, EvalSubc);
  set(Family::kMadc, EvalMadc);
  set(Family::kVadd, EvalVideo);
  set(Family::kVsub, EvalVideo);
  set(Family::kVabsdiff, EvalVideo);
  set(Family::kVmin, EvalVideo);
  set(Family::kVmax, EvalVideo);
  set(Family::kVshl, EvalVideo);
  set(Family::kVshr, EvalVideo);
  set(Family::kVmad, EvalVmad);
  set(Family::kVset, EvalVset);
  set(Family::kVadd2, EvalVadd2);
  set(Family::kVsub2, EvalVsub2);
  set(Family::kVavrg2, EvalVavrg2);
  set(Family::kVabsdiff2, EvalVabsd2);
  set(Family::kVmin2, EvalVmin2);
  set(Family::kVmax2, EvalVmax2);
  set(Family::kVset2, EvalVset2);
  set(Family::kVadd4, EvalVadd4);
  set(Family::kVsub4, EvalVsub4);
  set(Family::kVavrg4, EvalVavrg4);
  set(Family::kVabsdiff4, EvalVabsd4);
  set(Family::kVmin4, EvalVmin4);
  set(Family::kVmax4, EvalVmax4);
  set(Family::kVset4, EvalVset4);
  set(Family::kVisaShl, EvalVisaShl);
  return evaluators;
}
constexpr std::array<EvalFn, kNumFamilies> kEvaluators = BuildEvaluators();
static_assert(std::ranges::none_of(kEvaluators,
                                   [](EvalFn f) { return f == nullptr; }),
              "every family needs an evaluator");

// The tight loop of EvaluateBatch, instantiated once per evaluator so that
// the evaluator is inlined and the variant's axes are loop-invariant.
template <EvalFn kEval>
void Loop(const Variant& variant, const Operands* in, Result* out, size_t n) {
  const Variant v = variant;  // a local copy: stores to `out` cannot alias it
  for (size_t i = 0; i < n; ++i) out[i] = kEval(v, in[i]);
}

using LoopFn = void (*)(const Variant&, const Operands*, Result*, size_t);

template <size_t... I>
constexpr std::array<LoopFn, kNumFamilies> MakeLoops(
    std::index_sequence<I...>) {
  return {&Loop<kEvaluators[I]>...};
}

// Batch loops for the commonest plain variants, with everything that depends
// only on the variant taken out of the loop. Each must equal Loop<Eval...>
// (OracleTest.BatchEqualsOneByOne checks every variant).
void LoopAddSub(const Variant& v, const Operands* in, Result* out, size_t n) {
  if (v.sat || v.cc || IsPacked(v.type)) return Loop<EvalAddSub>(v, in, out, n);
  const uint64_t mask = LowMask(TypeWidth(v.type));
  if (v.family == Family::kSub) {
    for (size_t i = 0; i < n; ++i)
      out[i] = Defined((in[i].v[0] - in[i].v[1]) & mask);
  } else {
    for (size_t i = 0; i < n; ++i)
      out[i] = Defined((in[i].v[0] + in[i].v[1]) & mask);
  }
}

template <bool kMax>
void LoopMinMaxS32(const Operands* in, Result* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int32_t a = static_cast<int32_t>(in[i].v[0]);
    const int32_t b = static_cast<int32_t>(in[i].v[1]);
    out[i] =
        Defined(static_cast<uint32_t>(kMax ? std::max(a, b) : std::min(a, b)));
  }
}

template <bool kMax>
void LoopMinMaxU32(const Operands* in, Result* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t a = static_cast<uint32_t>(in[i].v[0]);
    const uint32_t b = static_cast<uint32_t>(in[i].v[1]);
    out[i] = Defined(kMax ? std::max(a, b) : std::min(a, b));
  }
}

void LoopMinMax(const Variant& v, const Operands* in, Result* out, size_t n) {
  const bool is_max = v.family == Family::kMax;
  if (v.relu || (v.type != Type::kS32 && v.type != Type::kU32)) {
    return Loop<EvalMinMax>(v, in, out, n);
  }
  if (v.type == Type::kS32) {
    return is_max ? LoopMinMaxS32<true>(in, out, n)
                  : LoopMinMaxS32<false>(in, out, n);
  }
  return is_max ? LoopMinMaxU32<true>(in, out, n)
                : LoopMinMaxU32<false>(in, out, n);
}

template <bool kSigned>
void LoopBfe32(const Operands* in, Result* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = static_cast<uint32_t>(in[i].v[0]);
    const uint32_t pos = in[i].v[1] & 0xff, len = in[i].v[2] & 0xff;
    const uint32_t bits = pos > 31 ? 0 : std::min(len, 32 - pos);
    const uint64_t keep = (uint64_t{1} << bits) - 1;
    const uint64_t field = (a >> std::min(pos, 32u)) & keep;
    const bool sbit =
        kSigned && len != 0 && ((a >> std::min(pos + len - 1, 31u)) & 1);
    out[i] = Defined((field | (sbit ? ~keep : 0)) & 0xffffffff);
  }
}

void LoopBfe(const Variant& v, const Operands* in, Result* out, size_t n) {
  if (v.type == Type::kS32) return LoopBfe32<true>(in, out, n);
  if (v.type == Type::kU32) return LoopBfe32<false>(in, out, n);
  return Loop<EvalBfe>(v, in, out, n);
}

constexpr std::array<LoopFn, kNumFamilies> WithFastLoops(
    std::array<LoopFn, kNumFamilies> loops) {
  loops[static_cast<int>(Family::kAdd)] = LoopAddSub;
  loops[static_cast<int>(Family::kSub)] = LoopAddSub;
  loops[static_cast<int>(Family::kMin)] = LoopMinMax;
  loops[static_cast<int>(Family::kMax)] = LoopMinMax;
  loops[static_cast<int>(Family::kBfe)] = LoopBfe;
  return loops;
}

constexpr std::array<LoopFn, kNumFamilies> kLoops =
    WithFastLoops(MakeLoops(std::make_index_sequence<kNumFamilies>()));

}  // namespace

absl::string_view Describe(Undefined why) {
  switch (why) {
    case Undefined::kDefined:
      return "defined";
    case Undefined::kDivisionByZero:
      return "division by zero yields an unspecified, machine-specific value "
             "(PTX ISA 9.7.1.8)";
    case Undefined::kRemainderSign:
      return "remainder of negative operands is machine-dependent: truncating "
             "and flooring division disagree here (PTX ISA 9.7.1.9)";
    case Undefined::kFnsBaseOutOfRange:
      return "fns base must be <= 31, otherwise behavior is undefined "
             "(PTX ISA 9.7.1.17)";
    case Undefined::kVmadAmbiguous:
      return "vmad pseudocode and prose give different results here "
             "(docs/spec-notes.md)";
    case Undefined::kVisaSatOverflow:
      return "SHL.sat result not within 33 bits is undefined (vISA SHL notes)";
    case Undefined::kSimdAccumulateAmbiguous:
      return "SIMD video .add: the pseudocode (exact lane results) and the "
             "prose (lane-wide results) accumulate different sums here "
             "(PTX ISA 9.7.18.2, docs/spec-notes.md)";
  }
  return "unknown";
}

absl::string_view Token(Undefined why) {
  static constexpr std::array<absl::string_view, kNumUndefinedReasons> kTokens =
      {"defined",
       "division-by-zero",
       "remainder-sign",
       "fns-base",
       "vmad-ambiguous",
       "visa-sat-overflow",
       "simd-accumulate-ambiguous"};
  return kTokens[static_cast<int>(why)];
}

std::string ReplayLine(const Variant& v, const Operands& operands,
                       const Result& result) {
  return absl::StrCat("ptxdiff eval '", Spell(v), "' ",
                      absl::StrJoin(HexOperands(v, operands), " "), " -> ",
                      ResultText(v, result.bits, result.carry), " (",
                      Token(result.undefined), ")");
}

Result Evaluate(const Variant& v, const Operands& operands) {
  return kEvaluators[static_cast<int>(v.family)](v, operands);
}

void EvaluateBatch(const Variant& v, std::span<const Operands> operands,
                   std::span<Result> results) {
  kLoops[static_cast<int>(v.family)](v, operands.data(), results.data(),
                                     operands.size());
}

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
