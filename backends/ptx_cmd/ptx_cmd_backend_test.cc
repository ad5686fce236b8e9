// The ptx-cmd backend in a real worker process, with the test interpreter
// (testing/ptx_kernel_interpreter.cc) or a shell snippet as the tool, and
// `ptxdiff sweep` end to end.

#include <sys/stat.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/tool_run.h"
#include "campaign/campaign.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Matcher;
using ::testing::MatchesRegex;
using ::testing::Not;

const std::string kInterpreter = PTXDIFF_INTERPRETER_PATH;
const std::string kRunInterpreter = kInterpreter + " {ptx} {in} {out}";

// Lines in the file at `path` (a tool wrapper's log of its runs), 0 if none.
int64_t LinesIn(const std::string& path) {
  const std::string text = ReadFile(path).value_or("");
  return std::count(text.begin(), text.end(), '\n');
}

bool DirectoryExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

absl::StatusOr<std::unique_ptr<WorkerClient>> StartPtxCmd(
    const std::string& command_template, KeyValues options = {}) {
  auto command =
      CommandForBackend("ptx-cmd:" + command_template, PTXDIFF_WORKER_PATH);
  if (!command.ok()) return command.status();
  for (auto& option : options) command->hello_options.push_back(option);
  return WorkerClient::Start(*command);
}

// Tuples of `spellings`, interleaved (so each variant's results must go back
// to scattered positions), `per_variant` of each with edge operands, in the
// form a campaign sends most: every operand in a register.
std::vector<Tuple> MixedTuples(const std::vector<std::string>& spellings,
                               int per_variant) {
  std::mt19937_64 rng(3);
  std::vector<std::vector<Operands>> operands;
  for (const std::string& s : spellings) {
    operands.emplace_back(per_variant);
    FillEdgeTuples(V(s), rng, operands.back());
  }
  std::vector<Tuple> tuples;
  for (int i = 0; i < per_variant; ++i) {
    for (size_t k = 0; k < spellings.size(); ++k) {
      const Variant v = V(spellings[k]);
      tuples.push_back({v, operands[k][i], RuntimeCapableSources(v)});
    }
  }
  return tuples;
}

TEST(PtxCmdBackendTest, TheInterpreterGivesTheOraclesResults) {
  auto client = StartPtxCmd(kRunInterpreter);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->identity().name, "ptx-cmd");
  EXPECT_EQ((*client)->identity().toolchain, kRunInterpreter);
  const std::vector<Tuple> tuples =
      MixedTuples({"add.sat.s32", "bfe.u64", "mul.wide.u16", "mad.wide.u32",
                   "vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c", "bfi.b32",
                   "shf.l.clamp.b32", "dp4a.s32.u32", "max.relu.s16x2"},
                  37);
  const BatchOutcome outcome = (*client)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
  ASSERT_EQ(outcome.results.size(), tuples.size());
  for (size_t i = 0; i < tuples.size(); ++i) {
    ASSERT_EQ(outcome.results[i].kind, ResultKind::kValue)
        << i << ": " << outcome.messages[outcome.results[i].message];
    EXPECT_EQ(outcome.results[i].bits,
              Evaluate(tuples[i].variant, tuples[i].operands).bits)
        << Spell(tuples[i].variant) << " tuple " << i;
  }
}

// `tuples` three times: as written (all immediates), with their first
// source that may be a runtime value as one, and with every such source as
// one (the register shape).
std::vector<Tuple> InThreeForms(const std::vector<Tuple>& tuples) {
  std::vector<Tuple> out;
  for (const Tuple& t : tuples) {
    const uint8_t capable = RuntimeCapableSources(t.variant);
    for (uint8_t form : {uint8_t{0}, uint8_t(capable & -capable), capable}) {
      out.push_back({t.variant, t.operands, form});
    }
  }
  return out;
}

// The worker says forms=1 and runs each tuple in its form: a tool whose
// constant path is wrong (--flip-immediate-forms) is wrong exactly where a
// tuple has an immediate that could have been a register. forms=0 runs
// the register shape only, as docs/kernel-abi.md says, and declines the
// other forms (it declined the register shape, issue 41 item 8).
TEST(PtxCmdBackendTest, TuplesRunInTheirForms) {
  const std::vector<Tuple> tuples = InThreeForms(MixedTuples(
      {"bfe.s32", "add.sat.s32", "addc.cc.u32", "selp.b32", "lop3.b32",
       "vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c", "shf.l.clamp.b32"},
      11));
  auto client = StartPtxCmd(kInterpreter +
                            " --flip-immediate-forms=bfe.s32 {ptx} {in} {out}");
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->identity().forms);
  // A tool runs the loop of all-register tuples fastest: a case that gives
  // no form is run so.
  EXPECT_TRUE((*client)->identity().runtime_by_default);
  const BatchOutcome outcome = (*client)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
  int flipped = 0;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const Tuple& t = tuples[i];
    const TupleResult& r = outcome.results[i];
    ASSERT_EQ(r.kind, ResultKind::kValue)
        << i << ": " << outcome.messages[r.message];
    // An immediate form's operand is an immediate in the instruction where
    // PTX takes one there (else a `mov` to a register comes first).
    bool immediate_operand = false;
    for (int k = 0; k < NumSources(t.variant); ++k) {
      immediate_operand |= CanBeRuntime(t.variant, k) && !t.IsRuntime(k) &&
                           UsesImmediate(t.variant, k, t.operands.v[k]);
    }
    const bool flip = t.variant == V("bfe.s32") && immediate_operand;
    flipped += flip;
    EXPECT_EQ(r.bits, Evaluate(t.variant, t.operands).bits ^ (flip ? 1 : 0))
        << FormattedInstruction(t) << " with " << t.operands.v[0];
  }
  EXPECT_GT(flipped, 0);

  auto registers = StartPtxCmd(
      kInterpreter + " --flip-immediate-forms=bfe.s32 {ptx} {in} {out}",
      {{"forms", "0"}});
  ASSERT_TRUE(registers.ok()) << registers.status();
  EXPECT_TRUE((*registers)->identity().forms);
  EXPECT_TRUE((*registers)->identity().runtime_by_default);
  const BatchOutcome register_shape = (*registers)->Run(tuples);
  ASSERT_FALSE(register_shape.fault.has_value())
      << register_shape.fault->detail;
  int run = 0;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const Tuple& t = tuples[i];
    const TupleResult& r = register_shape.results[i];
    if (IsRegisterShape(t.variant, t.runtime)) {
      ++run;
      ASSERT_EQ(r.kind, ResultKind::kValue)
          << register_shape.messages[r.message];
      EXPECT_EQ(r.bits, Evaluate(t.variant, t.operands).bits)
          << Spell(t.variant);
    } else {
      ASSERT_EQ(r.kind, ResultKind::kDecline);
      EXPECT_EQ(r.code, DeclineCode::kOperandForm);
    }
  }
  EXPECT_GT(run, 0);
}

