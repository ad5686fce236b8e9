// `ptxdiff programs`: a campaign over programs from the command line.

#include <sys/stat.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "cli/program_command.h"
#include "cli/testing/run_ptxdiff.h"
#include "cli/testing/stop_once_handled.h"
#include "cli/triage_commands.h"
#include "common/files.h"
#include "common/testing/scoped_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/program_encoding.h"
#include "program/program_generator.h"
#include "report/run_records.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct ProgramsRun {
  int code;
  std::string out, err;
};

ProgramsRun Programs(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunPrograms(args, out, err);
  return {code, out.str(), err.str()};
}

// A short run checks programs, says how many and what it filed where, and
// whatever it filed is in the triage directory as program entries.
TEST(ProgramsCommandTest, AShortRunChecksProgramsAndSaysWhatItFiled) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  auto dir = TempDir::Create("programs-command");
  ASSERT_TRUE(dir.ok());
  const std::string triage = (*dir)->File("triage");
  const std::string out = (*dir)->File("out");
  ProgramsRun r = Programs({"--max-time", "4", "--dir", triage, "--threads",
                            "1", "--seed", "3", "--out", out, "--report"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Its progress kept for the report, and the report written at the end.
  const std::vector<std::string> runs = FilesIn(out + "/stats");
  ASSERT_EQ(runs.size(), 1u);
  // A run directory as `fuzz` makes, its timeline saying its kind.
  EXPECT_THAT(runs[0], HasSubstr("/run-"));
  const std::string timeline =
      ReadFile(absl::StrCat(runs[0], "/", kTimelineFile)).value_or("");
  EXPECT_THAT(timeline,
              testing::StartsWith(TimelineHeader(RunKind::kPrograms)));
  EXPECT_THAT(timeline, testing::ContainsRegex(
                            "# backend: ptxas .*\n[0-9.]+\t[1-9][0-9]*\t"));
  EXPECT_THAT(r.out, HasSubstr("programs: report: " + out + "/report.html"));
  // The programs by the variants they held, in the engine's outcome table.
  const std::vector<std::string> outcomes = FilesIn(runs[0], ".outcomes");
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_THAT(ReadFile(outcomes[0]).value_or(""),
              testing::ContainsRegex("\tprogram-imm\t-\t[1-9]"));
  const std::string json = ReadFile(out + "/report.json").value_or("");
  EXPECT_THAT(json,
              HasSubstr("\"program_implementations\":[{\"backend\":\"ptxas"));
  EXPECT_THAT(json, HasSubstr("\"program_variants\":{\""));
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         "programs: ptxas sm_90, 1 thread, [0-9]+ s: "
                         "[1-9][0-9]* programs checked"));
  // ptxas judges thread inputs: some programs read %tid.x or %laneid.
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         "; [1-9][0-9]* of them with a thread input"));
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         "programs: found [0-9]+ disagreements?, [0-9]+ "
                         "crash(es)?, [0-9]+ hangs?; filed in "));
  auto store = TriageStore::Open(triage, false);
  ASSERT_TRUE(store.ok()) << store.status();
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  for (const EntryInfo& e : *entries) {
    EXPECT_TRUE(NamesAProgram(e.signature)) << e.name;
    EXPECT_THAT(r.out, HasSubstr(e.name));
    EXPECT_THAT(e.damage, testing::IsEmpty()) << e.name;
  }
}

// Issue 42, item 8: a tool that refuses every module (or does not exist)
// gave "142 programs checked ... the tool ran 0%" and exit 0. A run that
// judged nothing fails now, and says why.
TEST(ProgramsCommandTest, ARunThatJudgedNothingFailsAndSaysWhy) {
  auto dir = TempDir::Create("programs-nothing");
  ASSERT_TRUE(dir.ok());
  for (const std::string& tool : {std::string("/bin/false")}) {
    const ProgramsRun r =
        Programs({"--backend", "ptx-cmd:" + tool + " {ptx} {in} {out}",
                  "--max-time", "6", "--threads", "1", "--dir",
                  (*dir)->File("triage"), "--out", (*dir)->File("out")});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    // Where the machine is loaded, the run can end before the tool's first
    // answer: nothing checked rather than nothing judged, exit 1 either way.
    EXPECT_THAT(r.err,
                testing::ContainsRegex(
                    "^ptxdiff programs: nothing was judged: ptx-cmd judged "
                    "none of the [0-9]+ programs checked \\(most often, "
                    "[0-9]+ programs?: exit status 1|^ptxdiff programs: "
                    "nothing was checked: the run ended before ptx-cmd"))
        << tool;
  }
  {
    // Ninth fault run: the reason was cut at its first line, "exit status
    // 2; its output ends:", and the tool's words after it were lost.
    const ProgramsRun r = Programs(
        {"--backend",
         "ptx-cmd:/bin/sh -c 'echo unknown mode bfe.s32 >&2; exit 2' sh "
         "{ptx} {in} {out}",
         "--max-time", "6", "--threads", "1", "--dir", (*dir)->File("triage"),
         "--out", (*dir)->File("out")});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_THAT(r.err, testing::ContainsRegex(
                           "programs?: exit status 2; its output ends: / "
                           "unknown mode bfe.s32\\)|nothing was checked"))
        << r.err;
  }
  // A tool that cannot run ran the whole --max-time, every module "exit
  // status 127": it is bad input now, said before anything runs.
  const ProgramsRun r = Programs(
      {"--backend",
       "ptx-cmd:" + (*dir)->File("nonexistent-tool") + " {ptx} {in} {out}",
       "--max-time", "6", "--dir", (*dir)->File("triage"), "--out",
       (*dir)->File("out")});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("nonexistent-tool does not exist"));
}

