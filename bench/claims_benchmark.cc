// What ptxas claims with runtime operands: per family, how often it still
// stores a constant when some sources are kernel parameters (a claim about
// every value of them), and how often that claim disagrees with the oracle.
//
//   claims_benchmark [--arch=sm_90] [--variants=N] [--family=NAME]
//
// For each family the ptxas backend runs, N of its variants (spread over
// the family's list; default 16), each with its runtime tier
// (campaign/systematic_source.h: every source that may be a runtime value
// made one, the others at the first tier's extremes and fillers, the
// runtime source at five witnesses). A probe is one instruction with its
// immediates; it is claimed when ptxas answers it with a constant, and
// disagrees when that constant differs from a defined oracle result at any
// of its witnesses. Prints one row per family, the first disagreement of
// each as an `eval` line, and the time taken.

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "backends/ptxas/ptxas_backend.h"
#include "campaign/systematic_source.h"
#include "harness/differential.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

struct Flags {
  std::string arch = "sm_90";
  int variants = 16;
  std::string family;
};

// The runtime tier of `v`: the tuples of its set (with forms) that have a
// runtime source. It follows the first tier, within the set's first
// kScanned tuples.
std::vector<Tuple> RuntimeTier(const Variant& v) {
  constexpr uint64_t kScanned = 4000;
  std::vector<Tuple> set, tier;
  SystematicTuples(v, 0, kScanned, set, /*forms=*/true);
  for (const Tuple& t : set) {
    if (t.runtime != 0) tier.push_back(t);
  }
  return tier;
}

// A probe: one instruction, its form and its immediates.
std::string ProbeKey(const Tuple& t) {
  std::string key = absl::StrCat(Spell(t.variant), "/", t.runtime);
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (!t.IsRuntime(i)) absl::StrAppend(&key, "/", t.operands.v[i]);
  }
  return key;
}

struct FamilyCounts {
  int variants = 0;
  int64_t probes = 0, claimed = 0, disagreeing = 0;
  std::string first_disagreement;
};

// Runs `tuples` on `backend` in batches and adds what it claims to `counts`.
absl::Status Measure(Backend& backend, const std::vector<Tuple>& tuples,
                     FamilyCounts& counts) {
  struct Probe {
    bool claimed = false, disagrees = false;
  };
  absl::flat_hash_map<std::string, Probe> probes;
  constexpr size_t kBatch = 4096;
  for (size_t begin = 0; begin < tuples.size(); begin += kBatch) {
    const size_t end = std::min(tuples.size(), begin + kBatch);
    RunRequest request;
    absl::flat_hash_map<Variant, uint32_t> index;
    for (size_t i = begin; i < end; ++i) {
      auto [it, added] =
          index.try_emplace(tuples[i].variant, request.spellings.size());
      if (added) request.spellings.push_back(Spell(tuples[i].variant));
      request.tuples.push_back(
          {it->second, tuples[i].operands, tuples[i].runtime});
    }
    RunReply reply;
    if (absl::Status s = backend.Run(request, reply); !s.ok()) return s;
    for (size_t i = begin; i < end; ++i) {
      const Tuple& t = tuples[i];
      const TupleResult& r = reply.results[i - begin];
      Probe& p = probes[ProbeKey(t)];
      if (r.kind != ResultKind::kValue) continue;
      p.claimed = true;
      const Judgement j = JudgeTuple(t, r);
      if (j.verdict == Verdict::kMismatch && !p.disagrees) {
        p.disagrees = true;
        if (counts.first_disagreement.empty()) {
          counts.first_disagreement = MismatchLine(t, j.oracle, j.backend_bits,
                                                   "ptxas", j.backend_carry);
        }
      }
    }
  }
  for (const auto& [key, p] : probes) {
    ++counts.probes;
    counts.claimed += p.claimed;
    counts.disagreeing += p.disagrees;
  }
  return absl::OkStatus();
}

