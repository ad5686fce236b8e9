// The ptxas backend's compiled code, kept across batches (compiled_code.h):
// a tuple whose key was compiled runs on that code without ptxas, and a
// kernel is never served for another key. Skipped without ptxas.

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/chunk_plan.h"
#include "backends/ptxas/testing/requests.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

class PtxasCodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ptxas = FindPtxas({});
    if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
    // A ptxas that logs each compile (a run with -arch), so that a test can
    // tell a batch answered without one.
    dir_ = testing::TempDir() + "/ptxas-cache-XXXXXX";
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
    wrapper_ = dir_ + "/ptxas";
    log_ = dir_ + "/compiles";
    // It also logs how many kernels each module holds.
    entries_ = dir_ + "/entries";
    std::ofstream(wrapper_)
        << "#!/bin/sh\n"
        << "case \"$*\" in *-arch*) echo run >> " << log_ << ";; esac\n"
        << "for a; do case $a in *.ptx) grep -c '^.visible .entry' \"$a\" >> "
        << entries_ << ";; esac; done\n"
        << "exec " << *ptxas << " \"$@\"\n";
    chmod(wrapper_.c_str(), 0755);
  }
  void TearDown() override {
    if (dir_.empty()) return;
    unlink(log_.c_str());
    unlink(entries_.c_str());
    unlink(wrapper_.c_str());
    rmdir(dir_.c_str());
  }

  std::unique_ptr<Backend> Make(KeyValues options = {}) {
    options.push_back({"ptxas", wrapper_});
    options.push_back({"compiler", "ptxas"});
    auto backend = MakePtxasBackend(options);
    EXPECT_TRUE(backend.ok()) << backend.status();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  int Compiles() const {
    std::ifstream in(log_);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) ++n;
    return n;
  }

  // The kernels of every module compiled so far.
  int Kernels() const {
    std::ifstream in(entries_);
    int n = 0, total = 0;
    while (in >> n) total += n;
    return total;
  }

  std::string dir_, wrapper_, log_, entries_;
};

// The oracle's value of a case.
uint64_t Want(const Case& c) {
  return Evaluate(ParseVariant(c.spelling).value(), c.operands).bits;
}

TEST_F(PtxasCodeCacheTest, ATupleWhoseKeyWasCompiledRunsWithoutPtxas) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  RunReply first = RunOrDie(*backend, Request({{"add.u32", {{5, 7}}, 0b11}}));
  ASSERT_EQ(first.results[0].kind, ResultKind::kValue) << MessageOf(first, 0);
  EXPECT_FALSE(first.results[0].reused);
  const int compiles = Compiles();
  EXPECT_GE(compiles, 1);
  // Other runtime values, in a later batch: the kept code, run again.
  std::vector<Case> later;
  for (uint64_t a = 0; a < 300; ++a) {
    later.push_back({"add.u32", {{a * 0x01010101, 0xffffff00 + a}}, 0b11});
  }
  const RunReply reply = RunOrDie(*backend, Request(later));
  EXPECT_EQ(Compiles(), compiles);
  for (size_t i = 0; i < later.size(); ++i) {
    ASSERT_EQ(reply.results[i].kind, ResultKind::kValue) << MessageOf(reply, i);
    EXPECT_EQ(reply.results[i].bits, Want(later[i])) << i;
    EXPECT_TRUE(reply.results[i].reused) << i;
    EXPECT_THAT(reply.NoteOf(i), HasSubstr("executed: "));
  }
}

// Runtime forms are compiled into code, which ptxas does faster per tuple in
// kernels of kRuntimeTuplesPerKernel tuples than in the 64 of a folding
// check's kernel.
TEST_F(PtxasCodeCacheTest, RuntimeFormsGoIntoSmallerKernels) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  std::vector<Case> cases;  // 64 keys: b an immediate of its own each
  for (uint64_t b = 0; b < 64; ++b) cases.push_back({"add.u32", {{1, b}}, 0b01});
  const int before = Kernels();  // the backend's self-test
  const RunReply reply = RunOrDie(*backend, Request(cases));
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(reply.results[i].kind, ResultKind::kValue) << MessageOf(reply, i);
  }
  EXPECT_EQ(Kernels() - before, 64 / kRuntimeTuplesPerKernel);
}

