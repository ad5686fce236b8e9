// Refusal classes against a stand-in tool that refuses as a real parser
// does (by feature), and their memory across runs.

#include "backends/ptx_cmd/refusal_classes.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/refusal_recheck.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

bool Runnable(const Variant&) { return true; }

// A parser that refuses every video variant with a selector and every
// packed type, each with one message, and a tool run counter.
struct FeatureParser {
  int runs = 0;
  static std::optional<std::string> Why(const Variant& v) {
    if (IsVideo(v.family) && (v.dsel != Sel::kNone || v.asel != Sel::kNone ||
                              v.bsel != Sel::kNone))
      return "error: video selectors not implemented";
    if (IsPacked(v.type)) return "error: operand \"x2\" has no declaration";
    return std::nullopt;
  }
  AloneRun operator()(const Variant& v, bool /*written*/) {
    ++runs;
    const std::optional<std::string> why = Why(v);
    if (!why) return {.end = AloneRun::kNotRefused};
    return {.end = AloneRun::kRefused, .message = *why};
  }
};

TEST(RefusalClassesTest, FeatureTokensParseBack) {
  for (const Family f : {Family::kAdd, Family::kVadd, Family::kVadd2,
                         Family::kAddc, Family::kLop3, Family::kShf}) {
    for (const Variant& v : VariantsOf(f)) {
      for (const ClassFeature& feature : FeaturesOf(v)) {
        SCOPED_TRACE(FeatureToken(f, feature));
        ASSERT_TRUE(HasFeature(v, feature)) << Spell(v);
        EXPECT_EQ(ParseFeatureToken(f, FeatureToken(f, feature)), feature);
      }
    }
  }
  EXPECT_EQ(ParseFeatureToken(Family::kAdd, "type=nonsense"), std::nullopt);
}

TEST(RefusalClassesTest, AMessageIsComparedWithoutFilesLinesOrTheVariant) {
  const Variant v = V("bfe.u32");
  EXPECT_EQ(RefusalMessage(
                v, {"tool: /tmp/run-7/kernel.ptx:42: parse error: bfe.u32"}, ""),
            "parse error: <instruction>");
  EXPECT_EQ(RefusalMessage(v, {}, "log\nerror at line 9 (kernel.ptx:9:3)\n"),
            "error at line # (kernel.ptx:#:#)");
  EXPECT_EQ(RefusalMessage(v, {}, ""), "");
}

// One refusal, a few sampled runs: the whole class is refused, and what is
// outside it is not.
TEST(RefusalClassesTest, AClassIsLearnedFromOneRefusalAndAFewSamples) {
  FeatureParser tool;
  RefusalClasses classes(Runnable, {});
  const Variant evidence = V("vadd.u32.u32.u32.sat d.b1, a.h0, b, c");
  const std::optional<RefusalClass> learned = classes.Learn(
      evidence, false, *FeatureParser::Why(evidence), std::ref(tool));
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->feature.kind, ClassFeature::kSelectors);
  EXPECT_EQ(learned->sampled, RefusalClasses::kSamples);
  EXPECT_EQ(tool.runs, RefusalClasses::kSamples);
  int members = 0;
  for (const Variant& v : VariantsOf(Family::kVadd)) {
    const bool refused = FeatureParser::Why(v).has_value();
    EXPECT_EQ(classes.Find(v, false) != nullptr, refused) << Spell(v);
    members += refused;
  }
  EXPECT_GT(members, 100);
  // The other shape, and other families, are not in it.
  EXPECT_EQ(classes.Find(evidence, true), nullptr);
  EXPECT_EQ(classes.Find(V("vsub.u32.u32.u32 d.b1, a, b, c"), false), nullptr);
  EXPECT_THAT(learned->Describe(), HasSubstr("vadd with a video operand"));
}

// A hypothesis broader than the tool's refusal is disproved by its first
// sample, the most unlike the refused variant.
TEST(RefusalClassesTest, ATooBroadClassIsDisprovedAndNotTriedAgain) {
  FeatureParser tool;
  RefusalClasses classes(Runnable, {});
  const Variant evidence = V("add.u16x2");
  const std::optional<RefusalClass> learned = classes.Learn(
      evidence, false, *FeatureParser::Why(evidence), std::ref(tool));
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->feature.kind, ClassFeature::kPacked);
  EXPECT_EQ(classes.Find(V("add.u32"), false), nullptr);
  // A refusal no feature explains (the message differs from what its
  // class's samples say): no class, and each hypothesis tried once.
  FeatureParser again;
  const Variant odd = V("sub.s32");
  EXPECT_FALSE(classes.Learn(odd, false, "error: odd", std::ref(again)));
  const int first = again.runs;
  EXPECT_GT(first, 0);
  EXPECT_FALSE(classes.Learn(odd, false, "error: odd", std::ref(again)));
  EXPECT_EQ(again.runs, first);
}

