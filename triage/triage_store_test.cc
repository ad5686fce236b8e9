#include "triage/triage_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "triage/testing/findings.h"
#include "triage/testing/store_fixtures.h"

namespace ptxdiff {
namespace {

using store_testing::FreshDir;
using store_testing::Mismatch;
using store_testing::Names;
using ::testing::HasSubstr;

TEST(TriageStoreTest, FilesNewEntriesAndCountsRepeats) {
  const std::string dir = FreshDir("basic");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  auto first = store->File(Mismatch("add.s32", 1));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->is_new);
  // Other operands and other differing bytes, same trigger class: the same
  // signature, counted, not filed again.
  auto again = store->File(Mismatch("add.s32", 9, 0x100));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->is_new);
  EXPECT_EQ(again->entry, first->entry);
  // An operand of another trigger class (MIN): another entry.
  EXPECT_TRUE(store->File(Mismatch("add.s32", 0x80000000))->is_new);

  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].name, "value-mismatch~faulty~min~add.s32");
  const EntryInfo& e = (*entries)[0];
  EXPECT_EQ(e.name, "value-mismatch~faulty~in-range~add.s32");
  EXPECT_EQ(e.count(), 2);
  for (const char* f : {"case.txt", "repro.ptx", "meta.txt", "input.bin"}) {
    EXPECT_TRUE(std::ifstream(dir + "/" + e.name + "/" + f).good()) << f;
  }
  auto shown = store->Show(e.name);
  ASSERT_TRUE(shown.ok());
  EXPECT_THAT(*shown, HasSubstr("variant: add.s32\n"));
  EXPECT_THAT(*shown, HasSubstr("count: 2\n"));
  std::ifstream index(dir + "/INDEX.md");
  std::string text((std::istreambuf_iterator<char>(index)), {});
  EXPECT_THAT(
      text,
      HasSubstr("| value-mismatch | faulty | in-range | `add.s32` | 2 |"));
}

// How the backend obtained its value (a worker's note) is kept: its first
// line in meta.txt (made a valid meta value whatever the worker wrote), all
// of it, the code that ran included, at the top of repro.ptx.
// Ninth fault run: a run killed while it rewrote a file left an empty
// .tmp-file-PID-N in the triage directory, and later runs kept it. A
// writing Open removes those of processes gone, never a living one's.
TEST(TriageStoreTest, OpeningToWriteRemovesTheTemporaryFilesOfDeadRuns) {
  const std::string dir = FreshDir("stale_tmp");
  ASSERT_TRUE(TriageStore::Open(dir, true).ok());
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const std::string dead = absl::StrCat(dir, "/.tmp-file-", child, "-8");
  const std::string living = absl::StrCat(dir, "/.tmp-file-", getpid(), "-0");
  ASSERT_TRUE(WriteFile(dead, "").ok());
  ASSERT_TRUE(WriteFile(living, "").ok());
  // The sixteenth fault run: a half-written entry of a Ctrl-C'd merge.
  const std::string dead_entry = absl::StrCat(dir, "/.tmp-entry-", child, "-3");
  ASSERT_TRUE(MakeDirs(dead_entry).ok());
  ASSERT_TRUE(WriteFile(dead_entry + "/case.txt", "half").ok());
  ASSERT_TRUE(TriageStore::Open(dir, false).ok());
  EXPECT_EQ(access(dead.c_str(), F_OK), 0) << "a reading Open changes nothing";
  ASSERT_TRUE(TriageStore::Open(dir, true).ok());
  EXPECT_NE(access(dead.c_str(), F_OK), 0);
  EXPECT_NE(access(dead_entry.c_str(), F_OK), 0);
  EXPECT_EQ(access(living.c_str(), F_OK), 0);
}

