// repro, minimize and triage (cli/triage_commands.h).

#include "cli/triage_commands.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "cli/testing/run_ptxdiff.h"
#include "cli/testing/stop_once_handled.h"
#include "common/files.h"
#include "fuzzers/differential_target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "triage/testing/findings.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A backend that disagrees with the oracle on every vadd: the faulty worker
// behind a wrapper script, as a user's own worker would be plugged in.
std::string WrongVaddBackend(const std::string& dir) {
  const std::string script = dir + "/wrong_vadd_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=wrong-on=vadd. \"$@\"\n";
  chmod(script.c_str(), 0755);
  return "exec:" + script;
}

// A crash file of one vadd.u32.u32.u32 tuple, as crash mode writes it, at
// `path`; its bytes.
std::string WriteVaddCrash(const std::string& path) {
  const std::string input =
      EncodeFuzzInput(*ParseVariant("vadd.u32.u32.u32"), {{{1, 2, 0, 0}}});
  std::ofstream(path, std::ios::binary) << input;
  return input;
}

// Its line in crash-backends.txt, found on `backend` (WrongVaddBackend's).
std::string VaddCrashRecord(const std::string& input,
                            const std::string& backend) {
  return CrashOriginLine(
      input, {"value-mismatch faulty vadd.u32.u32.u32 in-range", backend});
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
  std::ofstream(dir + "/hand.txt")
      << "variant: add.s32\noperands: 0x7fffffff 1\n";
  r = Ptxdiff({"repro", dir + "/hand.txt", "--backend", "oracle"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("case:    add.s32"));
  // Issue 42, item 11: the operands replayed are shown.
  EXPECT_THAT(r.out, HasSubstr("\noperands: 0x7fffffff 0x00000001\n"));
  std::ofstream(dir + "/empty");
  r = Ptxdiff({"repro", dir + "/empty", "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("empty is empty"));
  std::ofstream(dir + "/bad_case.txt")
      << "# ptxdiff case 1\nvariant: vadd.s32\noperands: 1\n";
  r = Ptxdiff({"repro", dir + "/bad_case.txt", "--backend", "oracle"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("line 2: unknown instruction variant"));
}

#ifdef PTXDIFF_INTERPRETER_PATH
// The twelfth fault run: `repro` of a program entry whose case had lost
// its `# Replay:` line showed the oracle alone, "not judged", exit 0. It
// replays on the backend meta.txt names; a program case with no backend to
// replay on is exit 3, nothing judged.
TEST(TriageCommandsTest, AProgramEntryWithoutItsReplayLineReplaysOnItsMeta) {
  const std::string dir = TempDirFor("program_no_replay");
  const std::string entry =
      dir + "/value-mismatch~ptx-cmd~immediate-inputs~program-1f2e3d4c";
  ASSERT_TRUE(MakeDirs(entry).ok());
  std::ofstream(entry + "/meta.txt")
      << "backend: ptx-cmd sm_90: " << PTXDIFF_INTERPRETER_PATH
      << " --flip-on=add.u32 {ptx} {in} {out}\ncount: 1\n";
  const char kProgram[] =
      "# ptxdiff program 1\ninput %a .b32 7\nadd.u32 %r, %a, 1;\n"
      "output %r\n";
  std::ofstream(entry + "/case.txt") << kProgram;
  CliRun r = Ptxdiff({"repro", entry + "/case.txt"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("repro: replaying on the backend it was found "
                               "on: --backend ptx-cmd:"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
  std::ofstream(dir + "/loose.ptxprog") << kProgram;
  r = Ptxdiff({"repro", dir + "/loose.ptxprog"});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: not judged (no --backend"));
}

// Tenth fault run: `repro` of a program entry of an unisolated hang replayed
// the module's first program alone, "verdict: agree", exit 0. It says what
// it replays, and a first program that does not hang is "not shown", exit 3.
TEST(TriageCommandsTest, AnUnisolatedProgramHangIsNotSaidToAgree) {
  const std::string dir = TempDirFor("unisolated_program");
  const std::string entry =
      dir + "/hang~ptx-cmd~unisolated-hang~program-1f2e3d4c";
  ASSERT_TRUE(MakeDirs(entry).ok());
  std::ofstream(entry + "/meta.txt") << "backend: ptx-cmd\ncount: 1\n";
  std::ofstream(entry + "/case.txt")
      << "# ptxdiff program 1\n# unisolated hang of a module of 2 programs\n"
         "# Replay: ptxdiff program case.txt --backend 'ptx-cmd:"
      << PTXDIFF_INTERPRETER_PATH
      << " {ptx} {in} {out}'\ninput %a .b32 7\nadd.u32 %r, %a, 1;\n"
         "output %r\n";
  const CliRun r = Ptxdiff({"repro", entry + "/case.txt"});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("is the hang of a module of programs the run "
                               "could not isolate to one"));
  EXPECT_THAT(r.out, HasSubstr("repro: not shown: the first program alone "
                               "does not hang"));
}
#endif

// A pipe holding `text`, its writing end closed: what `<(printf ...)` gives
// a command, as /dev/fd/N (its reading end; closed with the object).
class PipeOf {
 public:
  explicit PipeOf(const std::string& text) {
    EXPECT_EQ(pipe(fds_), 0);
    EXPECT_EQ(write(fds_[1], text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    close(fds_[1]);
  }
  ~PipeOf() { close(fds_[0]); }
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  int fds_[2];
};

// Tenth fault run: a case given through a pipe was read twice, the second
// time empty (`repro <(printf ...)`: "/dev/fd/63 is empty", exit 2). It is
// read once, by repro and minimize, a tuple case or a program case.
TEST(TriageCommandsTest, ACaseThroughAPipeIsReadOnce) {
  const std::string dir = TempDirFor("pipe");
  CliRun r = Ptxdiff({"repro", PipeOf(kCase).path(), "--backend", "oracle"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
#ifdef PTXDIFF_INTERPRETER_PATH
  r = Ptxdiff({"repro",
               PipeOf("# ptxdiff program 1\ninput %a .b32 7\n"
                      "add.u32 %r, %a, 1;\noutput %r\n")
                   .path(),
               "--backend",
               "ptx-cmd:" PTXDIFF_INTERPRETER_PATH " {ptx} {in} {out}"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
#endif
  r = Ptxdiff({"minimize", PipeOf(kCase).path(), "--backend",
               WrongVaddBackend(dir), "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("filed new entry"));
}

// Third fault run of issue 65: `minimize` whose entry was filed and its
// INDEX.md not (a full disk) exited 0, where fuzz and programs exit 1.
TEST(TriageCommandsTest, MinimizeWhoseIndexCannotBeWrittenExitsOne) {
  const std::string dir = TempDirFor("minimize_no_index");
  std::ofstream(dir + "/case.txt") << kCase;
  const std::string triage = dir + "/triage";
  // A directory with something in it: INDEX.md cannot be replaced.
  ASSERT_EQ(mkdir(triage.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((triage + "/INDEX.md").c_str(), 0755), 0);
  std::ofstream(triage + "/INDEX.md/x");
  const CliRun r = Ptxdiff({"minimize", dir + "/case.txt", "--backend",
                            WrongVaddBackend(dir), "--dir", triage});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("filed new entry"));
  EXPECT_THAT(r.err, HasSubstr("the entry is filed, but INDEX.md"));
}

TEST(TriageCommandsTest, MinimizeFilesOneSmallEntryThatReplays) {
  const std::string dir = TempDirFor("minimize");
  std::ofstream(dir + "/case.txt") << kCase;
  const std::string backend = WrongVaddBackend(dir);
  const std::string triage = dir + "/triage";
  CliRun r = Ptxdiff(
      {"minimize", dir + "/case.txt", "--backend", backend, "--dir", triage});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("variant: vadd.u32.u32.u32\n"));
  EXPECT_THAT(r.out, HasSubstr("operands: 0x00000000 0x00000000\n"));
  EXPECT_THAT(r.out, HasSubstr("filed new entry"));
  // The same case again is counted, not filed again.
  r = Ptxdiff(
      {"minimize", dir + "/case.txt", "--backend", backend, "--dir", triage});
  EXPECT_THAT(r.out, HasSubstr("counted existing entry"));

  r = Ptxdiff({"triage", "list", "--dir", triage});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(
      r.out,
      HasSubstr("     2  value-mismatch~faulty~in-range~vadd.u32.u32.u32\n"));
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
  // Issue 42, item 9: without --backend an entry replayed on "the best
  // here" (ptxas) and agreed. It replays where it was found, or (an exec:
  // worker, whose path the entry does not hold) says why it cannot.
  r = Ptxdiff({"repro", entry, "--dir", triage});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("which it does not record how to start (an "
                               "exec: worker's path): pass --backend"));
  r = Ptxdiff({"repro", triage, "--backend", backend});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(
      r.err,
      HasSubstr("is a directory without a case.txt: not a triage entry"));
  r = Ptxdiff({"repro", "crash~faulty~crash~add.s32", "--backend", backend,
               "--dir", triage});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("no entry crash~faulty~crash~add.s32 in " + triage));
  EXPECT_EQ(Ptxdiff({"triage", "mark", entry, "--explained", "known", "--dir",
                     triage})
                .code,
            0);
  EXPECT_THAT(Ptxdiff({"triage", "list", "--dir", triage}).out,
              HasSubstr("(explained)"));
  const std::string merged = dir + "/merged";
  r = Ptxdiff({"triage", "merge", triage, "--dir", merged});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 new entries"));
}

// Issue 42, item 9: a checked-in ptxas entry replays on ptxas, for the
// arch it was found on, without --backend.
TEST(TriageCommandsTest, AnEntryReplaysOnTheBackendItWasFoundOn) {
  const std::string entries =
      std::string(PTXDIFF_SOURCE_DIR) + "/triage/entries";
  const CliRun r =
      Ptxdiff({"repro", "value-mismatch~ptxas~min~fns.b32", "--dir", entries});
  if (absl::StrContains(r.err, "ptxas not found")) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("repro: replaying on the backend it was found "
                                "on: --backend ptxas --arch sm_90\n"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
}

// A ptx-cmd worker names the target it writes PTX for after its command
// ("ptx-cmd 2 (my-tool {ptx} {in} {out}, PTX for sm_90)"): repro takes
// that as --arch, not as more words of the command.
TEST(TriageCommandsTest, APtxCmdEntryReplaysItsCommandAndItsTarget) {
  const std::string dir = TempDirFor("ptx_cmd_entry");
  const std::string entry = dir + "/crash~ptx-cmd~crash~add.u32";
  ASSERT_EQ(mkdir(entry.c_str(), 0755), 0) << entry;
  std::ofstream(entry + "/case.txt")
      << "# ptxdiff case 1\nvariant: add.u32\noperands: 0x1 0x2\n";
  std::ofstream(entry + "/meta.txt")
      << "backend: ptx-cmd 2 (/bin/true {ptx} {in} {out}, PTX for sm_80)\n"
         "count: 1\n";
  const CliRun r =
      Ptxdiff({"repro", "crash~ptx-cmd~crash~add.u32", "--dir", dir});
  EXPECT_THAT(r.out, StartsWith("repro: replaying on the backend it was found "
                                "on: --backend ptx-cmd:/bin/true {ptx} {in} "
                                "{out} --arch sm_80\n"))
      << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PTX for sm_80)"));
  EXPECT_THAT(r.out, Not(HasSubstr("sm_80, PTX for")));
  // The twelfth fault run: one the program lane filed names its backend as
  // its presenter does ("ptx-cmd sm_90: COMMAND"); repro said it did not
  // record how to start it, exit 2.
  std::ofstream(entry + "/meta.txt")
      << "backend: ptx-cmd sm_75: /bin/true {ptx} {in} {out}\ncount: 1\n";
  const CliRun lane =
      Ptxdiff({"repro", "crash~ptx-cmd~crash~add.u32", "--dir", dir});
  EXPECT_THAT(lane.out,
              StartsWith("repro: replaying on the backend it was found on: "
                         "--backend ptx-cmd:/bin/true {ptx} {in} {out} --arch "
                         "sm_75\n"))
      << lane.out << lane.err;
}

// Issue 65: an entry whose meta.txt is garbage (no backend line) is said to
// be damaged, not "found on ?".
TEST(TriageCommandsTest, AnEntryWithAGarbageMetaSaysItIsDamaged) {
  const std::string dir = TempDirFor("garbage_meta");
  const std::string entry = dir + "/crash~ptx-cmd~crash~add.u32";
  ASSERT_EQ(mkdir(entry.c_str(), 0755), 0) << entry;
  std::ofstream(entry + "/case.txt")
      << "# ptxdiff case 1\nvariant: add.u32\noperands: 0x1 0x2\n";
  std::ofstream(entry + "/meta.txt") << "\x1b[2J garbage \xff\xfe\n";
  const CliRun r =
      Ptxdiff({"repro", "crash~ptx-cmd~crash~add.u32", "--dir", dir});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(entry + "/meta.txt is damaged: it names no "
                               "backend"));
  EXPECT_THAT(r.err, Not(HasSubstr("found on ?")));
}

// Third fault run: `repro ENTRY` of an entry whose meta.txt or case.txt is
// a FIFO blocked for ever (`triage list` says the entry is damaged).
TEST(TriageCommandsTest, AnEntryWithAFifoForAFileSaysItIsDamaged) {
  const std::string dir = TempDirFor("fifo_entry");
  const std::string entry = dir + "/crash~ptx-cmd~crash~add.u32";
  ASSERT_EQ(mkdir(entry.c_str(), 0755), 0) << entry;
  std::ofstream(entry + "/case.txt")
      << "# ptxdiff case 1\nvariant: add.u32\noperands: 0x1 0x2\n";
  ASSERT_EQ(mkfifo((entry + "/meta.txt").c_str(), 0644), 0);
  CliRun r = Ptxdiff({"repro", "crash~ptx-cmd~crash~add.u32", "--dir", dir});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(entry + "/meta.txt is a FIFO, not a file"));
  ASSERT_EQ(unlink((entry + "/case.txt").c_str()), 0);
  ASSERT_EQ(mkfifo((entry + "/case.txt").c_str(), 0644), 0);
  r = Ptxdiff({"repro", entry, "--backend", "oracle"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(entry + "/case.txt is a FIFO, not a file"));
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
  f.detail =
      "unisolated hang of a batch of 3 tuple(s) not narrowed to one tuple: "
      "budget";
  const std::string entry = store->File(f)->entry;
  EXPECT_EQ(entry, "hang~faulty~unisolated-hang~" + BatchName(f.batch));

  CliRun r = Ptxdiff({"triage", "list", "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(
      r.out,
      HasSubstr("     1  " + entry +
                ": unisolated hang of a batch of 3 "
                "tuple(s) not narrowed to one tuple: budget (a batch of 3 "
                "tuples of add.cc.s32, add.sat.s32)\n"));
  EXPECT_EQ(r.err, "");
  r = Ptxdiff({"triage", "show", entry, "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("operands: 0x7fffffff 0x00000001\n"));

  // A backend that hangs on add.sat.s32 with a = MAX: the batch faults it.
  const std::string script = dir + "/hang_worker.sh";
  std::ofstream(script)
      << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
      << " --fault=hang-on=add.sat.s32 --when-operand=0:2147483647\n";
  chmod(script.c_str(), 0755);
  r = Ptxdiff({"repro", entry, "--backend", "exec:" + script, "--timeout", "1",
               "--dir", triage});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(
      r.out,
      HasSubstr("repro: 3 tuples of 2 variants (add.cc.s32, ...) on faulty"));
  EXPECT_THAT(r.out, HasSubstr(", 1 faulty batches\n"));
  // And `minimize` bisects it to the tuple that hangs.
  r = Ptxdiff({"minimize", triage + "/" + entry + "/case.txt", "--backend",
               "exec:" + script, "--timeout", "1", "--dir",
               dir + "/minimized"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("filed new entry " + dir +
                               "/minimized/hang~faulty~hang~add.sat.s32\n"));
  EXPECT_THAT(r.out, HasSubstr("operands: 0x7fffffff 0x00000001\n"));
  // On a backend that does not hang, all three are judged.
  r = Ptxdiff({"repro", entry, "--backend", "oracle", "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(
      r.out,
      HasSubstr("repro: 3 tuples of 2 variants (add.cc.s32, ...) on oracle"));
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
  std::ofstream(dir + "/" + entry + "/meta.txt", std::ios::app)
      << "\x1b[2J garbage\n";

  CliRun r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out,
              HasSubstr("     1  value-mismatch~faulty~in-range~add.s32  "
                        "(DAMAGED: see below)\n"));
  EXPECT_THAT(r.out, HasSubstr("1 entry, 1 root cause, 1 damaged"));
  EXPECT_EQ(r.err,
            "ptxdiff triage: warning: entry " + entry +
                ": meta.txt has 1 line that is not 'key: value' (line 9: "
                "\"\\x1b[2J garbage\")\n");
  r = Ptxdiff({"triage", "show", entry, "--dir", dir});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(
      r.out,
      StartsWith("# DAMAGED: meta.txt has 1 line that is not 'key: value'"));
  EXPECT_THAT(r.out, HasSubstr("reading: spec\n\\x1b[2J garbage\n"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

// A program entry's case.txt is parsed by `triage list` as a program (triage
// is given program/'s parser): one that does not read back is damage.
TEST(TriageCommandsTest, ListSaysAProgramCaseThatDoesNotParseIsDamaged) {
  const std::string dir = TempDirFor("damaged_program") + "/triage";
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string entry = store->File(AProgramMismatch())->entry;
  CliRun r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_THAT(r.out, HasSubstr("1 entry, 1 root cause, in ")) << r.out << r.err;

  std::ofstream(dir + "/" + entry + "/case.txt", std::ios::trunc)
      << "# ptxdiff program 1\nnot.an.instruction %r;\noutput %r\n";
  r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("1 entry, 1 root cause, 1 damaged"));
  EXPECT_THAT(r.err, HasSubstr("entry " + entry + ": case.txt does not parse"));
}

// Issue 28, item 8: a crash file holds only the input, so `repro` without
// --backend replayed it on the default backend and said "agree". Crash
// mode records each crash's backend beside the crash files (fuzzers/
// differential_target.h); repro replays there, or says it cannot know.
TEST(TriageCommandsTest, ACrashFileReplaysOnTheBackendItWasFoundOn) {
  const std::string dir = TempDirFor("crash_origin");
  const std::string crash = dir + "/crash-0123";
  const std::string input = WriteVaddCrash(crash);
  const std::string backend = WrongVaddBackend(dir);

  // Not recorded: it says which backend it replays on, and why that may not
  // be the one that crashed.
  CliRun r = Ptxdiff({"repro", crash});
  EXPECT_THAT(r.out, HasSubstr("repro: replaying on "));
  EXPECT_THAT(
      r.out,
      HasSubstr("the default backend: the crash was found on the backend its "
                "fuzzer ran against, which the file does not record"));
  // Recorded: without --backend it replays there (and disagrees, as it did).
  std::ofstream(dir + "/crash-backends.txt") << VaddCrashRecord(input, backend);
  r = Ptxdiff({"repro", crash});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_THAT(
      r.out,
      StartsWith("repro: found as `value-mismatch faulty vadd.u32.u32.u32 "
                 "in-range` on " +
                 backend + " (" + dir +
                 "/crash-backends.txt): replaying it there\n"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
  // On another backend, as asked, it says where it was found.
  r = Ptxdiff({"repro", crash, "--backend", "oracle"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("on " + backend + ", not on oracle\n"));
}

// The eighteenth fault run: `minimize` of a crash file ran it on the default
// backend and said "no disagreement", where `repro` replays it where crash
// mode recorded it. It minimizes it there, and an entry's case on the
// entry's backend, as `repro` does.
TEST(TriageCommandsTest, MinimizeRunsACaseWhereItWasFound) {
  const std::string dir = TempDirFor("minimize_origin");
  const std::string crash = dir + "/crash-0123";
  const std::string input = WriteVaddCrash(crash);
  std::ofstream(dir + "/crash-backends.txt")
      << VaddCrashRecord(input, WrongVaddBackend(dir));
  const std::string triage = dir + "/triage";
  CliRun r = Ptxdiff({"minimize", crash, "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("minimize: found as `value-mismatch faulty "
                                "vadd.u32.u32.u32 in-range` on " +
                                WrongVaddBackend(dir)));
  EXPECT_THAT(r.out, HasSubstr("minimize: filed new entry " + triage +
                               "/value-mismatch~faulty~"));
  // Its entry's case, minimized again, runs on the entry's backend: an
  // exec: worker's path is not recorded, which it says (exit 2), where it
  // ran on the default backend and said "no disagreement" (exit 1).
  std::vector<std::string> names;
  for (const std::string& e : FilesIn(triage))
    if (absl::StrContains(e, "~vadd.")) names.push_back(e);
  ASSERT_EQ(names.size(), 1u);
  r = Ptxdiff({"minimize", names[0] + "/case.txt", "--dir", triage});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("which it does not record how to start"));
  EXPECT_THAT(r.out, Not(HasSubstr("no disagreement")));
}

// Fifteenth fault run: beside a damaged crash-backends.txt, `repro` said the
// crash's backend was one "which the file does not record": a FIFO there was
// not said, and a record after damage on its line (a write cut short) was not
// found. The first is said as unreadable, the second is found.
TEST(TriageCommandsTest, ADamagedCrashRecordIsSaidAndARecordAfterDamageFound) {
  const std::string dir = TempDirFor("crash_origin_damaged");
  const std::string crash = dir + "/crash-4567";
  const std::string input = WriteVaddCrash(crash);
  const std::string record = dir + "/crash-backends.txt";
  ASSERT_EQ(mkfifo(record.c_str(), 0644), 0);
  CliRun r = Ptxdiff({"repro", crash});
  EXPECT_THAT(r.out, HasSubstr("the record of the backend each crash was "
                               "found on cannot be read (" +
                               record + " is not a regular file"));
  ASSERT_EQ(unlink(record.c_str()), 0);
  const std::string backend = WrongVaddBackend(dir);
  std::ofstream(record, std::ios::binary)
      << std::string(300, '\x7f') << "cut sh"
      << VaddCrashRecord(input, backend);
  r = Ptxdiff({"repro", crash});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_THAT(r.out, StartsWith("repro: found as `value-mismatch faulty "
                                "vadd.u32.u32.u32 in-range` on " +
                                backend));
}

// Third fault run: `triage merge out/triage` with the default --dir (the
// same directory) said "0 new entries", exit 0, and doubled every count.
TEST(TriageCommandsTest, MergingADirectoryIntoItselfIsRefused) {
  const std::string top = TempDirFor("self_merge");
  const std::string dir = top + "/triage";
  std::ofstream(top + "/case.txt") << kCase;
  CliRun r = Ptxdiff({"minimize", top + "/case.txt", "--backend",
                      WrongVaddBackend(top), "--dir", dir});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  r = Ptxdiff({"triage", "merge", dir + "/./", "--dir", dir});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("is the triage directory merged into"));
  r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_THAT(r.out, HasSubstr("1 entry, 1 root cause"));
  EXPECT_THAT(r.out, HasSubstr("1 time)"));
}

// An entry of a crash of add.u32 counted `count` times, made by hand in
// `dir` (made if missing): its path.
std::string CrashEntryIn(const std::string& dir, int count = 4) {
  const std::string entry = dir + "/crash~ptx-cmd~crash~add.u32";
  EXPECT_TRUE(MakeDirs(entry).ok()) << entry;
  std::ofstream(entry + "/case.txt")
      << "# ptxdiff case 1\nvariant: add.u32\noperands: 0x1 0x2\n"
         "kind: crash\n";
  std::ofstream(entry + "/meta.txt")
      << "backend: oracle 1\ncount: " << count << "\n";
  return entry;
}

// Third fault run: `triage merge` copied a new entry's case, repro, meta
// and input, not a crash's or hang's output.txt (what the tool printed).
TEST(TriageCommandsTest, MergeKeepsAFaultsOutput) {
  const std::string top = TempDirFor("merge_output");
  const std::string entry = CrashEntryIn(top + "/from", 1);
  std::ofstream(entry + "/output.txt") << "Segmentation fault at 0x0\n";
  const CliRun r =
      Ptxdiff({"triage", "merge", top + "/from", "--dir", top + "/to"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::ifstream copied(top + "/to/crash~ptx-cmd~crash~add.u32/output.txt");
  std::string line;
  EXPECT_TRUE(std::getline(copied, line));
  EXPECT_EQ(line, "Segmentation fault at 0x0");
}

// Fifteenth fault run: `triage merge ENTRY` (an entry's directory) said "0
// new entries", exit 0; `triage merge T T ./T/` added T's counts three
// times. An entry is refused, naming what to merge; a source named again is
// merged once, and said.
TEST(TriageCommandsTest, MergeRefusesAnEntryAndMergesASourceOnce) {
  const std::string top = TempDirFor("merge_once");
  const std::string entry = CrashEntryIn(top + "/from", 3);
  CliRun r = Ptxdiff({"triage", "merge", entry, "--dir", top + "/to"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(entry + " is a triage entry, not a triage "
                                       "directory"));
  r = Ptxdiff({"triage", "merge", top + "/from", top + "/from",
               top + "/./from/", "--dir", top + "/to"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(top + "/from was named before in this merge: "
                                     "merged once"));
  r = Ptxdiff({"triage", "list", "--dir", top + "/to"});
  EXPECT_THAT(r.out, HasSubstr("3 times)")) << r.out;
}

// The twelfth fault run: a Ctrl-C of `minimize` of a tuple case ended it
// by the signal, exit 130 and nothing printed. It says nothing was filed.
TEST(TriageCommandsTest, ACtrlCOfMinimizeOfATupleCaseSaysNothingWasFiled) {
  const std::string dir = TempDirFor("minimize_ctrl_c");
  std::ofstream(dir + "/case.txt") << kCase;
  CliRun r{};
  {
    const StopOnceHandled stop;
    r = Ptxdiff({"minimize", dir + "/case.txt", "--backend",
                 WrongVaddBackend(dir), "--dir", dir + "/triage"});
    EXPECT_TRUE(stop.stopped());
  }
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("minimize: interrupted: nothing filed of " +
                               dir + "/case.txt"));
  EXPECT_THAT(Ptxdiff({"triage", "list", "--dir", dir + "/triage"}).out,
              HasSubstr("0 entries"));
}

// The seventeenth fault run: `minimize` of a tuple case on a tool that
// never ran its variant said "no disagreement", as for a case that agrees.
// It was not judged: exit 3, with the tool's reason.
TEST(TriageCommandsTest, MinimizeOfACaseTheToolDeclinesIsNotJudged) {
  const std::string dir = TempDirFor("minimize_declined");
  std::ofstream(dir + "/case.txt") << kCase;
  const CliRun r = Ptxdiff({"minimize", dir + "/case.txt", "--backend",
                            absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                                         " --refuse=vadd {ptx} {in} {out}"),
                            "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("minimize: " + dir +
                               "/case.txt was not judged "
                               "on ptx-cmd"));
  EXPECT_THAT(r.out, HasSubstr(": declined: "));
  EXPECT_THAT(r.out, Not(HasSubstr("no disagreement")));
  // The tool's own reason (the eighteenth fault run: "no reason given").
  EXPECT_THAT(r.out, Not(HasSubstr("no reason given")));
  EXPECT_THAT(r.out, HasSubstr("unknown instruction vadd")) << r.out;
}

// The seventeenth fault run: `repro ENTRY` whose meta.txt was lost replayed
// on the default backend without a word ("verdict: agree", exit 0). Its
// backend is not known: said, exit 2; a meta.txt that links to a device is
// said as damaged, not "larger than" its bound.
TEST(TriageCommandsTest, ReproOfAnEntryWithoutItsMetaSaysSo) {
  const std::string dir = TempDirFor("repro_no_meta");
  const std::string entry = CrashEntryIn(dir);
  ASSERT_EQ(unlink((entry + "/meta.txt").c_str()), 0);
  CliRun r = Ptxdiff({"repro", entry});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(entry + "/meta.txt is missing: the entry does "
                                       "not say which backend it was found "
                                       "on; pass --backend"));
  ASSERT_EQ(symlink("/dev/zero", (entry + "/meta.txt").c_str()), 0);
  r = Ptxdiff({"repro", entry});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("meta.txt is damaged: " + entry +
                               "/meta.txt is not a regular file"));
}

// The sixteenth fault run: a Ctrl-C of `triage merge` ended it without a
// word, part merged. It stops between entries and says how far it got.
TEST(TriageCommandsTest, ACtrlCOfAMergeSaysHowFarItGot) {
  const std::string top = TempDirFor("merge_ctrl_c");
  const std::string entry = CrashEntryIn(top + "/from", 3);
  CliRun r{};
  {
    const StopOnceHandled stop;
    r = Ptxdiff({"triage", "merge", top + "/from", "--dir", top + "/to"});
    ASSERT_TRUE(stop.stopped());
  }
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("interrupted; 0 of the 1 entries of " + top +
                               "/from were merged before"));
  EXPECT_THAT(Ptxdiff({"triage", "list", "--dir", top + "/to"}).out,
              HasSubstr("0 entries"));
}

// Sixth fault run: `triage merge SRC` passed over SRC's directories whose
// names are no entry names (an entry's with `.ü` added) without a word.
// Each is named on stderr; the rest is merged.
TEST(TriageCommandsTest, MergeNamesEachDirectoryItSkips) {
  const std::string top = TempDirFor("merge_skips");
  const std::string entry = top + "/from/crash~ptx-cmd~crash~add.u32";
  const std::string renamed = entry + ".\xc3\xbc";
  for (const std::string& dir :
       {entry, renamed, top + "/from/.pending", top + "/from/a\nb"}) {
    ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0) << dir;
  }
  for (const std::string& dir : {entry, renamed}) {
    std::ofstream(dir + "/case.txt")
        << "# ptxdiff case 1\nvariant: add.u32\noperands: 0x1 0x2\n"
           "kind: crash\n";
    std::ofstream(dir + "/meta.txt") << "backend: oracle 1\ncount: 1\n";
  }
  const CliRun r =
      Ptxdiff({"triage", "merge", top + "/from", "--dir", top + "/to"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged " + top + "/from: 1 new entries"));
  EXPECT_EQ(r.err, "ptxdiff triage: skipped " + top +
                       "/from/a\\x0ab: not an entry name\n"
                       "ptxdiff triage: skipped " +
                       top +
                       "/from/crash~ptx-cmd~crash~add.u32.\\xc3\\xbc: not "
                       "an entry name\n");
}

// Ninth fault run: `triage merge SRC` with findings not yet filed in
// SRC/.pending/ said "1 new entries" and nothing of them, and `triage list`
// did not mention them either. Each says them now (merge does not file
// them: a campaign on SRC does).
TEST(TriageCommandsTest, ListAndMergeSayTheFindingsNotYetFiled) {
  const std::string top = TempDirFor("pending_said");
  const std::string from = top + "/from";
  ASSERT_EQ(std::system(("mkdir -p '" + from + "/.pending'").c_str()), 0);
  // An earlier version's journal of four mismatches (triage/testdata).
  std::ofstream(from + "/.pending/999999997.journal")
      << std::ifstream(std::string(PTXDIFF_SOURCE_DIR) +
                       "/triage/testdata/c87fd0f/pending/999999997.journal")
             .rdbuf();
  CliRun r = Ptxdiff({"triage", "list", "--dir", from});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 findings not yet filed in " + from +
                               "/.pending/: the next campaign"));
  r = Ptxdiff({"triage", "merge", from, "--dir", top + "/to"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 findings not yet filed in " + from +
                               "/.pending/ (not merged)"));
  r = Ptxdiff({"triage", "list", "--dir", top + "/to"});
  EXPECT_THAT(r.out, Not(HasSubstr("not yet filed")));
}

// Third fault run: `triage mark E --explained $'known\ncount: 999'` wrote
// the reason's second line into meta.txt as a key: the count said 999.
TEST(TriageCommandsTest, MarkTakesAReasonOfOneLine) {
  const std::string dir = TempDirFor("mark_lines");
  const std::string entry = CrashEntryIn(dir);
  CliRun r = Ptxdiff({"triage", "mark", "crash~ptx-cmd~crash~add.u32",
                      "--explained", "known\ncount: 999", "--dir", dir});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--explained takes one line of text"));
  r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_THAT(r.out, HasSubstr("1 entry, 4 times"));
}

// The fourteenth fault run: `triage mark` of an entry whose meta.txt was
// garbage rebuilt it (count 0, its backend line gone) and said nothing of
// it. It says so on stderr, naming the kept copy.
TEST(TriageCommandsTest, MarkSaysWhatItRepairedToMark) {
  const std::string dir = TempDirFor("mark_damaged");
  const std::string entry = CrashEntryIn(dir);
  ASSERT_TRUE(
      WriteFile(entry + "/meta.txt", std::string("garbage\0\xff", 9)).ok());
  const CliRun r = Ptxdiff({"triage", "mark", "crash~ptx-cmd~crash~add.u32",
                            "--explained", "known", "--dir", dir});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("marked crash~ptx-cmd~crash~add.u32"));
  EXPECT_THAT(r.err,
              HasSubstr("marking crash~ptx-cmd~crash~add.u32: meta.txt"));
  EXPECT_THAT(r.err, HasSubstr("kept as meta.txt.damaged-"));
}

// The fifteenth fault run: with INDEX.md a directory, `triage mark` said
// "cannot rename into …/INDEX.md" and exit 2, though the entry was marked.
TEST(TriageCommandsTest, MarkOfAnEntryWhoseIndexCannotBeWrittenIsAMark) {
  const std::string dir = TempDirFor("mark_index_dir");
  CrashEntryIn(dir);
  ASSERT_EQ(mkdir((dir + "/INDEX.md").c_str(), 0755), 0);
  const CliRun r = Ptxdiff({"triage", "mark", "crash~ptx-cmd~crash~add.u32",
                            "--explained", "known", "--dir", dir});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("INDEX.md was not rewritten"));
  EXPECT_THAT(*ReadFile(dir + "/crash~ptx-cmd~crash~add.u32/meta.txt"),
              HasSubstr("explained: known"));
}

// Twelfth fault run: `minimize` of a program case without its header line
// said it was no text case and, as a crash file, named no known variant. It
// says what the file looks like, and what it lacks.
TEST(TriageCommandsTest, AProgramCaseWithoutItsHeaderIsSaidAsThat) {
  const std::string dir = TempDirFor("headless_program");
  const std::string file = dir + "/case2.ptxprog";
  std::ofstream(file) << "input %a .b32 0x5\nadd.u32 %r1, %a, 1;\n"
                         "output %r1\n";
  for (const char* command : {"minimize", "repro"}) {
    const CliRun r =
        Ptxdiff({command, file, "--backend", "oracle", "--dir", dir + "/t"});
    EXPECT_EQ(r.code, 2) << command << ": " << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(file + ": a program case (it has "
                                        "`input`/`output` lines) without its "
                                        "first line `# ptxdiff program 1`"))
        << command;
  }
}

// Thirteenth fault run: `triage show D/ENTRY` (an entry's path, as `repro`
// takes) without --dir looked in out/triage; with `--dir D` it said the
// path was no entry name. Either way it is that entry, and so for `mark`.
TEST(TriageCommandsTest, ShowAndMarkTakeAnEntrysPath) {
  const std::string dir = TempDirFor("entry_path");
  const std::string entry = CrashEntryIn(dir);
  // The seventeenth fault run: a link to the entry, and "//", too.
  const std::string link = TempDirFor("entry_path_link") + "/the-entry";
  ASSERT_EQ(symlink(entry.c_str(), link.c_str()), 0);
  const std::string doubled = dir + "//" + entry.substr(entry.rfind('/') + 1);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"triage", "show", entry},
        {"triage", "show", entry + "/", "--dir", dir},
        {"triage", "show", entry, "--dir", dir + "/."},
        {"triage", "show", link},
        {"triage", "show", doubled},
        // The eighteenth fault run: an entry's case, as `repro` takes it.
        {"triage", "show", entry + "/case.txt"},
        {"triage", "show", entry + "/case.txt", "--dir", dir}}) {
    const CliRun r = Ptxdiff(args);
    EXPECT_EQ(r.code, 0) << args[2] << ": " << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("variant: add.u32")) << args[2];
  }
  CliRun r = Ptxdiff({"triage", "mark", entry, "--explained", "known"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_THAT(r.out, HasSubstr("crash~ptx-cmd~crash~add.u32  (explained)"))
      << r.out;
}

// Tenth fault run: `triage list` and `show` refused a read-only directory
// ("is not writable: cannot create the lock file"). They only read, and
// take no lock; a change (mark) still needs it. Here `.lock` is a directory,
// which no process can lock, root on a read-only mount included.
TEST(TriageCommandsTest, ListAndShowReadADirectoryTheyCannotLock) {
  const std::string dir = TempDirFor("unlockable");
  const std::string entry = CrashEntryIn(dir);
  ASSERT_EQ(mkdir((dir + "/.lock").c_str(), 0755), 0);
  CliRun r = Ptxdiff({"triage", "list", "--dir", dir});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("crash~ptx-cmd~crash~add.u32"));
  r = Ptxdiff({"triage", "show", "crash~ptx-cmd~crash~add.u32", "--dir", dir});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("variant: add.u32"));
  r = Ptxdiff({"triage", "mark", "crash~ptx-cmd~crash~add.u32", "--explained",
               "known", "--dir", dir});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("is not writable: cannot create the lock file"));
  // A file where the directory should be is said as that (it was "does not
  // exist", and where a command makes it "cannot create ...: File exists").
  r = Ptxdiff({"triage", "list", "--dir", entry + "/case.txt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("case.txt is not a directory"));
  r = Ptxdiff({"minimize", entry + "/case.txt", "--backend", "oracle", "--dir",
               entry + "/case.txt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("case.txt is not a directory"));
}

// The eighteenth fault run: `triage merge` refused a read-only source ("is
// not writable: cannot create the lock file"), which it only reads. Here
// the source's `.lock` is a directory, which no process can lock.
TEST(TriageCommandsTest, MergeReadsASourceItCannotLock) {
  const std::string dir = TempDirFor("merge_unlockable");
  const std::string source = dir + "/source";
  CrashEntryIn(source);
  ASSERT_EQ(mkdir((source + "/.lock").c_str(), 0755), 0);
  const CliRun r = Ptxdiff({"triage", "merge", source, "--dir", dir + "/into"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged " + source + ": 1 new entries"));
  EXPECT_TRUE(IsDirectory(dir + "/into/crash~ptx-cmd~crash~add.u32"));
}

// The twelfth fault run: `triage merge` copied damaged entries without a
// word, one that is a link to /etc as an empty entry. A damaged entry is
// merged as it is and said; one whose case.txt cannot be read is not.
TEST(TriageCommandsTest, MergeSaysTheDamagedEntriesOfItsSource) {
  const std::string dir = TempDirFor("merge_damaged");
  const std::string source = dir + "/source";
  CrashEntryIn(source);
  const std::string damaged = source + "/crash~ptx-cmd~crash~sub.u32";
  ASSERT_TRUE(MakeDirs(damaged).ok());
  std::ofstream(damaged + "/case.txt")
      << "# ptxdiff case 1\nvariant: sub.u32\noperands: 0x1 0x2\n"
         "kind: crash\n";
  std::ofstream(damaged + "/meta.txt") << "backend: oracle 1\ncount: abc\n";
  ASSERT_EQ(
      symlink("/etc", (source + "/crash~ptx-cmd~crash~mul.lo.u32").c_str()), 0);
  const CliRun r = Ptxdiff({"triage", "merge", source, "--dir", dir + "/into"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged " + source + ": 2 new entries"));
  EXPECT_THAT(r.err, HasSubstr("warning: " + source +
                               "/crash~ptx-cmd~crash~sub.u32 is damaged ("));
  EXPECT_THAT(r.err, HasSubstr("): merged as it is\n"));
  EXPECT_THAT(r.err, HasSubstr("/crash~ptx-cmd~crash~mul.lo.u32 is damaged ("));
  EXPECT_THAT(r.err, HasSubstr("): not merged, its case.txt cannot be read"));
  EXPECT_FALSE(IsDirectory(dir + "/into/crash~ptx-cmd~crash~mul.lo.u32"));
}

// The twenty-second fault run: a Ctrl-C of `triage merge` while it waited
// for the directory's lock killed it by the signal, nothing said. It ends
// the wait, said, exit 130.
TEST(TriageCommandsTest, ACtrlCWhileAMergeWaitsForTheLockIsSaid) {
  const std::string dir = TempDirFor("merge_lock_wait");
  CrashEntryIn(dir + "/source");
  ASSERT_TRUE(MakeDirs(dir + "/into").ok());
  const int held =
      open((dir + "/into/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  CliRun r;
  {
    const StopOnceHandled stop;
    r = Ptxdiff({"triage", "merge", dir + "/source", "--dir", dir + "/into"});
  }
  close(held);
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  EXPECT_THAT(
      r.err, HasSubstr("interrupted while waiting for " + dir + "/into/.lock"));
}

TEST(TriageCommandsTest, BadTriageDirectoriesAreExitTwo) {
  const std::string dir = TempDirFor("baddir");
  std::ofstream(dir + "/case.txt") << kCase;
  CliRun r = Ptxdiff({"minimize", dir + "/case.txt", "--backend", "oracle",
                      "--dir", "/proc/self/fdinfo"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("is not writable"));
  r = Ptxdiff({"triage", "list", "--dir", dir + "/none"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
  EXPECT_EQ(Ptxdiff({"triage", "show", "nonsense", "--dir", dir}).code, 2);
  EXPECT_EQ(Ptxdiff({"triage", "frob", "--dir", dir}).code, 2);
  EXPECT_EQ(Ptxdiff({"minimize", "--backend", "oracle"}).code, 2);
}

}  // namespace
}  // namespace ptxdiff
