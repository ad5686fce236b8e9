// The ptx-cmd backend's faults, in a real worker process: a tool that
// crashes or hangs is isolated to the tuple, a variant that faulted runs
// apart, and every way a run can fail is a fault or a refusal, within the
// batch's budget.

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/testing/interpreter_tool.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "worker/testing/ptx_cmd_worker.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

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
    CaseFault fault;
    std::string how;
  };
  for (const Case& c :
       {Case{"--crash-on", CaseFault::kCrash, "killed by signal 11 (SIGSEGV)"},
        Case{"--hang-on", CaseFault::kHang, "timed out after"}}) {
    auto client = StartPtxCmdWorker(
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
  auto client = StartPtxCmdWorker(
      absl::StrCat("if grep -q ': bfe.u32$' {ptx} && grep -q ': "
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
        EXPECT_EQ(r.fault, CaseFault::kHang);
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
  auto client = StartPtxCmdWorker(
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
      StartPtxCmdWorker(absl::StrCat("echo run >> ", log, "; ", kInterpreter,
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
  auto client = StartPtxCmdWorker(
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
      EXPECT_EQ(r.fault, CaseFault::kCrash);
      EXPECT_THAT(message, HasSubstr(expect.substr(7)));
    } else if (expect == "hang") {
      ASSERT_EQ(r.kind, ResultKind::kFault) << message;
      EXPECT_EQ(r.fault, CaseFault::kHang);
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
      // Read no further than its slots: the message can only say "more
      // than" of a read that stopped (an endless {out} would never end).
      {"head -c 4096 /dev/zero > {out}; : {ptx} {in}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but wrote more than 16 "
       "bytes to {out} (16 per tuple, 1 tuple); it printed nothing"},
      // Ninth fault run: a FIFO at {out} blocked the worker's read for ever.
      {"rm -f {out}; mkfifo {out}; : {ptx} {in}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but left {out} a FIFO, not "
       "a file; it printed nothing"},
      // Tenth fault run: a link to a device whose read blocks.
      {"ln -s /dev/ptmx {out}; : {ptx} {in}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but left {out} a character "
       "device, not a file; it printed nothing"},
      {"mkdir {out}; : {ptx} {in}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but left {out} a directory, "
       "not a file; it printed nothing"},
      {"true {ptx} {in} {out}", ResultKind::kFault,
       "failed on add.s32 (1 tuple): it exited 0 but wrote no {out} file; it "
       "printed nothing"},
  };
  const std::vector<Tuple> tuples = {{V("add.s32"), {{1, 2}}, 0b11},
                                     {V("add.s32"), {{3, 4}}, 0b11}};
  for (const Case& c : cases) {
    auto client = StartPtxCmdWorker(c.command, {{"timeout_ms", "300"}});
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

// A run the machine failed (a full disk: the third fault run's tool that
// failed "No space left on device" for a while) says nothing of the module:
// its tuples are declined as not finished, and nothing is learned as
// refused, so that once the disk is free they run.
TEST(PtxCmdBackendTest, ARunTheMachineFailedIsNoRefusal) {
  const std::string full =
      ::testing::TempDir() + "/disk_full_" + std::to_string(getpid());
  ASSERT_TRUE(WriteFile(full, "").ok());
  const std::string command = absl::StrCat(
      "if [ -e '", full, "' ]; then echo 'cannot write {out}: No space left ",
      "on device' >&2; exit 1; fi; ", kRunInterpreter);
  auto client = StartPtxCmdWorker(command, {{"timeout_ms", "5000"}});
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<Tuple> tuples = {{V("add.s32"), {{1, 2}}, 0b11},
                                     {V("sub.s32"), {{3, 4}}, 0b11}};
  BatchOutcome outcome = (*client)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
  for (const TupleResult& r : outcome.results) {
    EXPECT_EQ(r.kind, ResultKind::kDecline);
    EXPECT_THAT(outcome.messages[r.message],
                HasSubstr("not finished: the machine failed the run, not the "
                          "module (exit status 1: \"No space left on "
                          "device\")"));
  }
  ASSERT_EQ(unlink(full.c_str()), 0);  // room again
  outcome = (*client)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value()) << outcome.fault->detail;
  ASSERT_EQ(outcome.results.size(), 2u);
  EXPECT_EQ(outcome.results[0].kind, ResultKind::kValue);
  EXPECT_EQ(outcome.results[0].bits, 3u);
  EXPECT_EQ(outcome.results[1].kind, ResultKind::kValue);
  EXPECT_EQ(outcome.results[1].bits, 0xffffffffu);
}

// The worker's own files failing (a full TMPDIR; here a file size limit,
// as over a quota) is no fault of the tool: the batch comes back unjudged
// as an environment failure naming the file and the reason, neither sent
// again nor halved (each would fail the same and blame a tuple).
TEST(PtxCmdBackendTest, TheWorkersOwnFilesFailingIsNoFaultOfTheTool) {
  auto command = PtxCmdWorkerCommand(kRunInterpreter, {{"timeout_ms", "5000"}});
  ASSERT_TRUE(command.ok()) << command.status();
  command->isolate_faults = true;
  auto client = WorkerClient::Start(WithNoRoomToWrite(*command));
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<Tuple> tuples = {{V("add.s32"), {{1, 2}}, 0b11},
                                     {V("sub.s32"), {{3, 4}}, 0b11}};
  const BatchOutcome outcome = (*client)->Run(tuples);
  ASSERT_TRUE(outcome.fault.has_value());
  EXPECT_EQ(outcome.fault->kind, FaultKind::kEnvironment);
  EXPECT_TRUE(EnvironmentFailed(outcome));
  EXPECT_THAT(outcome.fault->detail,
              AllOf(HasSubstr(kEnvironmentFailureSaid),
                    HasSubstr("kernel.ptx: File too large"),
                    HasSubstr("under TMPDIR " + TempRoot())));
  EXPECT_FALSE(outcome.unisolated.has_value());
  EXPECT_EQ((*client)->restarts(), 0);
}

// A batch whose runs take longer than batch_timeout_ms is still answered in
// time: what could not be run or isolated is declined, saying why.
TEST(PtxCmdBackendTest, TheBatchBudgetBoundsTheReply) {
  auto client = StartPtxCmdWorker(
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

}  // namespace
}  // namespace ptxdiff
