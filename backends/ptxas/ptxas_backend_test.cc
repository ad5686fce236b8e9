#include "backends/ptxas/ptxas_backend.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/testing/scoped_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "backends/backend.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/sass_constants.h"
#include "backends/ptxas/testing/known_deviations.h"
#include "backends/ptxas/testing/requests.h"

namespace ptxdiff {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh directory, removed (with its files) at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string path = testing::TempDir() + "/ptxas-test-XXXXXX";
    path_ = mkdtemp(path.data()) ? path : "";
  }
  ~ScratchDir() {
    for (const std::string& f : Files()) unlink((path_ + "/" + f).c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") {
          out.push_back(e->d_name);
        }
      }
      closedir(d);
    }
    return out;
  }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------
// Without ptxas.

TEST(PtxasBackendSetupTest, MissingPtxasSaysWhatToDo) {
  auto backend = MakePtxasBackend({{"ptxas", "/nonexistent/bin/ptxas"}});
  ASSERT_FALSE(backend.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(backend.status())) << backend.status();
  EXPECT_THAT(backend.status().message(),
              HasSubstr("ptxas not found at /nonexistent/bin/ptxas"));
  EXPECT_THAT(backend.status().message(),
              HasSubstr("install the CUDA toolkit or set PTXAS="));
  EXPECT_THAT(backend.status().message(), HasSubstr("--backend=oracle"));
  // The worker reaches it by name.
  auto by_name = MakeBackend("ptxas", {{"ptxas", "/nonexistent/bin/ptxas"}});
  EXPECT_TRUE(absl::IsFailedPrecondition(by_name.status())) << by_name.status();
  EXPECT_THAT(MakeBackend("nope", {}).status().message(),
              HasSubstr("oracle, ptxas"));
}

TEST(PtxasBackendSetupTest, PtxasFromTheEnvironment) {
  {
    ScopedEnv env("PTXAS", "/nonexistent/ptxas-from-env");
    EXPECT_THAT(FindPtxas({}).status().message(),
                HasSubstr("/nonexistent/ptxas-from-env ($PTXAS)"));
    // The option wins over the environment.
    EXPECT_THAT(FindPtxas({{"ptxas", "/other/ptxas"}}).status().message(),
                HasSubstr("/other/ptxas"));
  }
  ScratchDir dir;
  ScopedEnv no_ptxas("PTXAS", "");
  ScopedEnv home("CUDA_HOME", dir.path());
  ScopedEnv path("PATH", dir.path());
  auto found = FindPtxas({});
  if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) {
    EXPECT_EQ(found.value_or(""), "/usr/local/cuda/bin/ptxas");
  } else {
    EXPECT_THAT(found.status().message(), HasSubstr(dir.path() + "/bin/ptxas"));
  }
}

TEST(PtxasBackendSetupTest, BadOptionsAreInvalidArgument) {
  for (const KeyValues& options : std::vector<KeyValues>{
           {{"arch", "sm_70"}},
           {{"jobs", "0"}},
           {{"tuples_per_kernel", "many"}},
           {{"kernels_per_module", "99999"}},
       }) {
    auto backend = MakePtxasBackend(options);
    EXPECT_TRUE(absl::IsInvalidArgument(backend.status()))
        << options[0].first << ": " << backend.status();
  }
  EXPECT_THAT(MakePtxasBackend({{"arch", "sm_70"}}).status().message(),
              HasSubstr("sm_75"));
}

// ---------------------------------------------------------------------------
// With ptxas; every test is skipped without it.

class PtxasBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ptxas = FindPtxas({});
    if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
    ptxas_ = *ptxas;
  }

  // The backend as the folding research pins it: folds and claims only
  // (execute=0), unless a test asks for executed code.
  std::unique_ptr<Backend> Make(KeyValues options) {
    if (!OptionValue(options, "execute").has_value()) {
      options.push_back({"execute", "0"});
    }
    auto backend = MakePtxasBackend(options);
    EXPECT_TRUE(backend.ok()) << backend.status();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  std::string ptxas_;
};

// The toolchain line says which assembler answers.
TEST_F(PtxasBackendTest, TheCompilerOptionChoosesTheAssembler) {
  auto executable = Make({{"compiler", "ptxas"}});
  ASSERT_NE(executable, nullptr);
  EXPECT_THAT(executable->Identity().toolchain, Not(HasSubstr("in-process")));
  EXPECT_THAT(MakePtxasBackend({{"compiler", "gcc"}}).status().message(),
              HasSubstr("must be auto, ptxas or nvjitlink, not 'gcc'"));
  {
    ScopedEnv chosen("PTXDIFF_PTXAS_COMPILER", "ptxas");
    auto from_env = Make({});
    ASSERT_NE(from_env, nullptr);
    EXPECT_EQ(from_env->Identity().toolchain, executable->Identity().toolchain);
  }
  if (!NvJitLink::Load(ptxas_).ok())
    GTEST_SKIP() << "no libnvJitLink next to " << ptxas_;
  auto in_process = Make({{"compiler", "nvjitlink"}});
  ASSERT_NE(in_process, nullptr);
  EXPECT_THAT(in_process->Identity().toolchain,
              HasSubstr("assembled in-process by"));
  auto chosen = Make({});
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->Identity().toolchain, in_process->Identity().toolchain);
}