// A hypothesis whose class holds a variant the tool ran is disproved
// without a run: the tool's values are the sample.
TEST(RefusalClassesTest, AVariantThatRanDisprovesWithoutARun) {
  FeatureParser tool;
  RefusalClasses classes(Runnable, {});
  classes.Ran(V("sub.s32"), false);
  EXPECT_FALSE(classes.Learn(V("sub.s32"), false, "error: odd", std::ref(tool)));
  // family and type=s32 both hold sub.s32.
  EXPECT_EQ(tool.runs, 0);
  // In the other shape it says nothing.
  EXPECT_FALSE(classes.Learn(V("sub.s32"), true, "error: odd", std::ref(tool)));
  EXPECT_GT(tool.runs, 0);
}

TEST(RefusalClassesTest, ARunCutShortLeavesTheHypothesisUntested) {
  RefusalClasses classes(Runnable, {});
  int runs = 0;
  const auto cut = [&](const Variant&, bool) {
    ++runs;
    return AloneRun{};
  };
  const Variant evidence = V("add.u16x2");
  EXPECT_FALSE(classes.Learn(evidence, false, "error: x2", cut));
  EXPECT_EQ(runs, 1);
  FeatureParser tool;
  EXPECT_TRUE(classes.Learn(evidence, false, *FeatureParser::Why(evidence),
                            std::ref(tool)));
}

TEST(RefusalClassesTest, ARecheckDropsAWrongClass) {
  FeatureParser tool;
  // Every add refused, as a wrong generalization would say; the tool
  // refuses only its packed types.
  RefusalClasses classes(
      Runnable, {{.family = Family::kAdd,
                  .feature = {.kind = ClassFeature::kFamily},
                  .message = "error: operand \"x2\" has no declaration"}});
  std::optional<RefusalClass> dropped;
  for (int i = 0; i < 40 && !dropped; ++i)
    dropped = classes.Recheck(std::ref(tool));
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(dropped->family, Family::kAdd);
  EXPECT_THAT(classes.classes(), IsEmpty());
}

// A class another worker confirmed is adopted once, and refused here from
// then on without a test.
TEST(RefusalClassesTest, AClassAnotherWorkerLearnedIsAdoptedOnce) {
  RefusalClasses classes(Runnable, {});
  const RefusalClass lop3{.family = Family::kLop3,
                          .feature = {.kind = ClassFeature::kFamily},
                          .message = "error: lop3"};
  classes.Adopt(lop3);
  classes.Adopt(lop3);
  EXPECT_THAT(classes.classes(), SizeIs(1));
  ASSERT_NE(classes.Find(V("lop3.b32"), false), nullptr);
  int runs = 0;
  const auto never = [&](const Variant&, bool) {
    ++runs;
    return AloneRun{.end = AloneRun::kNotRefused};
  };
  EXPECT_FALSE(classes.Learn(V("lop3.b32"), false, "error: lop3", never));
  EXPECT_EQ(runs, 0);
}

TEST(RefusalMemoryTest, ClassesAreRememberedAndDroppedAcrossRuns) {
  auto dir = TempDir::Create("refusal-classes-test");
  ASSERT_TRUE(dir.ok());
  const RefusalMemory memory((*dir)->File("refusals"), "tool {ptx}", "sm_90");
  const RefusalClass selectors{.family = Family::kVadd,
                               .feature = {.kind = ClassFeature::kSelectors},
                               .message = "error: selectors",
                               .sampled = 3};
  const RefusalClass sat{
      .family = Family::kAdd,
      .feature = *ParseFeatureToken(Family::kAdd, "sat=sat"),
      .written = true,
      .message = "error: sat",
      .sampled = 4};
  ASSERT_TRUE(memory.RememberClass(selectors).ok());
  ASSERT_TRUE(memory.RememberClass(sat).ok());
  ASSERT_TRUE(memory.Remember({V("add.u32"), false}, "why").ok());
  absl::StatusOr<Remembered> loaded = memory.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_THAT(loaded->classes, SizeIs(2));
  EXPECT_EQ(loaded->classes[1].feature, sat.feature);
  EXPECT_TRUE(loaded->classes[1].written);
  EXPECT_EQ(loaded->classes[1].sampled, 4);
  EXPECT_EQ(loaded->classes[1].message, "error: sat");
  EXPECT_THAT(loaded->variants, SizeIs(1));
  ASSERT_TRUE(memory.ForgetClass(selectors).ok());
  loaded = memory.Load();
  ASSERT_TRUE(loaded.ok());
  ASSERT_THAT(loaded->classes, SizeIs(1));
  EXPECT_EQ(loaded->classes[0].family, Family::kAdd);
  EXPECT_THAT(RememberedClasses((*dir)->File("refusals"), "tool {ptx}"),
              SizeIs(1));
}

