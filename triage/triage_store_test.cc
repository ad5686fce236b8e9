#include "triage/triage_store.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "triage/testing/findings.h"
#include "triage/text_case.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/triage_" + name + "_" + std::to_string(getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

Finding Mismatch(const char* spelling, uint64_t a, uint64_t flip = 1) {
  Finding f;
  f.tuple = {*ParseVariant(spelling), {{a, 3, 5, 7}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend_bits = f.oracle.bits ^ flip;
  f.backend = "faulty";
  f.backend_identity = "faulty 1";
  f.raw_input = std::string("\x00\x01raw", 5);
  return f;
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) names.insert(e->d_name);
  closedir(d);
  return names;
}

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
              HasSubstr("INDEX.md was not rewritten: cannot rename into"));
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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The files of an entry kept aside by a repair: <file>.damaged-<time>.
std::vector<std::string> KeptAside(const std::string& entry_dir,
                                   const std::string& file) {
  std::vector<std::string> kept;
  for (const std::string& name : Names(entry_dir)) {
    if (name.rfind(file + ".damaged-", 0) == 0)
      kept.push_back(entry_dir + "/" + name);
  }
  return kept;
}

// An entry filed twice, and its directory.
struct Filed {
  std::string dir, name, path;
};
Filed FiledTwice(const std::string& test) {
  Filed f{.dir = FreshDir(test)};
  auto store = TriageStore::Open(f.dir, true);
  f.name = store->File(Mismatch("add.s32", 1))->entry;
  (void)store->File(Mismatch("add.s32", 2));
  f.path = f.dir + "/" + f.name;
  return f;
}

const EntryInfo& Only(const absl::StatusOr<std::vector<EntryInfo>>& entries) {
  EXPECT_TRUE(entries.ok() && entries->size() == 1);
  return entries->front();
}

// Garbage in meta.txt (a PNG's first bytes): listed as damage, shown
// escaped, and on the next filing copied aside whole before meta.txt is
// rewritten with what parsed; the count, which parsed, goes on.
TEST(TriageStoreTest, GarbageInMetaIsReportedKeptAsideAndTheCountGoesOn) {
  const Filed e = FiledTwice("damaged_meta");
  const std::string damaged =
      ReadAll(e.path + "/meta.txt") + "\x89PNG\r\n\x1a\nnot a key value line\n";
  WriteAll(e.path + "/meta.txt", damaged);
  auto store = TriageStore::Open(e.dir, false);

  const EntryInfo listed = Only(store->List());
  ASSERT_EQ(listed.damage.size(), 1u);
  EXPECT_THAT(listed.damage[0],
              HasSubstr("meta.txt has 3 lines that are not 'key: value' ("
                        "line 9: \"\\x89PNG\\r\")"));
  EXPECT_EQ(listed.CountText(), "2");
  const std::string shown = *store->Show(e.name);
  EXPECT_THAT(shown, HasSubstr("# DAMAGED: meta.txt has 3 lines"));
  EXPECT_THAT(
      shown,
      HasSubstr("reading: spec\n\\x89PNG\\x0d\n\\x1a\nnot a key value line\n"));
  EXPECT_EQ(shown.find('\x89'), std::string::npos);

  auto filed = store->File(Mismatch("add.s32", 3));
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_THAT(filed->repaired,
              HasSubstr("meta.txt has 3 lines that are not 'key: value'"));
  EXPECT_THAT(filed->repaired, HasSubstr(": kept as meta.txt.damaged-"));
  const std::vector<std::string> kept = KeptAside(e.path, "meta.txt");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(ReadAll(kept[0]), damaged);
  const EntryInfo repaired = Only(store->List());
  EXPECT_TRUE(repaired.damage.empty()) << repaired.damage[0];
  EXPECT_EQ(repaired.CountText(), "3");
  EXPECT_EQ(repaired.meta.at("backend"), "faulty 1");
  EXPECT_THAT(repaired.meta.at("repaired"),
              HasSubstr("kept as meta.txt.damaged-"));
  EXPECT_THAT(repaired.kept_aside,
              ::testing::ElementsAre(kept[0].substr(e.path.size() + 1)));
}