// A run whose every step variant is filed or refused had nothing to draw:
// the generator drew for ever, at full CPU past --max-time (a tool refusing
// everything, learned, did it). It ends at once and says why.
TEST(ProgramsCommandTest, ARunWithNothingLeftToDrawEndsAndSaysWhy) {
  auto dir = TempDir::Create("programs-nothing-to-draw");
  ASSERT_TRUE(dir.ok());
  const ProgramsRun r = Programs(
      {"--backend", "ptx-cmd:/bin/false {ptx} {in} {out}", "--max-time", "600",
       "--threads", "1", "--suppress", absl::StrJoin(GeneratedSpellings(), ","),
       "--dir", (*dir)->File("triage"), "--out", (*dir)->File("out")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("programs: ended early: every instruction the "
                               "generator draws is filed as one instruction "
                               "or refused by the tool"));
}

// Issue 65: a --out it cannot write to was found only at the end ("the
// report could not be written", exit 0); it is refused at once, as by
// `fuzz`. A run that can write keeps where its findings went, for a later
// `ptxdiff report` of its --out.
TEST(ProgramsCommandTest, AnOutItCannotWriteIsRefusedAtOnce) {
  auto dir = TempDir::Create("programs-out");
  ASSERT_TRUE(dir.ok());
  const std::string tool = "ptx-cmd:/bin/false {ptx} {in} {out}";
  const absl::Time start = absl::Now();
  ProgramsRun r = Programs({"--backend", tool, "--max-time", "60", "--dir",
                            (*dir)->File("triage"), "--out",
                            "/sys/ptxdiff-test/out", "--report"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot create /sys/ptxdiff-test"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));

  r = Programs({"--backend", tool, "--max-time", "2", "--threads", "1",
                "--dir", (*dir)->File("elsewhere"), "--out",
                (*dir)->File("out")});
  EXPECT_EQ(RecordedTriageDir((*dir)->File("out")), (*dir)->File("elsewhere"))
      << r.out << r.err;
}

// Ninth fault run: with a worker that never answers HELLO, `programs
// --max-time 10 --timeout 3` ran 63.5 s and `program --timeout 3` 62.7 s
// (a program worker's handshake waited its batch allowance, at least a
// minute) while the message blamed --timeout. The run's end bounds the
// first, --timeout (at least 10 s) the second, and each says which.
TEST(ProgramsCommandTest, AWorkerDeafToHelloCostsTheRunOrTheTimeoutNoMore) {
  auto dir = TempDir::Create("programs-deaf-worker");
  ASSERT_TRUE(dir.ok());
  const std::string worker = (*dir)->File("deaf_worker.sh");
  ASSERT_TRUE(WriteFile(worker, "#!/bin/sh\nexec sleep 1000\n").ok());
  ASSERT_EQ(chmod(worker.c_str(), 0755), 0);
  const ScopedEnv deaf("PTXDIFF_WORKER", worker);
  const std::string tool = "ptx-cmd:/bin/false {ptx} {in} {out}";

  absl::Time start = absl::Now();
  const ProgramsRun r =
      Programs({"--backend", tool, "--max-time", "5", "--timeout", "3", "--dir",
                (*dir)->File("triage"), "--out", (*dir)->File("out")});
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no answer to HELLO before the run's deadline"));

  start = absl::Now();
  std::ostringstream out, err;
  const int code =
      RunProgram({std::string(PTXDIFF_SOURCE_DIR) +
                      "/program/testdata/found-abs-lt-zero.ptxprog",
                  "--backend", tool, "--timeout", "3"},
                 out, err);
  EXPECT_LT(absl::Now() - start, absl::Seconds(40));
  EXPECT_EQ(code, 2) << out.str() << err.str();
  EXPECT_THAT(err.str(), HasSubstr("no answer to HELLO within 10s"));
}

// The fifteenth fault run's low: on a full TMPDIR `programs` printed 20
// lines of the worker's error, then "nothing was checked: no program was
// generated". A worker that cannot write its own files stops the run at
// once: exit 2, its line said once, nothing filed.
TEST(ProgramsCommandTest, AWorkerThatCannotWriteItsFilesStopsTheRun) {
  auto dir = TempDir::Create("programs-no-room");
  ASSERT_TRUE(dir.ok());
  const ScopedEnv worker("PTXDIFF_WORKER", NoRoomToWriteWorker((*dir)->path()));
  const std::string tool =
      absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH, " {ptx} {in} {out}");
  const ProgramsRun r =
      Programs({"--backend", tool, "--max-time", "20", "--dir",
                (*dir)->File("triage"), "--out", (*dir)->File("out")});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("ptxdiff programs: the harness's own "
                               "temporary files failed"));
  EXPECT_THAT(r.err, HasSubstr("kernel.ptx: File too large"));
  EXPECT_THAT(r.out, Not(HasSubstr("programs: error:")));
  EXPECT_THAT(r.err, Not(HasSubstr("nothing was checked")));
  // The sixteenth fault run: `minimize` of a program case said "was not
  // checked …: the run ended first", exit 3. It is `programs`' exit 2.
  std::ostringstream out, err;
  const int code =
      RunMinimize({std::string(PTXDIFF_SOURCE_DIR) +
                       "/program/testdata/found-abs-lt-zero.ptxprog",
                   "--backend", tool, "--dir", (*dir)->File("triage")},
                  out, err);
  EXPECT_EQ(code, 2) << out.str() << err.str();
  EXPECT_THAT(err.str(), HasSubstr("ptxdiff minimize: the harness's own "
                                   "temporary files failed"));
  EXPECT_THAT(out.str(), Not(HasSubstr("the run ended first")));
}

// The eleventh fault run: the CLI's own query of ptxas's version came
// before the run's clock started (a ptxas whose first call sleeps 20 s:
// 30.2 s for --max-time 10). It is the run's time too, bounded by it.
TEST(ProgramsCommandTest, APtxasSlowToSayItsVersionCostsTheRunNoMore) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  auto dir = TempDir::Create("programs-slow-ptxas");
  ASSERT_TRUE(dir.ok());
  const std::string slow = (*dir)->File("slow_ptxas.sh");
  ASSERT_TRUE(WriteFile(slow, absl::StrCat("#!/bin/sh\nsleep 60\nexec ",
                                           *FindPtxas({}), " \"$@\"\n"))
                  .ok());
  ASSERT_EQ(chmod(slow.c_str(), 0755), 0);
  const ScopedEnv env("PTXAS", slow);
  const absl::Time start = absl::Now();
  const ProgramsRun r =
      Programs({"--max-time", "3", "--dir", (*dir)->File("triage"), "--out",
                (*dir)->File("out")});
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("timed out after 3s"));
}

