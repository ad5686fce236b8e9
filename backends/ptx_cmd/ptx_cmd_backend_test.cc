// The ptx-cmd backend in a real worker process, with the test interpreter
// (testing/ptx_kernel_interpreter.cc) or a shell snippet as the tool: its
// answers, forms, batching, refusals and temporary files. Its faults are in
// ptx_cmd_faults_test.cc, campaigns on it in ptx_cmd_campaign_test.cc,
// `ptxdiff sweep` on it in ptx_cmd_sweep_test.cc.

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/testing/interpreter_tool.h"
#include "backends/ptx_cmd/tool_run.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "worker/testing/ptx_cmd_worker.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Matcher;

bool DirectoryExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Whether `path` is gone, or goes within 10 s (a killed worker's remover
// takes its directory once it has ended: common/files.h). The bound only
// ends a failing test.
bool GoneSoon(const std::string& path) {
  for (int tries = 0; tries < 1000 && DirectoryExists(path); ++tries)
    absl::SleepFor(absl::Milliseconds(10));
  return !DirectoryExists(path);
}

TEST(PtxCmdBackendTest, TheInterpreterGivesTheOraclesResults) {
  auto client = StartPtxCmdWorker(kRunInterpreter);
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
  auto client = StartPtxCmdWorker(kInterpreter +
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

  auto registers = StartPtxCmdWorker(
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
  auto sm90 = StartPtxCmdWorker(kRunInterpreter);
  ASSERT_TRUE(sm90.ok()) << sm90.status();
  EXPECT_TRUE((*sm90)->identity().Supports(V("add.u16x2")));
  EXPECT_FALSE((*sm90)->identity().Supports(V("visa.shl.ud.ud.ud")));
  auto sm80 = StartPtxCmdWorker(kRunInterpreter, {{"arch", "sm_80"}});
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
    auto client = StartPtxCmdWorker(
        "echo run >> " + log + "; " + kRunInterpreter, {{"abi", abi}});
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
  // A start-up of a second, so that it outweighs the tuples' cost even
  // where a loaded machine (the full suite's heaviest tests beside it)
  // inflates that cost several times over.
  for (const auto& [flags, second_batch_runs] :
       std::vector<std::pair<std::string, int>>{{"--startup-ms=1000", 1},
                                                {"--per-tuple-us=400", 2}}) {
    const std::string log = (*record)->File("runs" + flags);
    auto client =
        StartPtxCmdWorker(absl::StrCat("echo run >> ", log, "; ", kInterpreter,
                                       " ", flags, " {ptx} {in} {out}"));
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
    auto client = StartPtxCmdWorker(absl::StrCat(
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
    auto first = StartPtxCmdWorker(command, memory);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_TRUE((*first)->supported_variants()[VariantIndex(V("bfe.u32"))]);
    ASSERT_FALSE((*first)->Run(tuples).fault.has_value());
  }
  RemoveTree(log);
  auto second = StartPtxCmdWorker(command, memory);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE((*second)->supported_variants()[VariantIndex(V("bfe.u32"))]);
  // A worker without the memory finds it again.
  auto forgetful = StartPtxCmdWorker(command);
  ASSERT_TRUE(forgetful.ok()) << forgetful.status();
  EXPECT_TRUE((*forgetful)->supported_variants()[VariantIndex(V("bfe.u32"))]);
  const BatchOutcome outcome = (*second)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value());
  ExpectDeclinedAsUnsupportedTheRestRun(
      tuples, outcome, V("bfe.u32"),
      HasSubstr("variant not supported by ptx-cmd"));
  // The start's re-check of the remembered class (a bfe variant alone,
  // refused: kept), the probe and one module of add.s32 in each shape:
  // bfe.u32 never ran in a batch.
  const std::string text = ReadFile(log).value_or("");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 1 + 1) << text;
  // What a campaign says it skips: this tool's target, no other tool's.
  EXPECT_THAT(RememberedTargets((*record)->File("refusals"), command),
              testing::ElementsAre("sm_90"));
  EXPECT_THAT(RememberedTargets((*record)->File("refusals"), "other {ptx}"),
              testing::IsEmpty());
}

// The fifteenth fault run's third medium: a tool that failed every module
// for a while (a licence server down) was remembered refusing what it was
// sent, and no later worker sent it again. A worker's start re-checks what
// the memory holds: the tool runs it now, so it is forgotten (said in the
// memory), offered and run; its planted bug is seen again.
TEST(PtxCmdBackendTest, ARefusalTheToolNoLongerMakesIsForgottenAtTheStart) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string flag = (*record)->File("server-down");
  ASSERT_TRUE(WriteFile(flag, "").ok());
  const std::string command =
      absl::StrCat("if [ -e ", flag,
                   " ]; then echo 'error: cannot check out a license "
                   "(server down)' >&2; exit 1; fi; ",
                   kInterpreter, " --flip-on=add.sat.s32 {ptx} {in} {out}");
  const KeyValues memory = {{"refusals_dir", (*record)->File("refusals")}};
  std::vector<Tuple> tuples = MixedTuples({"add.sat.s32", "sub.s32"}, 3);
  const std::vector<Tuple> registers = tuples;
  for (const Tuple& t : registers) tuples.push_back({t.variant, t.operands, 0});
  {
    auto down = StartPtxCmdWorker(command, memory);
    ASSERT_TRUE(down.ok()) << down.status();
    ASSERT_FALSE((*down)->Run(tuples).fault.has_value());
  }
  const RefusalMemory file((*record)->File("refusals"), command, "sm_90");
  ASSERT_TRUE(file.Load().ok());
  ASSERT_FALSE(file.Load()->variants.empty());  // the failure was learned
  RemoveTree(flag);
  auto up = StartPtxCmdWorker(command, memory);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_TRUE((*up)->supported_variants()[VariantIndex(V("add.sat.s32"))]);
  const BatchOutcome outcome = (*up)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value());
  for (size_t i = 0; i < tuples.size(); ++i) {
    EXPECT_EQ(outcome.results[i].kind, ResultKind::kValue)
        << Spell(tuples[i].variant) << ": " << outcome.NoteOf(i);
  }
  const absl::StatusOr<Remembered> after = file.Load();
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->variants.empty());
  EXPECT_TRUE(after->classes.empty());
  ASSERT_FALSE(after->forgotten.empty());
  EXPECT_EQ(after->forgotten[0].message,
            "error: cannot check out a license (server down)");
}

