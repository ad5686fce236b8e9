// The ptxas backend against a ptxas that rejects, crashes on or hangs on
// some modules (ptxas_faults.h): the culprits found, their variants paced,
// every batch answered within its budget; skipped without ptxas.

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "backends/backend.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_faults.h"
#include "backends/ptxas/testing/ptxas_backend_fixture.h"
#include "backends/ptxas/testing/requests.h"
#include "common/testing/scoped_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// A ptxas that rejects one line of the module (as it would an operand it
// cannot take) and crashes on another, around the real one.
std::string WriteFakePtxas(const std::string& dir, const std::string& real) {
  const std::string path = dir + "/fake-ptxas";
  std::ofstream(path)
      << "#!/bin/sh\n"
         "for last; do :; done\n"
         "case \"$1\" in --*) exec '"
      << real
      << "' \"$@\";; esac\n"
         "if grep -q 0x0dead000 \"$last\"; then kill -SEGV $$; fi\n"
         "sed -i 's/mov.b32 %r0, 0x0badc0de;/frobnicate.u32 %r0;/' \"$last\"\n"
         "exec '"
      << real << "' \"$@\"\n";
  chmod(path.c_str(), 0700);
  return path;
}

// A crash of ptxas on a tuple alone is a fault, its finding: it was a
// decline, and a campaign filed nothing (the twenty-first fault run).
TEST_F(PtxasBackendTest,
       RejectedTuplesAreDeclinedCrashingOnesFaultAndTheRestCompiled) {
  ScratchDir bin, tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path());
  auto backend = Make({{"ptxas", WriteFakePtxas(bin.path(), ptxas_)},
                       {"compiler", "ptxas"},
                       {"tuples_per_kernel", "2"}});
  ASSERT_NE(backend, nullptr);
  const RunReply reply = RunOrDie(*backend, Request({
                                                {"add.u32", {{1, 2}}},
                                                {"add.u32", {{0x0badc0de, 1}}},
                                                {"add.u32", {{3, 4}}},
                                                {"add.u32", {{0x0dead000, 1}}},
                                                {"add.u32", {{5, 6}}},
                                            }));
  EXPECT_EQ(reply.results[0], (TupleResult{.bits = 3}));
  EXPECT_EQ(reply.results[1].code, DeclineCode::kOperandForm);
  EXPECT_THAT(MessageOf(reply, 1), HasSubstr("ptxas: error"));
  EXPECT_THAT(MessageOf(reply, 1), HasSubstr("frobnicate"));
  EXPECT_EQ(reply.results[2], (TupleResult{.bits = 7}));
  EXPECT_EQ(reply.results[3].kind, ResultKind::kFault);
  EXPECT_EQ(reply.results[3].fault, CaseFault::kCrash);
  EXPECT_THAT(MessageOf(reply, 3),
              HasSubstr("ptxas crashed on the tuple alone: "));
  EXPECT_THAT(MessageOf(reply, 3), HasSubstr("killed by signal"));
  EXPECT_EQ(reply.results[4], (TupleResult{.bits = 11}));
  // Every private directory is gone, failures included.
  EXPECT_THAT(tmp.Files(), testing::IsEmpty());
}

// A private TMPDIR, and a ptxas that on any module holding `add.sat` counts
// its run and then does `action` (a shell command), and on the others runs
// the real one.
class PtxasFailingOnAddSat {
 public:
  PtxasFailingOnAddSat(const std::string& real, const std::string& action)
      : tmpdir_("TMPDIR", tmp_.path()),
        runs_(bin_.path() + "/runs"),
        path_(bin_.path() + "/ptxas") {
    std::ofstream(path_) << "#!/bin/sh\nfor last; do :; done\n"
                            "case \"$1\" in --*) exec '"
                         << real << "' \"$@\";; esac\necho run >> '" << runs_
                         << "'\nif grep -q add.sat \"$last\"; then " << action
                         << "; fi\nexec '" << real << "' \"$@\"\n";
    chmod(path_.c_str(), 0700);
  }
  const std::string& path() const { return path_; }
  // Its runs so far, on every module.
  int64_t Runs() const {
    std::ifstream in(runs_);
    return std::count(std::istreambuf_iterator<char>(in), {}, '\n');
  }

 private:
  ScratchDir bin_, tmp_;
  ScopedEnv tmpdir_;
  std::string runs_, path_;
};