TEST(ProgramsCommandTest, BadFlagsSayWhatIsWrong) {
  ProgramsRun r = Programs({"--suppress", "add.u32,nosuch.op"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("--suppress nosuch.op: not an instruction variant"));
  r = Programs({"--max-time", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("max-time"));
  r = Programs({"somefile"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("takes no FILE"));
  r = Programs({"--arch", "sm_1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("sm_1"));
}

// `ptxdiff minimize` takes a program case: FuzzX's m037 (7 steps) comes
// down to at most 5 that ptxas still folds wrong, filed in the triage
// directory; a case with no disagreement says so (exit 1).
TEST(ProgramsCommandTest, MinimizeTakesAProgramCase) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  auto dir = TempDir::Create("programs-minimize");
  ASSERT_TRUE(dir.ok());
  const std::string triage = (*dir)->File("triage");
  const std::string source = PTXDIFF_SOURCE_DIR;
  std::ostringstream out, err;
  int code = RunMinimize({source + "/program/testdata/fuzzx-m037.ptxprog",
                          "--backend", "ptxas", "--dir", triage},
                         out, err);
  EXPECT_EQ(code, 0) << out.str() << err.str();
  EXPECT_THAT(out.str(),
              HasSubstr("minimize: filed new entry " + triage +
                        "/value-mismatch~ptxas~immediate-fold~program-"));
  auto entries = TriageStore::Open(triage, false)->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  auto minimized = ParseProgram(
      *ReadFile(triage + "/" + entries->front().name + "/case.txt"));
  ASSERT_TRUE(minimized.ok()) << minimized.status();
  EXPECT_LE(CountSteps(*minimized), 5);
  // Issue 42, item 9: `repro ENTRY` printed the oracle alone and exited 0.
  // It replays the entry on the backend it was found on.
  std::ostringstream out4, err4;
  EXPECT_EQ(RunRepro({entries->front().name, "--dir", triage}, out4, err4), 1)
      << out4.str() << err4.str();
  EXPECT_THAT(out4.str(),
              testing::StartsWith("repro: replaying on the backend it was "
                                  "found on: --backend ptxas --arch sm_90\n"));
  EXPECT_THAT(out4.str(), HasSubstr("verdict: mismatch (ptxas sm_90, inputs "
                                    "immediate)\n"));
  std::ostringstream out2, err2;
  code = RunMinimize({source + "/examples/programs/carry-chain.ptxprog",
                      "--backend", "ptxas", "--dir", triage},
                     out2, err2);
  EXPECT_EQ(code, 1) << out2.str() << err2.str();
  EXPECT_THAT(out2.str(), HasSubstr("minimize: no disagreement in "));
}

// Issue 64: `minimize` whose ptxas runs pass --timeout said "no
// disagreement". A ptxas (PTXAS) that takes 30 s over a module of programs,
// and answers anything else at once: the case is not judged, and it says
// the run timed out (exit 3), not that ptxas agrees.
TEST(ProgramsCommandTest, MinimizeSaysARunPastItsTimeoutIsNoAgreement) {
  const absl::StatusOr<std::string> ptxas = FindPtxas({});
  if (!ptxas.ok()) GTEST_SKIP() << "no ptxas";
  auto dir = TempDir::Create("programs-minimize-timeout");
  ASSERT_TRUE(dir.ok());
  const std::string slow = (*dir)->File("slow-ptxas");
  const std::string script = absl::StrCat(
      "#!/bin/sh\n"
      "for a in \"$@\"; do case \"$a\" in\n"
      "  *.ptx) grep -q ptxdiff_program \"$a\" && sleep 30;;\n"
      "esac; done\n"
      "exec '", *ptxas, "' \"$@\"\n");
  ASSERT_TRUE(WriteFile(slow, script).ok());
  chmod(slow.c_str(), 0755);
  setenv("PTXAS", slow.c_str(), 1);
  std::ostringstream out, err;
  const std::string source = PTXDIFF_SOURCE_DIR;
  const int code = RunMinimize(
      {source + "/program/testdata/found-abs-lt-zero.ptxprog", "--backend",
       "ptxas", "--timeout", "1", "--dir", (*dir)->File("triage")},
      out, err);
  unsetenv("PTXAS");
  EXPECT_EQ(code, 3) << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("was not judged on ptxas"));
  EXPECT_THAT(out.str(), HasSubstr("timed out"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("no disagreement")));
}

// A program fuzzer's input (or crash file), in the byte form, is a program
// case too: `ptxdiff program` shows it as text, and `repro` replays it.
TEST(ProgramsCommandTest, AFuzzersInputIsAProgramCase) {
  auto dir = TempDir::Create("programs-bytes");
  ASSERT_TRUE(dir.ok());
  const std::string file = (*dir)->File("crash-1234");
  const absl::StatusOr<std::string> bytes = ProgramInputBytes(*ParseProgram(
      absl::StrCat(kProgramHeader,
                   "\ninput %x .b32 0x7fffffff\nadd.u32 %y, %x, 1;\n"
                   "output %y\n")));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_TRUE(WriteFile(file, *bytes).ok());
  std::ostringstream out, err;
  EXPECT_EQ(RunProgram({file}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("add.u32 %r0, %a, 0x1;\n"));
  EXPECT_THAT(out.str(), HasSubstr("oracle:  %r0 = 0x80000000"));
  // Without a backend nothing is judged: `repro` is exit 3 (the twelfth
  // fault run), where `program` shows the oracle's values, exit 0.
  std::ostringstream out2, err2;
  EXPECT_EQ(RunRepro({file}, out2, err2), 3) << err2.str();
  EXPECT_THAT(out2.str(), HasSubstr("oracle:  %r0 = 0x80000000"));
  std::ostringstream out3, err3;
  ASSERT_TRUE(WriteFile(file, bytes->substr(0, 6)).ok());
  EXPECT_EQ(RunProgram({file}, out3, err3), 2);
  EXPECT_THAT(err3.str(), HasSubstr("program line 1"));
}

// A program of a long loop (a million steps at each input vector), at
// `dir`/long.ptxprog.
std::string LongLoopProgram(const TempDir& dir) {
  std::string text =
      "# ptxdiff program 1\ninput %a .b32 3\nmov.b32 %r, %a;\nloop 1024 {\n";
  for (int k = 0; k < 1000; ++k) text += "add.u32 %r, %r, %a;\n";
  text += "}\noutput %r\n";
  const std::string path = dir.File("long.ptxprog");
  EXPECT_TRUE(WriteFile(path, text).ok());
  return path;
}

// Fault run of issue 65: `program` stopped during the oracle's evaluation
// printed "oracle: %r = 0x00000000 (undefined: not judged)", values it never
// computed, before "verdict: interrupted". It says the oracle was stopped.
TEST(ProgramsCommandTest, AStopDuringTheOraclesEvaluationMakesUpNoValues) {
  auto dir = TempDir::Create("program-oracle-stop");
  ASSERT_TRUE(dir.ok());
  const std::string file = LongLoopProgram(**dir);
  std::ostringstream out, err;
  int code;
  {
    const StopOnceHandled stop;
    code = RunProgram({file}, out, err);
    EXPECT_TRUE(stop.stopped());
  }
  EXPECT_EQ(code, 130) << out.str() << err.str();
  EXPECT_THAT(out.str(),
              HasSubstr("\noracle:  interrupted\nverdict: interrupted\n"));
  EXPECT_THAT(out.str(), Not(HasSubstr("%r = ")));
}

#ifdef PTXDIFF_INTERPRETER_PATH
// `ptxdiff program FILE --backend ptx-cmd:...` runs the case on the tool in
// both forms: agreeing with a right tool (exit 0), and with a tool that
// crashes on one of its instructions, saying so (exit 1).
TEST(ProgramsCommandTest, AProgramRunsOnATool) {
  const std::string file = std::string(PTXDIFF_SOURCE_DIR) +
                           "/program/testdata/found-abs-lt-zero.ptxprog";
  const std::string tool = absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH);
  std::ostringstream out, err;
  int code =
      RunProgram({file, "--backend", tool + " {ptx} {in} {out}"}, out, err);
  EXPECT_EQ(code, 0) << out.str() << err.str();
  EXPECT_THAT(out.str(),
              HasSubstr("ptx-cmd, inputs immediate: agrees with the oracle\n"));
  EXPECT_THAT(
      out.str(),
      HasSubstr("ptx-cmd, inputs runtime: agrees with the oracle at the "
                "witness and at more input vectors\n"));
  EXPECT_THAT(out.str(), HasSubstr("verdict: agree (ptx-cmd, inputs immediate "
                                   "and runtime)\n"));
  std::ostringstream out2, err2;
  code = RunProgram(
      {file, "--backend", tool + " --crash-on=abs.s32 {ptx} {in} {out}"}, out2,
      err2);
  EXPECT_EQ(code, 1) << out2.str() << err2.str();
  EXPECT_THAT(
      out2.str(),
      HasSubstr("ptx-cmd, inputs runtime: crashed: killed by signal 11"));
  // Issue 42, item 11: a crash is a crash, not a mismatch.
  EXPECT_THAT(out2.str(), HasSubstr("verdict: crash (ptx-cmd, inputs "));
  std::ostringstream out3, err3;
  code = RunProgram({file, "--backend", "ptx-cmd:my-tool {ptx} {out}"}, out3,
                    err3);
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err3.str(), HasSubstr("the ptx-cmd command 'my-tool {ptx} "
                                    "{out}' does not mention {in}"));
}

// Issue 65: a program whose every output the spec leaves open (a division
// by zero) was "agree", exit 0, on a tool; it is not judged, exit 3.
TEST(ProgramsCommandTest, AProgramTheOracleDefinesNothingOfIsNotJudged) {
  auto dir = TempDir::Create("program-undefined");
  ASSERT_TRUE(dir.ok());
  const std::string file = (*dir)->File("div0.ptxprog");
  ASSERT_TRUE(WriteFile(file, "# ptxdiff program 1\ninput %a .b32 7\n"
                              "div.u32 %q, %a, 0;\noutput %q\n")
                  .ok());
  const std::string tool = absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                                        " {ptx} {in} {out}");
  std::ostringstream out, err;
  const int code = RunProgram({file, "--backend", tool}, out, err);
  EXPECT_EQ(code, 3) << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("ptx-cmd, inputs immediate: not judged (the "
                                   "oracle defines no output"));
  EXPECT_THAT(out.str(), HasSubstr("verdict: not judged (ptx-cmd, inputs "
                                   "immediate and runtime)\n"));
}

