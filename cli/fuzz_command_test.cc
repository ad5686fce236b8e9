// `ptxdiff fuzz` (cli/fuzz_command.h): with a stand-in fuzzer, and whole runs
// on libFuzzer's own loop.

#include "cli/fuzz_command.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "cli/fuzz_summary_lines.h"
#include "cli/testing/fake_fuzzer.h"
#include "cli/testing/run_ptxdiff.h"
#include "common/files.h"
#include "common/testing/fifo_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "triage/pending_journal.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

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
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: could not write under --out " +
                               dir + "/out (1 failed write: cannot write " +
                               dir + "/out/fuzz.log"));
  EXPECT_THAT(r.out, HasSubstr("fuzz:   stopped early: 1 write(s) under " +
                               dir + "/out"));
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
          "trap 'exit 72' INT\ni=0\nwhile [ $i -lt 300 ]; do sleep 0.1; "
          "i=$((i+1)); done",
      {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage",
       "--progress-seconds", "1"});
  const std::string file = dir + "/out/corpus/differential/" + name;
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("ptxdiff fuzz: error: cannot write " + file + ": "));
  EXPECT_THAT(r.out, HasSubstr("fuzz: stopping: a write under --out failed"));
  EXPECT_THAT(r.err, HasSubstr("could not write under --out"));
  EXPECT_NE(access(file.c_str(), F_OK), 0)
      << "the empty file is still in the corpus";
}

// Seventh fault run of issue 65: a corpus that held empty files before the
// run (an earlier run's on a full disk, killed before it removed them; or
// the user's) was taken for this run's failed writes: the resumed run
// stopped at its first progress line, "cannot write ...: libFuzzer left it
// empty (76698336 KiB free now)", exit 1, and the files were removed.
TEST(FuzzCommandTest, EmptyCorpusFilesFromBeforeTheRunAreNoFailedWrites) {
  const std::string dir = TempDirFor("fuzz_empty_before");
  const std::string corpus = dir + "/out/corpus/differential";
  ASSERT_TRUE(MakeDirs(corpus).ok());
  const std::string old = corpus + "/0123456789abcdef0123456789abcdef01234567";
  ASSERT_TRUE(WriteFile(old, "").ok());
  std::system(("touch -d '1 hour ago' '" + old + "'").c_str());
  const CliRun r =
      FuzzWith(dir, kSomeStats, "sleep 3",
               {"--backend", "oracle", "--out", dir + "/out", "--dir",
                dir + "/triage", "--progress-seconds", "1"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("cannot write")));
  EXPECT_EQ(access(old.c_str(), F_OK), 0) << "the earlier empty file is gone";
}

// Issue 28, item 2: the fuzz target's own failed writes under --out (its
// stats file: `ptxdiff: cannot write ...` on its stderr) are errors too.
TEST(FuzzCommandTest, AStatsFileTheFuzzerCouldNotWriteFailsTheRun) {
  const std::string dir = TempDirFor("fuzz_stats_unwritable");
  const CliRun r =
      FuzzWithStats(dir, kSomeStats,
                    "echo 'ptxdiff: cannot write OUT/stats/1.stats: cannot "
                    "create OUT/stats/.tmp: No space "
                    "left on device' >&2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(
      r.err,
      HasSubstr("ptxdiff fuzz: error: cannot write OUT/stats/1.stats: cannot "
                "create OUT/stats/.tmp: No space left on device\n"));
}

// The twenty-first fault run: a backend that cannot start here (cuda
// without a GPU, a missing exec: path) was said on stdout, exit 1, where
// every other command says it on stderr, exit 2.
TEST(FuzzCommandTest, ABackendThatCannotStartIsExitTwo) {
  const std::string dir = TempDirFor("fuzz_cannot_start");
  const CliRun r = FuzzWithStats(
      dir, "inputs=0\n",
      "echo \"ptxdiff: worker 'w --backend=cuda' failed its handshake: no "
      "NVIDIA driver on this machine\" >&2; exit 1");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: worker 'w --backend=cuda' failed "
                               "its handshake: no NVIDIA driver"));
  EXPECT_THAT(r.err, HasSubstr("ptxdiff fuzz: nothing was checked"));
}