// A list says after an entry's name how it faulted, or the cause a contrast
// told, and in how many variants it was found where that is more than one.
TEST(EntryInfoTest, TheGistIsHowItFaultedOrItsCauseAndItsVariants) {
  EntryInfo e;
  EXPECT_EQ(e.Gist(), "");
  e.meta["found_as"] = "add.u64";
  EXPECT_EQ(e.Gist(), "");
  e.meta["cause"] = "64-bit immediates read as their low 32 bits";
  EXPECT_EQ(e.Gist(), ": 64-bit immediates read as their low 32 bits");
  e.meta["found_as"] = "add.u64, add.s64, setp.eq.b64";
  EXPECT_EQ(e.Gist(),
            ": 64-bit immediates read as their low 32 bits (found in 3 "
            "variants)");
  EntryInfo crash;
  crash.meta["how"] = "killed by signal 6 (SIGABRT)";
  crash.meta["cause"] = "crash in sad: killed by signal 6 (SIGABRT)";
  EXPECT_EQ(crash.Gist(), ": killed by signal 6 (SIGABRT)");
}

// A count that does not parse: the other keys are kept, the count restarts
// and says from when it counts, and why.
TEST(TriageStoreTest, ACountThatDoesNotParseKeepsTheOtherKeysAndSaysSo) {
  const Filed e = FiledTwice("damaged_count");
  std::string meta = ReadAll(e.path + "/meta.txt");
  meta.replace(meta.find("count: 2"), 8, "count: 18x9");
  WriteAll(e.path + "/meta.txt", meta);
  auto store = TriageStore::Open(e.dir, false);
  const EntryInfo listed = Only(store->List());
  EXPECT_THAT(listed.damage, ::testing::ElementsAre(
                                 "meta.txt's count \"18x9\" is not a number"));
  EXPECT_EQ(listed.CountText(), "?");

  ASSERT_TRUE(store->File(Mismatch("add.s32", 3)).ok());
  const EntryInfo repaired = Only(store->List());
  EXPECT_TRUE(repaired.damage.empty());
  EXPECT_EQ(repaired.CountText(), "1+");
  EXPECT_THAT(
      repaired.meta.at("count_lost"),
      HasSubstr(
          ": meta.txt's count \"18x9\" is not a number; counted from then on"));
  EXPECT_EQ(repaired.meta.at("backend"), "faulty 1");
  EXPECT_EQ(repaired.meta.count("first_seen"), 1u);
  EXPECT_EQ(ReadAll(KeptAside(e.path, "meta.txt").at(0)), meta);
  // Merged into another directory, the lost count stays a lower bound there.
  auto other = TriageStore::Open(FreshDir("damaged_count_merge"), true);
  ASSERT_TRUE(other->File(Mismatch("add.s32", 4)).ok());
  ASSERT_TRUE(other->MergeFrom(e.dir).ok());
  EXPECT_EQ(Only(other->List()).CountText(), "2+");
  std::ifstream index(e.dir + "/INDEX.md");
  EXPECT_THAT(std::string((std::istreambuf_iterator<char>(index)), {}),
              HasSubstr("| 1+ |"));
}

// A FIFO in an entry (case.txt) would block every reader of the directory
// (triage list, a campaign's summary): it is damage, not read, and the next
// filing sets it aside.
TEST(TriageStoreTest, AFifoInAnEntryIsDamageNotRead) {
  const Filed e = FiledTwice("fifo");
  ASSERT_EQ(unlink((e.path + "/case.txt").c_str()), 0);
  ASSERT_EQ(mkfifo((e.path + "/case.txt").c_str(), 0600), 0);
  auto store = TriageStore::Open(e.dir, false);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_THAT(Only(store->List()).damage,
              ::testing::ElementsAre(
                  HasSubstr("/case.txt is not a regular file: not read")));
  auto filed = store->File(Mismatch("add.s32", 3));
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_THAT(filed->repaired, HasSubstr("kept as case.txt.damaged-"));
  EXPECT_TRUE(Only(store->List()).damage.empty());
}