// A case of one step, bfe.s32 at a runtime input: what the interpreter
// --flip-on=bfe.s32 gets wrong.
constexpr char kOneBfeStep[] =
    "# ptxdiff program 1\ninput %a .b32 0x12345678\n"
    "bfe.s32 %r0, %a, 0x4, 0x8;\noutput %r0\n";

// A PTXDIFF_WORKER in `dir` that sends itself SIG`signal` (SEGV, STOP) a
// second after each start: a worker that falls over, or stops answering.
// Empty if it could not be written.
std::string WorkerThatSignalsItself(const TempDir& dir,
                                    const std::string& signal) {
  const std::string worker = dir.File(signal + "_worker.sh");
  if (!WriteFile(worker, absl::StrCat("#!/bin/sh\n(sleep 1; kill -", signal,
                                      " $$) &\nexec ", PTXDIFF_WORKER_PATH,
                                      " \"$@\"\n"))
           .ok() ||
      chmod(worker.c_str(), 0755) != 0) {
    return "";
  }
  return worker;
}

// The eleventh fault run: a worker that crashed mid-run was started again,
// and the summary said nothing of it. It says how often.
TEST(ProgramsCommandTest, AWorkerThatFallsOverIsSaidInTheSummary) {
  auto dir = TempDir::Create("programs-worker-falls");
  ASSERT_TRUE(dir.ok());
  const std::string worker = WorkerThatSignalsItself(**dir, "SEGV");
  ASSERT_FALSE(worker.empty());
  const ScopedEnv env("PTXDIFF_WORKER", worker);
  const ProgramsRun r = Programs(
      {"--backend",
       absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH, " {ptx} {in} {out}"),
       "--max-time", "5", "--threads", "1", "--dir", (*dir)->File("triage"),
       "--out", (*dir)->File("out")});
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "programs: ptxdiff-worker fell over and was started "
                         "again [0-9]+ times? \\(it crashed"))
      << r.out << r.err;
}