TEST_F(PtxasBackendTest, Identity) {
  auto backend = Make({{"arch", "sm_90"}});
  ASSERT_NE(backend, nullptr);
  const WorkerIdentity id = backend->Identity();
  EXPECT_EQ(id.name, "ptxas");
  EXPECT_EQ(id.version, "1");
  EXPECT_THAT(id.toolchain, HasSubstr("release"));
  EXPECT_EQ(id.device, "sm_90");
  EXPECT_THAT(id.supports, Contains("bfe"));
  // A family with variants ptxas never folds is listed by its others.
  EXPECT_THAT(id.supports, Not(Contains("add")));
  EXPECT_THAT(id.supports, Contains("add.s32"));
  EXPECT_THAT(id.supports, Not(Contains("add.u16x2")));
  EXPECT_THAT(id.supports, Contains("mad.lo.s32"));
  EXPECT_THAT(id.supports, Not(Contains("mad.hi.s32")));
  // The carry families fold for some operands; madc.hi and the 64-bit
  // `.cc` variants never do.
  EXPECT_TRUE(id.carry);
  EXPECT_THAT(id.supports, Contains("addc.u64"));
  EXPECT_THAT(id.supports, Not(Contains("addc.cc.u64")));
  EXPECT_THAT(id.supports, Contains("madc.lo.u32"));
  EXPECT_THAT(id.supports, Not(Contains("madc.hi.u32")));
  for (const char* never :
       {"vadd", "vmad", "vset", "dp4a", "dp2a", "bmsk", "visa.shl", "sad"}) {
    EXPECT_THAT(id.supports, Not(Contains(never)));
  }
  // Folds and claims alone: immediates are the default form, runtime forms
  // extra. With the SASS evaluator (sm_90's tables) its code is run too:
  // both forms, as early.
  EXPECT_TRUE(id.forms);
  EXPECT_FALSE(id.runtime_by_default);
  EXPECT_FALSE(id.both_forms);
  auto executing = Make({{"arch", "sm_90"}, {"execute", "1"}});
  ASSERT_NE(executing, nullptr);
  EXPECT_TRUE(executing->Identity().both_forms);
  EXPECT_FALSE(executing->Identity().runtime_by_default);
  auto sm120 = Make({{"arch", "sm_120"}, {"execute", "1"}});
  ASSERT_NE(sm120, nullptr);
  EXPECT_THAT(sm120->Identity().supports, Contains("sad"));
  // No evaluator tables for sm_120: its code is not run.
  EXPECT_FALSE(sm120->Identity().both_forms);
  // Through the worker's factory, too.
  auto by_name = MakeBackend("ptxas", {{"arch", "sm_75"}});
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ((*by_name)->Identity().device, "sm_75");
}

// Construction compiles known tuples and checks that they come back, so
// this is the backend end to end on every arch the decoder knows.
TEST_F(PtxasBackendTest, EveryKnownArchPassesTheSelfTest) {
  for (const std::string& arch : KnownArchs()) {
    auto backend = MakePtxasBackend({{"arch", arch}});
    EXPECT_TRUE(backend.ok()) << arch << ": " << backend.status();
  }
}

TEST_F(PtxasBackendTest, DeclinesWithTheRightCode) {
  auto backend = Make({{"arch", "sm_75"}});
  ASSERT_NE(backend, nullptr);
  const RunReply reply = RunOrDie(*backend, Request({
                                                {"add.s32 frob", {{1, 2}}},
                                                {"vadd.u32.u32.u32", {{1, 2}}},
                                                {"add.u16x2", {{1, 2}}},
                                                {"visa.shl.ud.ud.ud", {{1, 2}}},
                                                {"div.u32", {{1000, 7}}},
                                                {"add.s32", {{1, 2}}},
                                            }));
  const DeclineCode expected[] = {
      DeclineCode::kUnsupportedVariant, DeclineCode::kUnsupportedVariant,
      DeclineCode::kUnsupportedVariant, DeclineCode::kUnsupportedVariant,
      DeclineCode::kNotEvaluable};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(reply.results[i].kind, ResultKind::kDecline) << i;
    EXPECT_EQ(reply.results[i].code, expected[i])
        << i << ": " << MessageOf(reply, i);
  }
  EXPECT_THAT(MessageOf(reply, 0), HasSubstr("unknown variant"));
  EXPECT_THAT(MessageOf(reply, 1), HasSubstr("never folds vadd on sm_75"));
  EXPECT_THAT(MessageOf(reply, 2), HasSubstr("needs sm_90"));
  EXPECT_THAT(MessageOf(reply, 3), HasSubstr("not a PTX instruction"));
  EXPECT_THAT(MessageOf(reply, 4), HasSubstr("did not fold"));
  EXPECT_EQ(reply.results[5], (TupleResult{.bits = 3}));
}

