// The triage store with damaged or odd entries and directories: garbage,
// FIFOs and oversized files in an entry, a missing or truncated meta.txt
// or case, unwritable directories (split from triage_store_test.cc).

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "triage/testing/findings.h"
#include "triage/testing/store_fixtures.h"
#include "triage/text_case.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using store_testing::FreshDir;
using store_testing::Mismatch;
using store_testing::Names;
using ::testing::HasSubstr;

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
  // A FIFO for meta.txt is said as one when a mark rebuilds it (the
  // fifteenth fault run: "meta.txt was larger than 1048576 bytes").
  ASSERT_EQ(unlink((e.path + "/meta.txt").c_str()), 0);
  ASSERT_EQ(mkfifo((e.path + "/meta.txt").c_str(), 0600), 0);
  const absl::StatusOr<std::string> marked =
      store->MarkExplained(e.name, "known");
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_THAT(*marked, HasSubstr("meta.txt is not a regular file: kept as "
                                 "meta.txt.damaged-"));
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
              HasSubstr("meta.txt is larger than 1048576 bytes (or "
                        "endless): kept as meta.txt.damaged-"));
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
  absl::StatusOr<std::string> marked = store->MarkExplained(e.name, "known");
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_EQ(*marked, "meta.txt was missing: rebuilt");
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
