#include "triage/triage_store.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/triage_" + name + "_" +
                          std::to_string(getpid());
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
  EXPECT_THAT(text, HasSubstr("| value-mismatch | faulty | in-range | `add.s32` | 2 |"));
}

// A directory short of space may take an entry and then not its INDEX.md
// (here a directory in INDEX.md's place makes its rename fail, for root
// too). The finding is filed, and saying it was not would have the campaign
// keep it in its journal and file it, and count it, a second time.
TEST(TriageStoreTest, AnIndexThatCannotBeRewrittenDoesNotUnfileTheEntry) {
  const std::string dir = FreshDir("index");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/INDEX.md/in-the-way'").c_str()), 0);
  auto filed = store->File(Mismatch("add.s32", 1));
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_TRUE(filed->is_new);
  EXPECT_THAT(filed->index_error, HasSubstr("INDEX.md was not rewritten: cannot rename into"));
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
        if (!store->File(Mismatch(shared ? "add.s32" : "bmsk.clamp.b32",
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

TEST(TriageStoreTest, MissingOrUnwritableDirectories) {
  auto missing = TriageStore::Open(FreshDir("missing"), /*create=*/false);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
  // /proc/self/fdinfo exists but takes no new files, even for root.
  auto unwritable = TriageStore::Open("/proc/self/fdinfo", false);
  ASSERT_FALSE(unwritable.ok());
  EXPECT_THAT(unwritable.status().message(), HasSubstr("is not writable"));
  auto store = TriageStore::Open(FreshDir("show"), true);
  EXPECT_THAT(store->Show("crash~x~y~add.s32").status().message(), HasSubstr("no entry"));
  EXPECT_FALSE(store->MergeFrom(FreshDir("nonexistent")).ok());
}

}  // namespace
}  // namespace ptxdiff