// The thirteenth fault run: `program` on a tool waited the worker's two
// minutes, twice, for a worker that stopped answering, whatever --timeout
// said (241 s at --timeout 5). A few of the tool's runs, then it is said.
TEST(ProgramsCommandTest, AProgramOnAStoppedWorkerCostsAFewTimeoutsNoMore) {
  auto dir = TempDir::Create("program-stopped-worker");
  ASSERT_TRUE(dir.ok());
  const std::string worker = WorkerThatSignalsItself(**dir, "STOP");
  ASSERT_FALSE(worker.empty());
  const ScopedEnv env("PTXDIFF_WORKER", worker);
  const std::string file = (*dir)->File("one.ptxprog");
  ASSERT_TRUE(
      WriteFile(file, "# ptxdiff program 1\nbrev.b32 %r1, 0x0;\noutput %r1\n")
          .ok());
  const absl::Time start = absl::Now();
  std::ostringstream out, err;
  const int code =
      RunProgram({file, "--timeout", "1", "--backend",
                  absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                               " --startup-ms=3000 {ptx} {in} {out}")},
                 out, err);
  EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << out.str() << err.str();
  EXPECT_NE(code, 0) << out.str() << err.str();
}

// The fourteenth fault run: `minimize` of a program case on a worker that
// stopped answering waited its fixed 300 s, whatever --timeout said.
// --max-time bounds it; a tuple case, which has no use for it, refuses it.
TEST(ProgramsCommandTest, MinimizeOfAProgramCaseEndsAtItsMaxTime) {
  auto dir = TempDir::Create("minimize-stopped-worker");
  ASSERT_TRUE(dir.ok());
  const std::string worker = WorkerThatSignalsItself(**dir, "STOP");
  ASSERT_FALSE(worker.empty());
  const std::string file = (*dir)->File("one.ptxprog");
  ASSERT_TRUE(WriteFile(file, kOneBfeStep).ok());
  const std::string tool =
      absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                   " --startup-ms=3000 --flip-on=bfe.s32 {ptx} {in} {out}");
  {
    const ScopedEnv env("PTXDIFF_WORKER", worker);
    const absl::Time start = absl::Now();
    std::ostringstream out, err;
    const int code =
        RunMinimize({file, "--timeout", "1", "--max-time", "5", "--dir",
                     (*dir)->File("triage"), "--backend", tool},
                    out, err);
    EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << out.str() << err.str();
    EXPECT_EQ(code, 3) << out.str() << err.str();
    EXPECT_THAT(out.str(), HasSubstr("minimize: " + file + " was not checked"));
    EXPECT_THAT(out.str(), Not(HasSubstr("interrupted: interrupted")));
  }
  const std::string tuple = (*dir)->File("case.txt");
  ASSERT_TRUE(WriteFile(tuple, "variant: add.s32\noperands: 1 2\n").ok());
  std::ostringstream out, err;
  EXPECT_EQ(
      RunMinimize({tuple, "--max-time", "5", "--backend", "oracle"}, out, err),
      2);
  EXPECT_THAT(err.str(), HasSubstr("--max-time bounds the minimizing of a "
                                   "program case"));
}

