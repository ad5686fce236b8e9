// The commands that need no backend (program, eval, compare, variants) and
// what main does with any command line.

#include "cli/commands.h"

#include <sys/stat.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "cli/flags.h"
#include "cli/testing/run_ptxdiff.h"
#include "cli/testing/stop_once_handled.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// `ptxdiff program`: the composed oracle at the witness, and with ptxas the
// claim issue 29 found, as a program, refuted at the witness.
TEST(ProgramCommandTest, TheOracleAndWhatPtxasClaims) {
  const std::string file =
      std::string(PTXDIFF_SOURCE_DIR) + "/examples/programs/bfe-claim.ptxprog";
  CliRun r = Ptxdiff({"program", file});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(
      r.out,
      HasSubstr("oracle:  %r = 0x00000000 at the witness %a = 0x00000001 "
                "(spec reading)\n"));
  // Issue 42, item 9: without --backend, it says that nothing was judged.
  EXPECT_THAT(r.out, HasSubstr("verdict: not judged (no --backend: the "
                               "oracle's values alone;"));
  r = Ptxdiff({"program", file, "--backend", "ptxas"});
  if (absl::StrContains(r.err, "ptxas not found")) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("inputs immediate: folds to %r = 0x00000000: agree\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr("inputs runtime: claims %r = 0xffffffff for every input: "
                "refuted at %a = 0x00000001, where the oracle gives "
                "%r = 0x00000000\n"));
  // Issue 42, item 9: the verdict names the backend and the form it is of;
  // issue 44, item 6: and what the other form gave.
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch (ptxas sm_90, inputs "
                               "runtime; inputs immediate: agree)\n"));
  const std::string chain = std::string(PTXDIFF_SOURCE_DIR) +
                            "/examples/programs/carry-chain.ptxprog";
  r = Ptxdiff({"program", chain, "--backend", "ptxas"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("oracle:  %lo = 0x00000000, %hi = 0x00000010"));
  // ptxas keeps the carry chain's code in both forms: the SASS evaluator
  // runs it.
  EXPECT_THAT(r.out,
              HasSubstr("inputs runtime: its code, run on the CPU, agrees with "
                        "the oracle at the witness and at "));
  // Issue 61, item 3: at many input vectors, its edges and a thousand more.
  EXPECT_THAT(r.out, ContainsRegex("at the witness and at 1[0-9]{3} more "
                                   "input vectors"));
  EXPECT_THAT(r.out, HasSubstr("verdict: agree (ptxas sm_90, inputs "));
  // Issue 44, item 6: a kernel the SASS decoder refuses (VABSDIFF4, ops
  // 0x215 and 0x815; it was 16-bit division's float code until the
  // evaluator ran it) is not judged in either form: the verdict says so,
  // never "agree", and the exit status (3) tells it from an agreement.
  const std::string div = testing::TempDir() + "/vabsdiff4.ptxprog";
  std::ofstream(div) << "# ptxdiff program 1\ninput %a .b32 1000\n"
                        "input %b .b32 7\ninput %c .b32 5\n"
                        "vabsdiff4.u32.u32.u32 %r, %a, %b, %c;\noutput %r\n";
  r = Ptxdiff({"program", div, "--backend", "ptxas"});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("inputs runtime: not judged (the SASS "
                               "evaluator did not run it: "));
  EXPECT_THAT(r.out, HasSubstr("verdict: not judged (ptxas sm_90, inputs "
                               "immediate and runtime)\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("agree")));
  // Issue 65: nor is a program whose every output the spec leaves open (a
  // division by zero), which was "agree", exit 0.
  const std::string div0 = testing::TempDir() + "/div0.ptxprog";
  std::ofstream(div0) << "# ptxdiff program 1\ninput %a .b32 7\n"
                         "div.u32 %q, %a, 0;\noutput %q\n";
  r = Ptxdiff({"program", div0, "--backend", "ptxas"});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: not judged (ptxas sm_90, inputs "
                               "immediate and runtime)\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("agree")));
  // repro takes a program case too.
  r = Ptxdiff({"repro", file, "--backend", "ptxas", "--timeout", "30"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("refuted at %a = 0x00000001"));
}

// A program with a thread input is judged on every lane: each form's line
// says where its code went wrong, the immediate form's on which lane (0
// here, where the case is shown at lane 5), or that every lane agrees.
TEST(ProgramCommandTest, AThreadInputCaseNamesTheLaneItFailsOn) {
  const std::string file = std::string(PTXDIFF_SOURCE_DIR) +
                           "/program/testdata/lane-cnot-cvt-sat-s16.ptxprog";
  CliRun r = Ptxdiff({"program", file, "--backend", "ptxas"});
  if (absl::StrContains(r.err, "ptxas not found")) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("inputs immediate: its code, run on the CPU on "
                               "lane 0, stores %r1 = 0x8000, where the oracle "
                               "gives %r1 = 0x0001"));
  EXPECT_THAT(r.out, HasSubstr("inputs runtime: its code, run on the CPU at "
                               "%t = %tid.x = 0, stores %r1 = 0x8000"));
  const std::string fine = testing::TempDir() + "/lane-fine.ptxprog";
  std::ofstream(fine) << "# ptxdiff program 1\ninput %t .b32 %laneid 3\n"
                         "mul.lo.u32 %r, %t, 3;\noutput %r\n";
  r = Ptxdiff({"program", fine, "--backend", "ptxas"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("inputs immediate: its code, run on the CPU, "
                               "agrees with the oracle on every lane\n"));
  // Lanes that exit store nothing and are not judged: the line says so.
  const std::string exits = testing::TempDir() + "/lane-exits.ptxprog";
  std::ofstream(exits) << "# ptxdiff program 1\ninput %t .b32 %laneid 3\n"
                          "setp.ge.u32 %late, %t, 16;\n@%late exit;\n"
                          "mul.lo.u32 %r, %t, 3;\noutput %r\n";
  r = Ptxdiff({"program", exits, "--backend", "ptxas"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("inputs immediate: its code, run on the CPU, "
                               "agrees with the oracle on every lane that "
                               "does not exit\n"));
}

TEST(ProgramCommandTest, BadInputSaysWhatIsWrong) {
  CliRun r = Ptxdiff({"program", "/nonexistent.ptxprog"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("ptxdiff program: "));
  const std::string file =
      std::string(PTXDIFF_SOURCE_DIR) + "/examples/programs/bfe-claim.ptxprog";
  r = Ptxdiff({"program", file, "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("programs run on ptxas, cuda or ptx-cmd:COMMAND"));
  r = Ptxdiff({"program"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("expects one FILE (a program case)"));
}

// Issue 65: a case file is read with a bound, so that an endless one
// (/dev/zero) or a huge one is refused at once, naming it, rather than read
// until memory runs out.
TEST(ProgramCommandTest, ACaseFileIsReadWithABound) {
  const std::string huge = TempDirFor("case_bound") + "/huge.ptxprog";
  std::ofstream(huge) << "# ptxdiff program 1\n"
                      << std::string(kMaxCaseFileBytes, '#');
  for (const std::string& command : {"program", "repro", "minimize"}) {
    for (const std::string& file : {std::string("/dev/zero"), huge}) {
      const CliRun r = Ptxdiff({command, file});
      EXPECT_EQ(r.code, 2) << command << " " << file << r.out;
      EXPECT_THAT(r.err, HasSubstr(absl::StrCat("ptxdiff ", command, ": ",
                                                file, " is larger than")))
          << command;
    }
  }
}

// Issue 42, items 14 and 15: messages that named the wrong thing, and flags
// that were ignored (exit 0) or refused too late (exit 1, after making
// directories).
TEST(CommandsTest, BadInputIsNamedAndIsExitTwo) {
  const std::string dir = TempDirFor("bad_input_named");
  const std::string file =
      std::string(PTXDIFF_SOURCE_DIR) + "/examples/programs/bfe-claim.ptxprog";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"program", dir},
            "ptxdiff program: " + dir + " is a directory, not a file"},
           {{"minimize", dir},
            "ptxdiff minimize: " + dir + " is a directory, not a case"},
           {{"program", file, "--arch", "sm_1"},
            "ptxdiff program: no PTX target for sm_1"},
           {{"repro", file, "--arch", "sm_1"},
            "ptxdiff repro: no PTX target for sm_1"},
           {{"repro", file, "--timeout", "-1"},
            "ptxdiff repro: --timeout takes a whole number from 1 to 3600"},
           // The fifth fault run: nan, inf or 1e300 let a hanging worker
           // run on for ever.
           {{"fuzz", "--timeout", "nan", "--backend", "oracle", "--out",
             dir + "/out"},
            "ptxdiff fuzz: --timeout takes a number of seconds above 0 and at "
            "most 3600, not 'nan'"},
           {{"sweep", "--backend", "oracle", "--timeout", "inf"},
            "--timeout takes a number of seconds above 0 and at most 3600, "
            "not 'inf'"},
           {{"eval", "add.u32", "1", "2", "--backend", "oracle", "--timeout",
             "1e300"},
            "--timeout takes a number of seconds above 0 and at most 3600, "
            "not '1e300'"},
           {{"triage", "mark", "E", "--dir", dir},
            "'mark' takes: mark ENTRY --explained WHY"},
           {{"sweep", "--family", "add", "--runtime", "q", "--backend",
             "oracle"},
            "--runtime q: no variant swept has a source of that name"},
           {{"fuzz", "--arch", "sm_1", "--backend", "oracle", "--out",
             dir + "/out"},
            "ptxdiff fuzz: no PTX target for sm_1"},
           {{"programs", "--dir", "/sys/ptxdiff-test/triage", "--max-time",
             "1"},
            "cannot create triage directory /sys/ptxdiff-test/triage: "
            "Operation not permitted"},
       }) {
    const CliRun r = Ptxdiff(c.args);
    EXPECT_EQ(r.code, 2) << testing::PrintToString(c.args) << r.out;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << testing::PrintToString(c.args);
  }
  struct stat st;
  EXPECT_NE(stat((dir + "/out").c_str(), &st), 0)
      << "fuzz made --out before refusing --arch";
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
            "0x0000000000000000  defined  (hardware reading: erratum "
            "bfe-bfi-64-unmasked)\n");
  r = Ptxdiff({"eval", "div.u32", "7", "0", "--reading=hardware", "--json"});
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "\"result\": \"0xffffffff\", \"width\": 32, \"defined\": true"));
  EXPECT_THAT(r.out,
              HasSubstr("\"reading\": \"hardware\", \"spec\": \"0x00000000\", "
                        "\"erratum\": \"div-rem-by-zero-32\""));
  EXPECT_EQ(Ptxdiff({"eval", "add.s32", "1", "2", "--reading=gpu"}).code, 2);
}

TEST(EvalCommandTest, VariantWithSelectors) {
  CliRun r = Ptxdiff({"eval", "vadd.u32.u32.u32.sat d.b1, a, b, c", "0x100",
                      "0", "0x11223344"});
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
  EXPECT_EQ(
      r.out,
      "shf.l.clamp.b32\nshf.l.wrap.b32\nshf.r.clamp.b32\nshf.r.wrap.b32\n");
  EXPECT_EQ(Ptxdiff({"variants", "--family", "shf", "--count"}).out, "4\n");
  EXPECT_EQ(Ptxdiff({"variants", "--family", "shf", "--count", "--json"}).out,
            "{\"count\": 4}\n");
  r = Ptxdiff({"variants", "--family", "mul24", "--json"});
  EXPECT_THAT(r.out, StartsWith("[\n  {\"spelling\": \"mul24.hi.u32\", "
                                "\"family\": \"mul24\", \"min_ptx\": \"1.0\""));
  // What a worker needs to read a tuple's operands (docs/worker-protocol.md).
  r = Ptxdiff({"variants", "--family", "bfe", "--json"});
  EXPECT_THAT(r.out,
              HasSubstr("{\"spelling\": \"bfe.u64\", \"family\": \"bfe\", "
                        "\"min_ptx\": \"2.0\", \"min_sm\": 20, \"sources\": 3, "
                        "\"source_widths\": [64, 32, 32], \"runtime_sources\": "
                        "[\"a\", \"b\", \"c\"], "
                        "\"result_width\": 64"));
  // lop3's LUT must be an immediate: it is no runtime source.
  EXPECT_THAT(
      Ptxdiff({"variants", "--family", "lop3", "--json"}).out,
      HasSubstr(
          "\"runtime_sources\": [\"a\", \"b\", \"c\"], \"result_width\": 32"));
  const int total = std::stoi(Ptxdiff({"variants", "--count"}).out);
  EXPECT_GT(total, 70000);
}

TEST(VariantsCommandTest, UnknownFamilyIsExitTwo) {
  CliRun r = Ptxdiff({"variants", "--family", "vaddd"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown family 'vaddd'"));
  EXPECT_EQ(Ptxdiff({"variants", "--family"}).code, 2);
}

// Issue 28, item 8: the numeric-flag error named no flag.
TEST(MainTest, ANumericFlagsErrorNamesTheFlag) {
  CliRun r = Ptxdiff({"fuzz", "--jobs", "99"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(
      r.err,
      "ptxdiff fuzz: --jobs takes a whole number from 1 to 64, not '99'\n");
  r = Ptxdiff({"fuzz", "--max-time", "1m"});
  EXPECT_EQ(
      r.err,
      "ptxdiff fuzz: --max-time takes a whole number from 1 to 2592000, not "
      "'1m'\n");
  r = Ptxdiff({"fuzz", "--progress-seconds", "0"});
  EXPECT_THAT(
      r.err,
      HasSubstr("--progress-seconds takes a positive whole number, not '0'"));
  r = Ptxdiff({"compare", "add.s32", "sub.s32", "--seed", "x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("--seed takes a whole number of at least 0, not 'x'"));
  r = Ptxdiff({"sweep", "--tuples", "0"});
  EXPECT_THAT(
      r.err,
      HasSubstr("--tuples takes a whole number from 1 to 1048576, not '0'"));
}

// Fault run of issue 65: `calibrate --max-time 0` was taken (no limit) where
// `fuzz` refused 0, and `fuzz` took any number, however large. One rule for
// the flag on every command. (A bad flag checked after it stops a command
// that took it, before any work.)
TEST(MainTest, MaxTimeIsOneRuleOnEveryCommand) {
  for (const std::string value : {"0", "2592001"}) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{
             {"fuzz", "--max-time", value, "--jobs", "0"},
             {"programs", "--max-time", value, "--threads", "0"},
             {"calibrate", "--max-time", value, "--arch", "sm_1"}}) {
      const CliRun r = Ptxdiff(args);
      EXPECT_EQ(r.code, 2) << args[0];
      EXPECT_EQ(r.err, absl::StrCat("ptxdiff ", args[0],
                                    ": --max-time takes a whole number from 1 "
                                    "to 2592000, not '",
                                    value, "'\n"));
    }
  }
}

// `calibrate --programs 9223372036854775807` overflowed its batch count:
// "0 programs", "nothing was executed", exit 1.
TEST(MainTest, CalibrateProgramsHasABound) {
  const CliRun r = Ptxdiff({"calibrate", "--programs", "9223372036854775807",
                            "--arch", "sm_1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ptxdiff calibrate: --programs takes a whole number from 1 to "
            "1000000000000, not '9223372036854775807'\n");
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
  for (const char* command : {"eval", "variants", "sweep", "fuzz", "compare",
                              "seed-corpus", "repro", "minimize", "triage"}) {
    const CliRun r = Ptxdiff({command, "--help"});
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_THAT(r.out, StartsWith(absl::StrCat("usage: ptxdiff ", command)))
        << command;
    EXPECT_THAT(r.out,
                HasSubstr(absl::StrCat("\nExample: ptxdiff ", command, " ")))
        << command;
    if (std::string(command) != "seed-corpus") {
      EXPECT_THAT(r.out, HasSubstr("\nflags:\n  --")) << command;
    }
  }
  const std::string fuzz = Ptxdiff({"fuzz", "--help"}).out;
  for (const char* flag :
       {"--out DIR", "--corpus DIR", "--timeout SECONDS",
        "--reading spec|hardware", "--progress-seconds N", "--cuda-driver PATH",
        "--jobs N", "--mode campaign|crash", "--family NAME", "--exclude NAME",
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

// Fault run of issue 65: `triage foo` said "triage directory out/triage does
// not exist", as if `foo` were a verb. It says `foo` is none, and which are.
TEST(MainTest, AnUnknownTriageSubcommandIsSaidAsOne) {
  const std::string dir = TempDirFor("triage_unknown_verb");
  const CliRun r = Ptxdiff({"triage", "foo", "--dir", dir + "/none"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ptxdiff triage: unknown triage subcommand 'foo'; expects list, "
            "show ENTRY, merge DIR... or mark ENTRY --explained WHY (ptxdiff "
            "triage --help)\n");
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
  EXPECT_THAT(r.out, HasSubstr("Example: ptxdiff eval 'bfe.s32' 1 40 8 "
                               "--backend ptxas --runtime a"));
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

// Fault run of issue 65: Ctrl-C of `calibrate` exited 0 (its summary said
// "interrupted"), where `sweep`, `program` and `programs` exit 130.
TEST(CalibrateCommandTest, AStoppedCalibrationIsExit130) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  CliRun r;
  {
    const StopOnceHandled stop;
    r = Ptxdiff(
        {"calibrate", "--family", "add", "--tuples", "1", "--threads", "1"});
    EXPECT_TRUE(stop.stopped());
  }
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  // The stop lands as the handler goes in, at the start: before the first
  // compile, or (where its set-up ran no process) in the campaign.
  EXPECT_THAT(
      r.out, testing::AnyOf(HasSubstr(", interrupted\n"),
                            HasSubstr("interrupted before the first compile")));
}

// An empty path was taken as one: `fuzz --out ""` wrote its corpus, stats
// and findings under / ("" + "/stats"), `seed-corpus ""` wrote
// /differential. An empty argument or value is bad input.
TEST(MainTest, AnEmptyArgumentOrValueIsRefused) {
  EXPECT_THAT(ParseArgs({"--out", ""}, {}, {"out"}).status().message(),
              HasSubstr("--out's value is empty"));
  EXPECT_THAT(ParseArgs({"--out="}, {}, {"out"}).status().message(),
              HasSubstr("--out's value is empty"));
  EXPECT_THAT(ParseArgs({""}, {}, {}).status().message(),
              HasSubstr("an argument is empty"));
  EXPECT_TRUE(ParseArgs({"--out", "o", "-1"}, {}, {"out"}).ok());
  const CliRun r = Ptxdiff({"report", "--html", ""});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ptxdiff report: --html's value is empty (an unset shell "
            "variable?)\n");
}

}  // namespace
}  // namespace ptxdiff