TEST(PtxCmdBackendTest, SupportsWhatTheTargetRuns) {
  auto sm90 = StartPtxCmd(kRunInterpreter);
  ASSERT_TRUE(sm90.ok()) << sm90.status();
  EXPECT_TRUE((*sm90)->identity().Supports(V("add.u16x2")));
  EXPECT_FALSE((*sm90)->identity().Supports(V("visa.shl.ud.ud.ud")));
  auto sm80 = StartPtxCmd(kRunInterpreter, {{"arch", "sm_80"}});
  ASSERT_TRUE(sm80.ok()) << sm80.status();
  EXPECT_FALSE((*sm80)->identity().Supports(V("add.u16x2")));
  EXPECT_TRUE((*sm80)->identity().Supports(V("add.s32")));
  EXPECT_THAT((*sm80)->identity().device, HasSubstr("sm_80"));
  // The kernels set and read CC.CF, so the worker says carry=1 and runs
  // the `.cc` variants and the carry-in families.
  EXPECT_TRUE((*sm90)->identity().carry);
  for (const char* carry : {"add.cc.u32", "sub.cc.s64", "mad.hi.cc.u32",
                            "addc.u32", "subc.cc.u64", "madc.lo.s32"}) {
    EXPECT_TRUE((*sm90)->identity().Supports(V(carry))) << carry;
  }
  EXPECT_TRUE((*sm90)->identity().Supports(V("add.u32")));
}

// The tool runs once per batch (kernel ABI 2): one module holds every
// variant. abi=1 keeps one run per variant. Before the first batch one run
// of one tuple learns the tool's start-up cost.
TEST(PtxCmdBackendTest, OneToolRunPerBatchOrPerVariantWithAbi1) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  // Forms are ABI 2's: the ABI 1 worker gets the same tuples without them
  // (a worker without forms=1 is sent none), and runs them in registers.
  std::vector<Tuple> tuples =
      MixedTuples({"add.s32", "bfe.u64", "addc.cc.u32", "vadd2.u32.u32.u32.sat",
                   "setp.lt.and.s32", "lop3.b32"},
                  9);
  for (const auto& [abi, runs] :
       std::vector<std::pair<std::string, int>>{{"2", 1 + 1}, {"1", 1 + 6}}) {
    if (abi == "1") {
      for (Tuple& t : tuples) t.runtime = 0;
    }
    const std::string log = (*record)->File("runs-" + abi);
    auto client = StartPtxCmd("echo run >> " + log + "; " + kRunInterpreter,
                              {{"abi", abi}});
    ASSERT_TRUE(client.ok()) << client.status();
    const BatchOutcome outcome = (*client)->Run(tuples);
    ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
    for (size_t i = 0; i < tuples.size(); ++i) {
      const TupleResult& r = outcome.results[i];
      ASSERT_EQ(r.kind, ResultKind::kValue)
          << "abi " << abi << ": " << outcome.messages[r.message];
      const Result expected = Evaluate(tuples[i].variant, tuples[i].operands);
      EXPECT_EQ(r.bits, expected.bits) << Spell(tuples[i].variant);
      if (HasCarryOut(tuples[i].variant)) EXPECT_EQ(r.carry, expected.carry);
    }
    EXPECT_EQ(LinesIn(log), runs) << "abi " << abi;
  }
}

// A batch module holds ~5k tuples written with their immediates (~6 lines
// each, for a tool's parser: five segments of 1,024); past that it grows while
// the tool's start-up outweighs its tuples, as the tool's runs measure them: a
// tool that starts slowly runs the next such batch in one run, one whose tuples
// cost more than its start-up keeps its modules at that size.
TEST(PtxCmdBackendTest, ModulesGrowWhileTheToolsStartUpOutweighsThem) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  // Ten segments of 1,024 written tuples: two modules of five at the first
  // size, both big enough that a loaded machine's slower start-up in them
  // does not pass for a cost per tuple.
  std::vector<Tuple> tuples =
      MixedTuples({"add.s32", "sub.s64", "bfe.u32", "min.u16", "max.u32",
                   "and.b32", "or.b64", "xor.b16", "mul.lo.u32", "shl.b32"},
                  1024);
  for (Tuple& t : tuples) t.runtime = 0;  // written, immediates
  for (const auto& [flags, second_batch_runs] :
       std::vector<std::pair<std::string, int>>{{"--startup-ms=300", 1},
                                                {"--per-tuple-us=400", 2}}) {
    const std::string log = (*record)->File("runs" + flags);
    auto client =
        StartPtxCmd(absl::StrCat("echo run >> ", log, "; ", kInterpreter, " ",
                                 flags, " {ptx} {in} {out}"));
    ASSERT_TRUE(client.ok()) << client.status();
    auto runs = [&] { return LinesIn(log); };
    // Its start-up timed on one tuple; the first batch in modules of the
    // first size, which time its tuples.
    ASSERT_FALSE((*client)->Run(tuples).fault.has_value());
    EXPECT_EQ(runs(), 1 + 2) << flags;
    const BatchOutcome outcome = (*client)->Run(tuples);
    ASSERT_FALSE(outcome.fault.has_value());
    EXPECT_EQ(runs(), 1 + 2 + second_batch_runs) << flags;
    for (size_t i = 0; i < tuples.size(); ++i) {
      ASSERT_EQ(outcome.results[i].kind, ResultKind::kValue) << flags;
      EXPECT_EQ(outcome.results[i].bits,
                Evaluate(tuples[i].variant, tuples[i].operands).bits);
    }
  }
}

// A run's timeout is four times its expected time and half a second, where
// a big run's time is known only once one ran: before that, the ceiling.
TEST(ToolCostModelTest, ABigRunWaitsForTheCeilingUntilOneWasTimed) {
  ToolCostModel cost;
  EXPECT_EQ(cost.Timeout(1, absl::Seconds(10)), absl::Seconds(10));
  cost.Learn(1, absl::Milliseconds(70));
  EXPECT_EQ(cost.Timeout(1, absl::Seconds(10)), absl::Milliseconds(780));
  EXPECT_EQ(cost.Timeout(1000, absl::Seconds(10)), absl::Seconds(10));
  cost.Learn(1000, absl::Milliseconds(80));
  EXPECT_EQ(cost.Timeout(1000, absl::Seconds(10)), absl::Milliseconds(820));
  EXPECT_EQ(cost.Timeout(1000, absl::Milliseconds(600)),
            absl::Milliseconds(600));
}

// The fewest tuples a run needs for the tool's start-up to be a share of
// it: none until a start-up and a cost per tuple are both measured.
TEST(ToolCostModelTest, SlotsForAStartUpShareFollowTheLearnedCosts) {
  ToolCostModel cost;
  EXPECT_EQ(cost.SlotsForStartupShare(0.125), 0u);
  cost.Learn(1, absl::Milliseconds(70));
  EXPECT_EQ(cost.SlotsForStartupShare(0.125), 0u);
  cost.Learn(1000, absl::Milliseconds(80));  // 10 us a slot past start-up
  // An eighth of a run: the slots take seven times the start-up.
  EXPECT_NEAR(cost.SlotsForStartupShare(0.125), 49000, 1);
  EXPECT_NEAR(cost.SlotsForStartupShare(0.5), 7000, 1);
}

