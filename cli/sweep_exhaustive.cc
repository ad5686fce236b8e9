#include "cli/sweep_exhaustive.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/commands.h"
#include "common/interrupt.h"
#include "harness/exhaustive_sweep.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// Variants listed one per line at most (the refuted first).
constexpr size_t kListed = 40;

std::string Duration(double seconds) {
  if (seconds < 60) return absl::StrFormat("%.0fs", seconds);
  if (seconds < 3600) {
    return absl::StrFormat("%dm%02ds", static_cast<int>(seconds) / 60,
                           static_cast<int>(seconds) % 60);
  }
  return absl::StrFormat("%dh%02dm", static_cast<int>(seconds) / 3600,
                         static_cast<int>(seconds) / 60 % 60);
}

// A line of elapsed time, share done, rate, time left and the variant.
void PrintProgress(const SweepProgress& p, std::ostream& err) {
  const double seconds = absl::ToDoubleSeconds(p.elapsed);
  const double rate = seconds > 0 ? p.done / seconds : 0;
  const std::string left =
      rate > 0 ? Duration((p.total - p.done) / rate) : std::string("?");
  err << absl::StrFormat(
      "sweep: %5s  %5.1f%% of %d inputs  %.0fk inputs/s  about %s left  (%s)\n",
      Duration(seconds), 100.0 * p.done / std::max<uint64_t>(1, p.total),
      p.total, rate / 1000, left,
      p.current != nullptr ? Spell(*p.current) : "");
}

// A sample run whole, no batch of it faulting the backend: a batch that
// faulted was never judged, and is no agreement.
bool CleanSample(const VariantSweep& s) {
  return !s.exhaustive && s.complete() && s.summary.counts.faulty_batches == 0;
}

const char* Outcome(const VariantSweep& s) {
  if (s.refuted()) return "refuted";
  if (s.proved()) return "proved";
  if (!s.complete()) return "stopped";
  if (CleanSample(s)) return "sampled";
  return "not proved";  // declined inputs, a faulty batch, the other reading
}

// One line of the per-variant list.
std::string VariantLine(const VariantSweep& s) {
  const JudgeCounts& c = s.summary.counts;
  std::string line = absl::StrFormat(
      "  %-10s %-34s %s of %s%d inputs", Outcome(s), Spell(s.variant),
      absl::StrCat(s.done), s.exhaustive ? absl::StrCat("2^", s.bits, " = ")
                                         : std::string("a sample of "),
      s.inputs);
  if (c.unspecified > 0)
    absl::StrAppend(&line, ", ", c.unspecified, " left open by the spec");
  if (c.mismatched > 0) absl::StrAppend(&line, ", ", c.mismatched, " disagree");
  if (c.declined > 0) absl::StrAppend(&line, ", ", c.declined, " declined");
  if (c.faulted > 0) absl::StrAppend(&line, ", ", c.faulted, " faulted");
  if (c.faulty_batches > 0) {
    absl::StrAppend(&line, ", ", c.faulty_batches,
                    c.faulty_batches == 1 ? " batch" : " batches",
                    " faulted the backend (not judged)");
  }
  if (!s.summary.mismatches.empty())
    absl::StrAppend(&line, "\n      e.g. ", s.summary.mismatches[0]);
  else if (!s.summary.faults.empty())
    absl::StrAppend(&line, "\n      e.g. ", s.summary.faults[0]);
  return line;
}

