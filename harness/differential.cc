#include "harness/differential.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"

namespace ptxdiff {

namespace {

// "ptxdiff eval 'add.s32' 0x1 0x2 --runtime a": the command that replays `t`,
// in the operand form it was run in.
std::string EvalCommand(const Tuple& t) {
  const Variant& v = t.variant;
  return absl::StrCat(
      "ptxdiff eval '", Spell(v), "' ",
      absl::StrJoin(HexOperands(v, t.operands), " "),
      t.runtime != 0
          ? absl::StrCat(" --runtime ", RuntimeSourceNames(v, t.runtime))
          : "");
}

}  // namespace

std::string MismatchLine(const Tuple& t, const Result& oracle,
                         uint64_t backend_bits, absl::string_view backend_name,
                         bool backend_carry) {
  const Variant& v = t.variant;
  return absl::StrCat(
      EvalCommand(t), "  # oracle ", ResultText(v, oracle.bits, oracle.carry),
      ", ", backend_name, " ", ResultText(v, backend_bits, backend_carry));
}

std::string TupleFaultLine(const Tuple& t, const TupleResult& r,
                           const std::vector<std::string>& messages) {
  const absl::string_view message =
      r.message < messages.size() ? absl::string_view(messages[r.message]) : "";
  // The sweep's runtime forms (the twenty-third fault run's low): replayed
  // in the form that faulted, not all-immediate.
  return absl::StrCat(r.fault == CaseFault::kHang ? "hang" : "crash", " on ",
                      EvalCommand(t), ": ",
                      message.substr(0, message.find('\n')));
}

void DiffSummary::CountDecline(Family family, absl::string_view message) {
  ++declines[absl::StrCat(InfoOf(family).opcode, ": ", message)];
}

void DiffSummary::Merge(const DiffSummary& other) {
  counts += other.counts;
  for (const auto& [reason, n] : other.declines) declines[reason] += n;
  const auto append = [](const std::vector<std::string>& from,
                         std::vector<std::string>& to) {
    for (size_t i = 0; i < from.size() && to.size() < kMaxListed; ++i)
      to.push_back(from[i]);
  };
  append(other.mismatches, mismatches);
  append(other.faults, faults);
  if (environment_failure.empty())
    environment_failure = other.environment_failure;
}

std::vector<std::pair<std::string, int64_t>> DiffSummary::DeclinesByCount()
    const {
  std::vector<std::pair<std::string, int64_t>> out(declines.begin(),
                                                   declines.end());
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  return out;
}

namespace {

// Runs and judges one batch into `summary`, except the tuples the backend
// left not run, which are returned unjudged unless `last_send`; nullopt,
// nothing judged, when `stopped()` says so once it has run.
std::optional<std::vector<Tuple>> RunBatch(
    WorkerClient& client, std::span<const Tuple> batch, bool last_send,
    DiffSummary& summary, Reading reading,
    const std::function<bool()>& stopped) {
  const BatchOutcome out = client.Run(batch);
  if (stopped()) return std::nullopt;
  if (out.fault && out.fault->kind == FaultKind::kEnvironment) {
    summary.environment_failure = out.fault->detail;  // no verdict on it
    return std::nullopt;
  }
  if (out.fault) {
    ++summary.counts.faulty_batches;
    summary.faults.push_back(
        absl::StrCat(FaultKindName(out.fault->kind), " on a batch of ",
                     batch.size(), " tuples starting with ",
                     Spell(batch[0].variant), ": ", out.fault->detail));
    return std::vector<Tuple>();
  }
  std::vector<Tuple> unrun;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!last_send && NotRun(out.results[i], out.messages)) {
      unrun.push_back(batch[i]);
      continue;
    }
    const Judgement j = JudgeTuple(batch[i], out.results[i], reading);
    summary.counts.Count(j.verdict);
    if (j.verdict == Verdict::kDeclined) {
      const TupleResult& r = out.results[i];
      summary.CountDecline(
          batch[i].variant.family,
          r.message < out.messages.size() ? out.messages[r.message] : "");
    }
    if (j.verdict == Verdict::kFault &&
        summary.faults.size() < DiffSummary::kMaxListed) {
      summary.faults.push_back(
          TupleFaultLine(batch[i], out.results[i], out.messages));
    }
    if (j.verdict == Verdict::kMismatch &&
        summary.mismatches.size() < DiffSummary::kMaxListed) {
      summary.mismatches.push_back(
          MismatchLine(batch[i], j.oracle, j.backend_bits,
                       client.identity().name, j.backend_carry));
    }
  }
  return unrun;
}

}  // namespace

void RunDifferential(WorkerClient& client, std::span<const Tuple> tuples,
                     size_t batch_size, DiffSummary& summary, Reading reading,
                     const std::function<bool()>& stop) {
  const std::function<bool()> stopped = [&stop] { return stop && stop(); };
  std::vector<Tuple> pending(tuples.begin(), tuples.end());
  // What a batch left not run (a fault cap, a time budget) is sent again,
  // up to kMaxSendsAgain times, so that every tuple the backend can run is.
  for (int send = 0; send <= kMaxSendsAgain && !pending.empty(); ++send) {
    std::vector<Tuple> unrun;
    for (size_t begin = 0; begin < pending.size(); begin += batch_size) {
      if (stopped()) return;
      const std::span<const Tuple> batch(
          pending.data() + begin, std::min(batch_size, pending.size() - begin));
      std::optional<std::vector<Tuple>> left = RunBatch(
          client, batch, send == kMaxSendsAgain, summary, reading, stopped);
      if (!left) return;
      // Counted once, when first sent: a tuple sent again is one tuple.
      if (send == 0) summary.counts.tuples += batch.size();
      unrun.insert(unrun.end(), left->begin(), left->end());
    }
    pending = std::move(unrun);
  }
}

}  // namespace ptxdiff