// The extended-precision variants run, CC.CF set before and read after
// the instruction (carry=1). ptxas folds a chain whose hardware carry is 0
// (no carry out of an add, a borrow out of a sub, no carry in to an add, a
// borrow in to a sub); the others are not folded and are declined as not
// evaluable, never guessed (docs/ptxas-folding-research.md §8).
TEST_F(PtxasBackendTest, CarryVariantsFoldWhereTheChainCarriesNothing) {
  auto backend = Make({{"arch", "sm_90"}});
  ASSERT_NE(backend, nullptr);
  const WorkerIdentity id = backend->Identity();
  EXPECT_TRUE(id.carry);
  for (const char* folds : {"add.cc.u32", "sub.cc.s32", "addc.u64",
                            "addc.cc.s32", "subc.cc.u32", "madc.lo.s64"}) {
    EXPECT_TRUE(id.Supports(ParseVariant(folds).value())) << folds;
  }
  for (const char* never : {"add.cc.u64", "subc.cc.s64", "mad.lo.cc.u32",
                            "madc.hi.u32", "madc.lo.cc.u32"}) {
    EXPECT_FALSE(id.Supports(ParseVariant(never).value())) << never;
  }
  const RunReply reply = RunOrDie(
      *backend, Request({
                    {"add.cc.u32", {{1, 2}}},           // 3, no carry
                    {"sub.cc.u32", {{1, 2}}},           // -1, a borrow
                    {"addc.u32", {{1, 2, 0}}},          // 3
                    {"subc.cc.u32", {{1, 1, 1}}},       // -1, a borrow
                    {"madc.lo.u32", {{2, 3, 4, 0}}},    // 10
                    {"add.cc.u32", {{0xffffffff, 1}}},  // a carry: no fold
                    {"addc.u32", {{1, 2, 1}}},          // a carry in
                }));
  EXPECT_EQ(reply.results[0], (TupleResult{.bits = 3}));
  EXPECT_EQ(reply.results[1], (TupleResult{.bits = 0xffffffff, .carry = true}));
  EXPECT_EQ(reply.results[2], (TupleResult{.bits = 3}));
  EXPECT_EQ(reply.results[3], (TupleResult{.bits = 0xffffffff, .carry = true}));
  EXPECT_EQ(reply.results[4], (TupleResult{.bits = 10}));
  for (int i : {5, 6}) {
    EXPECT_EQ(reply.results[i].code, DeclineCode::kNotEvaluable)
        << i << ": " << MessageOf(reply, i);
  }
}

// The variants the backend declines as never folded are exactly those that
// the supports list leaves out and all_variants=1 puts back, and with
// all_variants=1 not one of their edge tuples folds: the list is true of
// this ptxas.
TEST_F(PtxasBackendTest, NeverFoldedVariantsDoNotFold) {
  auto listed = Make({});
  auto all = Make({{"all_variants", "1"}});
  ASSERT_NE(listed, nullptr);
  ASSERT_NE(all, nullptr);
  const WorkerIdentity listed_id = listed->Identity();
  const WorkerIdentity all_id = all->Identity();
  std::mt19937_64 rng(7);
  std::vector<Case> cases;
  std::vector<std::string> never;
  for (const Variant& v : AllVariants()) {
    if (listed_id.Supports(v) || !all_id.Supports(v)) continue;
    if (IsSimdVideo(v.family)) continue;  // SimdVideoFoldsOnlyPlain, below
    never.push_back(Spell(v));
    std::vector<Operands> ops(12);
    FillEdgeTuples(v, rng, ops);
    ops.push_back({{0, 0, 0, 0}});  // the likeliest to fold
    ops.push_back({{1, 1, 1, 1}});
    for (const Operands& o : ops) cases.push_back({Spell(v), o});
  }
  // mad.hi 32/64-bit x4, div/rem 16/64-bit x8, add/min/max packed x6,
  // min/max.relu x4; and of the carry variants mad.lo.cc and mad.hi.cc x8,
  // madc.hi x8, madc.lo.cc x4, the 64-bit add.cc, sub.cc, addc.cc and
  // subc.cc x8.
  EXPECT_EQ(never.size(), 50u) << absl::StrJoin(never, " ");
  const RunRequest request = Request(cases);
  const RunReply declined = RunOrDie(*listed, request);
  const RunReply tried = RunOrDie(*all, request);
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(declined.results[i].code, DeclineCode::kUnsupportedVariant)
        << cases[i].spelling;
    EXPECT_THAT(MessageOf(declined, i), HasSubstr("for no operands"));
    EXPECT_EQ(tried.results[i].code, DeclineCode::kNotEvaluable)
        << cases[i].spelling << " folded: update NeverFolded";
  }
}

