// A tool at its full breadth (issue 62), through a real worker: the test
// interpreter's --realistic mode refuses as a real parser does, by feature
// class and one error line a run, and the backend learns each class from a
// refusal and a few variants of it run alone; a campaign files a crash that
// every variant of a family causes as one entry.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/refusal_recheck.h"
#include "backends/ptx_cmd/testing/interpreter_tool.h"
#include "campaign/campaign.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"
#include "triage/triage_store.h"
#include "worker/testing/ptx_cmd_worker.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

bool Selected(const Variant& v) {
  return IsVideo(v.family) && (v.dsel != Sel::kNone || v.asel != Sel::kNone ||
                               v.bsel != Sel::kNone);
}

// One register-shape tuple of each of `variants`, edge operands.
std::vector<Tuple> OneTupleEach(const std::vector<Variant>& variants) {
  std::mt19937_64 rng(5);
  std::vector<Tuple> tuples;
  for (const Variant& v : variants) {
    std::vector<Operands> operands(1);
    FillEdgeTuples(v, rng, operands);
    tuples.push_back({v, operands[0], RuntimeCapableSources(v)});
  }
  return tuples;
}

// The fixture's mode is the parser it says it is: each feature class
// refused with its message, naming the module's line; the rest run right.
TEST(RealisticFixtureTest, RefusesByFeatureClassNamingTheLine) {
  auto client =
      StartPtxCmdWorker(kInterpreter + " --realistic {ptx} {in} {out}");
  ASSERT_TRUE(client.ok()) << client.status();
  struct Case {
    std::string spelling;
    std::string refusal;  // "" if it runs
  };
  const std::vector<Case> cases = {
      {"vadd.u32.u32.u32 d.b1, a, b, c", "video operand selectors"},
      {"vadd.u32.u32.u32.sat", ""},
      {"vadd2.u32.u32.u32", "SIMD video instruction 'vadd2'"},
      // Its segment sets CC.CF with add.cc first: refused for that.
      {"addc.cc.u32", "'add' with the condition code"},
      {"add.cc.u32", "'add' with the condition code"},
      {"add.u16x2", "operand \"x2\" has no declaration"},
      {"lop3.b32", "near 'lop3'"},
      {"add.sat.s32", ""},
      {"bfe.u64", ""},
  };
  std::vector<Variant> variants;
  for (const Case& c : cases) variants.push_back(V(c.spelling));
  const std::vector<Tuple> tuples = OneTupleEach(variants);
  const BatchOutcome outcome = (*client)->Run(tuples);
  ASSERT_FALSE(outcome.fault.has_value());
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].spelling);
    const TupleResult& r = outcome.results[i];
    const std::string message =
        r.message < outcome.messages.size() ? outcome.messages[r.message] : "";
    if (cases[i].refusal.empty()) {
      ASSERT_EQ(r.kind, ResultKind::kValue) << message;
      EXPECT_EQ(r.bits, Evaluate(tuples[i].variant, tuples[i].operands).bits);
      continue;
    }
    ASSERT_EQ(r.kind, ResultKind::kDecline) << message;
    EXPECT_EQ(r.code, DeclineCode::kUnsupportedVariant);
    EXPECT_THAT(message, HasSubstr(cases[i].refusal));
    // lop3.b32 is its family's only variant: no class to learn, so the
    // decline is the tool's own words, naming the module's line.
    if (cases[i].spelling == "lop3.b32") {
      EXPECT_THAT(message,
                  testing::ContainsRegex("kernel.ptx:[0-9]+: error: syntax"));
    }
  }
}