// A later batch's tuples of keys that share kernels, a few of one key and
// many of another, interleaved: each kernel is run in rounds, a round
// filling a slot per key, and each tuple gets its own value from its own
// slot.
TEST_F(PtxasCodeCacheTest, KeysSharingAKernelAreRunInRounds) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  std::vector<Case> keys;  // 20 keys (two kernels): b an immediate each
  for (uint64_t b = 0; b < 20; ++b) keys.push_back({"shl.b32", {{1, b}}, 0b01});
  keys.push_back({"min.s32", {{1, 2}}, 0b11});
  RunOrDie(*backend, Request(keys));
  const int compiles = Compiles();
  std::vector<Case> later;  // key b gets b % 5 + 1 tuples; min.s32 10
  for (uint64_t n = 0; n < 5; ++n) {
    for (uint64_t b = 0; b < 20; ++b) {
      if (n > b % 5) continue;
      later.push_back({"shl.b32", {{0x1001 * (n + 3), b}}, 0b01});
    }
    later.push_back({"min.s32", {{n, 0xfffffff0 + n}}, 0b11});
    later.push_back({"min.s32", {{0x80000000 + n, n}}, 0b11});
  }
  const RunReply reply = RunOrDie(*backend, Request(later));
  EXPECT_EQ(Compiles(), compiles);
  for (size_t i = 0; i < later.size(); ++i) {
    ASSERT_EQ(reply.results[i].kind, ResultKind::kValue) << MessageOf(reply, i);
    EXPECT_EQ(reply.results[i].bits, Want(later[i])) << i;
    EXPECT_TRUE(reply.results[i].reused) << i;
  }
}

TEST_F(PtxasCodeCacheTest, AKernelIsNeverServedForAnotherKey) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  // shl by an immediate 3, a at runtime: compiled and kept.
  RunOrDie(*backend, Request({{"shl.b32", {{1, 3}}, 0b01},
                              {"shr.u32", {{0x80, 3}}, 0b01}}));
  const int compiles = Compiles();
  // Another immediate, another form, another variant: each compiled, each
  // the oracle's value, none served by the kernel of shl by 3.
  const std::vector<Case> others = {
      {"shl.b32", {{1, 5}}, 0b01},
      {"shl.b32", {{1, 3}}, 0b11},
      {"shl.b64", {{1, 3}}, 0b01},
      {"shr.u32", {{0x80, 5}}, 0b01},
      {"shr.s32", {{0x80000000, 3}}, 0b01},
  };
  const RunReply reply = RunOrDie(*backend, Request(others));
  EXPECT_GT(Compiles(), compiles);
  for (size_t i = 0; i < others.size(); ++i) {
    ASSERT_EQ(reply.results[i].kind, ResultKind::kValue) << MessageOf(reply, i);
    EXPECT_EQ(reply.results[i].bits, Want(others[i])) << others[i].spelling;
    EXPECT_FALSE(reply.results[i].reused) << others[i].spelling;
  }
  // The kept ones still answer for their own keys.
  const RunReply again = RunOrDie(*backend, Request({{"shl.b32", {{7, 3}}, 0b01},
                                                     {"shl.b32", {{7, 5}}, 0b01}}));
  EXPECT_EQ(again.results[0].bits, 56u);
  EXPECT_EQ(again.results[1].bits, 224u);
  EXPECT_TRUE(again.results[0].reused);
  EXPECT_TRUE(again.results[1].reused);
}