// What ptxas folds of the 48 carry variants is the same on every arch the
// research measured (§8): the 20 the backend runs each fold for some tuple
// (one whose chain carries nothing), and the 28 it declines as never folded
// fold for none of their edge tuples with all_variants=1.
TEST_F(PtxasBackendTest, CarryFoldingIsTheSameOnEveryArch) {
  const std::vector<Operands> folding = {
      {{1, 2, 0, 0}}, {{1, 2, 1, 0}}, {{1, 1, 1, 0}}, {{2, 3, 4, 0}}};
  for (const char* arch : {"sm_75", "sm_80", "sm_90", "sm_100", "sm_120"}) {
    SCOPED_TRACE(arch);
    auto listed = Make({{"arch", arch}});
    auto all = Make({{"arch", arch}, {"all_variants", "1"}});
    ASSERT_NE(listed, nullptr);
    ASSERT_NE(all, nullptr);
    const WorkerIdentity listed_id = listed->Identity();
    std::mt19937_64 rng(11);
    std::vector<Case> runs, never;
    for (const Variant& v : AllVariants()) {
      if (!HasCarryOut(v) && !HasCarryIn(v)) continue;
      if (listed_id.Supports(v)) {
        for (const Operands& o : folding) runs.push_back({Spell(v), o});
        continue;
      }
      std::vector<Operands> ops(12);
      FillEdgeTuples(v, rng, ops);
      ops.insert(ops.end(), folding.begin(), folding.end());
      for (const Operands& o : ops) never.push_back({Spell(v), o});
    }
    EXPECT_EQ(runs.size(), 20 * folding.size());
    const RunReply ran = RunOrDie(*listed, Request(runs));
    absl::flat_hash_map<std::string, int> folded;
    for (size_t i = 0; i < runs.size(); ++i) {
      folded[runs[i].spelling] += ran.results[i].kind == ResultKind::kValue;
    }
    for (const auto& [spelling, count] : folded) {
      EXPECT_GT(count, 0) << spelling << " folds for none of its tuples";
    }
    const RunReply tried = RunOrDie(*all, Request(never));
    for (size_t i = 0; i < never.size(); ++i) {
      EXPECT_EQ(tried.results[i].code, DeclineCode::kNotEvaluable)
          << never[i].spelling << " folded: update NeverFoldedCarry";
    }
  }
}

// SIMD video (research §8): the plain all-.u32 forms (and vmin2/vmax2 all
// .s32) fold with the default selectors and agree with the oracle; another
// selector is declined before compiling; a sample of the other variants
// does not fold even when tried (all_variants=1).
TEST_F(PtxasBackendTest, SimdVideoFoldsOnlyPlain) {
  auto listed = Make({});
  auto all = Make({{"all_variants", "1"}});
  ASSERT_NE(listed, nullptr);
  ASSERT_NE(all, nullptr);
  const WorkerIdentity listed_id = listed->Identity();
  std::vector<Case> folding;
  for (const char* s :
       {"vadd2.u32.u32.u32", "vsub2.u32.u32.u32", "vavrg2.u32.u32.u32",
        "vmin2.s32.s32.s32", "vmax2.u32.u32.u32", "vadd4.u32.u32.u32",
        "vsub4.u32.u32.u32"}) {
    const Variant v = *ParseVariant(s);
    EXPECT_TRUE(listed_id.Supports(v)) << s;
    const uint64_t sel = DefaultSimdSelector(SimdLanes(v.family));
    folding.push_back({s, {{0x7f0180ff, 0x0102fe03, 0x11223344, sel}}});
    folding.push_back({s, {{0xffff8000, 0x00017fff, 0, sel}}});
  }
  const RunReply folded = RunOrDie(*listed, Request(folding));
  for (size_t i = 0; i < folding.size(); ++i) {
    const Variant v = *ParseVariant(folding[i].spelling);
    ASSERT_EQ(folded.results[i].kind, ResultKind::kValue)
        << folding[i].spelling << ": " << MessageOf(folded, i);
    EXPECT_EQ(folded.results[i].bits, Evaluate(v, folding[i].operands).bits)
        << ReplayLine(v, folding[i].operands, Evaluate(v, folding[i].operands));
  }
  const RunReply other_selector =
      RunOrDie(*listed, Request({{"vadd2.u32.u32.u32", {{1, 2, 3, 0x0123}}}}));
  EXPECT_EQ(other_selector.results[0].code, DeclineCode::kNotEvaluable);
  EXPECT_THAT(MessageOf(other_selector, 0), HasSubstr("default .asel/.bsel"));
  std::vector<Case> never;
  for (const char* s :
       {"vadd2.s32.s32.s32", "vadd2.u32.u32.u32.sat", "vadd2.u32.u32.u32.add",
        "vmin2.u32.u32.u32 d.h0, a, b, c", "vmin2.u32.s32.s32",
        "vadd4.s32.s32.s32", "vsub4.u32.u32.u32 d.b10, a, b, c"}) {
    const Variant v = *ParseVariant(s);
    EXPECT_FALSE(listed_id.Supports(v)) << s;
    never.push_back({s,
                     {{0x7f0180ff, 0x0102fe03, 0x11223344,
                       DefaultSimdSelector(SimdLanes(v.family))}}});
  }
  const RunReply tried = RunOrDie(*all, Request(never));
  for (size_t i = 0; i < never.size(); ++i) {
    EXPECT_EQ(tried.results[i].code, DeclineCode::kNotEvaluable)
        << never[i].spelling << " folded: update SimdNeverFolded";
  }
  for (const char* s :
       {"vabsdiff2.u32.u32.u32", "vset4.u32.u32.eq", "vmin4.u32.u32.u32"}) {
    EXPECT_FALSE(listed_id.Supports(*ParseVariant(s))) << s;
  }
}

// Repeated tuples (also where they differ only above an operand's width)
// are compiled once and answered alike.
TEST_F(PtxasBackendTest, RepeatedTuplesAnswerAlike) {
  auto backend = Make({});
  ASSERT_NE(backend, nullptr);
  const RunReply reply =
      RunOrDie(*backend, Request({
                             {"add.u16", {{0x1fffe, 3}}},
                             {"div.u32", {{1000, 7}}},
                             {"add.u16", {{0xfffe, 3}}},
                             {"div.u32", {{1000, 7}}},
                             {"add.u16", {{0xfffe, 3, 99, 99}}},
                         }));
  EXPECT_EQ(reply.results[0], (TupleResult{.bits = 1}));
  EXPECT_EQ(reply.results[2], reply.results[0]);
  EXPECT_EQ(reply.results[4], reply.results[0]);
  EXPECT_EQ(reply.results[1].code, DeclineCode::kNotEvaluable);
  EXPECT_EQ(reply.results[3], reply.results[1]);
}