// The same without --max-time: it waited its default 300 s. A worker that
// falls silent while it answers now hangs after two --timeouts and a
// little (it tells its progress, PROGRESS frames), and the case is filed
// as what it is on such a worker.
TEST(ProgramsCommandTest,
     MinimizeOnAStoppedWorkerCostsItsSilencesNotTheMaxTime) {
  auto dir = TempDir::Create("minimize-silent-worker");
  ASSERT_TRUE(dir.ok());
  const std::string worker = WorkerThatSignalsItself(**dir, "STOP");
  ASSERT_FALSE(worker.empty());
  const std::string file = (*dir)->File("one.ptxprog");
  ASSERT_TRUE(WriteFile(file, kOneBfeStep).ok());
  const ScopedEnv env("PTXDIFF_WORKER", worker);
  const absl::Time start = absl::Now();
  std::ostringstream out, err;
  const int code = RunMinimize(
      {file, "--timeout", "1", "--dir", (*dir)->File("triage"), "--backend",
       absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                    " --startup-ms=3000 --flip-on=bfe.s32 {ptx} {in} {out}")},
      out, err);
  EXPECT_LT(absl::Now() - start, absl::Seconds(150)) << out.str() << err.str();
  EXPECT_EQ(code, 0) << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("the worker hung: no word from it for 7s"))
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("minimize: filed new entry"));
}