// The re-check at a run's start (refusal_recheck.h): one variant a message;
// a message whose variant the tool runs now is forgotten with every refusal
// and class it holds, one refused again is kept; a refusal learned after the
// forgetting stands.
TEST(RefusalRecheckTest, WhatTheToolRunsNowIsForgottenAndTheRestKept) {
  auto dir = TempDir::Create("refusal-recheck-test");
  ASSERT_TRUE(dir.ok());
  const RefusalMemory memory((*dir)->File("refusals"), "tool {ptx}", "sm_90");
  const std::string licence = "error: cannot check out a license";
  const auto failed = [&](absl::string_view spelling) {
    return absl::StrCat("ptx-cmd: command 'tool {ptx}' failed on ", spelling,
                        " (3 tuples): exit status 1; it said: ", licence);
  };
  ASSERT_TRUE(memory.Remember({V("add.u32"), false}, failed("add.u32")).ok());
  ASSERT_TRUE(memory.Remember({V("sub.s32"), false}, failed("sub.s32")).ok());
  ASSERT_TRUE(memory
                  .RememberClass({.family = Family::kAdd,
                                  .feature = {.kind = ClassFeature::kFamily},
                                  .written = true,
                                  .message = licence,
                                  .sampled = 3})
                  .ok());
  ASSERT_TRUE(memory
                  .Remember({V("lop3.b32"), false},
                            "ptx-cmd: command 'tool {ptx}' failed on lop3.b32 "
                            "(1 tuple): exit status 1; it said: "
                            "kernel.ptx:12: parse error: unknown lop3.b32")
                  .ok());
  absl::StatusOr<Remembered> remembered = memory.Load();
  ASSERT_TRUE(remembered.ok());
  std::vector<std::string> ran;
  const auto run = [&](const Variant& v, bool) {
    ran.push_back(Spell(v));
    return AloneRun{.end = v.family == Family::kLop3 ? AloneRun::kRefused
                                                     : AloneRun::kNotRefused};
  };
  absl::Status error;
  const std::vector<Forgotten> forgotten = RecheckRemembered(
      memory, *remembered, [](const Variant&) { return true; }, run, Kept{},
      &error);
  ASSERT_TRUE(error.ok()) << error;
  EXPECT_THAT(ran, SizeIs(2));  // one a message
  ASSERT_THAT(forgotten, SizeIs(1));
  EXPECT_EQ(forgotten[0].message, licence);
  EXPECT_EQ(forgotten[0].variants, 2);
  EXPECT_EQ(forgotten[0].classes, 1);
  EXPECT_EQ(DescribeForgotten(forgotten[0]),
            "2 refusals and 1 class remembered with \"" + licence + "\"");
  // In the run, and in the file for the next.
  for (const Remembered& r : {*remembered, *memory.Load()}) {
    EXPECT_THAT(r.variants, SizeIs(1));
    EXPECT_TRUE(r.variants.contains({V("lop3.b32"), false}));
    EXPECT_THAT(r.classes, SizeIs(0));
  }
  ASSERT_TRUE(memory.Remember({V("add.u32"), false}, failed("add.u32")).ok());
  EXPECT_TRUE(memory.Load()->variants.contains({V("add.u32"), false}));
  EXPECT_THAT(ForgottenSince((*dir)->File("refusals"), "tool {ptx}", 0),
              SizeIs(1));
}