// What an Open of `dir` did while another process held `dir/file`'s flock,
// stopped (Interrupt) after 3 s.
struct HeldOpen {
  absl::Status status;
  std::string said;  // on stderr
  absl::Duration took;
};
HeldOpen OpenWhileHeld(const std::string& dir, const std::string& file) {
  HeldOpen out;
  const int held = open((dir + "/" + file).c_str(), O_RDWR | O_CLOEXEC);
  EXPECT_GE(held, 0) << file;
  EXPECT_EQ(flock(held, LOCK_EX), 0) << file;
  testing::internal::CaptureStderr();
  std::thread stop([] {
    absl::SleepFor(absl::Seconds(3));
    Interrupt();
  });
  const absl::Time start = absl::Now();
  out.status = TriageStore::Open(dir, true).status();
  out.took = absl::Now() - start;
  stop.join();
  ClearInterrupt();
  out.said = testing::internal::GetCapturedStderr();
  close(held);
  return out;
}

// Tenth fault run: with .lock held by another process (`flock t/.lock
// sleep 200`), fuzz, programs and triage list waited for ever without a
// word. The wait is said after 2 s, ends at a stop (and after a minute).
TEST(TriageStoreTest, AWaitForTheLockIsSaidAndEndsAtAStop) {
  const std::string dir = FreshDir("lock_held");
  ASSERT_TRUE(TriageStore::Open(dir, true).ok());
  const HeldOpen waited = OpenWhileHeld(dir, ".lock");
  EXPECT_FALSE(waited.status.ok());
  EXPECT_THAT(waited.status.message(),
              HasSubstr("interrupted while waiting for " + dir + "/.lock"));
  EXPECT_GE(waited.took, absl::Seconds(3));
  EXPECT_THAT(waited.said, HasSubstr("waiting for " + dir +
                                     "/.lock, which another process holds"));
  EXPECT_TRUE(TriageStore::Open(dir, true).ok());  // free again
}

// The twenty-second fault run: a wait at the turnstile, which another
// waiter holds, was said as a wait for .lock, which no process held.
TEST(TriageStoreTest, AWaitAtTheTurnstileNamesIt) {
  const std::string dir = FreshDir("turn_held");
  ASSERT_TRUE(TriageStore::Open(dir, true).ok());
  const HeldOpen waited = OpenWhileHeld(dir, ".lock-turn");
  EXPECT_FALSE(waited.status.ok());
  EXPECT_THAT(
      waited.status.message(),
      HasSubstr("interrupted while waiting for " + dir + "/.lock-turn"));
  EXPECT_THAT(waited.said,
              HasSubstr("waiting for " + dir +
                        "/.lock-turn, which another process holds"));
}

// The eighteenth fault run: a process that files repeat after repeat, each
// under the lock, frees it only between two filings, and another that polled
// for it waited while hundreds were filed. Now it takes the lock as soon as
// the one filing in progress ends.
TEST(TriageStoreTest, AWaiterIsNotStarvedByAProcessFilingRepeats) {
  const std::string dir = FreshDir("lock_fair");
  auto busy = TriageStore::Open(dir, true);
  auto waiter = TriageStore::Open(dir, true);
  ASSERT_TRUE(busy.ok() && waiter.ok());
  std::atomic<int> filed{0};
  std::atomic<bool> waited{false};
  std::thread repeats([&] {
    for (int i = 0; i < 5000 && !waited; ++i) {
      ASSERT_TRUE(busy->File(Mismatch("add.s32", 1 + i % 7)).ok());
      ++filed;
    }
  });
  while (filed < 10) absl::SleepFor(absl::Milliseconds(1));
  const int before = filed;
  const absl::StatusOr<FileResult> mine = waiter->File(Mismatch("sub.s32", 1));
  const int while_waiting = filed - before;
  waited = true;
  repeats.join();
  ASSERT_TRUE(mine.ok()) << mine.status();
  // The one in progress, and a few more where this thread was not scheduled
  // or met the other in the turnstile; polling alone, hundreds.
  EXPECT_LE(while_waiting, 20) << "filings the other made while this waited";
}