// What a tool is remembered refusing (here as a `fuzz` run on it would have
// left it in <out>/refusals) is not generated, and the summary says which
// and why, naming the file (issue 62, item 4).
TEST(ProgramsCommandTest, ARunOnAToolSaysWhatItIsRememberedRefusing) {
  auto dir = TempDir::Create("programs-refusals");
  ASSERT_TRUE(dir.ok());
  const std::string command = absl::StrCat(
      PTXDIFF_INTERPRETER_PATH, " --refuse=bmsk {ptx} {in} {out}");
  const std::string out = (*dir)->File("out");
  const RefusalMemory memory(out + "/refusals", command, "sm_90");
  ASSERT_TRUE(memory
                  .Remember({*ParseVariant("bmsk.clamp.b32"), false},
                            "parse error: unknown instruction <instruction>")
                  .ok());
  ProgramsRun r = Programs({"--backend", "ptx-cmd:" + command, "--max-time",
                            "2", "--threads", "1", "--dir",
                            (*dir)->File("triage"), "--out", out});
  EXPECT_THAT(r.out,
              HasSubstr("programs: the tool refuses 1 of the generated "
                        "instructions, not generated (remembered in " +
                        memory.path() + "):\n"
                        "  bmsk.clamp.b32 (remembered): parse error: unknown "
                        "instruction <instruction>\n"))
      << r.out << r.err;
}

// The fifteenth fault run's third medium: a tool that failed every module
// for a while (a licence server down) left every generated instruction
// remembered refused, and the next run, the tool working, generated
// nothing. The run's start re-checks the memory: the tool runs the
// instruction now, so the refusals are forgotten, said, and generated.
TEST(ProgramsCommandTest, RefusalsTheToolNoLongerMakesAreForgottenAtTheStart) {
  auto dir = TempDir::Create("programs-forgotten");
  ASSERT_TRUE(dir.ok());
  const std::string command = absl::StrCat(
      PTXDIFF_INTERPRETER_PATH, " --flip-on=add.sat.s32 {ptx} {in} {out}");
  const std::string out = (*dir)->File("out");
  const RefusalMemory memory(out + "/refusals", command, "sm_90");
  const std::string said = "error: cannot check out a license (server down)";
  for (const std::string& spelling : GeneratedSpellings()) {
    ASSERT_TRUE(memory
                    .Remember({*ParseVariant(spelling), false},
                              absl::StrCat("ptx-cmd: command '", command,
                                           "' failed on ", spelling,
                                           " (1 tuple): exit status 1; it "
                                           "said: ",
                                           said))
                    .ok());
  }
  const ProgramsRun r = Programs({"--backend", "ptx-cmd:" + command,
                                  "--max-time", "4", "--threads", "1", "--dir",
                                  (*dir)->File("triage"), "--out", out});
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat(
                         "programs: the tool runs now what earlier runs "
                         "remembered it refusing; forgotten, generated again: ",
                         GeneratedSpellings().size(),
                         " refusals remembered with \"", said, "\"")))
      << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("no program was generated")));
  const absl::StatusOr<Remembered> after = memory.Load();
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->variants.empty());
}

// Third fault run: `minimize CASE.ptxprog` whose finding could not be filed
// (a full disk) said "no disagreement in CASE" on stdout. Here the entry's
// meta.txt is a directory, so counting the finding in it fails.
TEST(ProgramsCommandTest, MinimizeSaysAFindingItCouldNotFile) {
  auto dir = TempDir::Create("programs-minimize-unfiled");
  ASSERT_TRUE(dir.ok());
  const std::string triage = (*dir)->File("triage");
  const std::vector<std::string> args = {
      std::string(PTXDIFF_SOURCE_DIR) +
          "/program/testdata/found-abs-lt-zero.ptxprog",
      "--backend",
      absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                   " --crash-on=abs.s32 {ptx} {in} {out}"),
      "--dir", triage};
  std::ostringstream out, err;
  ASSERT_EQ(RunMinimize(args, out, err), 0) << out.str() << err.str();
  auto entries = TriageStore::Open(triage, false)->List();
  ASSERT_TRUE(entries.ok() && entries->size() == 1u);
  const std::string meta = triage + "/" + entries->front().name + "/meta.txt";
  ASSERT_EQ(std::remove(meta.c_str()), 0);
  ASSERT_TRUE(MakeDirs(meta).ok());
  std::ostringstream out2, err2;
  EXPECT_EQ(RunMinimize(args, out2, err2), 1) << out2.str() << err2.str();
  EXPECT_THAT(out2.str(), HasSubstr("could not be filed"));
  EXPECT_THAT(out2.str(), ::testing::Not(HasSubstr("no disagreement")));
  EXPECT_THAT(err2.str(), HasSubstr("could not file"));
}
// The eighteenth fault run: `minimize` of a program case whose tool fails
// after the finding (its last check no verdict, the finding kept) said "the
// run ended first", where no --max-time was given. It says why it kept it.
TEST(ProgramsCommandTest, MinimizeSaysAFindingTheToolCouldNotCheckAgain) {
  auto dir = TempDir::Create("programs-minimize-unchecked");
  ASSERT_TRUE(dir.ok());
  const std::string tool = (*dir)->File("tool.sh");
  const std::string calls = (*dir)->File("calls");
  const std::string program = (*dir)->File("case.ptxprog");
  ASSERT_TRUE(WriteFile(program,
                        "# ptxdiff program 1\ninput %in0 .b32 0x20\n"
                        "input %in1 .b32 0x12345678\n"
                        "bfe.s32 %r0, %in1, 0x4, 0x8;\nbrev.b32 %r1, %r0;\n"
                        "output %r1\n")
                  .ok());
  // Wrong on bfe.s32 for its first two calls, crashing from its third.
  ASSERT_TRUE(WriteFile(tool, absl::StrCat("#!/bin/sh\necho x >> ", calls,
                                           "\n[ $(wc -l < ", calls,
                                           ") -ge 3 ] && kill -SEGV $$\nexec ",
                                           PTXDIFF_INTERPRETER_PATH,
                                           " --flip-on=bfe.s32 \"$@\"\n"))
                  .ok());
  ASSERT_EQ(chmod(tool.c_str(), 0755), 0);
  std::ostringstream out, err;
  const int code =
      RunMinimize({program, "--backend",
                   absl::StrCat("ptx-cmd:", tool, " {ptx} {in} {out}"), "--dir",
                   (*dir)->File("triage")},
                  out, err);
  EXPECT_EQ(code, 1) << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("not filed: it could not be checked again "
                                   "(stderr says why); kept in "));
  EXPECT_THAT(out.str(), Not(HasSubstr("the run ended first")));
  EXPECT_THAT(err.str(), HasSubstr("could not be checked again (it crashed"));
}