// Every tuple of `refused` in `outcome` declined as an unsupported variant,
// with a message `why` matches; every other tuple given the oracle's value.
void ExpectDeclinedAsUnsupportedTheRestRun(const std::vector<Tuple>& tuples,
                                           const BatchOutcome& outcome,
                                           const Variant& refused,
                                           const Matcher<std::string>& why) {
  for (size_t i = 0; i < tuples.size(); ++i) {
    const TupleResult& r = outcome.results[i];
    if (tuples[i].variant == refused) {
      ASSERT_EQ(r.kind, ResultKind::kDecline);
      EXPECT_EQ(r.code, DeclineCode::kUnsupportedVariant);
      EXPECT_THAT(outcome.messages[r.message], why);
    } else {
      ASSERT_EQ(r.kind, ResultKind::kValue) << outcome.messages[r.message];
      EXPECT_EQ(r.bits, Evaluate(tuples[i].variant, tuples[i].operands).bits);
    }
  }
}

// A tool that exits non-zero on a module refuses its variant: the variant
// is found by splitting the module, its tuples are declined with the tool's
// message, and later batches decline it without running the tool. Where the
// tool's error names a line of the module, the segment on that line is tried
// alone beside the rest's halves; where it says nothing, the module is
// halved.
TEST(PtxCmdBackendTest, ARefusedVariantIsFoundAndDeclinedFromThenOn) {
  for (const bool says_its_line : {true, false}) {
    SCOPED_TRACE(says_its_line ? "an error naming its line" : "a silent tool");
    auto record = TempDir::Create("ptx-cmd-test");
    ASSERT_TRUE(record.ok());
    const std::string log = (*record)->File("runs");
    auto client = StartPtxCmd(absl::StrCat(
        "echo run >> ", log, "; ", kInterpreter,
        " --refuse=bfe {ptx} {in} {out}", says_its_line ? "" : " 2>/dev/null"));
    ASSERT_TRUE(client.ok()) << client.status();
    const std::vector<Tuple> tuples =
        MixedTuples({"add.s32", "bfe.u32", "min.s16", "shf.l.wrap.b32"}, 5);
    for (int batch = 0; batch < 2; ++batch) {
      const BatchOutcome outcome = (*client)->Run(tuples);
      ASSERT_FALSE(outcome.fault.has_value());
      // Where the tool said why, a class of refusals (refusal_classes.h):
      // the family, its message without the line or the variant.
      ExpectDeclinedAsUnsupportedTheRestRun(
          tuples, outcome, V("bfe.u32"),
          says_its_line
              ? Matcher<std::string>(AllOf(
                    HasSubstr("refused by the tool as a class (every bfe"),
                    HasSubstr("): parse error: unknown instruction "
                              "<instruction>")))
              : Matcher<std::string>(
                    HasSubstr("failed on bfe.u32 (5 tuples): exit status 1")));
    }
    // The start-up probe, the whole module; where the tool named the line,
    // the other three bfe variants alone, which confirm that it refuses the
    // family, and the rest of the module whole; where it said nothing, the
    // halves, and the refused half's halves. Then one run of the three
    // others.
    const std::string text = ReadFile(log).value_or("");
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
              says_its_line ? 1 + 1 + 3 + 1 + 1 : 1 + 5 + 1)
        << text;
    EXPECT_EQ((*client)->restarts(), 0);
  }
}

// What a tool refused is remembered across runs beside the corpus (issue
// 41, item 2): a worker started later with the same refusals_dir declines
// the refused shape without running the tool, and leaves a variant refused
// in both shapes out of its handshake, so a campaign never sends it.
TEST(PtxCmdBackendTest, WhatAToolRefusedIsRememberedByTheNextWorker) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string log = (*record)->File("runs");
  const std::string command =
      absl::StrCat("echo run >> ", log, "; ", kInterpreter,
                   " --refuse=bfe {ptx} {in} {out}");
  const KeyValues memory = {{"refusals_dir", (*record)->File("refusals")}};
  std::vector<Tuple> tuples = MixedTuples({"add.s32", "bfe.u32"}, 3);
  const std::vector<Tuple> registers = tuples;
  for (const Tuple& t : registers) tuples.push_back({t.variant, t.operands, 0});
  {
    auto first = StartPtxCmd(command, memory);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_TRUE((*first)->supported_variants()[VariantIndex(V("bfe.u32"))]);
    ASSERT_FALSE((*first)->Run(tuples).fault.has_value());
  }
  RemoveTree(log);
  auto second = StartPtxCmd(command, memory);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE((*second)->supported_variants()[VariantIndex(V("bfe.u32"))]);
  // A worker without the memory finds it again.
  auto forgetful = StartPtxCmd(command);
  ASSERT_TRUE(forgetful.ok()) << forgetful.status();
  EXPECT_TRUE((*forgetful)->supported_variants()[VariantIndex(V("bfe.u32"))]);
  const BatchOutcome outcome = (*second)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value());
  ExpectDeclinedAsUnsupportedTheRestRun(
      tuples, outcome, V("bfe.u32"),
      HasSubstr("variant not supported by ptx-cmd"));
  // The probe and one module of add.s32 in each shape: bfe.u32 never ran.
  const std::string text = ReadFile(log).value_or("");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 1) << text;
  // What a campaign says it skips: this tool's target, no other tool's.
  EXPECT_THAT(RememberedTargets((*record)->File("refusals"), command),
              testing::ElementsAre("sm_90"));
  EXPECT_THAT(RememberedTargets((*record)->File("refusals"), "other {ptx}"),
              testing::IsEmpty());
}