// The twenty-first fault run: a ptxas that dies on every module holding
// `add.sat` was started for each of its tuples, each batch halved down to
// single tuples. A variant that crashed ptxas alone is compiled apart, and
// after kFaultsPerSuspectInBatch faults in a batch its other tuples there are
// left unrun: the clean tuples are compiled at once.
TEST_F(PtxasBackendTest, AVariantThatCrashesPtxasIsCompiledApartAndCapped) {
  const PtxasFailingOnAddSat fake(ptxas_, "kill -SEGV $$");
  auto backend = Make({{"ptxas", fake.path()}, {"compiler", "ptxas"}});
  ASSERT_NE(backend, nullptr);
  std::vector<Case> cases;
  for (uint64_t k = 0; k < 24; ++k) {
    cases.push_back({"add.sat.s32", {{k, 1}}});
    cases.push_back({"add.u32", {{k, 2}}});
  }
  for (int batch = 0; batch < 2; ++batch) {
    const int64_t before = fake.Runs();
    const RunReply reply = RunOrDie(*backend, Request(cases));
    int faults = 0, unrun = 0;
    for (size_t i = 0; i < cases.size(); i += 2) {
      const TupleResult& sat = reply.results[i];
      faults += sat.kind == ResultKind::kFault;
      unrun += sat.kind == ResultKind::kDecline &&
               absl::StartsWith(MessageOf(reply, i), kNotRunPrefix);
      EXPECT_EQ(reply.results[i + 1].kind, ResultKind::kValue)
          << "add.u32 " << i / 2 << " in batch " << batch;
    }
    EXPECT_GE(faults, kFaultsPerSuspectInBatch) << "batch " << batch;
    EXPECT_EQ(faults + unrun, 24) << "batch " << batch;
    if (batch == 1) {
      // Apart from the start: a module of add.u32 and a few of add.sat,
      // each halved to its faults (the halves run on parallel jobs, so a
      // few more than the cap may fault).
      EXPECT_LE(fake.Runs() - before, 16) << "ptxas runs in the 2nd batch";
    }
  }
}

// Deaf to TERM, as the twenty-second fault run's wrapper was.
constexpr char kHang[] = "trap '' TERM INT; sleep 1000";

// The twenty-second fault run: a ptxas hanging on every module holding
// `add.sat` ran under a fixed 60 s, so the client's reply timeout ended every
// batch, and the campaign isolated the hang by restarting the worker, batch
// after batch. Now each compile's timeout adapts to its size: the module
// that hangs is compiled again a variant at a time, then the variant's
// tuples one at a time; the hangs are faults, and the clean variant answers.
TEST_F(PtxasBackendTest, AVariantThatHangsPtxasIsFoundByVariantAndCapped) {
  const PtxasFailingOnAddSat fake(ptxas_, kHang);
  auto backend = Make({{"ptxas", fake.path()},
                       {"compiler", "ptxas"},
                       {"jobs", "1"},
                       // The confirmation of a hang: 3 s, not 10.
                       {"timeout_ms", "3000"}});
  ASSERT_NE(backend, nullptr);
  std::vector<Case> cases;
  for (uint64_t k = 0; k < 8; ++k) {
    cases.push_back({"add.sat.s32", {{k, 1}}});
    cases.push_back({"add.u32", {{k, 2}}});
  }
  for (int batch = 0; batch < 2; ++batch) {
    const int64_t before = fake.Runs();
    const RunReply reply = RunOrDie(*backend, Request(cases));
    int hangs = 0, unrun = 0;
    for (size_t i = 0; i < cases.size(); i += 2) {
      const TupleResult& sat = reply.results[i];
      if (sat.kind == ResultKind::kFault) {
        EXPECT_EQ(sat.fault, CaseFault::kHang);
        EXPECT_THAT(MessageOf(reply, i),
                    HasSubstr("ptxas hung on the tuple alone"));
        ++hangs;
      }
      unrun += sat.kind == ResultKind::kDecline &&
               absl::StartsWith(MessageOf(reply, i), kNotRunPrefix);
      ASSERT_EQ(reply.results[i + 1].kind, ResultKind::kValue)
          << "add.u32 " << i / 2 << " in batch " << batch << ": "
          << MessageOf(reply, i + 1);
      EXPECT_EQ(reply.results[i + 1].bits, i / 2 + 2);
    }
    EXPECT_EQ(hangs, kFaultsPerSuspectInBatch) << "batch " << batch;
    EXPECT_EQ(hangs + unrun, 8) << "batch " << batch;
    if (batch == 1) {
      // Apart from the start: add.u32's module, and add.sat's tuples one at
      // a time up to the cap.
      EXPECT_EQ(fake.Runs() - before, 1 + kFaultsPerSuspectInBatch);
    } else {
      // Both variants, then add.sat alone, then its tuples to the cap, the
      // first run twice (its hang confirmed): by halves, it would have been
      // 7 hangs, each a timeout.
      EXPECT_EQ(fake.Runs() - before, 4 + kFaultsPerSuspectInBatch);
    }
  }
}

