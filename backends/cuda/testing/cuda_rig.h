// The CUDA backend on a simulated GPU (FakeCudaDriver), for its tests: the
// rig that makes one, the batches it is given, and what its answers must be.

#ifndef PTXDIFF_BACKENDS_CUDA_TESTING_CUDA_RIG_H_
#define PTXDIFF_BACKENDS_CUDA_TESTING_CUDA_RIG_H_

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {

inline Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

// What the fatal handler was called with (it returns, unlike ExitWorker).
struct Fatal {
  int calls = 0;
  int code = 0;
  std::string message;
};

// A backend on a fake GPU; the fake stays reachable through `fake` while the
// backend lives, and reports its leaks into `leaks` when the backend dies.
struct Rig {
  // Before `backend`, which writes into them when it is destroyed.
  std::string leaks = "(not destroyed)";
  Fatal fatal;
  FakeCudaDriver* fake = nullptr;
  std::unique_ptr<Backend> backend;

  absl::Status Make(const KeyValues& options,
                    FakeCudaDriver::Config config = {}) {
    config.leaks_at_exit = &leaks;
    auto driver = std::make_unique<FakeCudaDriver>(config);
    fake = driver.get();
    KeyValues all = {{"cache_dir", ""}};  // tests opt in to a disk cache
    all.insert(all.end(), options.begin(), options.end());
    auto made = MakeCudaBackend(all, std::move(driver),
                                [this](int code, const std::string& message) {
                                  ++fatal.calls;
                                  fatal.code = code;
                                  fatal.message = message;
                                });
    if (!made.ok()) return made.status();
    backend = std::move(*made);
    return absl::OkStatus();
  }
  void Destroy() { backend.reset(); }
};

// A batch of `counts[i]` tuples of `spellings[i]`, shuffled together, with
// edge and random operands, in the form a campaign sends most: every source
// that may be a runtime value one (the cached register kernels).
inline RunRequest Batch(const std::vector<std::string>& spellings,
                 const std::vector<int>& counts, uint64_t seed = 1) {
  RunRequest request;
  request.spellings = spellings;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < spellings.size(); ++i) {
    auto v = ParseVariant(spellings[i]);
    std::vector<Operands> operands(counts[i]);
    if (v.ok()) {
      FillEdgeTuples(*v, rng, operands);
    } else {
      for (Operands& o : operands) o.v[0] = rng();
    }
    const uint8_t form = v.ok() ? RuntimeCapableSources(*v) : 0;
    for (const Operands& o : operands) {
      request.tuples.push_back({static_cast<uint32_t>(i), o, form});
    }
  }
  std::shuffle(request.tuples.begin(), request.tuples.end(), rng);
  return request;
}

// Every tuple answered with the oracle's bits, and a `.cc` variant's with
// its carry.
inline void ExpectOracleResults(const RunRequest& request, const RunReply& reply) {
  ASSERT_EQ(reply.results.size(), request.tuples.size());
  int wrong = 0;
  for (size_t i = 0; i < request.tuples.size() && wrong < 5; ++i) {
    const WireTuple& t = request.tuples[i];
    const Variant v = V(request.spellings[t.variant_index]);
    const TupleResult& r = reply.results[i];
    const Result want = Evaluate(v, t.operands);
    if (r.kind != ResultKind::kValue || r.bits != want.bits ||
        (HasCarryOut(v) && r.carry != want.carry)) {
      ++wrong;
      ADD_FAILURE() << "tuple " << i << " " << ReplayLine(v, t.operands, want)
                    << ": got kind " << int(r.kind) << " bits 0x" << std::hex
                    << r.bits << " carry " << r.carry;
    }
  }
}

// One variant of every PTX family the kernels run (not vISA:
// WhyUnsupported), plus widths, operand forms and carries that stress the
// kernel frame.
inline std::vector<std::string> Assortment() {
  std::vector<std::string> spellings;
  for (const FamilyInfo& f : AllFamilies()) {
    bool first = true;
    ForEachVariant(f.family, [&](const Variant& v) {
      if (first && !WhyUnsupported(v, /*device_sm=*/100, /*max_ptx=*/90)) {
        spellings.push_back(Spell(v));
      }
      first = false;
    });
  }
  for (const char* s : {"mul.wide.u16",
                        "mad.wide.s32",
                        "mad.lo.u64",
                        "popc.b64",
                        "bfe.s64",
                        "bfi.b64",
                        "add.s16x2",
                        "max.relu.s16x2",
                        "div.u64",
                        "rem.s16",
                        "vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c",
                        "vmad.s32.s32.u32.sat.shr15 d, -a.b1, b.h0, c",
                        "vset.u32.u32.ge.add d, a.h1, b.b0, c",
                        "vshr.s32.s32.u32.sat.wrap d.h1, a.b3, b, c",
                        "add.cc.u32",
                        "sub.cc.s64",
                        "mad.hi.cc.s32",
                        "addc.cc.u64",
                        "subc.cc.u32",
                        "madc.lo.cc.s64"}) {
    spellings.push_back(s);
  }
  return spellings;
}


}  // namespace ptxdiff

#endif  // PTXDIFF_BACKENDS_CUDA_TESTING_CUDA_RIG_H_