TEST(TriageStoreTest, TheBackendsNoteOnItsValueIsInMetaAndRepro) {
  const std::string dir = FreshDir("note");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  Finding f = Mismatch("add.s32", 1);
  f.backend_note =
      "executed: its\x01 code\nThe SASS that ran:\n  IADD3 R0, R1, R2, RZ";
  auto filed = store->File(f);
  ASSERT_TRUE(filed.ok()) << filed.status();
  const std::string entry = dir + "/" + filed->entry;
  std::ifstream meta(entry + "/meta.txt");
  const std::string meta_text((std::istreambuf_iterator<char>(meta)), {});
  EXPECT_THAT(meta_text, HasSubstr("obtained: executed: its  code\n"));
  std::ifstream repro(entry + "/repro.ptx");
  const std::string repro_text((std::istreambuf_iterator<char>(repro)), {});
  EXPECT_EQ(
      repro_text.rfind("// faulty's value: executed: its\x01 code\n"
                       "// The SASS that ran:\n//   IADD3 R0, R1, R2, RZ\n",
                       0),
      0u)
      << repro_text;
  EXPECT_THAT(repro_text, HasSubstr(".entry"));
  // Read back whole: the entry is not damaged.
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_TRUE((*entries)[0].damage.empty());
}

// A directory short of space may take an entry and then not its INDEX.md
// (here a directory in INDEX.md's place makes its rename fail, for root
// too). The finding is filed, and saying it was not would have the campaign
// keep it in its journal and file it, and count it, a second time.
TEST(TriageStoreTest, AnIndexThatCannotBeRewrittenDoesNotUnfileTheEntry) {
  const std::string dir = FreshDir("index");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/INDEX.md/in-the-way'").c_str()),
            0);
  auto filed = store->File(Mismatch("add.s32", 1));
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_TRUE(filed->is_new);
  EXPECT_THAT(filed->index_error,
              HasSubstr("INDEX.md was not rewritten: " + dir +
                        "/INDEX.md is a directory, not a file"));
  auto again = store->File(Mismatch("add.s32", 9));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->is_new);
  EXPECT_FALSE(again->index_error.empty());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].count(), 2);
  // With room again, the next change rewrites the index whole.
  ASSERT_EQ(std::system(("rm -rf '" + dir + "/INDEX.md'").c_str()), 0);
  EXPECT_EQ(store->File(Mismatch("add.s32", 10))->index_error, "");
  std::ifstream index(dir + "/INDEX.md");
  const std::string text((std::istreambuf_iterator<char>(index)), {});
  EXPECT_THAT(text, HasSubstr("| 3 |"));
}

TEST(TriageStoreTest, ExplainedEntriesAreCountedAndSaySo) {
  auto store = TriageStore::Open(FreshDir("explained"), true);
  ASSERT_TRUE(store.ok());
  const std::string name = store->File(Mismatch("bfe.u32", 1))->entry;
  ASSERT_TRUE(store->MarkExplained(name, "documented ptxas deviation").ok());
  auto again = store->File(Mismatch("bfe.u32", 2));
  EXPECT_FALSE(again->is_new);
  EXPECT_TRUE(again->explained);
  EXPECT_FALSE(store->MarkExplained("crash~x~y~add.s32", "no such").ok());
  EXPECT_FALSE(store->MarkExplained("../etc", "no").ok());
}