// A message a re-check keeps is not tried again in the same run (a worker
// restarted, another of the run's workers) until kRecheckEvery has passed;
// another run tries it at its start.
TEST(RefusalMemoryTest, AMessageKeptIsReCheckedOnceARun) {
  auto dir = TempDir::Create("refusal-once-test");
  ASSERT_TRUE(dir.ok());
  const RefusalMemory memory((*dir)->File("refusals"), "tool {ptx}", "sm_90");
  ASSERT_TRUE(memory
                  .Remember({V("lop3.b32"), false},
                            "kernel.ptx:12: parse error: unknown lop3.b32")
                  .ok());
  int runs = 0;
  const auto refuses = [&](const Variant&, bool) {
    ++runs;
    return AloneRun{.end = AloneRun::kRefused};
  };
  const auto recheck = [&](const Kept& now) {
    absl::StatusOr<Remembered> remembered = memory.Load();
    EXPECT_TRUE(remembered.ok());
    absl::Status error;
    EXPECT_THAT(RecheckRemembered(
                    memory, *remembered, [](const Variant&) { return true; },
                    refuses, now, &error),
                SizeIs(0));
    EXPECT_TRUE(error.ok()) << error;
  };
  constexpr int64_t kT = 1'800'000'000;
  recheck({.unix_seconds = kT, .run = "1-100"});
  EXPECT_EQ(runs, 1);
  recheck({.unix_seconds = kT + 5, .run = "1-100"});  // a restart
  EXPECT_EQ(runs, 1);
  recheck({.unix_seconds = kT + 6, .run = "2-200"});  // the next run
  EXPECT_EQ(runs, 2);
  recheck({.unix_seconds = kT + 6 + absl::ToInt64Seconds(kRecheckEvery),
           .run = "2-200"});  // long after, in a long run
  EXPECT_EQ(runs, 3);
  recheck({.unix_seconds = kT + 7, .run = ""});  // no run named: each time
  recheck({.unix_seconds = kT + 7, .run = ""});
  EXPECT_EQ(runs, 5);
  EXPECT_TRUE(memory.Load()->variants.contains({V("lop3.b32"), false}));
}

// A memory file grown huge (damaged) is refused, not read whole: a campaign
// says so, and a report skips it, without taking the memory.
TEST(RefusalMemoryTest, AHugeMemoryIsRefusedUnread) {
  auto dir = TempDir::Create("refusal-huge-test");
  ASSERT_TRUE(dir.ok());
  const std::string refusals = (*dir)->File("refusals");
  const RefusalMemory memory(refusals, "tool {ptx}", "sm_90");
  ASSERT_TRUE(memory.Remember({V("add.u32"), false}, "why").ok());
  ASSERT_EQ(truncate(memory.path().c_str(), off_t{1} << 30), 0);  // sparse
  const absl::StatusOr<Remembered> loaded = memory.Load();
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("larger than"));
  EXPECT_THAT(RememberedTools(refusals), SizeIs(0));
}

// A report reads every tool's file of a refusals directory by its header,
// with what it holds; a file that is no memory's is skipped.
TEST(RefusalMemoryTest, EveryToolOfADirectoryIsReadByItsHeader) {
  auto dir = TempDir::Create("refusal-tools-test");
  ASSERT_TRUE(dir.ok());
  const std::string refusals = (*dir)->File("refusals");
  const RefusalMemory b(refusals, "b-tool 'x' {ptx}", "sm_80");
  const RefusalMemory a(refusals, "a-tool {ptx}", "sm_90");
  ASSERT_TRUE(b.Remember({V("add.u32"), false}, "why b").ok());
  ASSERT_TRUE(a.Remember({V("lop3.b32"), true}, "why a").ok());
  ASSERT_TRUE(a.RememberClass({.family = Family::kVadd,
                               .feature = {.kind = ClassFeature::kSelectors},
                               .message = "error: selectors",
                               .sampled = 3})
                  .ok());
  ASSERT_TRUE(WriteFile(refusals + "/other.tsv", "# a note\nregisters\tadd.u32\tx\n").ok());
  // A memory's name whose header was written over is damage, said.
  const std::string garbled = refusals + "/ptx-cmd-0123456789abcdef.tsv";
  ASSERT_TRUE(
      WriteFile(garbled, "\x8f\x01garbage\nregisters\tadd.u32\tx\n").ok());
  std::vector<std::string> unreadable;
  const std::vector<RememberedTool> tools =
      RememberedTools(refusals, &unreadable);
  EXPECT_THAT(
      unreadable,
      testing::ElementsAre(garbled + ": its first line is no refusal memory's "
                                     "header: damaged, not read"));
  ASSERT_THAT(tools, SizeIs(2));
  EXPECT_EQ(tools[0].command, "a-tool {ptx}");
  EXPECT_EQ(tools[0].target, "sm_90");
  EXPECT_THAT(tools[0].remembered.classes, SizeIs(1));
  EXPECT_THAT(tools[0].remembered.variants, SizeIs(1));
  EXPECT_EQ(tools[1].command, "b-tool 'x' {ptx}");
  EXPECT_EQ(tools[1].target, "sm_80");
  EXPECT_EQ(tools[1].remembered.variants.begin()->second, "why b");
}

}  // namespace
}  // namespace ptxdiff