// Every file of an entry is read with a bound (entry_files.h): a meta.txt
// past 1 MiB, named with its bound, and a case.txt that is a link to
// /dev/zero, no regular file, are damage never read; the next filing sets
// them aside
// (renamed, not copied) and rebuilds them. A repro.ptx past 16 MiB in a
// directory merged from stops the merge, naming it.
TEST(TriageStoreTest, FilesPastTheirBoundAreNamedAndSetAside) {
  const Filed e = FiledTwice("oversized");
  WriteAll(e.path + "/meta.txt", std::string((1 << 20) + 1, 'x'));
  ASSERT_EQ(unlink((e.path + "/case.txt").c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", (e.path + "/case.txt").c_str()), 0);
  auto store = TriageStore::Open(e.dir, false);
  const std::string meta_bound = absl::StrCat(
      e.path, "/meta.txt is larger than 1048576 bytes (or endless)");
  const std::string case_bound =
      absl::StrCat(e.path, "/case.txt is not a regular file");
  EXPECT_THAT(Only(store->List()).damage,
              ::testing::ElementsAre(
                  "meta.txt cannot be read: " + meta_bound + ": not read",
                  "case.txt cannot be read: " + case_bound + ": not read"));
  EXPECT_THAT(*store->Show(e.name), HasSubstr("# meta.txt: " + meta_bound));

  auto filed = store->File(Mismatch("add.s32", 3));
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_THAT(filed->repaired,
              HasSubstr("meta.txt was larger than 1048576 bytes: kept as "
                        "meta.txt.damaged-"));
  EXPECT_THAT(filed->repaired,
              HasSubstr(case_bound + ": not read: kept as case.txt.damaged-"));
  const EntryInfo repaired = Only(store->List());
  EXPECT_TRUE(repaired.damage.empty()) << repaired.damage[0];
  EXPECT_EQ(repaired.CountText(), "1+");
  ASSERT_EQ(KeptAside(e.path, "case.txt").size(), 1u);
  char link[32] = {};
  EXPECT_GT(readlink(KeptAside(e.path, "case.txt")[0].c_str(), link, 31), 0);
  EXPECT_STREQ(link, "/dev/zero");

  ASSERT_EQ(truncate((e.path + "/repro.ptx").c_str(), (16 << 20) + 1), 0);
  auto other = TriageStore::Open(FreshDir("oversized_merge"), true);
  EXPECT_THAT(other->MergeFrom(e.dir).status().message(),
              HasSubstr("/repro.ptx is larger than 16777216 bytes"));
}

// A missing meta.txt made every later filing of the signature fail: it is
// rebuilt from the entry (first seen: when its case was written) and the
// filing, its count unknown before.
TEST(TriageStoreTest, AMissingMetaIsRebuiltAndFilingGoesOn) {
  const Filed e = FiledTwice("missing_meta");
  ASSERT_EQ(unlink((e.path + "/meta.txt").c_str()), 0);
  auto store = TriageStore::Open(e.dir, false);
  const EntryInfo listed = Only(store->List());
  EXPECT_THAT(listed.damage, ::testing::ElementsAre("meta.txt is missing"));
  EXPECT_EQ(listed.CountText(), "?");
  EXPECT_THAT(*store->Show(e.name),
              HasSubstr("# DAMAGED: meta.txt is missing\n"));

  auto filed = store->File(Mismatch("add.s32", 3));
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_FALSE(filed->is_new);
  EXPECT_EQ(filed->repaired, "meta.txt was missing: rebuilt");
  const EntryInfo repaired = Only(store->List());
  EXPECT_TRUE(repaired.damage.empty());
  EXPECT_EQ(repaired.CountText(), "1+");
  EXPECT_EQ(repaired.meta.at("backend"), "faulty 1");
  EXPECT_EQ(repaired.meta.count("first_seen"), 1u);
  EXPECT_THAT(repaired.meta.at("count_lost"),
              HasSubstr("meta.txt was missing"));
  // Marking an entry whose meta.txt is gone rebuilds it too.
  ASSERT_EQ(unlink((e.path + "/meta.txt").c_str()), 0);
  ASSERT_TRUE(store->MarkExplained(e.name, "known").ok());
  EXPECT_EQ(Only(store->List()).CountText(), "0+");
}

// A case.txt cut short (still replayable, or not) or missing is noticed,
// and the next filing, a case of the same signature, rebuilds it; the
// damaged one is kept.
TEST(TriageStoreTest, ATruncatedOrMissingCaseIsNoticedAndRebuilt) {
  const Filed e = FiledTwice("damaged_case");
  const std::string whole = ReadAll(e.path + "/case.txt");
  const struct {
    std::string bytes;  // what case.txt becomes; "-" to remove it
    std::string damage;
  } kDamages[] = {
      {whole.substr(0, whole.find("kind:") + 8),
       "case.txt is cut short: its last line has no newline"},
      {whole.substr(0, whole.find("operands:")),
       "case.txt does not parse: a text case needs"},
      {"", "case.txt is empty"},
      {"-", "case.txt is missing"},
  };
  auto store = TriageStore::Open(e.dir, false);
  for (const auto& d : kDamages) {
    SCOPED_TRACE(d.damage);
    if (d.bytes == "-") {
      ASSERT_EQ(unlink((e.path + "/case.txt").c_str()), 0);
    } else {
      WriteAll(e.path + "/case.txt", d.bytes);
    }
    const EntryInfo listed = Only(store->List());
    ASSERT_EQ(listed.damage.size(), 1u);
    EXPECT_THAT(listed.damage[0], HasSubstr(d.damage));
    EXPECT_EQ(listed.CountText(), "2");  // meta.txt is sound

    auto filed = store->File(Mismatch("add.s32", 3));
    ASSERT_TRUE(filed.ok()) << filed.status();
    EXPECT_THAT(filed->repaired, HasSubstr(d.damage));
    EXPECT_THAT(filed->repaired,
                HasSubstr("rebuilt from a repeat of the finding"));
    EXPECT_TRUE(Only(store->List()).damage.empty());
    auto replayed = ParseTextCase(ReadAll(e.path + "/case.txt"));
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    EXPECT_EQ(replayed->operands.v[0], 3u);
    // Back to two filings, for the next round's expectations.
    std::string meta = ReadAll(e.path + "/meta.txt");
    meta.replace(meta.find("count: 3"), 8, "count: 2");
    WriteAll(e.path + "/meta.txt", meta);
  }
  // The three damaged files are kept (the missing one had nothing to keep).
  EXPECT_EQ(KeptAside(e.path, "case.txt").size(), 3u);
}

// Issue 28: an unisolated fault was filed under the batch's first variant,
// with that tuple alone in its case and repro.ptx. Its entry is named after
// the batch, its case holds every tuple of it (and is checked against the
// name: a case cut short is damage), it has no repro.ptx (no one kernel
// faulted), and meta.txt names the batch's variants for `triage list`.
TEST(TriageStoreTest, AnUnisolatedFaultIsFiledAsItsWholeBatch) {
  const std::string dir = FreshDir("unisolated");
  auto store = TriageStore::Open(dir, true);
  ASSERT_TRUE(store.ok());
  Finding f = AnUnisolatedHangOfABatch();
  f.detail =
      "unisolated hang of a batch of 3 tuple(s) not narrowed to one tuple: why";
  auto filed = store->File(f);
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_EQ(filed->entry, "hang~faulty~unisolated-hang~" + BatchName(f.batch));
  const std::string path = dir + "/" + filed->entry;
  EXPECT_EQ(*ParseTextCaseTuples(ReadAll(path + "/case.txt")), f.batch);
  EXPECT_EQ(access((path + "/repro.ptx").c_str(), F_OK), -1);
  EntryInfo listed = Only(store->List());
  EXPECT_TRUE(listed.damage.empty()) << listed.damage[0];
  EXPECT_EQ(listed.meta["batch"], "3 tuples of add.cc.s32, add.sat.s32");
  // Counted again, still without a repro.ptx (a repair does not make one).
  ASSERT_TRUE(store->File(f).ok());
  EXPECT_EQ(access((path + "/repro.ptx").c_str(), F_OK), -1);
  EXPECT_EQ(Only(store->List()).count(), 2);
  // Cut short by a tuple: damage, and the next filing rebuilds the case.
  const std::string whole = ReadAll(path + "/case.txt");
  WriteAll(path + "/case.txt", whole.substr(0, whole.rfind("variant:")));
  listed = Only(store->List());
  ASSERT_EQ(listed.damage.size(), 1u);
  EXPECT_THAT(listed.damage[0],
              HasSubstr("case.txt is cut short: its batch: line says 3"));
  filed = store->File(f);
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_THAT(filed->repaired,
              HasSubstr("rebuilt from a repeat of the finding"));
  EXPECT_EQ(*ParseTextCaseTuples(ReadAll(path + "/case.txt")), f.batch);
}

TEST(TriageStoreTest, MissingOrUnwritableDirectories) {
  auto missing = TriageStore::Open(FreshDir("missing"), /*create=*/false);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
  // /proc/self/fdinfo exists but takes no new files, even for root.
  auto unwritable = TriageStore::Open("/proc/self/fdinfo", false);
  ASSERT_FALSE(unwritable.ok());
  EXPECT_THAT(unwritable.status().message(), HasSubstr("is not writable"));
  auto store = TriageStore::Open(FreshDir("show"), true);
  EXPECT_THAT(store->Show("crash~x~y~add.s32").status().message(),
              HasSubstr("no entry"));
  EXPECT_FALSE(store->MergeFrom(FreshDir("nonexistent")).ok());
}

}  // namespace
}  // namespace ptxdiff