// Several processes file the same and different findings at once: every
// filing is counted once, no entry is duplicated or torn, no temporary is
// left behind.
TEST(TriageStoreTest, ConcurrentWritersLoseNothing) {
  const std::string dir = FreshDir("concurrent");
  ASSERT_TRUE(TriageStore::Open(dir, true).ok());
  constexpr int kProcesses = 6, kFilings = 25;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      auto store = TriageStore::Open(dir, false);
      for (int i = 0; i < kFilings && store.ok(); ++i) {
        // Half the filings share one signature; the rest are one per process
        // (four trigger classes among six processes: bmsk's a is an amount,
        // in range, >= 32, >= 64, >= 256).
        const bool shared = i % 2 == 0;
        constexpr uint64_t kClassOperand[] = {1, 40, 100, 300};
        if (!store
                 ->File(Mismatch(shared ? "add.s32" : "bmsk.clamp.b32",
                                 shared ? i : kClassOperand[p % 4]))
                 .ok()) {
          _exit(1);
        }
      }
      _exit(store.ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto store = TriageStore::Open(dir, false);
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  int64_t total = 0;
  for (const EntryInfo& e : *entries) total += e.count();
  EXPECT_EQ(total, kProcesses * kFilings);
  EXPECT_EQ(entries->size(), 1u + 4u);  // add.s32, and bmsk x 4 trigger classes
  for (const std::string& name : Names(dir)) {
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
  }
}

TEST(TriageStoreTest, MergeAddsNewEntriesAndSumsCounts) {
  auto a = TriageStore::Open(FreshDir("merge_a"), true);
  auto b = TriageStore::Open(FreshDir("merge_b"), true);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->File(Mismatch("add.s32", 1)).ok());
  ASSERT_TRUE(b->File(Mismatch("add.s32", 2)).ok());
  ASSERT_TRUE(b->File(Mismatch("add.s32", 3)).ok());
  ASSERT_TRUE(b->File(Mismatch("popc.b32", 3)).ok());
  auto added = a->MergeFrom(b->dir());
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, 1);
  auto entries = a->List();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].count(), 3);  // add.s32: 1 + 2
  EXPECT_EQ((*entries)[1].count(), 1);
  // Merging again adds counts, not entries.
  EXPECT_EQ(*a->MergeFrom(b->dir()), 0);
  EXPECT_EQ((*a->List())[0].count(), 5);
}

// A merge stopped by an entry it cannot read (a FIFO) had added the counts
// of the entries before it, saying nothing: merging again once the entry
// was mended counted them twice. It changes nothing now.
TEST(TriageStoreTest, AMergeStoppedByAnUnreadableEntryChangesNothing) {
  auto a = TriageStore::Open(FreshDir("merge_stopped_a"), true);
  auto b = TriageStore::Open(FreshDir("merge_stopped_b"), true);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->File(Mismatch("add.s32", 1)).ok());
  ASSERT_TRUE(b->File(Mismatch("add.s32", 2)).ok());  // merged first
  auto popc = b->File(Mismatch("popc.b32", 3));         // new to a, after
  ASSERT_TRUE(popc.ok());
  const std::string fifo = b->dir() + "/" + popc->entry + "/case.txt";
  ASSERT_EQ(unlink(fifo.c_str()), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto merged = a->MergeFrom(b->dir());
  EXPECT_THAT(merged.status().message(),
              HasSubstr("is not a regular file: not read; nothing merged"));
  auto entries = a->List();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].count(), 1);
}

EntryInfo Entry(FindingKind kind, const char* backend, const char* cls,
                const char* spelling, int count, bool explained = false) {
  EntryInfo e;
  e.signature = {kind, spelling, backend, cls};
  e.name = EntryName(e.signature);
  e.meta["count"] = std::to_string(count);
  if (explained) e.meta["explained"] = "documented";
  return e;
}

// slct.s32.s32's one cause shows in two trigger classes: two entries, one
// cause. Another variant, backend or kind is another cause.
TEST(TriageStoreTest, EntriesDifferingOnlyInTheirClassAreOneRootCause) {
  const FindingKind m = FindingKind::kValueMismatch;
  const std::vector<EntryInfo> entries = {
      Entry(m, "ptxas", "in-range", "slct.s32.s32", 48),
      Entry(m, "ptxas", "min", "fns.b32", 132),
      Entry(m, "ptxas", "min", "slct.s32.s32", 24),
      Entry(m, "cuda", "min", "slct.s32.s32", 1),
      Entry(FindingKind::kCrash, "ptxas", "crash", "slct.s32.s32", 2, true),
  };
  const std::vector<RootCause> causes = GroupByRootCause(entries);
  ASSERT_EQ(causes.size(), 4u);
  EXPECT_EQ(causes[0].spelling, "slct.s32.s32");
  EXPECT_EQ(causes[0].backend, "ptxas");
  ASSERT_EQ(causes[0].entries.size(), 2u);
  EXPECT_EQ(causes[0].entries[0], &entries[0]);
  EXPECT_EQ(causes[0].entries[1], &entries[2]);
  EXPECT_EQ(causes[0].count, 72);
  EXPECT_FALSE(causes[0].explained());
  EXPECT_EQ(causes[1].spelling, "fns.b32");
  EXPECT_EQ(causes[2].backend, "cuda");
  EXPECT_EQ(causes[3].kind, FindingKind::kCrash);
  EXPECT_TRUE(causes[3].explained());
}