// With runtime sources, what ptxas still stores as a constant is its claim
// for every value of them: one answer for every witness. Where the code
// reads the parameter (or stores it as it is), nothing is claimed.
TEST_F(PtxasBackendTest, RuntimeOperandsGetWhatPtxasClaimsForEveryValue) {
  auto backend = Make({});
  ASSERT_NE(backend, nullptr);
  const RunReply reply = RunOrDie(
      *backend,
      Request({
          {"bfe.s32", {{0, 40, 8}}, 0b001},
          {"bfe.s32", {{1, 40, 8}}, 0b001},
          {"bfe.s32", {{0x80000000, 40, 8}}, 0b001},
          {"bfe.s32", {{1, 40, 8}}},             // all immediates: folded right
          {"and.b32", {{0x1234, 0}}, 0b01},      // 0 for every a: a right claim
          {"add.u32", {{5, 0}}, 0b01},           // a itself: no constant
          {"min.u32", {{5, 0xffffffff}}, 0b01},  // a, stored as loaded
          {"add.u32", {{3, 4}}, 0b100},  // add has no source c: immediates
      }));
  // ptxas 13.0 claims -1 for bfe.s32 with a position past 31 and a runtime
  // source: the oracle's answer is a's sign, so the claim is wrong for every
  // non-negative a (a known deviation, issue 29).
  EXPECT_EQ(reply.results[0], (TupleResult{.bits = 0xffffffff}));
  EXPECT_EQ(reply.results[1], reply.results[0]);
  EXPECT_EQ(reply.results[2], reply.results[0]);
  EXPECT_EQ(reply.results[3], (TupleResult{.bits = 0}));
  EXPECT_EQ(reply.results[4], (TupleResult{.bits = 0}));
  for (int i : {5, 6}) {
    EXPECT_EQ(reply.results[i].code, DeclineCode::kNotEvaluable) << i;
    EXPECT_THAT(MessageOf(reply, i),
                HasSubstr("claims no constant for every value"))
        << i;
  }
  EXPECT_EQ(reply.results[7], (TupleResult{.bits = 7}));
  EXPECT_TRUE(backend->Identity().forms);
}

struct KnownAnswer {
  int line;
  std::string spelling;
  Operands operands;
};

std::vector<KnownAnswer> LoadKnownAnswers() {
  std::ifstream in(std::string(PTXDIFF_SOURCE_DIR) +
                   "/oracle/testdata/known_answers.txt");
  EXPECT_TRUE(in);
  std::vector<KnownAnswer> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const absl::string_view text = absl::StripAsciiWhitespace(
        absl::string_view(line).substr(0, line.find('#')));
    std::vector<std::string> fields = absl::StrSplit(text, '|');
    if (fields.size() != 4) continue;
    KnownAnswer ka{
        number, std::string(absl::StripAsciiWhitespace(fields[0])), {}};
    auto v = ParseVariant(ka.spelling);
    if (!v.ok()) continue;
    std::vector<std::string> ops =
        absl::StrSplit(fields[1], ' ', absl::SkipEmpty());
    for (size_t i = 0; i < ops.size() && i < kMaxSources; ++i) {
      ka.operands.v[i] = ParseOperand(ops[i], SourceWidth(*v, i)).value_or(0);
    }
    out.push_back(ka);
  }
  return out;
}

// The known answers: wherever ptxas gives a value and the oracle defines
// one, they are equal but for the known deviations; families ptxas does not
// fold are declined.
TEST_F(PtxasBackendTest, KnownAnswersAgreeWithTheOracle) {
  const std::vector<KnownAnswer> answers = LoadKnownAnswers();
  ASSERT_GT(answers.size(), 150u);
  std::vector<Case> cases;
  for (const KnownAnswer& ka : answers)
    cases.push_back({ka.spelling, ka.operands});
  for (const char* arch : {"sm_75", "sm_90", "sm_120"}) {
    SCOPED_TRACE(arch);
    auto backend = Make({{"arch", arch}});
    ASSERT_NE(backend, nullptr);
    const WorkerIdentity id = backend->Identity();
    const RunReply reply = RunOrDie(*backend, Request(cases));
    int compared = 0;
    for (size_t i = 0; i < answers.size(); ++i) {
      const Variant v = ParseVariant(answers[i].spelling).value();
      const TupleResult& r = reply.results[i];
      const std::string where = absl::StrCat(
          "known_answers.txt:", answers[i].line, " ", answers[i].spelling);
      if (!id.Supports(v)) {
        EXPECT_EQ(r.kind, ResultKind::kDecline) << where;
        EXPECT_EQ(r.code, DeclineCode::kUnsupportedVariant) << where;
        continue;
      }
      if (r.kind == ResultKind::kDecline) {
        EXPECT_NE(r.code, DeclineCode::kOther)
            << where << ": " << MessageOf(reply, i);
        continue;
      }
      const Result oracle = Evaluate(v, answers[i].operands);
      if (!oracle.defined()) continue;
      ++compared;
      // A known deviation still gives ptxas's known value (issue 67).
      if (auto known = KnownPtxasDeviation(v, answers[i].operands)) {
        EXPECT_EQ(r.bits, known->ptxas) << where << ": " << known->name;
        continue;
      }
      EXPECT_EQ(r.bits, oracle.bits)
          << where << ": " << ReplayLine(v, answers[i].operands, oracle);
      if (HasCarryOut(v)) {
        EXPECT_EQ(r.carry, oracle.carry)
            << where << ": " << ReplayLine(v, answers[i].operands, oracle);
      }
    }
    EXPECT_GE(compared, 60) << "ptxas folded too few known answers";
  }
}