// A tool that crashes or hangs on one tuple: that tuple alone is a fault
// (a finding), with how the tool ended and what it printed; every other
// tuple of the batch gets its value, and the worker goes on.
TEST(PtxCmdBackendTest, ACrashOrHangIsIsolatedToItsTuple) {
  std::vector<Tuple> tuples = MixedTuples(
      {"add.sat.s32", "sub.s32", "bfe.u32", "vadd4.u32.u32.u32.sat"}, 8);
  const Tuple culprit{V("add.sat.s32"), {{0x7fffffff, 5}}, 0b11};
  tuples.insert(tuples.begin() + 17, culprit);
  struct Case {
    std::string flag;
    TupleFault fault;
    std::string how;
  };
  for (const Case& c :
       {Case{"--crash-on", TupleFault::kCrash, "killed by signal 11 (SIGSEGV)"},
        Case{"--hang-on", TupleFault::kHang, "timed out after"}}) {
    auto client = StartPtxCmd(
        absl::StrCat(kInterpreter, " ", c.flag, "=add.sat.s32:0x7fffffff ",
                     "{ptx} {in} {out}"),
        // A run takes a small part of 0.8 s here: a hang is known then.
        {{"timeout_ms", "800"}});
    ASSERT_TRUE(client.ok()) << client.status();
    const BatchOutcome outcome = (*client)->Run(tuples);
    ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
    for (size_t i = 0; i < tuples.size(); ++i) {
      const TupleResult& r = outcome.results[i];
      if (i == 17) {
        ASSERT_EQ(r.kind, ResultKind::kFault) << c.flag;
        EXPECT_EQ(r.fault, c.fault);
        EXPECT_THAT(outcome.messages[r.message],
                    AllOf(HasSubstr("failed on add.sat.s32 (1 tuple): "),
                          HasSubstr(c.how)));
        continue;
      }
      ASSERT_EQ(r.kind, ResultKind::kValue)
          << c.flag << " tuple " << i << ": " << outcome.messages[r.message];
      EXPECT_EQ(r.bits, Evaluate(tuples[i].variant, tuples[i].operands).bits);
    }
    EXPECT_EQ((*client)->restarts(), 0);
  }
}

// A variant that faulted the tool runs apart from then on (issue 41, item
// 1): with a tool that hangs on every bfe.u32 tuple, the second batch's
// clean variants run in one module of their own, never beside bfe.u32,
// whose tuples are each still a hang, found in small runs.
TEST(PtxCmdBackendTest, AVariantThatFaultedRunsApartFromThenOn) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string mixed = (*record)->File("mixed");
  auto client =
      StartPtxCmd(absl::StrCat("if grep -q ': bfe.u32$' {ptx} && grep -q ': "
                               "add.s32$' {ptx}; then echo "
                               "run >> ",
                               mixed, "; fi; ", kInterpreter,
                               " --hang-on=bfe.u32 {ptx} {in} {out}"),
                  {{"timeout_ms", "800"}});
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<Tuple> tuples =
      MixedTuples({"add.s32", "bfe.u32", "min.s16"}, 3);
  auto modules_of_both = [&] { return LinesIn(mixed); };
  for (int batch = 0; batch < 2; ++batch) {
    const int64_t before = modules_of_both();
    const BatchOutcome outcome = (*client)->Run(tuples);
    ASSERT_FALSE(outcome.fault.has_value());
    for (size_t i = 0; i < tuples.size(); ++i) {
      const TupleResult& r = outcome.results[i];
      if (tuples[i].variant == V("bfe.u32")) {
        ASSERT_EQ(r.kind, ResultKind::kFault) << outcome.messages[r.message];
        EXPECT_EQ(r.fault, TupleFault::kHang);
      } else {
        ASSERT_EQ(r.kind, ResultKind::kValue) << outcome.messages[r.message];
      }
    }
    // The first batch ran them together once, before it knew; the second
    // never.
    EXPECT_EQ(modules_of_both() - before, batch == 0 ? 1 : 0);
  }
}

// A variant that faulted runs apart in runs sized to its share of faulting
// tuples: after one crash in 256 tuples, its next 256 clean tuples take a
// few runs of the tool, where runs of 4 took 64 (each a start-up).
TEST(PtxCmdBackendTest, AVariantThatRarelyFaultsRunsApartInLargerRuns) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string log = (*record)->File("runs");
  auto client = StartPtxCmd(
      absl::StrCat("echo run >> ", log, "; ", kInterpreter,
                   " --crash-on=add.s32:0x7fffffff {ptx} {in} {out}"));
  ASSERT_TRUE(client.ok()) << client.status();
  auto batch = [](uint64_t from, bool culprit) {
    std::vector<Tuple> tuples;
    for (uint64_t i = 0; i < 256; ++i) {
      tuples.push_back({V("add.s32"),
                        {{culprit && i == 100 ? 0x7fffffff : from + i, 1}},
                        0b11});
    }
    for (uint64_t i = 0; i < 8; ++i)
      tuples.push_back({V("sub.s32"), {{i, 1}}, 0b11});
    return tuples;
  };
  auto runs = [&] { return LinesIn(log); };
  const BatchOutcome first = (*client)->Run(batch(0, true));
  ASSERT_FALSE(first.fault.has_value());
  EXPECT_EQ(first.results[100].kind, ResultKind::kFault);
  const int64_t before = runs();
  const std::vector<Tuple> clean = batch(1000, false);
  const BatchOutcome second = (*client)->Run(clean);
  ASSERT_FALSE(second.fault.has_value());
  for (size_t i = 0; i < clean.size(); ++i) {
    ASSERT_EQ(second.results[i].kind, ResultKind::kValue) << i;
    EXPECT_EQ(second.results[i].bits,
              Evaluate(clean[i].variant, clean[i].operands).bits);
  }
  // sub.s32's module and add.s32's own runs (at most 16 tuples each would
  // be 16 of them).
  EXPECT_GE(runs() - before, 2);
  EXPECT_LE(runs() - before, 1 + 256 / 16);
}

// A variant that faults the tool on every tuple, run apart after its first
// batch, is released to a batch's runs a few parts at a time: the batch's
// fault cap then leaves the rest unrun after a few crashes, where all its
// one-tuple parts ran at once, a crash each (a `sad` that aborts the tool
// on every tuple cost a run for each of its tuples in every batch).
TEST(PtxCmdBackendTest, AVariantThatFaultsOnEveryTupleCostsAFewRunsABatch) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string log = (*record)->File("runs");
  auto client =
      StartPtxCmd(absl::StrCat("echo run >> ", log, "; ", kInterpreter,
                               " --crash-on=sad.u32 {ptx} {in} {out}"));
  ASSERT_TRUE(client.ok()) << client.status();
  auto batch = [](int faulting) {
    std::vector<Tuple> tuples;
    for (int i = 0; i < faulting; ++i)
      tuples.push_back({V("sad.u32"), {{uint64_t(i), 1, 2}}, 0b111});
    for (uint64_t i = 0; i < 8; ++i)
      tuples.push_back({V("add.s32"), {{i, 1}}, 0b11});
    return tuples;
  };
  auto runs = [&] { return LinesIn(log); };
  ASSERT_FALSE((*client)->Run(batch(16)).fault.has_value());
  const int64_t before = runs();
  const std::vector<Tuple> second = batch(64);
  const BatchOutcome outcome = (*client)->Run(second);
  ASSERT_FALSE(outcome.fault.has_value());
  int faults = 0, not_run = 0;
  for (size_t i = 0; i < second.size(); ++i) {
    const TupleResult& r = outcome.results[i];
    if (second[i].variant == V("add.s32")) {
      ASSERT_EQ(r.kind, ResultKind::kValue) << outcome.messages[r.message];
      continue;
    }
    faults += r.kind == ResultKind::kFault;
    if (r.kind == ResultKind::kDecline) {
      EXPECT_THAT(outcome.messages[r.message],
                  AllOf(HasSubstr("not run"), HasSubstr("sad.u32")));
      ++not_run;
    }
  }
  EXPECT_GE(faults, 3);
  EXPECT_EQ(faults + not_run, 64);
  // add.s32's run and a few of sad.u32's, not 64.
  EXPECT_LE(runs() - before, 16);
}