Finding Fault(FindingKind kind, const char* spelling, Operands operands,
              const char* how) {
  Finding f;
  f.kind = kind;
  f.tuple = {*ParseVariant(spelling), operands};
  f.batch = {f.tuple};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend = "ptx-cmd";
  f.backend_identity = "ptx-cmd 2";
  f.detail = absl::StrCat("ptx-cmd: command 't' failed on ", spelling,
                          " (1 tuple): ", how, "; its output ends:\nlog");
  return f;
}

// One bug, one cause (issue 41, item 4): entries whose meta names the same
// cause are one root cause across variants; a crash where the spec leaves
// the value open is caused by that condition, whatever the family; another
// crash by its family and how it ended; an entry of a variant filed
// without a cause (not minimized) joins the cause its variant's other
// entry names.
TEST(TriageStoreTest, EntriesNamingOneCauseAreOneRootCauseAcrossVariants) {
  const std::string dir = FreshDir("causes");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string immediates =
      "wrong only with 64-bit immediates (the same operands in registers "
      "agree)";
  for (const char* v : {"add.u64", "sub.u64", "mul.lo.u64"}) {
    Finding f = Mismatch(v, 0x100000001);
    f.cause = immediates;
    ASSERT_TRUE(store->File(f).ok());
  }
  ASSERT_TRUE(store->File(Mismatch("add.u64", 0x8000000000000000)).ok());
  ASSERT_TRUE(store->File(Mismatch("add.s32", 1)).ok());
  const char* fpe = "killed by signal 8 (SIGFPE) (a shell's exit status 136)";
  ASSERT_TRUE(
      store->File(Fault(FindingKind::kCrash, "div.u32", {{7, 0}}, fpe)).ok());
  ASSERT_TRUE(
      store->File(Fault(FindingKind::kCrash, "rem.s64", {{7, 0}}, fpe)).ok());
  const char* abort = "killed by signal 6 (SIGABRT)";
  ASSERT_TRUE(
      store->File(Fault(FindingKind::kCrash, "sad.u32", {{1, 2, 3}}, abort))
          .ok());
  ASSERT_TRUE(
      store->File(Fault(FindingKind::kCrash, "sad.s64", {{1, 2, 3}}, abort))
          .ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 9u);
  std::map<std::string, size_t> causes;
  for (const RootCause& c : GroupByRootCause(*entries))
    causes[c.spelling] = c.entries.size();
  EXPECT_THAT(
      causes,
      ::testing::UnorderedElementsAre(
          ::testing::Pair(immediates, 4u), ::testing::Pair("add.s32", 1u),
          ::testing::Pair(
              "crash where the spec leaves the value open: division-by-zero",
              2u),
          ::testing::Pair("crash in sad: killed by signal 6 (SIGABRT)", 2u)));
}