// Edge tuples of every variant the backend supports, plus some it cannot
// fold, to mix folded and unfolded tuples in kernels.
std::vector<Case> EdgeCases(int per_variant) {
  std::mt19937_64 rng(42);
  std::vector<Case> cases;
  for (const Variant& v : AllVariants()) {
    if (IsVideo(v.family) || IsSimdVideo(v.family)) continue;  // declined
    if (v.family == Family::kVisaShl) continue;
    std::vector<Operands> ops(per_variant);
    FillEdgeTuples(v, rng, ops);
    for (const Operands& o : ops) cases.push_back({Spell(v), o});
  }
  std::shuffle(cases.begin(), cases.end(), rng);
  return cases;
}

// Packing several tuples per kernel, several kernels per module and running
// ptxas in parallel changes nothing in the answers; nor does assembling
// in-process (libnvJitLink) rather than with the ptxas executable.
TEST_F(PtxasBackendTest, PackingGivesTheSameAnswers) {
  const RunRequest request = Request(EdgeCases(4));
  RunReply reference;
  {
    auto one = Make({{"compiler", "ptxas"},
                     {"tuples_per_kernel", "1"},
                     {"kernels_per_module", "4096"},
                     {"jobs", "1"}});
    ASSERT_NE(one, nullptr);
    reference = RunOrDie(*one, request);
  }
  int values = 0;
  for (const TupleResult& r : reference.results)
    values += r.kind == ResultKind::kValue;
  EXPECT_GT(values, static_cast<int>(request.tuples.size() / 2));
  std::vector<KeyValues> settings = {
      {{"compiler", "ptxas"}, {"tuples_per_kernel", "64"}},
      {{"compiler", "ptxas"},
       {"tuples_per_kernel", "7"},
       {"kernels_per_module", "3"},
       {"jobs", "3"}},
  };
  if (NvJitLink::Load(ptxas_).ok()) {
    settings.push_back(
        {{"compiler", "nvjitlink"}, {"tuples_per_kernel", "64"}});
    settings.push_back({{"compiler", "nvjitlink"},
                        {"tuples_per_kernel", "7"},
                        {"kernels_per_module", "3"},
                        {"jobs", "3"}});
  }
  for (const KeyValues& options : settings) {
    SCOPED_TRACE(absl::StrJoin(options, " ", absl::PairFormatter("=")));
    auto packed = Make(options);
    ASSERT_NE(packed, nullptr);
    // Twice: the second run packs by the kernel sizes the first taught.
    for (int round = 0; round < 2; ++round) {
      const RunReply reply = RunOrDie(*packed, request);
      ASSERT_EQ(reply.results.size(), reference.results.size());
      for (size_t i = 0; i < reply.results.size(); ++i) {
        ASSERT_EQ(reply.results[i].kind, reference.results[i].kind) << i;
        ASSERT_EQ(reply.results[i].bits, reference.results[i].bits) << i;
        ASSERT_EQ(reply.results[i].carry, reference.results[i].carry) << i;
        ASSERT_EQ(MessageOf(reply, i), MessageOf(reference, i)) << i;
      }
    }
  }
}

TEST_F(PtxasBackendTest, EdgeTuplesAgreeWithTheOracleButForKnownDeviations) {
  auto backend = Make({});
  ASSERT_NE(backend, nullptr);
  std::vector<Case> cases = EdgeCases(6);
  for (const Case& c : KnownDeviationExamples()) cases.push_back(c);
  const RunReply reply = RunOrDie(*backend, Request(cases));
  int compared = 0, carries = 0;
  DeviationTally deviations;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (reply.results[i].kind != ResultKind::kValue) continue;
    const Variant v = ParseVariant(cases[i].spelling).value();
    const Result oracle = Evaluate(v, cases[i].operands);
    if (!oracle.defined()) continue;
    ++compared;
    const bool same_carry =
        !HasCarryOut(v) || reply.results[i].carry == oracle.carry;
    carries += HasCarryOut(v) || HasCarryIn(v);
    // A known deviation still gives ptxas's known value (issue 67).
    if (auto known = KnownPtxasDeviation(v, cases[i].operands)) {
      EXPECT_EQ(reply.results[i].bits, known->ptxas)
          << ReplayLine(v, cases[i].operands, oracle) << ": " << known->name;
      deviations.Add(*known, oracle.bits);
      continue;
    }
    if (reply.results[i].bits == oracle.bits && same_carry) continue;
    ADD_FAILURE() << ReplayLine(v, cases[i].operands, oracle)
                  << "; ptxas gives 0x" << std::hex << reply.results[i].bits
                  << " carry " << reply.results[i].carry;
  }
  EXPECT_GT(compared, 400);
  EXPECT_GT(carries, 20) << "too few folded carry tuples to mean anything";
  // Every deviation on the list is met here, and still shows.
  deviations.ExpectEachShows(4);
  std::printf(
      "compared %d folded tuples with the oracle (%d of carry variants); %d "
      "known deviations (64-bit bfe/bfi, fns, slct.s32.s32)\n",
      compared, carries, deviations.Showing());
}