// The twenty-third fault run: a ptxas only slow on `add.sat` (5 s) was
// filed as hanging on it, the adaptive timeout taken for a hang. A tuple
// alone past it is run again with kPtxasHangConfirm (here timeout_ms): one
// that then compiles is a value, and its variant, slow, goes in one module
// of its own with that timeout from then on.
TEST_F(PtxasBackendTest, AVariantPtxasIsOnlySlowOnIsNotAHang) {
  const PtxasFailingOnAddSat fake(ptxas_, "sleep 2");
  auto backend = Make({{"ptxas", fake.path()},
                       {"compiler", "ptxas"},
                       {"jobs", "1"},
                       {"timeout_ms", "6000"}});
  ASSERT_NE(backend, nullptr);
  std::vector<Case> cases;
  for (uint64_t k = 0; k < 4; ++k) {
    cases.push_back({"add.sat.s32", {{k, 1}}});
    cases.push_back({"add.u32", {{k, 2}}});
  }
  for (int batch = 0; batch < 2; ++batch) {
    const int64_t before = fake.Runs();
    const RunReply reply = RunOrDie(*backend, Request(cases));
    for (size_t i = 0; i < cases.size(); ++i) {
      ASSERT_EQ(reply.results[i].kind, ResultKind::kValue)
          << cases[i].spelling << " in batch " << batch << ": "
          << MessageOf(reply, i);
    }
    if (batch == 1) {
      // add.u32's module, and add.sat's one module.
      EXPECT_EQ(fake.Runs() - before, 2);
    }
  }
}

// A tuple with a runtime source before any runtime module was timed (the
// self-test's are all-immediate) was given the 60 s ceiling: `eval
// --runtime` on a ptxas hanging on it said "not run" at the budget where
// the immediate form said "hang" (the twenty-third fault run).
TEST_F(PtxasBackendTest, ARuntimeTupleThatHangsPtxasAloneIsAHang) {
  const PtxasFailingOnAddSat fake(ptxas_, kHang);
  auto backend = Make({{"ptxas", fake.path()},
                       {"compiler", "ptxas"},
                       // The ceiling past the budget: given it, the tuple
                       // is cut, never said to hang.
                       {"timeout_ms", "6000"},
                       {"batch_timeout_ms", "4000"},
                       {"execute", "1"}});
  ASSERT_NE(backend, nullptr);
  const RunReply reply =
      RunOrDie(*backend, Request({{"add.sat.s32", {{1, 2}}, /*runtime=*/1}}));
  ASSERT_EQ(reply.results[0].kind, ResultKind::kFault) << MessageOf(reply, 0);
  EXPECT_EQ(reply.results[0].fault, CaseFault::kHang);
}

// A batch whose compiles outlast its budget (three quarters of the client's
// reply timeout, said in HELLO) is answered, the rest of its tuples not run,
// and the next batch compiles the cut module's variants apart: the variant
// that is not slow answers.
TEST_F(PtxasBackendTest, ABatchPastItsBudgetAnswersAndTheNextCompilesApart) {
  const PtxasFailingOnAddSat fake(ptxas_, kHang);
  auto backend = Make({{"ptxas", fake.path()},
                       {"compiler", "ptxas"},
                       {"jobs", "1"},
                       // A budget below the adaptive timeout's floor: the
                       // hang is never judged, only cut.
                       {kReplyTimeoutKey, "400"}});
  ASSERT_NE(backend, nullptr);
  const std::vector<Case> cases = {{"add.sat.s32", {{1, 1}}},
                                   {"add.u32", {{1, 2}}},
                                   {"add.sat.s32", {{2, 1}}},
                                   {"add.u32", {{2, 2}}}};
  auto expect_not_run = [&](const RunReply& reply, int i) {
    ASSERT_EQ(reply.results[i].kind, ResultKind::kDecline) << i;
    EXPECT_TRUE(absl::StartsWith(MessageOf(reply, i), kNotRunPrefix));
    EXPECT_THAT(MessageOf(reply, i), HasSubstr("batch_timeout_ms=300"));
  };
  // One module, cut.
  RunReply reply = RunOrDie(*backend, Request(cases));
  for (int i = 0; i < 4; ++i) expect_not_run(reply, i);
  // A module a variant: add.sat's first (it comes first), cut; add.u32's
  // left unrun.
  reply = RunOrDie(*backend, Request(cases));
  for (int i = 0; i < 4; ++i) expect_not_run(reply, i);
  // add.sat has stalled twice, add.u32 once: add.u32's module first.
  reply = RunOrDie(*backend, Request(cases));
  EXPECT_EQ(reply.results[1], (TupleResult{.bits = 3}));
  EXPECT_EQ(reply.results[3], (TupleResult{.bits = 4}));
  expect_not_run(reply, 0);
  expect_not_run(reply, 2);
}

}  // namespace
}  // namespace ptxdiff