// A crash's entry keeps how it ended in meta.txt and what the tool printed
// last in a file of its own (issue 45: a report shows both); a tool that
// said only error lines leaves those; a value mismatch has neither.
TEST(TriageStoreTest, AFaultKeepsHowItEndedAndTheToolsLastOutput) {
  const std::string dir = FreshDir("fault-output");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  Finding crash = Fault(FindingKind::kCrash, "div.u32", {{7, 0}},
                        "killed by signal 8 (SIGFPE)");
  crash.detail += "\nFloating point exception";
  ASSERT_TRUE(store->File(crash).ok());
  ASSERT_TRUE(store->File(Mismatch("add.s32", 1)).ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  for (const EntryInfo& e : *entries) {
    const absl::StatusOr<std::string> output =
        ReadFile(absl::StrCat(dir, "/", e.name, "/", kFaultOutputFile));
    if (e.signature.kind == FindingKind::kCrash) {
      EXPECT_EQ(e.meta.at("how"), "killed by signal 8 (SIGFPE)");
      ASSERT_TRUE(output.ok()) << output.status();
      EXPECT_EQ(*output, "log\nFloating point exception");
    } else {
      EXPECT_EQ(e.meta.count("how"), 0u);
      EXPECT_FALSE(output.ok()) << e.name;
    }
  }
  EXPECT_EQ(FaultOutput("tool: exit status 1; it said: bad kernel / line 3"),
            "bad kernel / line 3");
  EXPECT_EQ(FaultOutput("killed by signal 9 (SIGKILL); it printed nothing"),
            "");
}

// Programs are grouped by their shape, unless they say where their
// executed code departs (issue 40, item 4): then by that, across shapes.
TEST(TriageStoreTest, ProgramsDepartingAtOneInstructionAreOneRootCause) {
  const FindingKind m = FindingKind::kValueMismatch;
  const std::string sel = "executed code that departs first at `SEL R, R, 0xffff, !P`";
  std::vector<EntryInfo> entries = {
      Entry(m, "ptxas", "runtime-executed", "program-a81bce21", 2),
      Entry(m, "ptxas", "runtime-executed", "program-1f2e3d4c", 1),
      Entry(m, "ptxas", "runtime-executed", "program-452552bc", 1),
      Entry(m, "ptxas", "runtime-claim", "program-00c0ffee", 1),
      Entry(m, "ptxas", "runtime-claim", "program-0000beef", 1),
  };
  entries[0].meta["shape"] = "abs.s32, cvt.sat.u16.s32";
  entries[1].meta["shape"] = "neg.s32, cvt.sat.u16.s32";
  entries[2].meta["shape"] = "cnot.b32, cvt.sat.s16.u32";
  entries[3].meta["shape"] = "bfe.s32";
  entries[4].meta["shape"] = "bfe.s32";
  entries[0].meta["cause"] = entries[1].meta["cause"] = sel;
  entries[2].meta["cause"] =
      "executed code that departs first at `SEL R, R, 0xffff8000, !P`";
  const std::vector<RootCause> causes = GroupByRootCause(entries);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].spelling, sel);
  EXPECT_EQ(causes[0].entries.size(), 2u);
  EXPECT_EQ(causes[0].count, 3);
  EXPECT_EQ(causes[2].spelling, "program: bfe.s32");
  EXPECT_EQ(causes[2].entries.size(), 2u);
}

// Issue 64: a program whose constant one instruction explains is filed
// under that variant, as the tuple entry of the variant is: one cause, said
// in words with what ptxas assumed; the other kinds of key in words too.
TEST(TriageStoreTest, AProgramsCulpritJoinsTheTupleCauseAndIsSaidInWords) {
  const FindingKind m = FindingKind::kValueMismatch;
  std::vector<EntryInfo> entries = {
      Entry(m, "ptxas", "runtime-a.field-past-top", "bfe.s32", 4),
      Entry(m, "ptxas", "immediate-fold", "program-0e37a12f", 1),
      Entry(m, "ptxas", "runtime-executed", "program-452552bc", 1),
      Entry(m, "ptxas", "runtime-claim", "program-00c0ffee", 1),
  };
  entries[1].meta["cause"] = "bfe.s32";
  entries[1].meta["assumed"] =
      "ptxas's constant is what the program gives if `bfe.s32` of 0x0, 0xff, "
      "0x1 (field-past-top) were 0xffffffff (the oracle: 0x0)";
  entries[2].meta["cause"] =
      "executed code that departs first at `SEL R, R, 0xffff8000, !P`";
  entries[3].meta["shape"] = "mov, neg.s32 (loops)";
  entries[3].meta["assumed"] =
      "no cause key: no one top-level instruction's value, taken wrong, gives "
      "ptxas's constant";
  const std::vector<RootCause> causes = GroupByRootCause(entries);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].entries.size(), 2u);
  EXPECT_EQ(causes[0].count, 5);
  EXPECT_EQ(CauseInWords(causes[0]),
            "a wrong value of `bfe.s32` (runtime-a.field-past-top): ptxas's "
            "constant is as if `bfe.s32` of 0x0, 0xff, 0x1 (field-past-top) "
            "were 0xffffffff (the oracle: 0x0)");
  EXPECT_EQ(CauseInWords(causes[1]),
            "miscompiled: the optimized code first goes wrong at `SEL R, R, "
            "0xffff8000, !P` (a value its -O0 code never computes)");
  EXPECT_EQ(CauseInWords(causes[2]),
            "no cause key found: programs of the steps mov, neg.s32 (loops)");
}