// madc.hi.u64 / madc.hi.s64 (with or without .cc) at -O1..-O3: the code
// ptxas 13.0 emits for sm_90 never reads c (its parameter is not loaded) and
// multiplies a by RZ; -O0 code runs to the oracle's values. A finding of
// executed code (docs/sass-evaluator.md), seen through the evaluator and
// independent of it.
bool KnownExecutedFinding(const Variant& v) {
  return v.family == Family::kMadc && v.mul_mode == MulMode::kHi &&
         TypeWidth(v.type) == 64;
}

// With execute=1 every tuple whose code the evaluator runs gets a value:
// runtime operands included, and families ptxas never folds.
TEST_F(PtxasBackendTest, ExecutedCodeAnswersRuntimeOperands) {
  auto backend = Make({{"execute", "1"}});
  ASSERT_NE(backend, nullptr);
  const RunReply reply =
      RunOrDie(*backend, Request({
                             {"bfe.s32", {{0, 40, 8}}, 0b001},
                             {"add.u32", {{5, 7}}, 0b01},
                             {"min.u32", {{5, 0xffffffff}}, 0b11},
                             {"mul.hi.s32", {{0x80000000, 3}}, 0b11},
                             // A repeat of tuple 1 but for its runtime a:
                             // its kernel, run again with that value.
                             {"add.u32", {{9, 7}}, 0b01},
                         }));
  for (size_t i = 0; i < reply.results.size(); ++i) {
    if (reply.results[i].kind != ResultKind::kValue) {
      ADD_FAILURE() << i << ": " << MessageOf(reply, i);
    }
  }
  // The claim of -1 is what the code stores, so it is still the answer.
  EXPECT_EQ(reply.results[0], (TupleResult{.bits = 0xffffffff}));
  EXPECT_EQ(reply.results[1], (TupleResult{.bits = 12}));
  EXPECT_EQ(reply.results[2], (TupleResult{.bits = 5}));
  EXPECT_EQ(reply.results[3], (TupleResult{.bits = 0xfffffffe}));
  EXPECT_EQ(reply.results[4], (TupleResult{.bits = 16}));
}

// Every value says how ptxas gave it: folded (immediates stored as a
// constant), claimed (a constant for every value of the runtime sources),
// or executed; an executed value the oracle refutes, its -O0 code agreeing,
// says so, with the SASS that ran (madc.hi.s64 at -O3: c is never read).
TEST_F(PtxasBackendTest, ValuesSayHowPtxasObtainedThem) {
  auto backend = Make({{"execute", "1"}});
  ASSERT_NE(backend, nullptr);
  const auto note_of = [&](const Case& c) {
    const RunReply reply = RunOrDie(*backend, Request({c}));
    EXPECT_EQ(reply.results[0].kind, ResultKind::kValue) << MessageOf(reply, 0);
    return std::string(reply.NoteOf(0));
  };
  EXPECT_THAT(note_of({"add.u32", {{5, 7}}}), HasSubstr("folded: "));
  EXPECT_THAT(note_of({"bfe.s32", {{0, 40, 8}}, 0b001}),
              HasSubstr("claimed: "));
  const std::string executed = note_of({"add.u32", {{5, 7}}, 0b01});
  EXPECT_THAT(executed, HasSubstr("executed: ptxas's code for sm_90 at -O3"));
  EXPECT_THAT(executed, Not(HasSubstr("SASS that ran")));
  const std::string refuted = note_of({"madc.hi.s64", {{0, 1, 0, 0}}});
  EXPECT_THAT(refuted, HasSubstr("executed: "));
  EXPECT_THAT(refuted, HasSubstr("its -O0 code runs to the oracle's value"));
  EXPECT_THAT(refuted, HasSubstr("The SASS that ran:\n"));
  EXPECT_THAT(refuted, HasSubstr("STG"));
}