// ... and of the hundreds a full disk leaves, the first few are said, the
// rest counted.
TEST(FuzzCommandTest, ManyCorpusFilesLeftEmptyAreCountedNotEachSaid) {
  const std::string dir = TempDirFor("fuzz_empty_corpus_files");
  const CliRun r = FuzzWith(
      dir, kSomeStats,
      "for i in 1 2 3 4 5 6 7; do : > "
      "\"$1/0123456789abcdef0123456789abcdef0123456$i\"; "
      "touch -d '1 minute ago' "
      "\"$1/0123456789abcdef0123456789abcdef0123456$i\"; done",
      {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 1) << r.out;
  size_t said = 0;
  for (size_t at = 0;
       (at = r.err.find("error: cannot write ", at)) != std::string::npos;
       ++at) {
    ++said;
  }
  EXPECT_EQ(said, 5u) << r.err;
  EXPECT_THAT(
      r.err,
      HasSubstr("ptxdiff fuzz: error: 2 more failed write(s) under --out\n"));
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
  // A run that planned no variant through says so (a slow backend's first
  // minute), not nothing.
  EXPECT_THAT(r.out, HasSubstr("fuzz:   planned tiers done for 0 of 495 "
                               "variants"));
}

// Issue 28, item 7: a bad backend was exit 1 after the output directories
// were made; now exit 2 before anything is touched, as in eval and sweep.
TEST(FuzzCommandTest, ABadBackendIsExitTwoBeforeAnyDirectoryIsMade) {
  const std::string dir = TempDirFor("fuzz_bad_backend");
  const CliRun r = FuzzWith(dir, "", "",
                            {"--backend", "no-such-backend", "--out",
                             dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              StartsWith("ptxdiff fuzz: unknown backend 'no-such-backend'"));
  EXPECT_NE(access((dir + "/out").c_str(), F_OK), 0);
  EXPECT_NE(access((dir + "/triage").c_str(), F_OK), 0);
}

// Fifteenth fault run: `fuzz` without --backend ignored PTXDIFF_BACKEND, the
// target's documented variable (the run went to the default, said only in
// the summary). It is the backend when --backend is not given, and said.
TEST(FuzzCommandTest, PtxdiffBackendIsTheBackendWithoutTheFlag) {
  const std::string dir = TempDirFor("fuzz_backend_from_env");
  setenv("PTXDIFF_BACKEND", "oracle", 1);
  const CliRun r = FuzzWith(
      dir, kSomeStats, "echo \"$PTXDIFF_BACKEND\" > '" + dir + "/backend.txt'",
      {"--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir + "/backend.txt");
  std::string backend;
  std::getline(in, backend);
  EXPECT_EQ(backend, "oracle");
  EXPECT_THAT(r.out, HasSubstr("fuzz: backend oracle: from PTXDIFF_BACKEND"));
}

// Ninth fault run: a FIFO at OUT/fuzz.log or OUT/differential.dict (or at
// DIR/differential.dict for seed-corpus) blocked the command in open() for
// ever, --max-time or not. Each is exit 2 at once, naming the file.
TEST(FuzzCommandTest, AFifoWhereAFileIsWrittenIsExitTwoNotAWait) {
  for (const std::string name : {"fuzz.log", "differential.dict"}) {
    const std::string dir = TempDirFor("fuzz_fifo_" + name);
    ASSERT_EQ(mkdir((dir + "/out").c_str(), 0755), 0);
    const std::string fifo = dir + "/out/" + name;
    CliRun r{};
    {
      const LateFifoReader reader(fifo, absl::Seconds(8));
      ASSERT_TRUE(reader.made());
      r = FuzzWithStats(dir, kSomeStats);
      EXPECT_FALSE(reader.opened()) << name << ": the run waited on the FIFO";
    }
    EXPECT_EQ(r.code, 2) << name << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(fifo + " is a FIFO")) << name;
  }
  const std::string dir = TempDirFor("seed_corpus_fifo");
  const std::string fifo = dir + "/differential.dict";
  CliRun r{};
  {
    const LateFifoReader reader(fifo, absl::Seconds(8));
    ASSERT_TRUE(reader.made());
    r = Ptxdiff({"seed-corpus", dir});
    EXPECT_FALSE(reader.opened()) << "seed-corpus waited on the FIFO";
  }
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(fifo + " is a FIFO"));
  // The fifteenth fault run: a link there had the file it names become the
  // dictionary. The link is replaced; the file stays.
  const std::string other = dir + "/elsewhere.txt";
  ASSERT_TRUE(WriteFile(other, "mine\n").ok());
  ASSERT_EQ(unlink(fifo.c_str()), 0);
  ASSERT_EQ(symlink(other.c_str(), fifo.c_str()), 0);
  r = Ptxdiff({"seed-corpus", dir});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(*ReadFile(other), "mine\n");
}

// Ninth fault run: with a file at OUT/findings, the fuzzer ran 13 s and
// failed ("nothing was checked"); it is exit 2 at once, naming it.
TEST(FuzzCommandTest, AFileWhereADirectoryGoesIsExitTwo) {
  const std::string dir = TempDirFor("fuzz_findings_file");
  ASSERT_EQ(mkdir((dir + "/out").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(dir + "/out/findings", "").ok());
  const CliRun r = FuzzWithStats(dir, kSomeStats);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir + "/out/findings: a file of that name"));
}

// Ninth fault run (its low): a run whose start-up re-judged a large pending
// journal said for all of it "starting: the backend's workers start and
// each family is timed", no word of the journal. The line says how many
// findings earlier runs left pending are judged again.
TEST(FuzzCommandTest, TheStartingLineSaysThePendingFindingsJudgedAgain) {
  const std::string dir = TempDirFor("fuzz_starting_pending");
  ASSERT_TRUE(MakeDirs(dir + "/triage/.pending").ok());
  // An earlier version's journal of four mismatches (triage/testdata).
  std::ofstream(dir + "/triage/.pending/999999997.journal")
      << std::ifstream(std::string(PTXDIFF_SOURCE_DIR) +
                       "/triage/testdata/c87fd0f/pending/999999997.journal")
             .rdbuf();
  // A fuzzer that writes no stats for 2.5 s: it is starting.
  std::ofstream(dir + "/stats.txt") << kSomeStats;
  const std::string fuzzer = dir + "/slow_fuzzer.sh";
  std::ofstream(fuzzer) << "#!/bin/sh\nsleep 2.5\ncp '" << dir
                        << "/stats.txt' \"$PTXDIFF_STATS/1.stats\"\n";
  chmod(fuzzer.c_str(), 0755);
  setenv("PTXDIFF_FUZZER", fuzzer.c_str(), 1);
  setenv("PTXDIFF_WORKER", PTXDIFF_WORKER_PATH, 1);
  const CliRun r = Ptxdiff({"fuzz", "--max-time", "5", "--progress-seconds",
                            "1", "--backend", "oracle", "--out", dir + "/out",
                            "--dir", dir + "/triage"});
  ForgetFuzzSettings();
  EXPECT_THAT(r.out, HasSubstr("starting: the backend's workers start, the 4 "
                               "findings earlier runs left pending are "
                               "judged again and each family is timed"))
      << r.out << r.err;
}

// A program finding left unfiled in `triage`'s journal by a process that
// is gone (a pid no process can have).
void LeaveAnUnfiledProgram(const std::string& triage) {
  ASSERT_TRUE(MakeDirs(triage).ok());
  {
    auto journal = PendingJournal::Open(triage, JournalKind::kPrograms);
    ASSERT_TRUE(journal.ok()) << journal.status();
    (*journal)->AddRecord("a program");
  }
  ASSERT_EQ(
      rename(absl::StrCat(triage, "/.pending/", getpid(), ".programs.journal")
                 .c_str(),
             (triage + "/.pending/999999999.programs.journal").c_str()),
      0);
}

// The twenty-first fault run: under --jobs 2 the program lane's "N kept
// pending" came from the jobs' counts, which one job's findings filed by
// another or a killed job's unwritten counts belie. It is the journals'.
TEST(FuzzCommandTest, TheProgramFindingsKeptPendingAreCountedInTheJournal) {
  const std::string dir = TempDirFor("fuzz_programs_pending");
  const CliRun r =
      FuzzWith(dir,
               std::string(kSomeStats) +
                   "programs=40\nprogram_disagreements=6\nprograms_pending=6\n",
               "",
               {"--backend", "oracle", "--programs", "0.5", "--out",
                dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("kept pending"))) << r.out;
}

// The twelfth fault run: on a full triage disk `fuzz --programs` said its
// program findings were "kept pending" that no journal held, and exited 0.
// Their loss is said as the tuples' is, and the run fails.
TEST(FuzzCommandTest, ProgramFindingsNotKeptOnAFullDiskFailTheRun) {
  const std::string dir = TempDirFor("fuzz_programs_unjournaled");
  LeaveAnUnfiledProgram(dir + "/triage");
  const CliRun r =
      FuzzWith(dir,
               std::string(kSomeStats) +
                   "programs=40\nprogram_disagreements=5\nprograms_pending=5\n"
                   "programs_unjournaled=4\nprogram_write_errors=2\n",
               "",
               {"--backend", "oracle", "--programs", "0.5", "--out",
                dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(", 1 kept pending for the next run; 4 could "
                               "not be journaled\n"));
  EXPECT_THAT(r.err, HasSubstr("the program lane could not write to the "
                               "triage directory " +
                               dir +
                               "/triage (2 failed writes); 4 program "
                               "findings could not be kept"));
}

// Tenth fault run: with a file at OUT/refusals, a ptx-cmd run said what the
// tool refused was "remembered in OUT/refusals/ptx-cmd-….tsv", kept nowhere,
// and exited 0. `fuzz` and `programs` on a tool refuse it at once.
TEST(FuzzCommandTest, AFileWhereTheRefusalsGoIsExitTwoOnATool) {
  const std::string dir = TempDirFor("fuzz_refusals_file");
  ASSERT_EQ(mkdir((dir + "/out").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(dir + "/out/refusals", "").ok());
  const std::string tool = std::string("ptx-cmd:/bin/cat {ptx} {in} {out}");
  CliRun r = FuzzWith(
      dir, kSomeStats, "",
      {"--backend", tool, "--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir + "/out/refusals: a file of that name"));
  r = Ptxdiff({"programs", "--backend", tool, "--max-time", "5", "--out",
               dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir + "/out/refusals: a file of that name"));
}

// Fifteenth fault run: a tool's memory of refusals that is a FIFO (or a link
// to a device, or a directory) failed the worker's handshake, which `fuzz`
// said on stdout, exit 1, and stderr empty. It is bad input: exit 2, said on
// stderr by `fuzz` and `programs` before any worker starts.
TEST(FuzzCommandTest, ARefusalMemoryThatIsNoFileIsExitTwoOnATool) {
  const std::string dir = TempDirFor("fuzz_refusals_fifo");
  ASSERT_TRUE(MakeDirs(dir + "/out/refusals").ok());
  const std::string memory = dir + "/out/refusals/ptx-cmd-0123456789abcdef.tsv";
  ASSERT_EQ(mkfifo(memory.c_str(), 0644), 0);
  const std::string tool = std::string("ptx-cmd:/bin/cat {ptx} {in} {out}");
  CliRun r = FuzzWith(
      dir, kSomeStats, "",
      {"--backend", tool, "--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(memory + " is a FIFO, not a file of "
                                        "remembered refusals"));
  EXPECT_THAT(r.out, Not(HasSubstr("fake fuzzer ran")));
  r = Ptxdiff({"programs", "--backend", tool, "--max-time", "5", "--out",
               dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(memory + " is a FIFO"));
  // The seventeenth fault run: a link to nothing there.
  ASSERT_EQ(unlink(memory.c_str()), 0);
  ASSERT_EQ(symlink((dir + "/gone.tsv").c_str(), memory.c_str()), 0);
  r = Ptxdiff({"programs", "--backend", tool, "--max-time", "5", "--out",
               dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(memory + " is a link to nothing"));
}

// Fault run of issue 65: `fuzz` with a ptx-cmd command that cannot run (no
// {in}, a missing program) seeded the corpus, then exited 1 on its worker's
// handshake, where `sweep` and `program` exited 2. The command is checked
// before anything runs, and said in the same words by each.
TEST(FuzzCommandTest, ABadPtxCmdCommandIsExitTwoAndSaidAsByEveryCommand) {
  const std::string dir = TempDirFor("fuzz_bad_ptx_cmd");
  const std::string file = std::string(PTXDIFF_SOURCE_DIR) +
                           "/program/testdata/found-abs-lt-zero.ptxprog";
  for (const std::string& command : {std::string("/bin/true {ptx} {out}"),
                                     dir + "/no-such-tool {ptx} {in} {out}"}) {
    const std::string backend = "ptx-cmd:" + command;
    const CliRun fuzz = FuzzWith(dir, "", "",
                                 {"--backend", backend, "--out", dir + "/out",
                                  "--dir", dir + "/triage"});
    EXPECT_EQ(fuzz.code, 2) << fuzz.out << fuzz.err;
    EXPECT_NE(access((dir + "/out").c_str(), F_OK), 0);
    EXPECT_NE(access((dir + "/triage").c_str(), F_OK), 0);
    const std::string said(absl::StripPrefix(fuzz.err, "ptxdiff fuzz: "));
    EXPECT_THAT(said, StartsWith("the ptx-cmd command '" + command + "'"));
    const CliRun sweep =
        Ptxdiff({"sweep", "--backend", backend, "--family", "add"});
    EXPECT_EQ(sweep.code, 2) << sweep.out;
    EXPECT_EQ(sweep.err, "ptxdiff sweep: " + said);
    const CliRun program = Ptxdiff({"program", file, "--backend", backend});
    EXPECT_EQ(program.code, 2) << program.out;
    EXPECT_EQ(program.err, "ptxdiff program: " + said);
  }
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
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " " << flags << "\n";
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
      std::sscanf(out.c_str() + at,
                  "findings this run: %lld new, %lld already filed", &fresh,
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
  CliRun r{};
  std::atomic<bool> ended{false};
  std::thread cli([&] {
    r = FuzzForReal({"--backend",
                     FaultyWorkerWith(dir, "--fault=wrong-on=popc.b32"),
                     "--family", "popc", "--max-time", "300", "--out",
                     dir + "/out", "--dir", triage});
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
  ASSERT_TRUE(repeats_counted) << "no entry counted 100 findings in 120 s\n"
                               << r.out << r.err;
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
       FaultyWorkerWith(
           dir, "--fault=hang-on=add.sat.s32 --when-operand=0:2147483647"),
       "--family", "add", "--timeout", "3", "--max-time",
       absl::StrCat(kMaxTime), "--out", dir + "/out", "--dir", triage});
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(kMaxTime + 8)) << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Isolated (hang~faulty~hang~add.sat.s32) or not
  // (hang~faulty~unisolated-hang~batch-...).
  std::vector<std::string> hangs;
  for (const EntryInfo& e : EntriesIn(triage)) {
    if (absl::StartsWith(e.name, "hang~")) hangs.push_back(e.name);
  }
  EXPECT_FALSE(hangs.empty()) << "the hang was not filed\n" << r.out << r.err;
}

// The sixteenth fault run: a Ctrl-C while the campaign started (its
// calibration batch on a tool that hangs, a ptxas slow to say its version)
// was heeded only when that ended: 16 to 48 s later, or at --max-time. The
// start's waits end at once: the run ends within seconds, said as
// interrupted. The Ctrl-C is a SIGINT to this process once the command's
// handler is in (it forwards it to the fuzzer), 3 s into the run.
TEST(FuzzCommandTest, ACtrlCWhileTheCampaignStartsEndsItAtOnce) {
  const std::string dir = TempDirFor("fuzz_ctrl_c_calibrating");
  struct sigaction before = {};
  sigaction(SIGINT, nullptr, &before);
  std::atomic<bool> sent{false};
  std::thread ctrl_c([&] {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    struct sigaction now = before;
    while (now.sa_handler == before.sa_handler && absl::Now() < give_up) {
      usleep(1000);
      sigaction(SIGINT, nullptr, &now);
    }
    if (now.sa_handler == before.sa_handler) return;
    absl::SleepFor(absl::Seconds(3));
    kill(getpid(), SIGINT);
    sent = true;
  });
  const absl::Time start = absl::Now();
  const CliRun r = FuzzForReal(
      {"--backend",
       FaultyWorkerWith(
           dir, "--fault=hang-on=add.sat.s32 --when-operand=0:2147483647"),
       "--family", "add", "--timeout", "60", "--max-time", "120", "--out",
       dir + "/out", "--dir", dir + "/triage"});
  const absl::Duration took = absl::Now() - start;
  ctrl_c.join();
  ASSERT_TRUE(sent) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("fuzz: interrupted; stopping"));
  // Not the calibration's hang of a --timeout, 60 s.
  EXPECT_LT(took, absl::Seconds(40)) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("interrupted before a batch came back"));
  EXPECT_THAT(r.err, Not(HasSubstr("failed its handshake")));
}

// A backend whose worker runs no programs: the summary says why none ran.
TEST(FuzzCommandTest, TheSummarySaysWhyNoProgramRan) {
  const std::string dir = TempDirFor("fuzz_no_programs");
  const CliRun r = FuzzWith(
      dir,
      absl::StrCat(kSomeStats,
                   "programs_not_started=the worker (oracle) runs no "
                   "programs\n"),
      "",
      {"--backend", "oracle", "--programs", "0.3", "--out", dir + "/out",
       "--dir", dir + "/triage"});
  EXPECT_THAT(r.out, HasSubstr("fuzz:   programs: none run (the worker "
                               "(oracle) runs no programs)\n"));
}

#ifdef PTXDIFF_INTERPRETER_PATH
// `fuzz --programs SHARE` runs programs on the campaign's own workers beside
// its tuples (issue 63): on a tool wrong on xor.b32 (the ptx-cmd tests'
// interpreter), fuzzing popc tuples, the programs find the wrong xor, the
// filer files it, and the summary counts them. (Minimized to its one step
// it is filed as the xor.b32 tuple, ProgramLaneTest; here, under load,
// minimizing may be cut by the 12 s and the program filed as found.)
TEST(FuzzCommandTest, ProgramsRunBesideTheTuplesAndTheirFindingsAreKept) {
  const std::string dir = TempDirFor("fuzz_programs");
  const std::string triage = dir + "/triage";
  const CliRun r = FuzzForReal(
      {"--backend",
       absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                    " --flip-on=xor.b32 {ptx} {in} {out}"),
       "--family", "popc", "--programs", "0.5", "--max-time", "12", "--out",
       dir + "/out", "--dir", triage});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const size_t at = r.out.find("fuzz:   programs (50% of the backend's time): "
                               "checked ");
  ASSERT_NE(at, std::string::npos) << r.out << r.err;
  long long checked = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at,
                        "fuzz:   programs (50%% of the backend's time): "
                        "checked %lld",
                        &checked),
            1);
  EXPECT_GT(checked, 0) << r.out;
  EXPECT_THAT(r.out.substr(at), Not(HasSubstr("; 0 disagreements")));
  // The run's findings count the programs' too.
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         "findings this run: [0-9]+ new, [0-9]+ already filed "
                         "\\(programs: [0-9]+ new, [0-9]+ already filed"
                         "(, [0-9]+ in programs with a variant filed before "
                         "\\(not filed again\\))?\\)"));
  // Filed, or (minimizing not done by the end, as under ASan beside other
  // tests: "4 disagreements ... filed 0, 4 kept pending") kept for the next
  // run. That a finding minimizes and files is ProgramLaneTest's.
  EXPECT_TRUE(!EntriesIn(triage).empty() ||
              CountPendingFindings(triage).programs > 0)
      << r.out << r.err;
  // The outcome records count the programs by the variants they held, for
  // the report (issue 63: one outcome table).
  std::string outcomes;
  for (const std::string& run : FilesIn(dir + "/out/stats")) {
    for (const std::string& file : FilesIn(run, ".outcomes"))
      outcomes += ReadFile(file).value_or("");
  }
  EXPECT_THAT(outcomes, HasSubstr("xor.b32\tprogram-imm\t")) << outcomes;
}