// The dense-fault fixture (issue 41, item 7) is the tool it says it is: it
// crashes on every division by zero and every sad, hangs on bfind of small
// operands, refuses its parser's variants, reads 64-bit immediates as 32
// bits, and runs everything else right.
TEST(PtxCmdBackendTest, TheDenseFaultFixtureFaultsAsDocumented) {
  auto client = StartPtxCmd(
      absl::StrCat(kInterpreter, " --dense-faults {ptx} {in} {out}"),
      {{"timeout_ms", "1500"}});
  ASSERT_TRUE(client.ok()) << client.status();
  struct Case {
    Tuple tuple;
    std::string expect;  // "crash: SIGFPE", "hang", "refused", "value", "wrong"
  };
  const uint8_t kRegisters = 0b111;
  const std::vector<Case> cases = {
      {{V("div.u32"), {{7, 0}}, kRegisters}, "crash: SIGFPE"},
      {{V("rem.s64"), {{7, 0}}, 0}, "crash: SIGFPE"},
      {{V("div.u32"), {{7, 2}}, kRegisters}, "value"},
      {{V("sad.u32"), {{1, 2, 3}}, kRegisters}, "crash: SIGABRT"},
      {{V("bfind.u32"), {{5}}, kRegisters}, "hang"},
      {{V("bfind.u32"), {{0x80000000}}, kRegisters}, "value"},
      {{V("lop3.b32"), {{1, 2, 3, 0x96}}, kRegisters}, "refused"},
      {{V("addc.cc.u32"), {{1, 2, 1}}, kRegisters}, "refused"},
      {{V("add.u16x2"), {{1, 2}}, kRegisters}, "refused"},
      {{V("vmax.u32.u32.u32 d.b3, a.b3, b.b3, c"), {{1, 2, 3}}, kRegisters},
       "refused"},
      {{V("add.u64"), {{0x100000001, 1}}, 0}, "wrong"},
      {{V("add.u64"), {{0x100000001, 1}}, kRegisters}, "value"},
  };
  std::vector<Tuple> tuples;
  for (const Case& c : cases) tuples.push_back(c.tuple);
  const BatchOutcome outcome = (*client)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value());
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(absl::StrCat(Spell(tuples[i].variant), " case ", i));
    const TupleResult& r = outcome.results[i];
    const std::string message =
        r.message < outcome.messages.size() ? outcome.messages[r.message] : "";
    const uint64_t oracle =
        Evaluate(tuples[i].variant, tuples[i].operands).bits;
    const std::string& expect = cases[i].expect;
    if (absl::StartsWith(expect, "crash")) {
      ASSERT_EQ(r.kind, ResultKind::kFault) << message;
      EXPECT_EQ(r.fault, TupleFault::kCrash);
      EXPECT_THAT(message, HasSubstr(expect.substr(7)));
    } else if (expect == "hang") {
      ASSERT_EQ(r.kind, ResultKind::kFault) << message;
      EXPECT_EQ(r.fault, TupleFault::kHang);
    } else if (expect == "refused") {
      ASSERT_EQ(r.kind, ResultKind::kDecline) << message;
      EXPECT_EQ(r.code, DeclineCode::kUnsupportedVariant);
      EXPECT_THAT(message, HasSubstr("parse error: unknown instruction"));
    } else {
      ASSERT_EQ(r.kind, ResultKind::kValue) << message;
      if (expect == "value") EXPECT_EQ(r.bits, oracle);
      // 0x100000001 read as 1: 1 + 1, not 0x100000002.
      if (expect == "wrong") EXPECT_EQ(r.bits, 2u);
    }
  }
}

// Every way a run can fail without a signal of its own: a crash of the
// command itself, a hang, a short or missing {out}: each is a fault of the
// tuples it ran (here every tuple, one by one).
TEST(PtxCmdBackendTest, EveryWayARunFailsIsAFaultOrARefusal) {
  struct Case {
    std::string command;
    ResultKind kind;
    std::string how;
    std::string and_then = "";  // after a part that varies (a timeout's length)
  };
  const std::vector<Case> cases = {
      {"echo my-tool: no such opcode >&2; exit 1; {ptx} {in} {out}",
       ResultKind::kDecline,
       "failed on add.s32 (2 tuples): exit status 1; its output "
       "ends:\nmy-tool: "
       "no such opcode"},
      {"echo about to crash; kill -SEGV $$; {ptx} {in} {out}",
       ResultKind::kFault,
       "failed on add.s32 (1 tuple): killed by signal 11 (SIGSEGV); its output "
       "ends:\nabout to crash"},
      {"sh -c 'kill -ABRT $$' || exit $?; {ptx} {in} {out}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): killed by signal 6 (SIGABRT) (a shell's "
       "exit status 134)"},
      // At most timeout_ms, less when the run's adaptive timeout or the
      // batch's deadline is nearer: the length is not the point.
      {"sleep 20; {ptx} {in} {out}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): timed out after ",
       "ms (killed); it printed nothing"},
      {"head -c 12 {in} > {out}; : {ptx}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but wrote 12 bytes to {out}, "
       "not 16 (16 per tuple, 1 tuple); it printed nothing"},
      {"true {ptx} {in} {out}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but wrote no {out} file; it "
       "printed nothing"},
  };
  const std::vector<Tuple> tuples = {{V("add.s32"), {{1, 2}}, 0b11},
                                     {V("add.s32"), {{3, 4}}, 0b11}};
  for (const Case& c : cases) {
    auto client = StartPtxCmd(c.command, {{"timeout_ms", "300"}});
    ASSERT_TRUE(client.ok()) << client.status();
    for (int batch = 0; batch < 2; ++batch) {
      const BatchOutcome outcome = (*client)->Run(tuples);
      ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
      for (const TupleResult& r : outcome.results) {
        EXPECT_EQ(r.kind, c.kind) << c.command;
        EXPECT_THAT(outcome.messages[r.message],
                    AllOf(HasSubstr(absl::StrCat("ptx-cmd: command '",
                                                 c.command, "' ")),
                          HasSubstr(c.how), HasSubstr(c.and_then)));
      }
    }
    EXPECT_EQ((*client)->restarts(), 0) << c.command;
  }
}