// An executed value that stands says where the code departs from its -O0
// code's values (sass/sass_departure.h): bfi.b32 with a length of 70, which
// the -O3 code takes modulo 64 in its mask. Where the wrong value is one
// the -O0 code computes too (madc.hi.s64 of immediates stores 1), it says
// nothing of a departure.
TEST_F(PtxasBackendTest, AnExecutedFindingSaysWhereTheCodeDeparts) {
  auto backend = Make({{"execute", "1"}});
  ASSERT_NE(backend, nullptr);
  const RunReply reply = RunOrDie(
      *backend, Request({{"bfi.b32", {{0, 0xffffffff, 1, 70}}, 0b0010},
                         {"madc.hi.s64", {{0, 1, 0, 0}}}}));
  ASSERT_EQ(reply.results[0].kind, ResultKind::kValue) << MessageOf(reply, 0);
  EXPECT_EQ(reply.results[0].bits, 0xffffff81u);
  EXPECT_THAT(std::string(reply.NoteOf(0)),
              ::testing::ContainsRegex(
                  "; the code departs first at \\+0x[0-9a-f]{4} `LOP3\\.LUT "
                  "R[0-9]+, RZ, 0x7e, R[0-9]+, 0xe2`, which wrote 0xffffff81, a "
                  "value its -O0 code never computes\n"));
  EXPECT_THAT(std::string(reply.NoteOf(0)),
              HasSubstr("\ncause: executed code that departs first at "
                        "`LOP3.LUT R, RZ, 0x7e, R, 0xe2`\n"));
  EXPECT_THAT(std::string(reply.NoteOf(1)),
              HasSubstr("its -O0 code runs to the oracle's value"));
  EXPECT_THAT(std::string(reply.NoteOf(1)), Not(HasSubstr("departs")));
}

// A value the oracle refutes whose -O0 code disagrees too is not judged;
// where ptxas's -O0 code is known to disagree for such an instruction (a
// scalar video part merge), the decline names that finding rather than a
// gap of the evaluator's.
TEST_F(PtxasBackendTest, ARefutedValueWhoseO0CodeIsKnownWrongSaysSo) {
  auto backend = Make({{"execute", "1"}});
  ASSERT_NE(backend, nullptr);
  // Spec: the sum's low half (2) into d.h1; ptxas's code at every level
  // merges its high half (1).
  const RunReply reply = RunOrDie(
      *backend,
      Request({{"vadd.u32.u32.u32 d.h1, a, b, c", {{0x10002, 0, 0}}, 0b111}}));
  ASSERT_EQ(reply.results[0].kind, ResultKind::kDecline);
  EXPECT_EQ(reply.results[0].code, DeclineCode::kNotEvaluable);
  EXPECT_THAT(MessageOf(reply, 0), HasSubstr("so does its -O0 code"));
  EXPECT_THAT(MessageOf(reply, 0), HasSubstr("scalar video part merges"));
}

TEST_F(PtxasBackendTest,
       ExecutedEdgeTuplesAgreeWithTheOracleButForKnownFindings) {
  auto backend = Make({{"execute", "1"}});
  ASSERT_NE(backend, nullptr);
  std::vector<Case> cases = EdgeCases(6);
  for (const Case& c : KnownDeviationExamples()) cases.push_back(c);
  const RunReply reply = RunOrDie(*backend, Request(cases));
  int compared = 0, executed_findings = 0;
  DeviationTally deviations;
  std::map<std::string, int> declined;  // by message, for the failure text
  for (size_t i = 0; i < cases.size(); ++i) {
    if (reply.results[i].kind != ResultKind::kValue) {
      ++declined[MessageOf(reply, i).substr(0, 150)];
      continue;
    }
    const Variant v = ParseVariant(cases[i].spelling).value();
    const Result oracle =
        EvaluateWithReading(Reading::kHardware, v, cases[i].operands);
    if (!oracle.defined()) continue;
    ++compared;
    const bool same_carry =
        !HasCarryOut(v) || reply.results[i].carry == oracle.carry;
    if (auto known = KnownPtxasDeviation(v, cases[i].operands)) {
      EXPECT_EQ(reply.results[i].bits, known->ptxas)
          << ReplayLine(v, cases[i].operands, oracle) << ": " << known->name;
      // Against the spec: the hardware reading takes bfe/bfi's value.
      deviations.Add(*known, Evaluate(v, cases[i].operands).bits);
      continue;
    }
    if (reply.results[i].bits == oracle.bits && same_carry) continue;
    if (KnownExecutedFinding(v)) {
      ++executed_findings;
      continue;
    }
    ADD_FAILURE() << ReplayLine(v, cases[i].operands, oracle)
                  << "; ptxas's code gives 0x" << std::hex
                  << reply.results[i].bits << " carry "
                  << reply.results[i].carry;
  }
  // Folds alone answer about 2,800 of these (the test above), executed code
  // 3,200 of the 3,600.
  EXPECT_GT(compared, 3100)
      << absl::StrJoin(declined, "\n", absl::PairFormatter(": "));
  // fns's example is met by the test above, not here (its tuple is not
  // compared with execute=1; to be looked into).
  deviations.ExpectEachShows(3);
  // madc.hi's code never adds c: wrong wherever c matters (issue 67: still).
  EXPECT_GT(executed_findings, 0) << "madc.hi 64-bit now agrees: strike "
                                     "KnownExecutedFinding";
  std::printf(
      "compared %d tuples with the oracle; %d known (%d folds, %d madc.hi)\n",
      compared, deviations.Showing() + executed_findings, deviations.Showing(),
      executed_findings);
}

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

TEST_F(PtxasBackendTest,
       RejectedAndCrashingTuplesAreDeclinedAndTheRestCompiled) {
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
  EXPECT_EQ(reply.results[3].code, DeclineCode::kOther);
  EXPECT_THAT(MessageOf(reply, 3), HasSubstr("killed by signal"));
  EXPECT_EQ(reply.results[4], (TupleResult{.bits = 11}));
  // Every private directory is gone, failures included.
  EXPECT_THAT(tmp.Files(), testing::IsEmpty());
}

}  // namespace
}  // namespace ptxdiff