// The summary's findings left out the program lane's, which were said only
// on its own line.
TEST(FuzzSummaryLinesTest, TheRunsFindingsCountTheProgramsToo) {
  FuzzStats sum;
  sum.new_findings = 2;
  sum.known_findings = 5;
  EXPECT_EQ(FindingsThisRun(sum), "2 new, 5 already filed");
  sum.programs = 10;
  sum.programs_filed = 3;  // entries filed, 1 of them new
  sum.programs_filed_new = 1;
  sum.programs_known = 4;  // counted under causes filed before
  EXPECT_EQ(FindingsThisRun(sum),
            "3 new, 11 already filed (programs: 1 new, 6 already filed)");
  // The eleventh fault run: findings in programs with a variant filed
  // before (no entry counts them) were summed as "already filed" (7 new +
  // 142 against entries counting 102). They are said apart.
  sum.programs_not_filed_again = 40;
  EXPECT_EQ(FindingsThisRun(sum),
            "3 new, 11 already filed (programs: 1 new, 6 already filed, 40 in "
            "programs with a variant filed before (not filed again))");
}

TEST(FuzzCommandTest, ProgramsOutsideZeroToOneAreExitTwo) {
  const std::string dir = TempDirFor("fuzz_programs_share");
  const CliRun r = FuzzForReal({"--backend", "oracle", "--programs", "2",
                                "--out", dir + "/out"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--programs is a share of the backend's time"));
}
#endif

// A worker that hangs at HELLO held `ptxdiff fuzz --max-time 5` for the
// reply timeout (60 s by default), then said "no answer before the
// deadline". Its start ends by --max-time, saying what did not answer.
TEST(FuzzCommandTest, AWorkerThatHangsAtHelloEndsTheRunByMaxTime) {
  const std::string dir = TempDirFor("fuzz_hang_at_hello");
  constexpr int kMaxTime = 5;
  const absl::Time start = absl::Now();
  const CliRun r =
      FuzzForReal({"--backend", FaultyWorkerWith(dir, "--fault=hang-at-hello"),
                   "--family", "add", "--max-time", absl::StrCat(kMaxTime),
                   "--out", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(kMaxTime + 8)) << r.out << r.err;
  // A backend that never started: exit 2, said on stderr, as every
  // command says it.
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(
      r.err,
      HasSubstr("failed its handshake: no answer to HELLO before the run's "
                "deadline (--max-time)"));
}

TEST(FuzzCommandTest, ACampaignThatTestedSomethingAndFiledItAllPasses) {
  const CliRun r =
      FuzzWithStats(TempDirFor("fuzz_ok"),
                    "inputs=10\ntuples=100\nagreed=95\nmismatched=3\ndeclined="
                    "2\nsupported_variants=495\n"
                    "new_findings=1\nknown_findings=2\nreached=f\n"
                    "explored=1,2,0,3\nplanned_variants=490\n");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("fuzz:   checked 100 tuples"));
  // Issue 43: how far the fuzz stage reached its least-explored variants.
  EXPECT_THAT(r.out,
              HasSubstr("fuzz:   least-explored variants: 1 of 6 got no "
                        "tuples from fuzz inputs beyond the systematic tiers; "
                        "the median variant got 1\n"));
  // How far the systematic source got with its planned tiers.
  EXPECT_THAT(r.out, HasSubstr("fuzz:   planned tiers done for 490 of 495 "
                               "variants (their extremes, boundaries and "
                               "middle values)\n"));
  // Issue 28, item 8: "variants 4/495 supported" and "2 known" misled.
  EXPECT_THAT(
      r.out,
      HasSubstr("fuzz inputs 10  variants reached 4 of 495  findings 1 new, "
                "2 repeats  faults 0"));
}

// At its end a campaign moves the repeats of the findings it did not file
// from known_findings to pending_repeats (kept in the journal with them):
// the smoke test's last progress line then fell from 87,588 repeats to
// 2,496. Every repeat is a repeat, filed or pending.
TEST(FuzzCommandTest, RepeatsKeptPendingStayRepeatsInTheProgressLine) {
  const CliRun r =
      FuzzWithStats(TempDirFor("fuzz_pending_repeats"),
                    "inputs=10\ntuples=100\nagreed=90\nmismatched=10\n"
                    "supported_variants=495\nnew_findings=1\nknown_findings=2\n"
                    "pending_repeats=5\nunfiled=1\nreached=f\n");
  EXPECT_THAT(r.out, HasSubstr("findings 1 new, 7 repeats  faults 0"));
}

// Fault run of issue 65: a pending journal the fuzzer kept aside unread
// was said only in OUT/fuzz.log (the fuzzer's stderr). The summary says it.
TEST(FuzzCommandTest, APendingJournalKeptAsideIsSaidInTheSummary) {
  const std::string dir = TempDirFor("fuzz_journal_damaged");
  const std::string said = absl::StrCat(
      "the pending journal ", dir, "/triage/.pending/9.journal was not read (",
      dir, "/triage/.pending/9.journal is not a regular file: not read); kept "
      "as ", dir, "/triage/.pending/9.journal.damaged, never adopted");
  const CliRun r =
      FuzzWithStats(dir, kSomeStats, absl::StrCat("echo 'ptxdiff: ", said,
                                                   "' >&2"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("\nfuzz:   warning: ", said, "\n")));
}

// Fault run of issue 65: on a full disk the repeats of a finding that
// could not be filed were summed as "already filed". They are said apart.
TEST(FuzzCommandTest, RepeatsOfAFindingNotFiledAreNotSaidToBeFiled) {
  const CliRun r = FuzzWithStats(
      TempDirFor("fuzz_pending_repeats"),
      "inputs=10\ntuples=100\nagreed=96\nmismatched=4\n"
      "supported_variants=495\nknown_findings=0\nunfiled=1\n"
      "pending_repeats=3\nreached=f\n");
  EXPECT_THAT(r.out, HasSubstr("findings this run: 0 new, 0 already filed, 3 "
                               "repeats of findings not filed (kept with "
                               "them); "));
}

// A tuple mismatch left unfiled in `triage`'s journal by a process that is
// gone (a pid no process can have).
void LeaveAnUnfiledTuple(const std::string& triage) {
  ASSERT_TRUE(MakeDirs(triage).ok());
  {
    auto journal = PendingJournal::Open(triage);
    ASSERT_TRUE(journal.ok()) << journal.status();
    (*journal)->Add({.tuple = {*ParseVariant("add.u32"), {{1, 2, 0, 0}}, 0},
                     .backend_bits = 4});
  }
  ASSERT_EQ(
      rename(absl::StrCat(triage, "/.pending/", getpid(), ".journal").c_str(),
             (triage + "/.pending/999999999.journal").c_str()),
      0);
}

// The twentieth fault run: after a Ctrl-C of `fuzz --jobs 2` the summary's
// "N findings were not filed" came from the jobs' counts, which one job's
// findings filed by another or a job's last counts unwritten belie, either
// way. It counts what the journals hold at the end.
TEST(FuzzCommandTest, TheFindingsNotFiledAreCountedInTheJournal) {
  const std::string stats =
      "inputs=10\ntuples=100\nagreed=96\nmismatched=4\n"
      "supported_variants=495\nknown_findings=0\nreached=f\n";
  const std::string filed_by_another = TempDirFor("fuzz_unfiled_filed");
  const CliRun said_unfiled =
      FuzzWithStats(filed_by_another, stats + "unfiled=4\n");
  EXPECT_EQ(said_unfiled.code, 0) << said_unfiled.err;
  EXPECT_THAT(said_unfiled.out, Not(HasSubstr(".pending/ keeps")));
  const std::string kept = TempDirFor("fuzz_unfiled_kept");
  LeaveAnUnfiledTuple(kept + "/triage");
  const CliRun counts_unwritten = FuzzWithStats(kept, stats);
  EXPECT_EQ(counts_unwritten.code, 0) << counts_unwritten.err;
  EXPECT_THAT(counts_unwritten.out,
              HasSubstr("\nfuzz:   1 finding is not filed yet; " + kept +
                        "/triage/.pending/ keeps it, and the next campaign on "
                        "this directory files it\n"));
}

// Issue 45: a run leaves its timeline beside the fuzz processes' stats and
// outcome records, and --report writes the conformance report of every run
// under --out at its end.
TEST(FuzzCommandTest, ARunKeepsItsTimelineAndWritesTheReportAtTheEnd) {
  const std::string dir = TempDirFor("fuzz_report");
  const CliRun r = FuzzWith(
      dir, kSomeStats,
      "printf '# ptxdiff outcomes 1\\nbackend\\toracle 1\\n"
      "add.u32\\timm\\t-\\t100\\n' > \"$PTXDIFF_STATS/1.outcomes\"",
      {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage",
       "--report"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("fuzz: report: " + dir + "/out/report.html"));
  const absl::StatusOr<std::string> page = ReadFile(dir + "/out/report.html");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(*page, HasSubstr("\"backend\":\"oracle 1\""));
  EXPECT_TRUE(ReadFile(dir + "/out/report.json").ok());
  // The run's timeline: its end at least, with the tuples the stats gave.
  std::string timeline;
  for (const std::string& run : FilesIn(dir + "/out/stats"))
    timeline += ReadFile(run + "/timeline.tsv").value_or("");
  EXPECT_THAT(timeline, StartsWith("# ptxdiff timeline 2 (tuples): "));
  EXPECT_THAT(timeline, HasSubstr("\t100\t"));
  // Issue 65: a later `ptxdiff report` of the --out took out/triage (or
  // the default) and overwrote the report without the run's findings: it
  // takes the triage directory the run recorded.
  const CliRun later = Ptxdiff({"report", dir + "/out"});
  EXPECT_EQ(later.code, 0) << later.out << later.err;
  EXPECT_THAT(later.out, Not(HasSubstr("no triage directory there")));
  EXPECT_THAT(ReadFile(dir + "/out/report.json").value_or(""),
              HasSubstr("\"triage_dir\":\"" + dir + "/triage\""));
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
  EXPECT_THAT(
      r.err,
      StartsWith("ptxdiff fuzz: could not write to the triage directory " +
                 dir +
                 "/triage (6 failed writes; the last: cannot create "
                 "T/.tmp-entry: No space left on device); 6 findings were not "
                 "filed: " +
                 dir + "/triage/.pending/ keeps them"));
  EXPECT_THAT(r.out,
              HasSubstr("fuzz: summary: "));  // the summary is still printed
}

// The twentieth fault run: on a disk too full for the journal too, the
// error said ".pending/ keeps them" and, in the same sentence, that none
// could be kept there. It says which were kept, if any, and where the
// others' journal lines are.
TEST(FuzzCommandTest, AFullDiskSaysHowManyFindingsThePendingJournalKept) {
  const std::string dir = TempDirFor("fuzz_full_journal");
  const std::string stats =
      "inputs=10\ntuples=100\nagreed=94\nmismatched=6\nknown_findings=6\n"
      "filing_errors=6\nunfiled=6\nfiling_error=No space left on device\n";
  const CliRun none = FuzzWithStats(dir, stats + "unjournaled=6\n");
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_THAT(none.err, HasSubstr("6 findings were not filed, nor could they "
                                  "be kept in " +
                                  dir +
                                  "/triage/.pending/ (their journal "
                                  "lines are in " +
                                  dir + "/out/fuzz.log)"));
  EXPECT_THAT(none.err, Not(HasSubstr("keeps")));
  // The twelfth fault run: the tuple line said a crash was filed.
  const CliRun crash = FuzzWithStats(
      dir,
      "inputs=10\ntuples=100\nagreed=99\nfaulted=1\nfiling_errors=1\n"
      "unfiled=1\nunjournaled=1\nfiling_error=No space left on device\n");
  EXPECT_THAT(crash.out, HasSubstr(", 1 crashed or hung the implementation)"));
  const CliRun some = FuzzWithStats(dir, stats + "unjournaled=2\n");
  EXPECT_THAT(some.err, HasSubstr("6 findings were not filed: " + dir +
                                  "/triage/.pending/ keeps 4 of them"));
  EXPECT_THAT(some.err, HasSubstr("; the other 2 could not be kept there"));
}

// What earlier runs remembered this tool refused is said at the start, with
// its target, and not sent; another tool's memory beside it is not said.
TEST(FuzzCommandTest, SaysWhatThisToolRefusedInEarlierRuns) {
  const std::string dir = TempDirFor("fuzz_refusals");
  const std::string tool = "/bin/true {ptx} {in} {out}";
  ASSERT_TRUE(RefusalMemory(dir + "/out/refusals", tool, "sm_90")
                  .Remember({*ParseVariant("lop3.b32"), false}, "unknown op")
                  .ok());
  const auto run = [&](const std::string& command) {
    return FuzzWith(dir, kSomeStats, "",
                    {"--backend", "ptx-cmd:" + command, "--out", dir + "/out",
                     "--dir", dir + "/triage"});
  };
  EXPECT_THAT(run(tool).out,
              HasSubstr("fuzz: what this tool refused in earlier runs (PTX "
                        "for sm_90) is not sent again (remembered in " +
                        dir + "/out/refusals/;"));
  EXPECT_THAT(run("/bin/false {ptx} {in} {out}").out,
              Not(HasSubstr("refused in earlier runs")));
  // The eighteenth fault run: said after a re-check forgot every refusal.
  ASSERT_TRUE(
      RefusalMemory(dir + "/out/refusals", tool, "sm_90")
          .Forget({.unix_seconds = 1,
                   .variants = 1,
                   .message = SaidKey(*ParseVariant("lop3.b32"), "unknown op")})
          .ok());
  EXPECT_THAT(run(tool).out, Not(HasSubstr("refused in earlier runs")));
}

// The classes a tool refuses are summed up in the summary, a line per
// message, with how many variants they hold (issue 62).
TEST(FuzzCommandTest, TheSummarySaysWhichClassesTheToolRefusesAndWhy) {
  const std::string dir = TempDirFor("fuzz_refused_classes");
  const std::string tool = "/bin/true {ptx} {in} {out}";
  const RefusalMemory memory(dir + "/out/refusals", tool, "sm_90");
  ASSERT_TRUE(memory
                  .RememberClass({.family = Family::kLop3,
                                  .feature = {.kind = ClassFeature::kFamily},
                                  .message = "error: unknown lop3",
                                  .sampled = 3})
                  .ok());
  const CliRun r = FuzzWith(dir, kSomeStats, "",
                            {"--backend", "ptx-cmd:" + tool, "--out",
                             dir + "/out", "--dir", dir + "/triage"});
  EXPECT_THAT(r.out,
              HasSubstr(absl::StrCat("fuzz:   the tool refuses 1 classes (",
                                     VariantsOf(Family::kLop3).size(),
                                     " variants)")));
  EXPECT_THAT(r.out, HasSubstr("fuzz:     \"error: unknown lop3\": every "
                               "lop3, in registers (3 sampled)"));
}

// The sixteenth fault run: a memory of thousands of messages printed a
// summary line each, and a 5 MB message whole. A few messages are shown,
// each cut to its first 300 bytes; the file has the rest.
TEST(FuzzCommandTest, TheRefusedClassesSummaryStaysShort) {
  const std::string dir = TempDirFor("fuzz_refused_many");
  const std::string tool = "/bin/true {ptx} {in} {out}";
  const RefusalMemory memory(dir + "/out/refusals", tool, "sm_90");
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(memory
                    .RememberClass({.family = Family::kLop3,
                                    .feature = {.kind = ClassFeature::kFamily},
                                    .message = absl::StrCat(
                                        "error ", i, ": ",
                                        std::string(i == 0 ? 100000 : 10, 'x')),
                                    .sampled = 3})
                    .ok());
  }
  const CliRun r = FuzzWith(dir, kSomeStats, "",
                            {"--backend", "ptx-cmd:" + tool, "--out",
                             dir + "/out", "--dir", dir + "/triage"});
  EXPECT_THAT(r.out, HasSubstr("fuzz:     and 18 more messages (in " + dir +
                               "/out/refusals/)"));
  EXPECT_THAT(r.out, HasSubstr("(99709 more bytes)"));
  EXPECT_LT(r.out.size(), 20000u);
}

// Issue 28: a campaign against a backend that declined everything exited 0.
TEST(FuzzCommandTest, ACampaignThatTestedNothingFailsAndSaysWhy) {
  const CliRun r =
      FuzzWithStats(TempDirFor("fuzz_nothing"),
                    "inputs=10\ntuples=272\ndeclined=272\ndeclined_other=260\n"
                    "declined_not_run=12\n"
                    "top_decline=16 ptx-cmd: command '/bin/false {ptx} {in} "
                    "{out}' failed on add.s32 "
                    "(16 tuples): exit status 1\n");
  EXPECT_EQ(r.code, 1) << r.out;
  // The declines by reason, those a time budget left unrun apart.
  EXPECT_THAT(r.out, HasSubstr("0 operand form, 12 not run (a batch's time "
                               "budget or fault cap left them unrun, each "
                               "sent again 8 times), 260 other\n"));
  EXPECT_THAT(
      r.err,
      StartsWith(
          "ptxdiff fuzz: nothing was tested: the backend declined all 272 "
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

}  // namespace
}  // namespace ptxdiff