// The eleventh fault run: `minimize` of a program case said "no
// disagreement", filing nothing, when the triage directory held an entry of
// one of its instructions (its program used a variant no longer generated).
// The case asked about is minimized and filed whatever is filed: into a new
// entry (the disagreement is another instruction's), or counted in the
// entry of its own cause.
TEST(ProgramsCommandTest, MinimizeFilesItsCaseWhateverCausesAreFiled) {
  auto dir = TempDir::Create("programs-minimize-filed");
  ASSERT_TRUE(dir.ok());
  const std::string triage = (*dir)->File("triage");
  const auto minimize = [&](const std::string& text, const std::string& flip) {
    const std::string file = (*dir)->File("case.ptxprog");
    EXPECT_TRUE(WriteFile(file, text).ok());
    std::ostringstream out, err;
    const int code =
        RunMinimize({file, "--dir", triage, "--backend",
                     absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                                  " --flip-on=", flip, " {ptx} {in} {out}")},
                    out, err);
    return ProgramsRun{code, out.str(), err.str()};
  };
  const std::string two_steps =
      "# ptxdiff program 1\ninput %in0 .b32 0x20\n"
      "input %in1 .b32 0x12345678\nbfe.s32 %r0, %in1, 0x4, 0x8;\n"
      "brev.b32 %r1, %r0;\noutput %r1\n";
  ProgramsRun r = minimize(kOneBfeStep, "bfe.s32");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_THAT(r.out, HasSubstr("filed new entry " + triage +
                               "/value-mismatch~ptx-cmd~in-range~bfe.s32"));
  r = minimize(two_steps, "brev.b32");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("filed new entry " + triage +
                               "/value-mismatch~ptx-cmd~in-range~brev.b32"));
  r = minimize(two_steps, "bfe.s32");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("counted existing entry " + triage +
                               "/value-mismatch~ptx-cmd~in-range~bfe.s32"));
  auto entries = TriageStore::Open(triage, false)->List();
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->size(), 2u);
  for (const EntryInfo& e : *entries)
    EXPECT_EQ(e.count(), e.signature.spelling == "bfe.s32" ? 2 : 1) << e.name;
}
#endif  // PTXDIFF_INTERPRETER_PATH

// Fault run of issue 65: a tool's binary output was quoted raw after "its
// output ends:", escape sequences and all, to the user's terminal. Each byte
// that is no printable text is \xNN now.
TEST(ProgramsCommandTest, AToolsBinaryOutputIsQuotedEscaped) {
  auto dir = TempDir::Create("program-binary-output");
  ASSERT_TRUE(dir.ok());
  const std::string tool = (*dir)->File("garbage.sh");
  // Exit 0 without {out}: a crash, its output quoted.
  ASSERT_TRUE(
      WriteFile(tool, "#!/bin/sh\nprintf 'said \\033[2J\\001\\377 end'\n")
          .ok());
  ASSERT_EQ(chmod(tool.c_str(), 0755), 0);
  const std::string file = std::string(PTXDIFF_SOURCE_DIR) +
                           "/program/testdata/found-abs-lt-zero.ptxprog";
  std::ostringstream out, err;
  RunProgram({file, "--backend", "ptx-cmd:" + tool + " {ptx} {in} {out}"}, out,
             err);
  EXPECT_THAT(out.str(),
              HasSubstr("its output ends:\nsaid \\x1b[2J\\x01\\xff end"))
      << err.str();
  EXPECT_EQ(out.str().find('\x1b'), std::string::npos);
  EXPECT_EQ(err.str().find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace ptxdiff