int Main(const Flags& flags) {
  auto backend = MakePtxasBackend({{"arch", flags.arch}});
  if (!backend.ok()) {
    std::fprintf(stderr, "claims_benchmark: %s\n",
                 std::string(backend.status().message()).c_str());
    return 1;
  }
  const WorkerIdentity id = (*backend)->Identity();
  const std::vector<bool> supported = SupportedVariants(id);
  std::map<int, std::vector<Variant>> by_family;
  for (size_t i = 0; i < AllVariants().size(); ++i) {
    const Variant& v = AllVariants()[i];
    if (supported[i] &&
        (flags.family.empty() || InfoOf(v.family).opcode == flags.family)) {
      by_family[static_cast<int>(v.family)].push_back(v);
    }
  }
  std::printf("claims_benchmark: %s, up to %d variants per family\n",
              id.Describe().c_str(), flags.variants);
  std::printf("%-10s %8s %8s %8s %7s %11s %7s\n", "family", "variants",
              "probes", "claimed", "%", "disagreeing", "%");
  const auto start = std::chrono::steady_clock::now();
  FamilyCounts total;
  std::vector<std::string> disagreements;
  for (const auto& [family, variants] : by_family) {
    FamilyCounts counts;
    const size_t step = std::max<size_t>(1, variants.size() / flags.variants);
    std::vector<Tuple> tuples;
    for (size_t i = 0; i < variants.size() && counts.variants < flags.variants;
         i += step) {
      ++counts.variants;
      for (const Tuple& t : RuntimeTier(variants[i])) tuples.push_back(t);
    }
    if (absl::Status s = Measure(**backend, tuples, counts); !s.ok()) {
      std::fprintf(stderr, "claims_benchmark: %s\n",
                   std::string(s.message()).c_str());
      return 1;
    }
    const absl::string_view name = InfoOf(static_cast<Family>(family)).opcode;
    std::printf(
        "%-10s %8d %8lld %8lld %6.1f%% %11lld %6.1f%%\n",
        std::string(name).c_str(), counts.variants,
        static_cast<long long>(counts.probes),
        static_cast<long long>(counts.claimed),
        counts.probes ? 100.0 * counts.claimed / counts.probes : 0.0,
        static_cast<long long>(counts.disagreeing),
        counts.claimed ? 100.0 * counts.disagreeing / counts.claimed : 0.0);
    std::fflush(stdout);
    total.variants += counts.variants;
    total.probes += counts.probes;
    total.claimed += counts.claimed;
    total.disagreeing += counts.disagreeing;
    if (!counts.first_disagreement.empty())
      disagreements.push_back(counts.first_disagreement);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%-10s %8d %8lld %8lld %6.1f%% %11lld %6.1f%%\n", "all",
              total.variants, static_cast<long long>(total.probes),
              static_cast<long long>(total.claimed),
              total.probes ? 100.0 * total.claimed / total.probes : 0.0,
              static_cast<long long>(total.disagreeing),
              total.claimed ? 100.0 * total.disagreeing / total.claimed : 0.0);
  std::printf(
      "(claimed: %% of probes; disagreeing: %% of claimed probes) in %.1f s\n",
      seconds);
  if (!disagreements.empty()) std::printf("first disagreement per family:\n");
  for (const std::string& d : disagreements) std::printf("  %s\n", d.c_str());
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  ptxdiff::Flags flags;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--arch=")) {
      flags.arch = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--variants=") &&
               absl::SimpleAtoi(arg, &flags.variants) && flags.variants > 0) {
    } else if (absl::ConsumePrefix(&arg, "--family=")) {
      flags.family = std::string(arg);
    } else {
      std::fprintf(stderr,
                   "usage: claims_benchmark [--arch=sm_90] [--variants=N] "
                   "[--family=NAME]\n");
      return 2;
    }
  }
  return ptxdiff::Main(flags);
}