// A batch whose runs take longer than batch_timeout_ms is still answered in
// time: what could not be run or isolated is declined, saying why.
TEST(PtxCmdBackendTest, TheBatchBudgetBoundsTheReply) {
  auto client = StartPtxCmd(
      "sleep 20; {ptx} {in} {out}",
      {{"timeout_ms", "300"}, {"batch_timeout_ms", "500"}, {"jobs", "1"}});
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Time start = absl::Now();
  const BatchOutcome outcome =
      (*client)->Run(MixedTuples({"add.s32", "sub.s32", "min.s32"}, 1));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_FALSE(outcome.fault.has_value());
  int declined = 0;
  for (const TupleResult& r : outcome.results) {
    if (r.kind != ResultKind::kDecline) continue;
    ++declined;
    EXPECT_THAT(outcome.messages[r.message],
                HasSubstr("the batch's time budget (batch_timeout_ms=500) "
                          "was spent"));
  }
  EXPECT_EQ(declined, 3);
}

// The command runs in a private directory holding the three files, which is
// gone afterwards; so is the worker's own directory of them when the worker
// ends, however it ends.
TEST(PtxCmdBackendTest, RunsInATemporaryDirectoryThatIsRemoved) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string list = (*record)->File("dirs");
  auto client =
      StartPtxCmd(absl::StrCat("pwd >> ", list, "; ls >> ", list, "; n={n}; ",
                               kRunInterpreter, " && echo n=$n >> ", list));
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome outcome =
      (*client)->Run(MixedTuples({"add.s32", "bfe.u32"}, 3));
  ASSERT_FALSE(outcome.fault.has_value());
  EXPECT_THAT(outcome.results,
              Each(::testing::Field(&TupleResult::kind, ResultKind::kValue)));
  client->reset();
  auto text = ReadFile(list);
  ASSERT_TRUE(text.ok());
  std::vector<std::string> lines =
      absl::StrSplit(*text, '\n', absl::SkipEmpty());
  std::vector<std::string> dirs;
  for (const std::string& line : lines) {
    if (absl::StartsWith(line, "/")) dirs.push_back(line);
  }
  // The start-up probe's run (one tuple), then the batch's.
  ASSERT_EQ(dirs.size(), 2u) << *text;
  EXPECT_NE(dirs[0], dirs[1]);
  for (const std::string& dir : dirs) {
    EXPECT_THAT(dir, HasSubstr("/ptxdiff-ptx-cmd-"));
    EXPECT_FALSE(ReadFile(dir + "/kernel.ptx").ok()) << dir;
    // The worker's directory, <tmp>/ptxdiff-ptx-cmd-<pid>, is gone too.
    const std::string worker_dir = dir.substr(0, dir.rfind('/'));
    EXPECT_FALSE(DirectoryExists(worker_dir)) << worker_dir;
  }
  EXPECT_THAT(*text, AllOf(HasSubstr("in.bin\nkernel.ptx\n"),
                           HasSubstr("n=1\n"), HasSubstr("n=6\n")));
}

// A worker killed in the middle of a tool run (here: the client's reply
// deadline passes while the tool hangs) leaves no files: the client that
// reaps it removes its directory.
TEST(PtxCmdBackendTest, AKilledWorkerLeavesNoTemporaryFiles) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string list = (*record)->File("dirs");
  auto command = CommandForBackend(
      absl::StrCat("ptx-cmd:pwd >> ", list, "; sleep 30; {ptx} {in} {out}"),
      PTXDIFF_WORKER_PATH);
  ASSERT_TRUE(command.ok());
  command->timeout = absl::Seconds(1);
  auto client = WorkerClient::Start(*command);
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome outcome = (*client)->Run(MixedTuples({"add.s32"}, 1));
  ASSERT_TRUE(outcome.fault.has_value());
  EXPECT_EQ(outcome.fault->kind, FaultKind::kHang);
  client->reset();
  const std::string text = ReadFile(list).value_or("");
  std::vector<std::string> dirs = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_GE(dirs.size(), 1u);
  for (const std::string& dir : dirs) {
    const std::string worker_dir = dir.substr(0, dir.rfind('/'));
    EXPECT_FALSE(ReadFile(dir + "/kernel.ptx").ok()) << dir;
    EXPECT_FALSE(DirectoryExists(worker_dir)) << worker_dir;
  }
}

// A campaign's options for the test interpreter run with `flags`, filing
// into `dir`'s triage directory.
CampaignOptions InterpreterCampaign(const std::string& flags,
                                    const TempDir& dir) {
  auto command = CommandForBackend(
      absl::StrCat("ptx-cmd:", kInterpreter, " ", flags, " {ptx} {in} {out}"),
      PTXDIFF_WORKER_PATH);
  EXPECT_TRUE(command.ok()) << command.status();
  CampaignOptions options;
  if (command.ok()) options.worker = *command;
  options.triage_dir = dir.File("triage");
  return options;
}

// A campaign sends a tool the operand forms too: the systematic source's
// runtime tier gives bfe.s32 tuples with immediates, where a tool whose
// constant path is wrong (and whose register path, the default form, is
// right) is caught and filed against bfe.s32 alone.
TEST(PtxCmdCampaignTest, AToolWrongOnImmediatesOnlyIsFiled) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      InterpreterCampaign("--flip-immediate-forms=bfe.s32", **dir);
  options.variants = {V("bfe.s32"), V("bfe.u32")};
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  // The systematic source alone, until its first finding.
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while ((*campaign)->Snapshot().new_findings == 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  (*campaign)->Stop();
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_FALSE(entries->empty());
  for (const EntryInfo& e : *entries) {
    EXPECT_TRUE(absl::StartsWith(e.name, "value-mismatch~ptx-cmd~")) << e.name;
    EXPECT_TRUE(absl::EndsWith(e.name, "~bfe.s32")) << e.name;
    // Every source a runtime value is the register shape, which is right.
    EXPECT_FALSE(absl::StrContains(e.name, "runtime-a-b-c.")) << e.name;
    // The minimizer's contrast says so (issue 41, item 4), in the entry it
    // minimized; one the Stop cut short (filed as found) joins its cause.
    const auto cause = e.meta.find("cause");
    if (cause != e.meta.end()) {
      EXPECT_EQ(cause->second,
                "wrong only with 32-bit immediates in bfe (the same operands "
                "in registers agree)");
    }
  }
  const std::vector<RootCause> causes = GroupByRootCause(*entries);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].spelling,
            "wrong only with 32-bit immediates in bfe (the same operands in "
            "registers agree)");
}