// An entry filed before cause keys existed records no search (no
// `assumed`): it is not said to have had one that found nothing.
TEST(TriageStoreTest, AProgramFiledBeforeCauseKeysIsNotSaidToHaveNone) {
  const FindingKind m = FindingKind::kValueMismatch;
  std::vector<EntryInfo> entries = {
      Entry(m, "ptxas", "runtime-claim", "program-00c0ffee", 1),
      Entry(m, "ptxas", "runtime-claim", "program-0000beef", 1),
      Entry(FindingKind::kCrash, "ptxas", "crash", "program-0badf00d", 1),
  };
  entries[0].meta["shape"] = "mov, neg.s32 (loops)";
  entries[1].meta["shape"] = "sub.u32, shl.b32";
  entries[1].meta["assumed"] =
      "no cause key: no one top-level instruction's value, taken wrong, gives "
      "ptxas's constant";
  entries[2].meta["shape"] = "div.s32";
  const std::vector<RootCause> causes = GroupByRootCause(entries);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(CauseInWords(causes[0]),
            "filed before cause keys (none was searched for): programs of the "
            "steps mov, neg.s32 (loops)");
  EXPECT_EQ(CauseInWords(causes[1]),
            "no cause key found: programs of the steps sub.u32, shl.b32");
  EXPECT_EQ(CauseInWords(causes[2]), "programs of the steps div.s32");
}

// A repeat recognized by its cause is counted in the cause's entry.
TEST(TriageStoreTest, RepeatsAreCountedInANamedEntry) {
  const std::string dir = FreshDir("repeats");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  auto filed = store->File(Mismatch("add.s32", 1));
  ASSERT_TRUE(filed.ok()) << filed.status();
  auto counted = store->CountRepeats(filed->entry, 3, "mov then add.s32");
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_FALSE(counted->is_new);
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  const EntryInfo& e = entries->front();
  EXPECT_EQ(e.count(), 4);
  EXPECT_THAT(e.meta.at("found_as"), ::testing::HasSubstr("mov then add.s32"));
  EXPECT_EQ(store->CountRepeats("value-mismatch~x~in-range~add.u32", 1)
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

// A backend's note may name the root cause on a line "cause: ..."
// (docs/worker-protocol.md: ptxas's executed code, where it departs): the
// entry keeps it, and entries of two variants naming it are one cause.
TEST(TriageStoreTest, ACauseTheBackendsNoteNamesGroupsVariants) {
  const std::string dir = FreshDir("note-causes");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string cause =
      "executed code that departs first at `LOP3.LUT R, RZ, 0x7e, R, 0xe2`";
  for (const char* v : {"bfi.b32", "bfi.b64"}) {
    Finding f = Mismatch(v, 1);
    f.backend_note = absl::StrCat(
        "executed: ptxas's code; the code departs first at +0x0040 ...\n",
        "cause: ", cause, "\nThe SASS that ran:\n/*0000*/  EXIT");
    ASSERT_TRUE(store->File(f).ok());
  }
  ASSERT_TRUE(store->File(Mismatch("add.s32", 1)).ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  std::map<std::string, size_t> causes;
  for (const RootCause& c : GroupByRootCause(*entries))
    causes[c.spelling] = c.entries.size();
  EXPECT_THAT(causes, ::testing::UnorderedElementsAre(
                          ::testing::Pair(cause, 2u),
                          ::testing::Pair("add.s32", 1u)));
}

}  // namespace
}  // namespace ptxdiff
