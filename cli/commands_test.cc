#include "cli/commands.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/fuzz_command.h"
#include "fuzzers/differential_target.h"
#include "isa/fuzz_input.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "triage/triage_store.h"
#include "triage/testing/unisolated_finding.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct CliRun {
  int code;
  std::string out, err;
};

CliRun Ptxdiff(std::vector<std::string> args) {
  args.insert(args.begin(), "ptxdiff");
  std::ostringstream out, err;
  const int code = RunMain(args, out, err);
  return {code, out.str(), err.str()};
}

// `ptxdiff program`: the composed oracle at the witness, and with ptxas the
// claim issue 29 found, as a program, refuted at the witness.
TEST(ProgramCommandTest, TheOracleAndWhatPtxasClaims) {
  const std::string file =
      std::string(PTXDIFF_SOURCE_DIR) + "/examples/programs/bfe-claim.ptxprog";
  CliRun r = Ptxdiff({"program", file});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("oracle:  %r = 0x00000000 at the witness %a = 0x00000001 "
                               "(spec reading)\n"));
  r = Ptxdiff({"program", file, "--backend", "ptxas"});
  if (absl::StrContains(r.err, "ptxas")) GTEST_SKIP() << r.err;  // no toolkit
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("inputs immediate: folds to %r = 0x00000000: agree\n"));
  EXPECT_THAT(r.out, HasSubstr("inputs runtime: claims %r = 0xffffffff for every input: "
                               "refuted at %a = 0x00000001, where the oracle gives "
                               "%r = 0x00000000\n"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch\n"));
  const std::string chain =
      std::string(PTXDIFF_SOURCE_DIR) + "/examples/programs/carry-chain.ptxprog";
  r = Ptxdiff({"program", chain, "--backend", "ptxas"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("oracle:  %lo = 0x00000000, %hi = 0x00000010"));
  // ptxas keeps the carry chain's code in both forms: nothing is judged.
  EXPECT_THAT(r.out, HasSubstr("verdict: not judged\n"));
  // repro takes a program case too.
  r = Ptxdiff({"repro", file, "--backend", "ptxas", "--timeout", "30"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("refuted at %a = 0x00000001"));
}

TEST(ProgramCommandTest, BadInputSaysWhatIsWrong) {
  CliRun r = Ptxdiff({"program", "/nonexistent.ptxprog"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("ptxdiff program: "));
  const std::string file =
      std::string(PTXDIFF_SOURCE_DIR) + "/examples/programs/bfe-claim.ptxprog";
  r = Ptxdiff({"program", file, "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("programs run on ptxas or ptx-cmd:COMMAND"));
  r = Ptxdiff({"program"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("expects one FILE (a program case)"));
}

TEST(EvalCommandTest, PrintsHexResultAndDefinedness) {
  CliRun r = Ptxdiff({"eval", "bfe.s32", "0xf0", "4", "4"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "0xffffffff  defined\n");
  EXPECT_EQ(r.err, "");
  r = Ptxdiff({"eval", "mul.wide.u32", "-1", "0xffffffff"});
  EXPECT_EQ(r.out, "0xfffffffe00000001  defined\n");
}

// A `.cc` variant's result carries its outgoing CC.CF: the carry, or for
// the sub kind the borrow. The carry-in of addc/subc/madc is the last
// operand, "cf".
TEST(EvalCommandTest, CarryOutAndCarryIn) {
  CliRun r = Ptxdiff({"eval", "addc.cc.u32", "0xffffffff", "0", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0x00000000 cf=1  defined\n");
  r = Ptxdiff({"eval", "sub.cc.u32", "0", "1"});
  EXPECT_EQ(r.out, "0xffffffff cf=1  defined\n");
  r = Ptxdiff({"eval", "sub.cc.u32", "1", "1"});
  EXPECT_EQ(r.out, "0x00000000 cf=0  defined\n");
  r = Ptxdiff({"eval", "addc.u32", "0xffffffff", "0", "1"});  // no .cc: no flag
  EXPECT_EQ(r.out, "0x00000000  defined\n");
  r = Ptxdiff({"eval", "sub.cc.u32", "0", "1", "--json"});
  EXPECT_EQ(r.out,
            "{\"variant\": \"sub.cc.u32\", \"operands\": [\"0x00000000\", "
            "\"0x00000001\"], \"result\": \"0xffffffff\", \"width\": 32, "
            "\"carry\": 1, \"defined\": true, \"reading\": \"spec\"}\n");
  r = Ptxdiff({"eval", "add.u32", "0", "1", "--json"});
  EXPECT_THAT(r.out, Not(HasSubstr("carry")));
  r = Ptxdiff({"eval", "subc.u32", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("subc.u32 takes 3 operands (a, b, cf), got 2"));
  r = Ptxdiff({"eval", "subc.u32", "1", "2", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("operand cf"));
}

TEST(EvalCommandTest, UndefinedNamesTheReason) {
  CliRun r = Ptxdiff({"eval", "div.s32", "7", "0"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, StartsWith("0x00000000  undefined: division by zero"));
}

TEST(EvalCommandTest, Json) {
  CliRun r = Ptxdiff({"eval", "fns.b32", "0xffffffff", "40", "1", "--json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "{\"variant\": \"fns.b32\", \"operands\": [\"0xffffffff\", "
            "\"0x00000028\", \"0x00000001\"], \"result\": \"0xffffffff\", "
            "\"width\": 32, \"defined\": false, \"reason\": \"fns-base\", "
            "\"explanation\": \"fns base must be <= 31, otherwise behavior is "
            "undefined (PTX ISA 9.7.1.17)\", \"reading\": \"spec\"}\n");
}

// Where the spec and known hardware differ, eval shows both readings, the
// one asked for first, naming the erratum.
TEST(EvalCommandTest, ShowsBothReadingsWhereTheyDiffer) {
  CliRun r = Ptxdiff({"eval", "bfe.u64", "1", "256", "1"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "0x0000000000000001  defined  (spec reading)\n"
            "0x0000000000000000  defined  (hardware reading: erratum bfe-bfi-64-unmasked)\n");
  r = Ptxdiff({"eval", "div.u32", "7", "0", "--reading=hardware", "--json"});
  EXPECT_THAT(r.out, HasSubstr("\"result\": \"0xffffffff\", \"width\": 32, \"defined\": true"));
  EXPECT_THAT(r.out, HasSubstr("\"reading\": \"hardware\", \"spec\": \"0x00000000\", "
                               "\"erratum\": \"div-rem-by-zero-32\""));
  EXPECT_EQ(Ptxdiff({"eval", "add.s32", "1", "2", "--reading=gpu"}).code, 2);
}

TEST(EvalCommandTest, VariantWithSelectors) {
  CliRun r = Ptxdiff(
      {"eval", "vadd.u32.u32.u32.sat d.b1, a, b, c", "0x100", "0", "0x11223344"});
  EXPECT_EQ(r.out, "0x1122ff44  defined\n");
}

TEST(EvalCommandTest, BadInputIsExitTwoWithAClearMessage) {
  CliRun r = Ptxdiff({"eval", "bfe.b32", "1", "2", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("unknown instruction variant 'bfe.b32'"));
  EXPECT_THAT(r.err, HasSubstr("bfe.u32"));

  r = Ptxdiff({"eval", "add.s32", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("add.s32 takes 2 operands (a, b), got 1"));

  r = Ptxdiff({"eval", "add.s16", "1", "70000"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("operand b: '70000' does not fit in 16 bits"));

  r = Ptxdiff({"eval", "add.s32", "1", "zz"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("'zz' is not a 64-bit number"));

  EXPECT_EQ(Ptxdiff({"eval"}).code, 2);
  EXPECT_EQ(Ptxdiff({"eval", "add.s32", "1", "2", "--bogus"}).code, 2);
}

TEST(CompareCommandTest, PtxShlAgainstVisaShlShowsTheAmountRangesThatDiffer) {
  CliRun r = Ptxdiff({"compare", "shl.b32", "visa.shl.ud.ud.ud", "--tuples",
                      "2000", "--seed", "7"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("compare: shl.b32 against visa.shl.ud.ud.ud, "
                                "2000 tuples (edge and random operands, seed "
                                "7), results compared on the low 32 bits\n"));
  EXPECT_THAT(r.out, HasSubstr("by b (an amount):\n  0..7 "));
  EXPECT_THAT(r.out, HasSubstr("first differences (replay with eval):\n"
                               "  ptxdiff eval 'shl.b32' "));
  EXPECT_EQ(r.err, "");
}

TEST(CompareCommandTest, AgreementIsExitZeroAndBadInputExitTwo) {
  CliRun r = Ptxdiff({"compare", "and.b32", "and.b32", "--tuples", "100"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  differ       0\n"));
  r = Ptxdiff({"compare", "shl.b32"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("expected two variants"));
  r = Ptxdiff({"compare", "shl.b32", "not.b32"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("only variants with as many operands compare"));
  r = Ptxdiff({"compare", "shl.b32", "shl.b33"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown instruction variant 'shl.b33'"));
  r = Ptxdiff({"compare", "shl.b32", "shl.b64", "--tuples", "0"});
  EXPECT_EQ(r.code, 2);
}

TEST(VariantsCommandTest, CountFamilyAndJson) {
  CliRun r = Ptxdiff({"variants", "--family", "shf"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "shf.l.clamp.b32\nshf.l.wrap.b32\nshf.r.clamp.b32\nshf.r.wrap.b32\n");
  EXPECT_EQ(Ptxdiff({"variants", "--family", "shf", "--count"}).out, "4\n");
  EXPECT_EQ(Ptxdiff({"variants", "--family", "shf", "--count", "--json"}).out,
            "{\"count\": 4}\n");
  r = Ptxdiff({"variants", "--family", "mul24", "--json"});
  EXPECT_THAT(r.out, StartsWith("[\n  {\"spelling\": \"mul24.hi.u32\", "
                                "\"family\": \"mul24\", \"min_ptx\": \"1.0\""));
  // What a worker needs to read a tuple's operands (docs/worker-protocol.md).
  r = Ptxdiff({"variants", "--family", "bfe", "--json"});
  EXPECT_THAT(
      r.out,
      HasSubstr("{\"spelling\": \"bfe.u64\", \"family\": \"bfe\", "
                "\"min_ptx\": \"2.0\", \"min_sm\": 20, \"sources\": 3, "
                "\"source_widths\": [64, 32, 32], \"runtime_sources\": [\"a\", \"b\", \"c\"], "
                "\"result_width\": 64"));
  // lop3's LUT must be an immediate: it is no runtime source.
  EXPECT_THAT(Ptxdiff({"variants", "--family", "lop3", "--json"}).out,
              HasSubstr("\"runtime_sources\": [\"a\", \"b\", \"c\"], \"result_width\": 32"));
  const int total = std::stoi(Ptxdiff({"variants", "--count"}).out);
  EXPECT_GT(total, 70000);
}

TEST(VariantsCommandTest, UnknownFamilyIsExitTwo) {
  CliRun r = Ptxdiff({"variants", "--family", "vaddd"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown family 'vaddd'"));
  EXPECT_EQ(Ptxdiff({"variants", "--family"}).code, 2);
}

TEST(BackendCommandsTest, EvalWithABackendPrintsBothAndTheVerdict) {
  CliRun r = Ptxdiff({"eval", "--backend=oracle", "bfe.s32", "0xf0", "4", "4"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "oracle:  0xffffffff  defined  (spec reading)\n"
            "backend: 0xffffffff  (oracle 1 (ptxdiff CPU oracle))\n"
            "verdict: agree\n");
  r = Ptxdiff({"eval", "--backend=oracle", "addc.cc.u32", "0xffffffff", "0", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "oracle:  0x00000000 cf=1  defined  (spec reading)\n"
            "backend: 0x00000000 cf=1  (oracle 1 (ptxdiff CPU oracle))\n"
            "verdict: agree\n");
  r = Ptxdiff({"eval", "--backend",
               std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH, "popc.b32", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
}

std::string TempDirFor(const std::string& name);

// --runtime: the named sources are runtime values; a worker that does not
// run operand forms declines such tuples, saying why, instead of running
// them as immediates.
TEST(BackendCommandsTest, RuntimeSourcesReachOnlyAWorkerThatRunsForms) {
  CliRun r = Ptxdiff({"eval", "--backend=oracle", "--runtime", "a", "bfe.s32", "1", "40", "8"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("instruction: bfe.s32 d, %a, 0x00000028, 0x00000008\n"));
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
  r = Ptxdiff({"eval", "--backend=oracle", "--runtime", "immLut", "lop3.b32", "1", "2", "3", "4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot be a runtime value"));
  const std::string faulty = std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH;
  r = Ptxdiff({"sweep", "--backend", faulty, "--family", "bfe", "--tuples", "2", "--runtime", "a"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("agreed          8\n"));
  const std::string script = TempDirFor("no_forms") + "/no_forms_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH << " --no-forms\n";
  chmod(script.c_str(), 0755);
  r = Ptxdiff({"sweep", "--backend", "exec:" + script, "--family", "bfe", "--tuples", "2",
               "--runtime", "a"});
  EXPECT_EQ(r.code, 1);  // nothing was tested
  EXPECT_THAT(r.out, HasSubstr("declined        8\n"));
  EXPECT_THAT(r.out, HasSubstr("(it does not say forms=1)"));
}

TEST(BackendCommandsTest, SweepThroughAnExecBackendCountsAgreements) {
  const std::string faulty = std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH;
  CliRun r = Ptxdiff({"sweep", "--backend", faulty, "--family", "popc", "--tuples", "5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 variants x 5 tuples = 10 tuples"));
  EXPECT_THAT(r.out, HasSubstr("agreed          10\n"));
  EXPECT_THAT(r.out, HasSubstr("mismatched      0\n"));
}

TEST(BackendCommandsTest, SweepBadInputIsExitTwo) {
  EXPECT_EQ(Ptxdiff({"sweep", "--backend", "oracle", "--family", "nope"}).code, 2);
  EXPECT_EQ(Ptxdiff({"sweep", "--backend", "oracle", "--tuples", "0"}).code, 2);
  EXPECT_EQ(Ptxdiff({"sweep", "--backend", "gpu"}).code, 2);
  CliRun r = Ptxdiff({"sweep", "--backend", "exec:/nonexistent/worker"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot start worker '/nonexistent/worker'"));
  r = Ptxdiff({"eval", "--backend", "oracle", "--timeout", "x", "add.s32", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--timeout takes a positive number"));
}

// Issue 28: a backend that declines every tuple (a ptx-cmd tool that always
// fails) used to make a sweep that tested nothing exit 0.
TEST(BackendCommandsTest, ASweepThatTestedNothingFailsAndSaysWhy) {
  CliRun r = Ptxdiff(
      {"sweep", "--backend", "ptx-cmd:/bin/false {ptx} {in} {out}", "--family", "add"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("agreed          0\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("declined        [1-9]"));
  EXPECT_THAT(r.err, StartsWith("ptxdiff sweep: nothing was tested: the backend declined all "));
  EXPECT_THAT(r.err, HasSubstr(" tuples sent (most often, "));
  EXPECT_THAT(r.err, HasSubstr("/bin/false {ptx} {in} {out}' failed on add."));
  EXPECT_THAT(r.err, HasSubstr("exit status 1"));
  // One variant the backend runs is enough to test something.
  const std::string faulty = std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH;
  r = Ptxdiff({"sweep", "--backend", faulty, "--family", "add", "--family", "popc", "--tuples",
               "2"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// --cuda-driver belongs to the cuda backend: with another it is a mistake,
// not silently ignored.
TEST(BackendCommandsTest, CudaDriverNeedsTheCudaBackend) {
  CliRun r = Ptxdiff({"sweep", "--backend", "oracle", "--cuda-driver", "/x/libcuda.so"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--cuda-driver is an option of --backend=cuda, not of 'oracle'"));
  r = Ptxdiff({"eval", "--backend", "oracle", "--cuda-driver=/x/libcuda.so", "add.s32", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--cuda-driver is an option of --backend=cuda"));
}

// A backend that disagrees with the oracle on every vadd: the faulty worker
// behind a wrapper script, as a user's own worker would be plugged in.
std::string WrongVaddBackend(const std::string& dir) {
  const std::string script = dir + "/wrong_vadd_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=wrong-on=vadd. \"$@\"\n";
  chmod(script.c_str(), 0755);
  return "exec:" + script;
}

std::string TempDirFor(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/cli_" + name + "_" + std::to_string(getpid());
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

// A carry-only disagreement is a mismatch, shown as one by eval and by
// sweep's replay lines.
TEST(BackendCommandsTest, ACarryOnlyDisagreementIsAMismatch) {
  const std::string dir = TempDirFor("carry");
  const std::string script = dir + "/wrong_carry_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=wrong-carry-on=sub.cc \"$@\"\n";
  chmod(script.c_str(), 0755);
  CliRun r = Ptxdiff({"eval", "--backend", "exec:" + script, "sub.cc.u32", "0", "1"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("oracle:  0xffffffff cf=1  defined"));
  EXPECT_THAT(r.out, HasSubstr("backend: 0xffffffff cf=0  (faulty"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
  r = Ptxdiff({"sweep", "--backend", "exec:" + script, "--family", "sub", "--tuples", "8"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("agreed          56\n"));  // the 7 sub without .cc
  EXPECT_THAT(r.out, HasSubstr("mismatched      32\n"));  // the 4 sub.cc
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         "ptxdiff eval 'sub\\.cc\\.[us](32|64)' .*  # oracle 0x[0-9a-f]+ "
                         "cf=([01]), faulty 0x[0-9a-f]+ cf=[01]"));
}

const char kCase[] =
    "# ptxdiff case 1\n"
    "variant: vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c\n"
    "operands: 0x12345678 0x9abcdef0 0x0f0f0f0f\n";

TEST(TriageCommandsTest, ReproExitCodes) {
  const std::string dir = TempDirFor("repro");
  std::ofstream(dir + "/case.txt") << kCase;
  CliRun r = Ptxdiff({"repro", dir + "/case.txt", "--backend", "oracle"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
  r = Ptxdiff({"repro", dir + "/case.txt", "--backend", WrongVaddBackend(dir)});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
  std::ofstream(dir + "/garbage") << "\x01\x02\x03 not a case";
  r = Ptxdiff({"repro", dir + "/garbage", "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a text case, and as a crash file"));
  r = Ptxdiff({"repro", dir + "/missing", "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read"));
  // A hand-written case needs no header (triage/README.md: only variant and
  // operands are needed).
  std::ofstream(dir + "/hand.txt") << "variant: add.s32\noperands: 0x7fffffff 1\n";
  r = Ptxdiff({"repro", dir + "/hand.txt", "--backend", "oracle"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("case:    add.s32"));
  std::ofstream(dir + "/empty");
  r = Ptxdiff({"repro", dir + "/empty", "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("empty is empty"));
  std::ofstream(dir + "/bad_case.txt") << "# ptxdiff case 1\nvariant: vadd.s32\noperands: 1\n";
  r = Ptxdiff({"repro", dir + "/bad_case.txt", "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("line 2: unknown instruction variant"));
}

TEST(TriageCommandsTest, MinimizeFilesOneSmallEntryThatReplays) {
  const std::string dir = TempDirFor("minimize");
  std::ofstream(dir + "/case.txt") << kCase;
  const std::string backend = WrongVaddBackend(dir);
  const std::string triage = dir + "/triage";
  CliRun r = Ptxdiff({"minimize", dir + "/case.txt", "--backend", backend, "--dir", triage});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("variant: vadd.u32.u32.u32\n"));
  EXPECT_THAT(r.out, HasSubstr("operands: 0x00000000 0x00000000\n"));
  EXPECT_THAT(r.out, HasSubstr("filed new entry"));
  // The same case again is counted, not filed again.
  r = Ptxdiff({"minimize", dir + "/case.txt", "--backend", backend, "--dir", triage});
  EXPECT_THAT(r.out, HasSubstr("counted existing entry"));

  r = Ptxdiff({"triage", "list", "--dir", triage});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("     2  value-mismatch~faulty~in-range~vadd.u32.u32.u32\n"));
  EXPECT_THAT(r.out, HasSubstr("1 entry, 1 root cause, in " + triage));
  const std::string entry = "value-mismatch~faulty~in-range~vadd.u32.u32.u32";
  r = Ptxdiff({"triage", "show", entry, "--dir", triage});
  EXPECT_THAT(r.out, HasSubstr("count: 2"));
  // The filed case replays the disagreement: by its file, and (issue 28,
  // item 8) by the entry's name as `triage list` prints it, or its
  // directory, which used to be read as a crash file of 0 bytes.
  for (const std::string& what :
       {triage + "/" + entry + "/case.txt", entry, triage + "/" + entry}) {
    r = Ptxdiff({"repro", what, "--backend", backend, "--dir", triage});
    EXPECT_EQ(r.code, 1) << what << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("verdict: mismatch")) << what;
  }
  r = Ptxdiff({"repro", triage, "--backend", backend});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("is a directory without a case.txt: not a triage entry"));
  r = Ptxdiff({"repro", "crash~faulty~crash~add.s32", "--backend", backend, "--dir", triage});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no entry crash~faulty~crash~add.s32 in " + triage));
  EXPECT_EQ(Ptxdiff({"triage", "mark", entry, "--explained", "known", "--dir", triage}).code, 0);
  EXPECT_THAT(Ptxdiff({"triage", "list", "--dir", triage}).out, HasSubstr("(explained)"));
  const std::string merged = dir + "/merged";
  r = Ptxdiff({"triage", "merge", triage, "--dir", merged});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 new entries"));
}

// Issue 28: an unisolated fault's entry was named after its batch's first
// variant, and `repro` of it replayed that one (innocent) tuple. The entry
// is named after the batch; `triage list` says what the batch held, and
// `repro` replays the whole batch, which faults the backend again.
TEST(TriageCommandsTest, AnUnisolatedFaultListsAndReplaysAsItsWholeBatch) {
  const std::string dir = TempDirFor("unisolated");
  const std::string triage = dir + "/triage";
  auto store = TriageStore::Open(triage, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  Finding f = AnUnisolatedHangOfABatch();
  f.detail = "unisolated hang of a batch of 3 tuple(s) not narrowed to one tuple: budget";
  const std::string entry = store->File(f)->entry;
  EXPECT_EQ(entry, "hang~faulty~unisolated-hang~" + BatchName(f.batch));

  CliRun r = Ptxdiff({"triage", "list", "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("     1  " + entry + ": unisolated hang of a batch of 3 "
                               "tuple(s) not narrowed to one tuple: budget (a batch of 3 "
                               "tuples of add.cc.s32, add.sat.s32)\n"));
  EXPECT_EQ(r.err, "");
  r = Ptxdiff({"triage", "show", entry, "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("operands: 0x7fffffff 0x00000001\n"));

  // A backend that hangs on add.sat.s32 with a = MAX: the batch faults it.
  const std::string script = dir + "/hang_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=hang-on=add.sat.s32 --when-operand=0:2147483647\n";
  chmod(script.c_str(), 0755);
  r = Ptxdiff({"repro", entry, "--backend", "exec:" + script, "--timeout", "1", "--dir", triage});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("repro: 3 tuples of 2 variants (add.cc.s32, ...) on faulty"));
  EXPECT_THAT(r.out, HasSubstr(", 1 faulty batches\n"));
  // And `minimize` bisects it to the tuple that hangs.
  r = Ptxdiff({"minimize", triage + "/" + entry + "/case.txt", "--backend", "exec:" + script,
               "--timeout", "1", "--dir", dir + "/minimized"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out,
              HasSubstr("filed new entry " + dir + "/minimized/hang~faulty~hang~add.sat.s32\n"));
  EXPECT_THAT(r.out, HasSubstr("operands: 0x7fffffff 0x00000001\n"));
  // On a backend that does not hang, all three are judged.
  r = Ptxdiff({"repro", entry, "--backend", "oracle", "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("repro: 3 tuples of 2 variants (add.cc.s32, ...) on oracle"));
  EXPECT_THAT(r.out, HasSubstr(": 3 agree, "));
}

// Issue 28, item 5: garbage in an entry's meta.txt (here a terminal's
// clear-screen sequence) showed as count 0 with no warning, and `show`
// sent the bytes to the terminal. The list marks the entry and warns,
// naming it and the problem; `show` says so first, and escapes the bytes.
TEST(TriageCommandsTest, ListAndShowSayWhichEntryIsDamagedAndHow) {
  const std::string dir = TempDirFor("damaged") + "/triage";
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  Finding f;
  f.tuple = {*ParseVariant("add.s32"), {{1, 2, 0, 0}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend_bits = f.oracle.bits ^ 1;
  f.backend = "faulty";
  f.backend_identity = "faulty 1";
  const std::string entry = store->File(f)->entry;
  std::ofstream(dir + "/" + entry + "/meta.txt", std::ios::app) << "\x1b[2J garbage\n";

  CliRun r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("     1  value-mismatch~faulty~in-range~add.s32  "
                               "(DAMAGED: see below)\n"));
  EXPECT_THAT(r.out, HasSubstr("1 entry, 1 root cause, 1 damaged"));
  EXPECT_EQ(r.err, "ptxdiff triage: warning: entry " + entry +
                       ": meta.txt has 1 line that is not 'key: value' (line 9: "
                       "\"\\x1b[2J garbage\")\n");
  r = Ptxdiff({"triage", "show", entry, "--dir", dir});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, StartsWith("# DAMAGED: meta.txt has 1 line that is not 'key: value'"));
  EXPECT_THAT(r.out, HasSubstr("reading: spec\n\\x1b[2J garbage\n"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

// Issue 28, item 8: a crash file holds only the input, so `repro` without
// --backend replayed it on the default backend and said "agree". Crash
// mode records each crash's backend beside the crash files (fuzzers/
// differential_target.h); repro replays there, or says it cannot know.
TEST(TriageCommandsTest, ACrashFileReplaysOnTheBackendItWasFoundOn) {
  const std::string dir = TempDirFor("crash_origin");
  const std::string crash = dir + "/crash-0123";
  const std::string input =
      EncodeFuzzInput(*ParseVariant("vadd.u32.u32.u32"), {{{1, 2, 0, 0}}});
  std::ofstream(crash, std::ios::binary) << input;
  const std::string backend = WrongVaddBackend(dir);

  // Not recorded: it says which backend it replays on, and why that may not
  // be the one that crashed.
  CliRun r = Ptxdiff({"repro", crash});
  EXPECT_THAT(r.out, HasSubstr("repro: replaying on "));
  EXPECT_THAT(r.out, HasSubstr("the default backend: the crash was found on the backend its "
                               "fuzzer ran against, which the file does not record"));
  // Recorded: without --backend it replays there (and disagrees, as it did).
  std::ofstream(dir + "/crash-backends.txt")
      << CrashOriginLine(input, {"value-mismatch faulty vadd.u32.u32.u32 in-range", backend});
  r = Ptxdiff({"repro", crash});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_THAT(r.out, StartsWith("repro: found as `value-mismatch faulty vadd.u32.u32.u32 "
                                "in-range` on " + backend + " (" + dir +
                                "/crash-backends.txt): replaying it there\n"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
  // On another backend, as asked, it says where it was found.
  r = Ptxdiff({"repro", crash, "--backend", "oracle"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("on " + backend + ", not on oracle\n"));
}

TEST(TriageCommandsTest, BadTriageDirectoriesAreExitTwo) {
  const std::string dir = TempDirFor("baddir");
  std::ofstream(dir + "/case.txt") << kCase;
  CliRun r = Ptxdiff({"minimize", dir + "/case.txt", "--backend", "oracle", "--dir",
                      "/proc/self/fdinfo"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("is not writable"));
  r = Ptxdiff({"triage", "list", "--dir", dir + "/none"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
  EXPECT_EQ(Ptxdiff({"triage", "show", "nonsense", "--dir", dir}).code, 2);
  EXPECT_EQ(Ptxdiff({"triage", "frob", "--dir", dir}).code, 2);
  EXPECT_EQ(Ptxdiff({"minimize", "--backend", "oracle"}).code, 2);
}

// Issue 28, item 8: the numeric-flag error named no flag.
TEST(MainTest, ANumericFlagsErrorNamesTheFlag) {
  CliRun r = Ptxdiff({"fuzz", "--jobs", "99"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "ptxdiff fuzz: --jobs takes a whole number from 1 to 64, not '99'\n");
  r = Ptxdiff({"fuzz", "--max-time", "1m"});
  EXPECT_EQ(r.err, "ptxdiff fuzz: --max-time takes a positive whole number, not '1m'\n");
  r = Ptxdiff({"fuzz", "--progress-seconds", "0"});
  EXPECT_THAT(r.err, HasSubstr("--progress-seconds takes a positive whole number, not '0'"));
  r = Ptxdiff({"compare", "add.s32", "sub.s32", "--seed", "x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--seed takes a whole number of at least 0, not 'x'"));
  r = Ptxdiff({"sweep", "--tuples", "0"});
  EXPECT_THAT(r.err, HasSubstr("--tuples takes a whole number from 1 to 1048576, not '0'"));
}

TEST(MainTest, VersionPrintsTheVersion) {
  CliRun r = Ptxdiff({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "ptxdiff 0.1\n");
  EXPECT_THAT(Ptxdiff({"help"}).out, HasSubstr("--version"));
}

// Issue 28, item 8: every command's --help repeated its one-paragraph
// summary; it lists its flags and gives an example now.
TEST(MainTest, EveryCommandsHelpListsItsFlagsAndAnExample) {
  for (const char* command : {"eval", "variants", "sweep", "fuzz", "compare", "seed-corpus",
                              "repro", "minimize", "triage"}) {
    const CliRun r = Ptxdiff({command, "--help"});
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_THAT(r.out, StartsWith(absl::StrCat("usage: ptxdiff ", command))) << command;
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("\nExample: ptxdiff ", command, " "))) << command;
    if (std::string(command) != "seed-corpus") {
      EXPECT_THAT(r.out, HasSubstr("\nflags:\n  --")) << command;
    }
  }
  const std::string fuzz = Ptxdiff({"fuzz", "--help"}).out;
  for (const char* flag : {"--out DIR", "--corpus DIR", "--timeout SECONDS", "--reading spec|hardware",
                           "--progress-seconds N", "--cuda-driver PATH", "--jobs N",
                           "--mode campaign|crash", "--family NAME", "--exclude NAME",
                           "--dir TRIAGE_DIR", "--max-time SECONDS", "--backend NAME",
                           "--arch sm_XX"}) {
    EXPECT_THAT(fuzz, HasSubstr("\n  " + std::string(flag) + " ")) << flag;
  }
  EXPECT_THAT(Ptxdiff({"repro", "--help"}).out, HasSubstr("FILE|ENTRY"));
}

TEST(MainTest, UsageAndUnknownCommand) {
  EXPECT_EQ(Ptxdiff({}).code, 2);
  CliRun r = Ptxdiff({"help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("eval '<variant>'"));
  r = Ptxdiff({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frobnicate'"));
}

// RunFuzz hands its settings to the fuzzer through this process's
// environment: a test leaves none behind for the others.
void ForgetFuzzSettings() {
  for (const char* name : {"PTXDIFF_FUZZER", "PTXDIFF_WORKER", "PTXDIFF_BACKEND", "PTXDIFF_ARCH",
                           "PTXDIFF_CUDA_DRIVER", "PTXDIFF_TRIAGE_DIR", "PTXDIFF_MODE",
                           "PTXDIFF_FAMILIES", "PTXDIFF_EXCLUDE_FAMILIES", "PTXDIFF_TIMEOUT",
                           "PTXDIFF_STATS", "PTXDIFF_IN_FLIGHT", "PTXDIFF_BATCH",
                           "PTXDIFF_SYSTEMATIC", "PTXDIFF_READING", "PTXDIFF_DEADLINE",
                           "PTXDIFF_FINDINGS"}) {
    unsetenv(name);
  }
}

// `ptxdiff fuzz ARGS` with a stand-in for differential_fuzzer
// (PTXDIFF_FUZZER): a script that writes `stats` as the fuzz process's stats
// file, says "fake fuzzer ran", then runs `more` (its corpus is $1), and
// exits 0, as a campaign that ran to its time limit does.
CliRun FuzzWith(const std::string& dir, const std::string& stats, const std::string& more,
                const std::vector<std::string>& args) {
  std::ofstream(dir + "/stats.txt") << stats;
  const std::string fuzzer = dir + "/fake_fuzzer.sh";
  std::ofstream(fuzzer) << "#!/bin/sh\ncp '" << dir << "/stats.txt' \"$PTXDIFF_STATS/1.stats\"\n"
                        << "echo fake fuzzer ran\n" << more << "\n";
  chmod(fuzzer.c_str(), 0755);
  setenv("PTXDIFF_FUZZER", fuzzer.c_str(), 1);
  setenv("PTXDIFF_WORKER", PTXDIFF_WORKER_PATH, 1);
  std::vector<std::string> command = {"fuzz", "--max-time", "5"};
  command.insert(command.end(), args.begin(), args.end());
  CliRun r = Ptxdiff(command);
  ForgetFuzzSettings();
  return r;
}

CliRun FuzzWithStats(const std::string& dir, const std::string& stats,
                     const std::string& more = "") {
  return FuzzWith(dir, stats, more,
                  {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage"});
}

constexpr char kSomeStats[] =
    "inputs=10\ntuples=100\nagreed=100\nsupported_variants=495\nreached=f\n";

// Issue 28, item 2: with the disk under --out full, fuzz.log was cut
// mid-line and the run exited 0 with no word. Now each failed write is an
// error on the terminal naming the file and the cause, the summary says the
// run stopped early, and the exit status is 1. (/dev/full fails every write
// with ENOSPC, as a full disk does.)
TEST(FuzzCommandTest, ALogThatCannotBeWrittenFailsTheRunAndSaysWhy) {
  const std::string dir = TempDirFor("fuzz_full_log");
  ASSERT_EQ(mkdir((dir + "/out").c_str(), 0755), 0);
  ASSERT_EQ(symlink("/dev/full", (dir + "/out/fuzz.log").c_str()), 0);
  const CliRun r = FuzzWithStats(dir, kSomeStats);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: error: cannot write " + dir +
                               "/out/fuzz.log: No space left on device\n"));
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: could not write under --out " + dir +
                               "/out (1 failed write: cannot write " + dir + "/out/fuzz.log"));
  EXPECT_THAT(r.out, HasSubstr("fuzz:   stopped early: 1 write(s) under " + dir + "/out"));
}

// Issue 28, item 2: libFuzzer's corpus writes on a full disk left ~2,000
// empty files without a word. The first one found stops the run (as Ctrl-C
// does: the fake fuzzer exits 72 on SIGINT, else it runs on for 30 s and
// exits 0), is said with its cause, and is removed.
TEST(FuzzCommandTest, ACorpusFileLeftEmptyStopsTheRunAndFailsIt) {
  const std::string dir = TempDirFor("fuzz_empty_corpus_file");
  const std::string name = "0123456789abcdef0123456789abcdef01234567";
  const CliRun r = FuzzWith(
      dir, kSomeStats,
      ": > \"$1/" + name + "\"\ntouch -d '1 minute ago' \"$1/" + name + "\"\n" +
          "trap 'exit 72' INT\ni=0\nwhile [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done",
      {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage",
       "--progress-seconds", "1"});
  const std::string file = dir + "/out/corpus/differential/" + name;
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: error: cannot write " + file + ": "));
  EXPECT_THAT(r.out, HasSubstr("fuzz: stopping: a write under --out failed"));
  EXPECT_THAT(r.err, HasSubstr("could not write under --out"));
  EXPECT_NE(access(file.c_str(), F_OK), 0) << "the empty file is still in the corpus";
}

// Issue 28, item 2: the fuzz target's own failed writes under --out (its
// stats file: `ptxdiff: cannot write ...` on its stderr) are errors too.
TEST(FuzzCommandTest, AStatsFileTheFuzzerCouldNotWriteFailsTheRun) {
  const std::string dir = TempDirFor("fuzz_stats_unwritable");
  const CliRun r = FuzzWithStats(
      dir, kSomeStats,
      "echo 'ptxdiff: cannot write OUT/stats/1.stats: cannot create OUT/stats/.tmp: No space "
      "left on device' >&2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: error: cannot write OUT/stats/1.stats: cannot "
                               "create OUT/stats/.tmp: No space left on device\n"));
}

// ... and of the hundreds a full disk leaves, the first few are said, the
// rest counted.
TEST(FuzzCommandTest, ManyCorpusFilesLeftEmptyAreCountedNotEachSaid) {
  const std::string dir = TempDirFor("fuzz_empty_corpus_files");
  const CliRun r = FuzzWith(
      dir, kSomeStats,
      "for i in 1 2 3 4 5 6 7; do : > \"$1/0123456789abcdef0123456789abcdef0123456$i\"; "
      "touch -d '1 minute ago' \"$1/0123456789abcdef0123456789abcdef0123456$i\"; done",
      {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 1) << r.out;
  size_t said = 0;
  for (size_t at = 0; (at = r.err.find("error: cannot write ", at)) != std::string::npos; ++at) {
    ++said;
  }
  EXPECT_EQ(said, 5u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: error: 2 more failed write(s) under --out\n"));
  EXPECT_THAT(r.out, HasSubstr("stopped early: 7 write(s)"));
}

// Issue 28, item 7: two campaigns sharing --out truncated each other's
// fuzz.log. Each now appends.
TEST(FuzzCommandTest, ACampaignAppendsToTheLogItShares) {
  const std::string dir = TempDirFor("fuzz_shared_log");
  ASSERT_EQ(mkdir((dir + "/out").c_str(), 0755), 0);
  std::ofstream(dir + "/out/fuzz.log") << "the other campaign's line\n";
  const CliRun r = FuzzWithStats(dir, kSomeStats);
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir + "/out/fuzz.log");
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_EQ(log.str(), "the other campaign's line\nfake fuzzer ran\n");
}

// Issue 28, item 7: a bad backend was exit 1 after the output directories
// were made; now exit 2 before anything is touched, as in eval and sweep.
TEST(FuzzCommandTest, ABadBackendIsExitTwoBeforeAnyDirectoryIsMade) {
  const std::string dir = TempDirFor("fuzz_bad_backend");
  const CliRun r = FuzzWith(dir, "", "",
                            {"--backend", "no-such-backend", "--out", dir + "/out", "--dir",
                             dir + "/triage"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("ptxdiff fuzz: unknown backend 'no-such-backend'"));
  EXPECT_NE(access((dir + "/out").c_str(), F_OK), 0);
  EXPECT_NE(access((dir + "/triage").c_str(), F_OK), 0);
}

// Issue 28, item 7: a `kill -9` of `ptxdiff fuzz` left the fuzzer running
// until its own deadline. It gets SIGTERM now. (The fake fuzzer says its
// pid through a FIFO, then sleeps 20 s; this process adopts it as the
// orphan it becomes, to see how it ends.)
TEST(FuzzCommandTest, KillingTheCliEndsTheFuzzer) {
  const std::string dir = TempDirFor("fuzz_kill9");
  const std::string fifo = dir + "/fuzzer_pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const pid_t cli = fork();
  ASSERT_GE(cli, 0);
  if (cli == 0) {
    FuzzWithStats(dir, kSomeStats, "echo $$ > '" + fifo + "'\nexec sleep 20");
    _exit(0);
  }
  std::ifstream from_fuzzer(fifo);
  pid_t fuzzer = -1;
  from_fuzzer >> fuzzer;
  ASSERT_GT(fuzzer, 0);
  kill(cli, SIGKILL);
  ASSERT_EQ(waitpid(cli, nullptr, 0), cli);
  int status = 0;
  ASSERT_EQ(waitpid(fuzzer, &status, 0), fuzzer);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << "the fuzzer outlived ptxdiff fuzz";
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// `ptxdiff fuzz ARGS` on the differential fuzzer itself, built for the
// tests: libFuzzer's own loop, and its own ends.
CliRun FuzzForReal(const std::vector<std::string>& args) {
  setenv("PTXDIFF_FUZZER", PTXDIFF_TEST_FUZZER_PATH, 1);
  setenv("PTXDIFF_WORKER", PTXDIFF_WORKER_PATH, 1);
  std::vector<std::string> command = {"fuzz"};
  command.insert(command.end(), args.begin(), args.end());
  CliRun r = Ptxdiff(command);
  ForgetFuzzSettings();
  return r;
}

// An exec: backend: the faulty worker with `flags`.
std::string FaultyWorkerWith(const std::string& dir, const std::string& flags) {
  const std::string script = dir + "/faulty_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH << " " << flags
                        << "\n";
  chmod(script.c_str(), 0755);
  return "exec:" + script;
}

// The triage directory's entries (none if it cannot be read).
std::vector<EntryInfo> EntriesIn(const std::string& triage) {
  absl::StatusOr<TriageStore> store = TriageStore::Open(triage, false);
  if (!store.ok()) return {};
  absl::StatusOr<std::vector<EntryInfo>> entries = store->List();
  return entries.ok() ? *std::move(entries) : std::vector<EntryInfo>();
}

// The occurrences counted in the triage directory's entries.
int64_t CountedInEntries(const std::string& triage) {
  int64_t sum = 0;
  for (const EntryInfo& e : EntriesIn(triage)) sum += e.count();
  return sum;
}

// The summary's "findings this run: N new, M already filed": N + M, or -1.
int64_t FindingsThisRun(const std::string& out) {
  const size_t at = out.find("findings this run: ");
  long long fresh = 0, repeats = 0;
  if (at == std::string::npos ||
      std::sscanf(out.c_str() + at, "findings this run: %lld new, %lld already filed", &fresh,
                  &repeats) != 2) {
    return -1;
  }
  return fresh + repeats;
}

// Issue 28: on Ctrl-C libFuzzer ended the fuzzer at once (its own handler's
// _Exit), and the repeats the campaign had not yet written to their entries
// were lost: the entries counted fewer findings than the run reported. The
// campaign now stops as at --max-time. (popc.b32 is wrong on every tuple: a
// few causes, filed at once, and repeats by the thousand between two
// writes. The run is interrupted once an entry counts repeats, not after a
// guessed time.)
TEST(FuzzCommandTest, AnInterruptedRunCountsInItsEntriesEveryFindingItReports) {
  const std::string dir = TempDirFor("fuzz_interrupted_counts");
  const std::string triage = dir + "/triage";
  CliRun r;
  std::atomic<bool> ended{false};
  std::thread cli([&] {
    r = FuzzForReal({"--backend", FaultyWorkerWith(dir, "--fault=wrong-on=popc.b32"), "--family",
                     "popc", "--max-time", "300", "--out", dir + "/out", "--dir", triage});
    ended = true;
  });
  bool repeats_counted = false;
  for (const absl::Time give_up = absl::Now() + absl::Seconds(120);
       !repeats_counted && !ended && absl::Now() < give_up;
       absl::SleepFor(absl::Milliseconds(50))) {
    repeats_counted = CountedInEntries(triage) >= 100;
  }
  // Ctrl-C, as `ptxdiff fuzz` gets it (once it has ended, its handler is
  // gone and the signal would end this test).
  if (!ended) kill(getpid(), SIGINT);
  cli.join();
  ASSERT_TRUE(repeats_counted) << "no entry counted 100 findings in 120 s\n" << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("fuzz: interrupted; stopping"));
  EXPECT_THAT(r.out, Not(HasSubstr("not filed before the run ended")))
      << "the test needs every cause filed";
  EXPECT_EQ(CountedInEntries(triage), FindingsThisRun(r.out)) << r.out;
}

// Issue 28: --max-time bounds the whole run, a worker that hangs on one
// tuple included (isolating a hang costs a timeout per halving: a 45 s run
// took 188 s). The bound is wide, for a loaded machine: it catches
// isolation or a stop that runs on past the deadline, not a few percent.
TEST(FuzzCommandTest, MaxTimeBoundsARunWhoseWorkerHangsOnATuple) {
  const std::string dir = TempDirFor("fuzz_hang_within_max_time");
  const std::string triage = dir + "/triage";
  constexpr int kMaxTime = 12;
  const absl::Time start = absl::Now();
  const CliRun r = FuzzForReal(
      {"--backend",
       FaultyWorkerWith(dir, "--fault=hang-on=add.sat.s32 --when-operand=0:2147483647"),
       "--family", "add", "--timeout", "3", "--max-time", absl::StrCat(kMaxTime), "--out",
       dir + "/out", "--dir", triage});
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(kMaxTime + 8)) << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Isolated (hang~faulty~hang~add.sat.s32) or not (hang~faulty~unisolated-hang~batch-...).
  std::vector<std::string> hangs;
  for (const EntryInfo& e : EntriesIn(triage)) {
    if (absl::StartsWith(e.name, "hang~")) hangs.push_back(e.name);
  }
  EXPECT_FALSE(hangs.empty()) << "the hang was not filed\n" << r.out << r.err;
}

// A worker that hangs at HELLO held `ptxdiff fuzz --max-time 5` for the
// reply timeout (60 s by default), then said "no answer before the
// deadline". Its start ends by --max-time, saying what did not answer.
TEST(FuzzCommandTest, AWorkerThatHangsAtHelloEndsTheRunByMaxTime) {
  const std::string dir = TempDirFor("fuzz_hang_at_hello");
  constexpr int kMaxTime = 5;
  const absl::Time start = absl::Now();
  const CliRun r = FuzzForReal({"--backend", FaultyWorkerWith(dir, "--fault=hang-at-hello"),
                                "--family", "add", "--max-time", absl::StrCat(kMaxTime),
                                "--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(kMaxTime + 8)) << r.out << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("failed its handshake: no answer to HELLO before the run's "
                               "deadline (--max-time)"));
}

TEST(FuzzCommandTest, ACampaignThatTestedSomethingAndFiledItAllPasses) {
  const CliRun r = FuzzWithStats(
      TempDirFor("fuzz_ok"),
      "inputs=10\ntuples=100\nagreed=95\nmismatched=3\ndeclined=2\nsupported_variants=495\n"
      "new_findings=1\nknown_findings=2\nreached=f\n");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("fuzz:   checked 100 tuples"));
  // Issue 28, item 8: "variants 4/495 supported" and "2 known" misled.
  EXPECT_THAT(r.out, HasSubstr("fuzz inputs 10  variants reached 4 of 495  findings 1 new, "
                               "2 repeats  faults 0"));
}

// Issue 28: a campaign whose filings failed (a full triage disk) exited 0
// with the errors only in fuzz.log. It fails now, with the reason, and says
// where the findings are kept.
TEST(FuzzCommandTest, ACampaignThatCouldNotFileItsFindingsFails) {
  const std::string dir = TempDirFor("fuzz_full");
  const CliRun r = FuzzWithStats(
      dir,
      "inputs=10\ntuples=100\nagreed=94\nmismatched=6\nknown_findings=6\n"
      "filing_errors=6\nunfiled=6\n"
      "filing_error=cannot create T/.tmp-entry: No space left on device\n");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err, StartsWith("ptxdiff fuzz: could not write to the triage directory " + dir +
                                "/triage (6 failed writes; the last: cannot create "
                                "T/.tmp-entry: No space left on device); 6 findings were not "
                                "filed: " + dir + "/triage/.pending/ keeps them"));
  EXPECT_THAT(r.out, HasSubstr("fuzz: summary: "));  // the summary is still printed
}

// Issue 28: a campaign against a backend that declined everything exited 0.
TEST(FuzzCommandTest, ACampaignThatTestedNothingFailsAndSaysWhy) {
  const CliRun r = FuzzWithStats(
      TempDirFor("fuzz_nothing"),
      "inputs=10\ntuples=272\ndeclined=272\ndeclined_other=272\n"
      "top_decline=16 ptx-cmd: command '/bin/false {ptx} {in} {out}' failed on add.s32 "
      "(16 tuples): exit status 1\n");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err, StartsWith("ptxdiff fuzz: nothing was tested: the backend declined all 272 "
                                "tuples sent (most often, 16 tuples: ptx-cmd: command "
                                "'/bin/false {ptx} {in} {out}' failed on add.s32 (16 tuples): "
                                "exit status 1); `ptxdiff sweep --backend 'oracle' --tuples 1` "
                                "lists the declines by reason\n"));
}

// A ptxdiff from the release build finds the optimized campaign fuzzer
// before the ASan one of the fuzz build, beside it first.
TEST(FuzzCommandTest, TheCampaignFuzzerComesBeforeTheAsanOne) {
  const std::vector<std::string> path = FuzzerSearchPath("/b/release/cli");
  ASSERT_GE(path.size(), 4u);
  EXPECT_EQ(path[0], "/b/release/cli/differential_fuzzer");
  const auto at = [&](const std::string& p) {
    return std::find(path.begin(), path.end(), p) - path.begin();
  };
  const auto end = static_cast<std::ptrdiff_t>(path.size());
  EXPECT_LT(at("/b/release/cli/../../campaign/fuzzers/differential_fuzzer"),
            at("/b/release/cli/../../fuzz/fuzzers/differential_fuzzer"));
  EXPECT_LT(at("/b/release/cli/../../fuzz/fuzzers/differential_fuzzer"), end);
  EXPECT_LT(at("build/campaign/fuzzers/differential_fuzzer"),
            at("build/fuzz/fuzzers/differential_fuzzer"));
  EXPECT_LT(at("build/fuzz/fuzzers/differential_fuzzer"), end);
}

// `ptxdiff COMMAND --help` shows that command's usage (it used to be an
// unknown flag, or for seed-corpus a directory named "--help").
TEST(MainTest, ACommandsHelpIsItsUsage) {
  CliRun r = Ptxdiff({"seed-corpus", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("seed-corpus DIR\n      Write the seed corpus"));
  EXPECT_THAT(r.out, Not(HasSubstr("eval '<variant>'")));
  r = Ptxdiff({"eval", "add.s32", "-h"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("Example: ptxdiff eval 'bfe.s32' 1 40 8 --backend ptxas --runtime a"));
  EXPECT_THAT(r.out, Not(HasSubstr("seed-corpus")));
  r = Ptxdiff({"triage", "--help"});
  EXPECT_THAT(r.out, HasSubstr("triage list | show ENTRY"));
  EXPECT_THAT(r.out, HasSubstr("--dir TRIAGE_DIR"));
  EXPECT_THAT(r.out, Not(HasSubstr("minimize FILE")));
  struct stat st;
  EXPECT_NE(stat("--help", &st), 0) << "a directory named --help was written";
  // sweep and fuzz say when they fail (a CI gate reads the exit status).
  for (const char* command : {"sweep", "fuzz"}) {
    r = Ptxdiff({command, "--help"});
    EXPECT_THAT(r.out, HasSubstr("nothing was tested")) << command;
    EXPECT_THAT(r.out, HasSubstr("2 on bad")) << command;
  }
}

}  // namespace
}  // namespace ptxdiff