// A tool that reads 64-bit immediates as 32 bits is wrong in every 64-bit
// variant: once the first is minimized and its cause told by contrast, the
// others are contrasted in one run and counted in that entry (issue 41,
// item 4), not minimized into an entry each.
TEST(PtxCmdCampaignTest, MismatchesOfACauseAlreadyFiledAreCountedInIt) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      InterpreterCampaign("--dense-faults --startup-ms=2", **dir);
  options.variants = {V("add.u64"), V("sub.u64"), V("max.u64"), V("xor.b64")};
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  auto entries_now = [&] {
    auto store = TriageStore::Open((*dir)->File("triage"), false);
    auto entries = store.ok()
                       ? store->List()
                       : absl::StatusOr<std::vector<EntryInfo>>(store.status());
    return entries.ok() ? *entries : std::vector<EntryInfo>{};
  };
  auto families_found = [](const std::vector<EntryInfo>& entries) {
    std::set<std::string> families;
    for (const EntryInfo& e : entries) {
      const auto found_as = e.meta.find("found_as");
      if (found_as == e.meta.end()) continue;
      for (absl::string_view spelling : absl::StrSplit(found_as->second, ", "))
        families.insert(std::string(spelling.substr(0, spelling.find('.'))));
    }
    return families.size();
  };
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (families_found(entries_now()) < 4 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  (*campaign)->Stop();
  const std::vector<EntryInfo> entries = entries_now();
  EXPECT_EQ(families_found(entries), 4u);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].meta.at("cause"),
            "64-bit immediates read as their low 32 bits (the same operands "
            "in registers agree)");
}

// Mismatches that wait to be filed while the first of their cause is being
// minimized are contrasted together, in one run of the tool, where each
// cost a run of its own (and the tool's start-up): a tool that reads 64-bit
// immediates as 32 bits is wrong in hundreds of variants, each found first
// in its own batch.
TEST(PtxCmdCampaignTest, MismatchesWaitingToBeFiledAreContrastedInOneRun) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      InterpreterCampaign("--dense-faults --startup-ms=2", **dir);
  options.systematic = false;
  options.batch_size = 64;
  const std::vector<std::string> spellings = {"add.u64", "sub.u64", "max.u64",
                                              "min.u64", "xor.b64", "or.b64"};
  for (const std::string& s : spellings) options.variants.push_back(V(s));
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  // All offered at once: one batch, six mismatches queued together.
  for (const std::string& s : spellings) {
    const Tuple t{V(s), {{0x100000003, 0x200000005}}};
    const Result r = Evaluate(t.variant, t.operands);
    (*campaign)->Offer(t, r, SemanticClasses(t, r));
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while ((*campaign)->Snapshot().contrasted < 5 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  (*campaign)->Stop();
  const CampaignStats stats = (*campaign)->Snapshot();
  // The first is minimized (its cause told there); the five queued behind
  // it are run in registers in one batch, and counted in its entry.
  EXPECT_EQ(stats.contrasted, 5);
  EXPECT_EQ(stats.contrast_runs, 1);
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(absl::c_count((*entries)[0].meta.at("found_as"), ','), 5);
}

// A campaign against a tool that crashes on div.u32 and hangs on one bfe
// tuple files both as findings, with the tuple that causes each, and goes
// on judging everything else. The tool's timeout is the backend's own,
// adapted to what its runs cost here and now (ToolCostModel): a fixed
// one under that (timeout_ms=800, once) made a good run slowed by a loaded
// machine a hang, filed against a tuple that never hangs.
TEST(PtxCmdCampaignTest, CrashesAndHangsOfTheToolAreFiled) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      InterpreterCampaign("--crash-on=div.u32 --hang-on=bfe.u32:0x1234", **dir);
  options.systematic = false;
  options.batch_size = 64;
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  auto offer = [&](const char* spelling, Operands ops) {
    const Tuple t{V(spelling), ops};
    const Result r = Evaluate(t.variant, t.operands);
    (*campaign)->Offer(t, r, SemanticClasses(t, r));
  };
  offer("add.u32", {{1, 2}});
  offer("div.u32", {{7, 2}});
  offer("bfe.u32", {{0x1234, 4, 8}});
  offer("bfe.u32", {{0x1235, 4, 8}});
  ASSERT_TRUE((*campaign)->Flush(absl::Seconds(120)));
  const CampaignStats stats = (*campaign)->Snapshot();
  EXPECT_EQ(stats.counts.faulted, 2);
  EXPECT_EQ(stats.counts.agreed, 2);
  EXPECT_EQ(stats.counts.faulty_batches, 0);
  EXPECT_EQ(stats.new_findings, 2);
  (*campaign)->Stop();
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  std::vector<std::string> names;
  for (const EntryInfo& e : *entries) names.push_back(e.name);
  EXPECT_THAT(names,
              ::testing::UnorderedElementsAre("crash~ptx-cmd~crash~div.u32",
                                              "hang~ptx-cmd~hang~bfe.u32"));
  auto crash = store->Show("crash~ptx-cmd~crash~div.u32");
  ASSERT_TRUE(crash.ok());
  EXPECT_THAT(*crash, HasSubstr("killed by signal 11 (SIGSEGV)"));
  auto hang = store->Show("hang~ptx-cmd~hang~bfe.u32");
  ASSERT_TRUE(hang.ok());
  // Filed as found (a hang is not minimized): the exact tuple.
  EXPECT_THAT(*hang,
              AllOf(HasSubstr("0x00001234"), HasSubstr("timed out after")));
}

TEST(PtxCmdBackendTest, BadOptionsFailTheHandshakeClearly) {
  auto no_out = StartPtxCmd("my-tool {ptx} {in}");
  ASSERT_FALSE(no_out.ok());
  EXPECT_THAT(no_out.status().message(),
              HasSubstr("the ptx-cmd command 'my-tool {ptx} {in}' does not "
                        "mention {out}"));
  auto arch = StartPtxCmd(kRunInterpreter, {{"arch", "compute_90"}});
  ASSERT_FALSE(arch.ok());
  EXPECT_THAT(arch.status().message(), HasSubstr("arch=compute_90"));
  auto jobs = StartPtxCmd(kRunInterpreter, {{"jobs", "0"}});
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("jobs=0"));
}

// ---------------------------------------------------------------------------
// `ptxdiff sweep --backend 'ptx-cmd:...'`, the command a user runs.

struct CliRun {
  ProcessOutcome outcome;
  std::string output;
};

