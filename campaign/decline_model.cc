#include "campaign/decline_model.h"

#include "isa/family_table.h"
#include "isa/operand_shape.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

constexpr int kSlotBits = 20;

bool HasZeroLowHalfImmediate(const Tuple& t) {
  const Variant& v = t.variant;
  for (int i = 0; i < NumSources(v); ++i) {
    if (t.IsRuntime(i) || IsSelectorSource(v, i) ||
        SourceMask(v, i) != ~uint64_t{0})
      continue;
    const uint64_t x = t.operands.v[i];
    if (x != 0 && Low(x, 32) == 0) return true;
  }
  return false;
}

}  // namespace

uint32_t DeclineClass(const Tuple& t, const Result& oracle) {
  if (!oracle.defined()) return kUndefinedResultClass;
  const bool identity =
      oracle.bits == Low(t.operands.v[0], ResultWidth(t.variant));
  return OperandShape(t) | uint32_t{identity} << 8 |
         uint32_t{oracle.carry} << 9 |
         (HasZeroLowHalfImmediate(t) ? kZeroLowHalfImmediate : 0);
}

DeclineModel::DeclineModel()
    : slots_(size_t{1} << kSlotBits),
      variant_answered_(AllVariants().size()),
      variant_declined_(AllVariants().size()),
      variant_unsupported_(AllVariants().size()),
      variant_valued_(AllVariants().size()),
      variant_faults_(AllVariants().size()) {}

bool DeclineModel::Declining(int32_t answered, int64_t declined,
                             int32_t min_answers) {
  return answered >= min_answers && declined * 16 >= int64_t{answered} * 15;
}

DeclineModel::Slot& DeclineModel::SlotFor(int index, uint32_t cls) {
  uint64_t h = (static_cast<uint64_t>(index) << kDeclineClassBits | cls) *
               0x9e3779b97f4a7c15ull;
  return slots_[h >> (64 - kSlotBits)];
}

void DeclineModel::Learn(int index, const TupleResult& answer, ClassOf cls) {
  variant_answered_[index].fetch_add(1, std::memory_order_relaxed);
  // A tuple the implementation crashed or hung on is filed, and its class
  // learned like a declining one: each costs the worker an isolation.
  const bool declined = answer.kind != ResultKind::kValue;
  if (!declined) {
    // Read first: written once per variant, not on every answer.
    std::atomic<bool>& valued = variant_valued_[index];
    if (!valued.load(std::memory_order_relaxed))
      valued.store(true, std::memory_order_relaxed);
  }
  if (!declined &&
      variant_declined_[index].load(std::memory_order_relaxed) == 0)
    return;
  Slot& s = SlotFor(index, cls());
  At(s.answered).fetch_add(1, std::memory_order_relaxed);
  if (!declined) return;
  At(s.declined).fetch_add(1, std::memory_order_relaxed);
  variant_declined_[index].fetch_add(1, std::memory_order_relaxed);
  if (answer.code == DeclineCode::kUnsupportedVariant) {
    variant_unsupported_[index].fetch_add(1, std::memory_order_relaxed);
  }
}

void DeclineModel::Quarantine(int index, ClassOf cls) {
  Slot& s = SlotFor(index, cls());
  // Declining (Declining's 15/16) whatever was answered before.
  const int32_t answered =
      At(s.answered).fetch_add(kMinAnswers, std::memory_order_relaxed);
  At(s.declined)
      .fetch_add(16 * (answered + kMinAnswers), std::memory_order_relaxed);
  variant_declined_[index].fetch_add(1, std::memory_order_relaxed);
  VariantFaults& f = variant_faults_[index];
  const uint32_t c = cls();
  // The first fault's class is written before its count says there is one;
  // a race between two first faults only delays the rule by a fault.
  if (At(f.faults).load(std::memory_order_acquire) == 0) {
    At(f.first_class).store(c, std::memory_order_relaxed);
  } else if (At(f.first_class).load(std::memory_order_relaxed) != c) {
    At(f.other_class).store(true, std::memory_order_relaxed);
  }
  At(f.faults).fetch_add(1, std::memory_order_release);
}

bool DeclineModel::FaultsOnEverything(int index) const {
  VariantFaults& f = variant_faults_[index];
  return At(f.faults).load(std::memory_order_relaxed) >= kMinVariantFaults &&
         At(f.other_class).load(std::memory_order_relaxed) &&
         !variant_valued_[index].load(std::memory_order_relaxed);
}

bool DeclineModel::Probe(int64_t& skipped) {
  // Probed again at the kKeepOneIn-th skipped tuple, then at twice as many,
  // and so on. A generator offers a class it cannot tell apart from the
  // others at its own rate (the systematic source: 10^5 a second), so
  // probing a fixed share would still keep the backend busy.
  const int64_t n = At(skipped).fetch_add(1, std::memory_order_relaxed) + 1;
  if (n >= kKeepOneIn && (n & (n - 1)) == 0) return true;
  skipped_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool DeclineModel::Unsupported(int index) const {
  const int32_t answered =
      variant_answered_[index].load(std::memory_order_relaxed);
  return answered >= 4 && variant_unsupported_[index].load(
                              std::memory_order_relaxed) == answered;
}

bool DeclineModel::Worth(int index, ClassOf cls) {
  // Nothing of this variant declined yet: it is not unsupported, no class of
  // it is declining, and its slot (a cache miss in a table of 24 MB) need
  // not be read.
  if (variant_declined_[index].load(std::memory_order_relaxed) == 0)
    return true;
  if (Unsupported(index)) return false;
  if (FaultsOnEverything(index)) return Probe(variant_faults_[index].skipped);
  Slot& s = SlotFor(index, cls());
  const int32_t class_answers = At(s.answered).load(std::memory_order_relaxed);
  const bool class_declining =
      Declining(class_answers, At(s.declined).load(std::memory_order_relaxed),
                kMinAnswers);
  // A variant that declines almost everything (min.u16x2 never folds) is
  // learned long before each of its classes is.
  const int32_t answered =
      variant_answered_[index].load(std::memory_order_relaxed);
  const int64_t declined =
      variant_declined_[index].load(std::memory_order_relaxed);
  const bool variant_declining =
      Declining(answered, declined, kMinVariantAnswers);
  if (!class_declining && !variant_declining) {
    const bool mostly_declined =
        answered >= kMinVariantAnswers && declined * 2 > answered;
    if (class_answers >= kMinAnswers || !mostly_declined) return true;
    // A class not yet learned in a variant that declines most tuples: only
    // kMinAnswers of it in flight until their answers are in.
    if (At(s.probes).fetch_add(1, std::memory_order_relaxed) <
        class_answers + kMinAnswers) {
      return true;
    }
    At(s.probes).fetch_sub(1, std::memory_order_relaxed);
    skipped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return Probe(s.skipped);
}

}  // namespace ptxdiff