// The re-check at a worker's start runs once a run (common/run_id.h): a
// worker restarted in the run, or another of its workers, does not run the
// tool for refusals a re-check of the run kept; the next run does.
TEST(PtxCmdBackendTest, RememberedRefusalsAreReCheckedOnceARun) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string runs = (*record)->File("runs");
  const std::string command =
      absl::StrCat("echo run >> ", runs, "; ", kInterpreter,
                   " --refuse=sub {ptx} {in} {out}");
  const KeyValues memory = {{"refusals_dir", (*record)->File("refusals")}};
  const auto tool_runs = [&] {
    const absl::StatusOr<std::string> text = ReadFile(runs);
    return text.ok() ? std::count(text->begin(), text->end(), '\n') : 0;
  };
  {
    auto learning = StartPtxCmdWorker(command, memory);
    ASSERT_TRUE(learning.ok()) << learning.status();
    ASSERT_FALSE(
        (*learning)->Run(MixedTuples({"sub.s32"}, 2)).fault.has_value());
  }
  const auto started = [&](const char* run) {
    setenv("PTXDIFF_RUN", run, 1);
    const int64_t before = tool_runs();
    EXPECT_TRUE(StartPtxCmdWorker(command, memory).ok());
    unsetenv("PTXDIFF_RUN");
    return tool_runs() - before;
  };
  EXPECT_GT(started("1-100"), 0);
  EXPECT_EQ(started("1-100"), 0);  // a restart in the same run
  EXPECT_GT(started("2-200"), 0);  // the next run
}