CliRun Ptxdiff(const std::vector<std::string>& args) {
  auto dir = TempDir::Create("ptx-cmd-cli-test");
  EXPECT_TRUE(dir.ok());
  std::vector<std::string> argv = {PTXDIFF_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  auto outcome = RunProcess(argv, {.output_path = (*dir)->File("output"),
                                   .timeout = absl::Minutes(5)});
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  return {outcome.value_or(ProcessOutcome{}),
          ReadFile((*dir)->File("output")).value_or("")};
}

// One run of the tool per variant, all in one batch under the backend's
// 45 s budget: 49 variants, as many as before add's four .cc variants ran
// (szext left out for them), keep a loaded machine within it.
const std::vector<std::string> kSweepFamilies = {
    "--family", "add", "--family", "bfe", "--family", "bfi",
    "--family", "shf", "--family", "min", "--family", "mul"};

TEST(PtxCmdSweepTest, NoMismatchThroughTheInterpreter) {
  std::vector<std::string> args = {
      "sweep", "--backend", "ptx-cmd:" + kRunInterpreter, "--tuples", "64"};
  args.insert(args.end(), kSweepFamilies.begin(), kSweepFamilies.end());
  const CliRun run = Ptxdiff(args);
  EXPECT_EQ(run.outcome.exit_status, 0) << run.output;
  // 13 + 4 + 2 + 4 + 10 + 16 variants, add's four .cc variants among them
  // (their carries read back from the kernels).
  EXPECT_THAT(run.output, HasSubstr("49 variants x 64 tuples = 3136 tuples"));
  EXPECT_THAT(run.output, HasSubstr("agreed          3136\n"));
  EXPECT_THAT(run.output, HasSubstr("mismatched      0\n"));
  EXPECT_THAT(run.output, HasSubstr("declined        0\n"));
  EXPECT_THAT(run.output, HasSubstr("faulty batches  0  (worker restarts: 0)"));
}

// A sweep's mismatch line, "... # oracle 0x00000000 cf=1, ptx-cmd
// 0x00000000 cf=0", whose bits agree and whose carries do not.
bool IsCarryOnlyMismatch(absl::string_view line) {
  const size_t oracle = line.find("# oracle ");
  const size_t comma = line.find(", ", oracle);
  if (oracle == absl::string_view::npos || comma == absl::string_view::npos) {
    return false;
  }
  std::vector<absl::string_view> expected = absl::StrSplit(
      line.substr(oracle + 9, comma - oracle - 9), ' ', absl::SkipEmpty());
  std::vector<absl::string_view> got =
      absl::StrSplit(line.substr(comma + 2), ' ', absl::SkipEmpty());
  // got: the backend's name, its bits, its carry.
  return expected.size() == 2 && got.size() == 3 && expected[0] == got[1] &&
         absl::StartsWith(expected[1], "cf=") &&
         absl::StartsWith(got[2], "cf=") && expected[1] != got[2];
}

// The 32 variants that read CC.CF (16 of them write it too): the flag set
// before and read after the instruction, in the interpreter's CC.CF, agrees
// with the oracle everywhere. (add.cc's carry out is in the sweep above;
// every carry variant's kernel in ptx_cmd_kernel_abi_test.) One sweep per
// family keeps each batch, one run of the tool per variant, well within the
// backend's 45 s budget on a loaded machine.
TEST(PtxCmdSweepTest, CarriesAgreeThroughTheInterpreter) {
  for (const auto& [family, variants] :
       std::vector<std::pair<std::string, int>>{
           {"addc", 8}, {"subc", 8}, {"madc", 16}}) {
    const CliRun run =
        Ptxdiff({"sweep", "--backend", "ptx-cmd:" + kRunInterpreter, "--tuples",
                 "32", "--family", family});
    EXPECT_EQ(run.outcome.exit_status, 0) << run.output;
    EXPECT_THAT(run.output,
                HasSubstr(absl::StrCat(variants, " variants x 32 tuples = ",
                                       variants * 32, " tuples")));
    EXPECT_THAT(run.output, HasSubstr(absl::StrCat("agreed          ",
                                                   variants * 32, "\n")));
    EXPECT_THAT(run.output, HasSubstr("mismatched      0\n"));
  }
}

// A tool whose addc.cc.u32 writes no CC.CF (the flag keeps its carry in):
// its result bits are right, so every mismatch is in the carry alone.
TEST(PtxCmdSweepTest, TheWrongCarryModeIsACarryMismatchOnAddcCcU32Only) {
  std::vector<std::string> args = {
      "sweep",
      "--backend",
      "ptx-cmd:" + kInterpreter + " --wrong=addc.cc.u32 {ptx} {in} {out}",
      "--tuples",
      "128",
      "--family",
      "add",
      "--family",
      "addc"};
  const CliRun run = Ptxdiff(args);
  EXPECT_EQ(run.outcome.exit_status, 1) << run.output;
  const size_t listed = run.output.find("mismatches (first");
  ASSERT_NE(listed, std::string::npos) << run.output;
  int mismatches = 0;
  for (absl::string_view line :
       absl::StrSplit(run.output.substr(listed), '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "  ptxdiff eval")) {
      EXPECT_THAT(std::string(line), HasSubstr("ptxdiff eval 'addc.cc.u32' "));
      EXPECT_TRUE(IsCarryOnlyMismatch(line)) << line;
      ++mismatches;
    }
  }
  EXPECT_GT(mismatches, 0);
}

TEST(PtxCmdSweepTest, TheWrongModeIsAMismatchOnAddSatS32Only) {
  std::vector<std::string> args = {
      "sweep",
      "--backend",
      "ptx-cmd:" + kInterpreter + " --wrong=add.sat.s32 {ptx} {in} {out}",
      "--tuples",
      "64",
      "--family",
      "add",
      "--family",
      "sub",
      "--family",
      "bfe"};
  const CliRun run = Ptxdiff(args);
  EXPECT_EQ(run.outcome.exit_status, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("28 variants x 64 tuples"));
  const size_t listed = run.output.find("mismatches (first");
  ASSERT_NE(listed, std::string::npos) << run.output;
  int mismatches = 0;
  for (absl::string_view line :
       absl::StrSplit(run.output.substr(listed), '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "  ptxdiff eval")) continue;
    EXPECT_THAT(std::string(line), HasSubstr("ptxdiff eval 'add.sat.s32' "));
    ++mismatches;
  }
  EXPECT_GT(mismatches, 0);
  EXPECT_THAT(run.output, Not(HasSubstr("mismatched      0\n")));
}

// A flag word no correct CC.CF reader leaves (7 for addc.u32 0, 0) is
// declined with what was read, never guessed into a carry.
TEST(PtxCmdSweepTest, AnUnreadableFlagWordIsDeclined) {
  const CliRun run =
      Ptxdiff({"eval", "--backend",
               "ptx-cmd:printf "
               "'\\0\\0\\0\\0\\0\\0\\0\\0\\7\\0\\0\\0\\0\\0\\0\\0' > {out}; : "
               "{ptx} {in}",
               "addc.cc.u32", "1", "2", "0"});
  EXPECT_EQ(run.outcome.exit_status, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("declined: the CC.CF reader (addc.u32 r, 0, 0) left "
                        "0x7, which is neither 0 nor 0x1: the carry out was "
                        "not read"));
}

TEST(PtxCmdSweepTest, AFailingToolIsExplainedByEval) {
  const CliRun run =
      Ptxdiff({"eval", "--backend",
               "ptx-cmd:echo cannot parse >&2; exit 2; {ptx} {in} {out}",
               "add.s32", "1", "2"});
  EXPECT_EQ(run.outcome.exit_status, 0) << run.output;
  EXPECT_THAT(
      run.output,
      HasSubstr(
          "declined: ptx-cmd: command 'echo cannot parse >&2; "
          "exit 2; {ptx} {in} {out}' failed on add.s32 with immediates (1 "
          "tuple): exit status 2; its output ends:\ncannot "
          "parse\nverdict: declined"));
}

}  // namespace
}  // namespace ptxdiff