void PrintSummary(const std::vector<VariantSweep>& plan, double seconds,
                  std::ostream& out) {
  uint64_t done = 0;
  int proved = 0, refuted = 0, sampled = 0, other = 0;
  for (const VariantSweep& s : plan) {
    done += s.done;
    if (s.refuted()) {
      ++refuted;
    } else if (s.proved()) {
      ++proved;
    } else if (CleanSample(s)) {
      ++sampled;
    } else {
      ++other;
    }
  }
  out << absl::StrFormat(
      "sweep: %d inputs of %d variants in %.1f s (%.0f inputs/s)\n"
      "  proved      %d  every input agrees with the oracle (or is one the "
      "spec leaves open)\n"
      "  refuted     %d  some input disagrees or faults\n"
      "  sampled     %d  no disagreement in their sample (too wide to run "
      "every input)\n"
      "  not proved  %d  declined inputs, a faulty batch, or stopped\n",
      done, plan.size(), seconds, seconds > 0 ? done / seconds : 0, proved,
      refuted, sampled, other);
  std::vector<const VariantSweep*> order;
  for (const VariantSweep& s : plan) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->refuted() > b->refuted();
  });
  for (size_t i = 0; i < std::min(order.size(), kListed); ++i)
    out << VariantLine(*order[i]) << "\n";
  if (order.size() > kListed)
    out << "  (" << order.size() - kListed << " more variants)\n";
}

}  // namespace

int RunExhaustiveSweepCommand(const ParsedArgs& args, WorkerClient& client,
                              const std::vector<Variant>& variants,
                              Reading reading, std::ostream& out,
                              std::ostream& err) {
  auto max_bits = IntFlag(args, kMaxBitsFlag, 24, 1, 32);
  auto sample = IntFlag(args, kSampleFlag, 65536, 0, int64_t{1} << 32);
  auto seed = IntFlag(args, "seed", 1, 1, INT64_MAX);
  auto batch = IntFlag(args, "batch", 65536, 1, kMaxTuplesPerBatch);
  for (const absl::Status& s :
       {max_bits.status(), sample.status(), seed.status(), batch.status()}) {
    if (!s.ok()) {
      err << "ptxdiff sweep: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  std::vector<Variant> supported;
  for (const Variant& v : variants) {
    if (client.Supports(v)) supported.push_back(v);
  }
  const ExhaustiveOptions options{.max_bits = static_cast<int>(*max_bits),
                                  .sample = static_cast<uint64_t>(*sample),
                                  .seed = static_cast<uint64_t>(*seed),
                                  .batch = static_cast<size_t>(*batch),
                                  .reading = reading};
  std::vector<VariantSweep> plan =
      PlanExhaustiveSweep(supported, options, client.identity().forms);
  int exhaustive = 0;
  for (const VariantSweep& s : plan) exhaustive += s.exhaustive;
  out << absl::StrFormat(
      "sweep: exhaustive: %d variants of at most %d input bits, every input; "
      "%d wider ones, a sample of %d inputs each; %d of the %d variants "
      "selected the backend does not support\n",
      exhaustive, *max_bits, plan.size() - exhaustive, *sample,
      variants.size() - supported.size(), variants.size());
  out.flush();
  const ScopedInterruptHandler on_interrupt;
  const absl::Time start = absl::Now();
  RunExhaustiveSweep(
      client, plan, options, [] { return Interrupted(); },
      [&](const SweepProgress& p) { PrintProgress(p, err); });
  PrintSummary(plan, absl::ToDoubleSeconds(absl::Now() - start), out);
  if (Interrupted()) {
    err << "ptxdiff sweep: stopped; the variants not finished are not "
           "proved\n";
    return kExitInterrupted;
  }
  JudgeCounts all;
  bool refuted = false;
  for (const VariantSweep& s : plan) {
    if (!s.summary.environment_failure
             .empty())  // not the backend's: no verdict
      return Fail(err, "sweep",
                  absl::UnavailableError(s.summary.environment_failure));
    all += s.summary.counts;
    refuted = refuted || s.refuted();
  }
  const std::string nothing = NothingTestedError(all, "", 0);
  if (!nothing.empty()) err << "ptxdiff sweep: " << nothing << "\n";
  return refuted || all.faulty_batches > 0 || !nothing.empty() ? 1 : 0;
}

}  // namespace ptxdiff