// The command runs in a private directory holding the three files, which is
// gone afterwards; so is the worker's own directory of them when the worker
// ends, however it ends.
TEST(PtxCmdBackendTest, RunsInATemporaryDirectoryThatIsRemoved) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string list = (*record)->File("dirs");
  auto client = StartPtxCmdWorker(
      absl::StrCat("pwd >> ", list, "; ls >> ", list, "; n={n}; ",
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
    EXPECT_THAT(dir, HasSubstr("/ptx-cmd-"));
    EXPECT_FALSE(ReadFile(dir + "/kernel.ptx").ok()) << dir;
    // The worker's directory of them, <tmp>/ptxdiff-<pid>/ptx-cmd-*, is gone
    // too.
    const std::string worker_dir = dir.substr(0, dir.rfind('/'));
    EXPECT_FALSE(DirectoryExists(worker_dir)) << worker_dir;
  }
  EXPECT_THAT(*text, AllOf(HasSubstr("in.bin\nkernel.ptx\n"),
                           HasSubstr("n=1\n"), HasSubstr("n=6\n")));
}

// A worker killed in the middle of a tool run (here: the client's reply
// deadline passes while the tool hangs) leaves no files: its remover takes
// its directory once it has ended.
TEST(PtxCmdBackendTest, AKilledWorkerLeavesNoTemporaryFiles) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string list = (*record)->File("dirs");
  auto command = PtxCmdWorkerCommand(
      absl::StrCat("pwd >> ", list, "; sleep 30; {ptx} {in} {out}"));
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
    EXPECT_TRUE(GoneSoon(worker_dir)) << worker_dir;
  }
}

// Sixth fault run: two `fuzz` runs at once left two empty
// TMPDIR/ptxdiff-ptx-cmd-PID directories. A campaign's stop kills its
// workers (WorkerClient::Interrupt) and the fuzzer then ends by _Exit, so
// no client reaped them, and it was the client that removed a killed
// worker's directory. Here too the worker is killed and not reaped: its
// directory goes all the same.
TEST(PtxCmdBackendTest, AWorkerKilledAndNotReapedLeavesNoDirectory) {
  auto record = TempDir::Create("ptx-cmd-test");
  ASSERT_TRUE(record.ok());
  const std::string list = (*record)->File("dirs");
  auto client =
      StartPtxCmdWorker(absl::StrCat("pwd >> ", list, "; ", kRunInterpreter));
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_FALSE((*client)->Run(MixedTuples({"add.s32"}, 2)).fault.has_value());
  const std::vector<std::string> dirs =
      absl::StrSplit(ReadFile(list).value_or(""), '\n', absl::SkipEmpty());
  ASSERT_GE(dirs.size(), 1u);
  const std::string worker_dir = dirs[0].substr(0, dirs[0].rfind('/'));
  ASSERT_TRUE(DirectoryExists(worker_dir)) << "kept while the worker runs";
  ASSERT_EQ(kill((*client)->worker_pid(), SIGKILL), 0);
  EXPECT_TRUE(GoneSoon(worker_dir)) << worker_dir;
}

TEST(PtxCmdBackendTest, BadOptionsFailTheHandshakeClearly) {
  auto no_out = StartPtxCmdWorker("my-tool {ptx} {in}");
  ASSERT_FALSE(no_out.ok());
  EXPECT_THAT(no_out.status().message(),
              HasSubstr("the ptx-cmd command 'my-tool {ptx} {in}' does not "
                        "mention {out}"));
  auto arch = StartPtxCmdWorker(kRunInterpreter, {{"arch", "compute_90"}});
  ASSERT_FALSE(arch.ok());
  EXPECT_THAT(arch.status().message(), HasSubstr("arch=compute_90"));
  auto jobs = StartPtxCmdWorker(kRunInterpreter, {{"jobs", "0"}});
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("jobs=0"));
}

}  // namespace
}  // namespace ptxdiff