// A batch of hundreds of variants of a few refused classes costs tens of
// runs, not one or two a variant; a later worker with the same memory
// leaves the classes out of its handshake and runs none of them.
TEST(RefusalLearningTest, AClassCostsAFewRunsAndIsRemembered) {
  auto record = TempDir::Create("refusal-learning-test");
  ASSERT_TRUE(record.ok());
  const std::string log = (*record)->File("runs");
  const std::string command = absl::StrCat(
      "echo run >> ", log, "; ", kInterpreter, " --realistic {ptx} {in} {out}");
  const KeyValues memory = {{"refusals_dir", (*record)->File("refusals")}};
  std::vector<Variant> refused, accepted;
  for (const Family f : {Family::kVadd, Family::kVmax}) {
    for (const Variant& v : VariantsOf(f)) {
      (Selected(v) ? refused : accepted).push_back(v);
    }
  }
  // A campaign's first batches: a few hundred variants, mixed.
  std::mt19937_64 rng(11);
  std::shuffle(refused.begin(), refused.end(), rng);
  refused.resize(std::min<size_t>(refused.size(), 400));
  for (const Variant& v : VariantsOf(Family::kAdd)) {
    (IsPacked(v.type) || v.cc ? refused : accepted).push_back(v);
  }
  std::vector<Variant> all = refused;
  all.insert(all.end(), accepted.begin(), accepted.end());
  std::shuffle(all.begin(), all.end(), rng);
  const std::vector<Tuple> tuples = OneTupleEach(all);
  {
    auto first = StartPtxCmdWorker(command, memory);
    ASSERT_TRUE(first.ok()) << first.status();
    const BatchOutcome outcome = (*first)->Run(tuples);
    ASSERT_FALSE(outcome.fault.has_value());
    int declined = 0;
    for (size_t i = 0; i < tuples.size(); ++i) {
      const TupleResult& r = outcome.results[i];
      const bool refuses = Selected(all[i]) || IsPacked(all[i].type) ||
                           all[i].cc;
      SCOPED_TRACE(Spell(all[i]));
      ASSERT_EQ(r.kind, refuses ? ResultKind::kDecline : ResultKind::kValue)
          << outcome.messages[r.message];
      declined += refuses;
    }
    EXPECT_EQ(declined, static_cast<int>(refused.size()));
    // Three classes (vadd's and vmax's selectors, add's packed types and
    // add's .cc): each its discovery, a few samples and a disproved
    // hypothesis or two, not a run per refused variant.
    EXPECT_LT(LinesIn(log), 40) << "runs for " << refused.size() << " refused";
  }
  const std::vector<RefusalClass> classes =
      RememberedClasses((*record)->File("refusals"), command);
  ASSERT_EQ(classes.size(), 4u);
  for (const RefusalClass& c : classes) {
    // add has two packed variants: one sample is all there is.
    EXPECT_GE(c.sampled, 1) << c.Describe();
    EXPECT_LE(c.sampled, RefusalClasses::kSamples) << c.Describe();
    EXPECT_THAT(c.message, Not(HasSubstr("kernel.ptx"))) << c.Describe();
  }
  // Each message the memory holds is re-checked at the next start
  // (refusal_recheck.h): a variant alone, refused again, kept.
  absl::flat_hash_set<std::string> messages;
  const absl::StatusOr<Remembered> held =
      RefusalMemory((*record)->File("refusals"), command, "sm_90").Load();
  ASSERT_TRUE(held.ok());
  for (const RefusalClass& c : held->classes) messages.insert(c.message);
  for (const auto& [key, why] : held->variants)
    messages.insert(SaidKey(key.first, why));
  RemoveTree(log);
  auto second = StartPtxCmdWorker(command, memory);
  ASSERT_TRUE(second.ok()) << second.status();
  const std::vector<bool>& supported = (*second)->supported_variants();
  // Learned in registers only: the written shape may still run.
  EXPECT_TRUE(supported[VariantIndex(refused[0])]);
  const BatchOutcome again = (*second)->Run(tuples);
  ASSERT_FALSE(again.fault.has_value());
  int as_a_class = 0;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const TupleResult& r = again.results[i];
    const bool refuses = Selected(all[i]) || IsPacked(all[i].type) ||
                         all[i].cc;
    ASSERT_EQ(r.kind, refuses ? ResultKind::kDecline : ResultKind::kValue);
    // The variants run alone are remembered one by one too.
    as_a_class += refuses && absl::StrContains(again.messages[r.message],
                                               "refused by the tool as a class");
  }
  EXPECT_GT(as_a_class, static_cast<int>(refused.size()) / 2);
  // A re-check a message, the start-up probe and one module of what runs.
  EXPECT_EQ(LinesIn(log),
            std::min(static_cast<int>(messages.size()), kMaxRechecked) + 2);
}

// A tool that crashes on every variant of a family (GPGPU-Sim on `set`: 338
// entries once) files one entry for the cause, its variants counted in it.
TEST(FaultFilingTest, ACrashOfEveryVariantOfAFamilyIsOneEntry) {
  auto dir = TempDir::Create("realistic-tool-test");
  ASSERT_TRUE(dir.ok());
  const std::vector<std::string> crashing = {"set.eq.u32.b16", "set.lt.u32.s32",
                                             "set.ne.s32.u64", "set.gt.u32.s16"};
  std::string flags;
  for (const std::string& s : crashing) absl::StrAppend(&flags, " --crash-on=", s);
  auto command = PtxCmdWorkerCommand(
      absl::StrCat(kInterpreter, flags, " {ptx} {in} {out}"));
  ASSERT_TRUE(command.ok()) << command.status();
  CampaignOptions options;
  options.worker = *command;
  options.triage_dir = (*dir)->File("triage");
  options.systematic = false;
  options.batch_size = 64;
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  for (const std::string& s : crashing) {
    const Tuple t{V(s), {{7, 9}}};
    const Result r = Evaluate(t.variant, t.operands);
    (*campaign)->Offer(t, r, SemanticClasses(t, r));
    // One at a time: each is filed before the next is found.
    ASSERT_TRUE((*campaign)->Flush(absl::Seconds(120)));
  }
  const CampaignStats stats = (*campaign)->Snapshot();
  EXPECT_EQ(stats.counts.faulted, static_cast<int64_t>(crashing.size()));
  (*campaign)->Stop();
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  const std::string shown = store->Show((*entries)[0].name).value_or("");
  EXPECT_THAT(shown, HasSubstr("cause: crash in set: killed by signal 11"));
  for (const std::string& s : crashing) EXPECT_THAT(shown, HasSubstr(s));
  EXPECT_THAT(shown, HasSubstr(absl::StrCat("count: ", crashing.size())));
}

}  // namespace
}  // namespace ptxdiff