TEST_F(PtxasCodeCacheTest, AClaimIsKeptForEveryValueOfTheRuntimeSources) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  // bfe.s32 with a field past the top: ptxas stores -1 whatever a is.
  RunOrDie(*backend, Request({{"bfe.s32", {{0, 40, 8}}, 0b001}}));
  const int compiles = Compiles();
  const RunReply reply =
      RunOrDie(*backend, Request({{"bfe.s32", {{0x12345678, 40, 8}}, 0b001}}));
  EXPECT_EQ(Compiles(), compiles);
  ASSERT_EQ(reply.results[0].kind, ResultKind::kValue);
  EXPECT_EQ(reply.results[0].bits, 0xffffffffu);
  EXPECT_TRUE(reply.results[0].reused);
  EXPECT_THAT(reply.NoteOf(0), HasSubstr("claimed: "));
}

TEST_F(PtxasCodeCacheTest, ARefutedValuesO0CodeIsCompiledOnceToo) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  // madc.hi.s64 at -O3 never adds c (a known finding): each refuted value
  // is checked on the -O0 code, compiled for its key once.
  RunOrDie(*backend, Request({{"madc.hi.s64", {{1, 1, 5, 0}}, 0b111}}));
  const int compiles = Compiles();
  const RunReply reply =
      RunOrDie(*backend, Request({{"madc.hi.s64", {{2, 3, 9, 0}}, 0b111},
                                  {"madc.hi.s64", {{2, 3, 11, 0}}, 0b111}}));
  EXPECT_EQ(Compiles(), compiles);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(reply.results[i].kind, ResultKind::kValue) << MessageOf(reply, i);
    EXPECT_THAT(reply.NoteOf(i),
                HasSubstr("its -O0 code runs to the oracle's value"));
  }
}

// A refuted value whose -O0 code disagrees too is declined as a known -O0
// finding only where the tuple's operands are of the finding's class
// (docs/sass-evaluator.md, "Open -O0 findings": vset into .h1 merges the
// result's high half).
TEST_F(PtxasCodeCacheTest, AKnownO0FindingNamesItselfForItsOperands) {
  auto backend = Make();
  ASSERT_NE(backend, nullptr);
  const RunReply reply = RunOrDie(
      *backend, Request({{"vset.s32.u32.lt d.h1, a.b0, b.h1, c",
                          {{0x01000000, 0x04000001, 0x0000ffff}},
                          0b111}}));
  ASSERT_EQ(reply.results[0].kind, ResultKind::kDecline);
  EXPECT_THAT(MessageOf(reply, 0),
              HasSubstr("as it is known to for this instruction (scalar "
                        "video part merges"));
  EXPECT_TRUE(reply.results[0].kept_code);
}

// Without the cache no code is kept: such a decline does not say it is.
TEST_F(PtxasCodeCacheTest, WithoutTheCacheADeclineKeepsNoCode) {
  auto backend = Make({{"code_cache_mb", "0"}});
  ASSERT_NE(backend, nullptr);
  const RunReply reply =
      RunOrDie(*backend, Request({{"vset.s32.u32.lt d.h1, a.b0, b.h1, c",
                                   {{0x01000000, 0x04000001, 0x0000ffff}},
                                   0b111}}));
  ASSERT_EQ(reply.results[0].kind, ResultKind::kDecline);
  EXPECT_FALSE(reply.results[0].kept_code);
}

TEST_F(PtxasCodeCacheTest, WithoutTheCacheEachBatchCompilesAgain) {
  auto backend = Make({{"code_cache_mb", "0"}});
  ASSERT_NE(backend, nullptr);
  RunOrDie(*backend, Request({{"add.u32", {{5, 7}}, 0b11}}));
  const int compiles = Compiles();
  const RunReply reply =
      RunOrDie(*backend, Request({{"add.u32", {{6, 7}}, 0b11},
                                  {"add.u32", {{8, 7}}, 0b11}}));
  EXPECT_GT(Compiles(), compiles);
  EXPECT_EQ(reply.results[0].bits, 13u);
  EXPECT_FALSE(reply.results[0].reused);
  // Within a batch the first tuple's kernel still answers its repeats.
  EXPECT_EQ(reply.results[1].bits, 15u);
  EXPECT_TRUE(reply.results[1].reused);
}

}  // namespace
}  // namespace ptxdiff
