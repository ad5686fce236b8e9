#include "program/program_refusals.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/program_backends.h"
#include "program/program_campaign.h"
#include "program/program_generator.h"
#include "program/program_lane.h"
#include "program/program_tool.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

using testing::Contains;
using testing::Field;
using testing::HasSubstr;
using testing::Not;

// Not a global: its parse would build the ISA's tables before theirs are.
Program WithBmsk() {
  return ProgramOf(
      "input %a .b32 6\nadd.u32 %r0, %a, 3;\nbmsk.clamp.b32 %r1, %r0, 4;\n"
      "output %r1\n");
}

std::vector<std::string> SpellingsOf(const std::vector<RefusedStep>& steps) {
  std::vector<std::string> out;
  for (const RefusedStep& s : steps) out.push_back(s.spelling);
  return out;
}

// Only the instructions not known to run are suspects; a learned one is
// remembered, and read back by the next run as refused.
TEST(ProgramRefusalsTest, LearnsWhatRanAloneAndRemembersIt) {
  auto dir = TempDir::Create("program-refusals");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const RefusalMemory memory(dir->get()->File("refusals"), "tool {ptx}",
                             "sm_90");
  ProgramRefusals refusals(memory);
  ASSERT_TRUE(refusals.Load(GeneratedSpellings()).ok());
  EXPECT_THAT(refusals.Spellings(), testing::IsEmpty());

  refusals.NoteChecked(ProgramOf("input %a .b32 1\nadd.u32 %r0, %a, 3;\n"
                                 "output %r0\n"),
                       ProgramInputs::kRuntime, {.judged = true});
  // A check it refused is no run: nothing noted in that form.
  refusals.NoteChecked(WithBmsk(), ProgramInputs::kImmediate,
                       {.why_not = "refused", .refused = true});
  std::vector<Program> suspects =
      refusals.Suspects(WithBmsk(), ProgramInputs::kRuntime, Reading::kSpec);
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_EQ(Spell(suspects[0].steps[0].variant), "bmsk.clamp.b32");
  // In the other form add.u32 is not known to run.
  EXPECT_EQ(
      refusals.Suspects(WithBmsk(), ProgramInputs::kImmediate, Reading::kSpec)
          .size(),
      2u);

  ASSERT_TRUE(refusals
                  .Learn(suspects[0], ProgramInputs::kRuntime,
                         "exit status 1; its output ends:\ntool: /tmp/r/k.ptx:9: "
                         "error: bmsk.clamp.b32 not implemented")
                  .ok());
  EXPECT_TRUE(refusals.Refuses("bmsk.clamp.b32"));
  EXPECT_THAT(
      refusals.Suspects(WithBmsk(), ProgramInputs::kRuntime, Reading::kSpec),
      testing::IsEmpty());

  ProgramRefusals next_run(memory);
  ASSERT_TRUE(next_run.Load(GeneratedSpellings()).ok());
  const std::vector<RefusedStep> all = next_run.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].spelling, "bmsk.clamp.b32");
  EXPECT_TRUE(all[0].remembered);
  // The tool's words, without the run's file and line, as the tuple
  // campaign keeps them.
  EXPECT_EQ(all[0].why, "error: <instruction> not implemented");
}

// A tool that logs after its error: the refusal is learned by its error
// line, not by the end of its log.
TEST(ProgramRefusalsTest, TheToolsErrorLineIsWhatIsKept) {
  ProgramRefusals refusals;
  const std::vector<Program> suspects = refusals.Suspects(
      WithBmsk(), ProgramInputs::kImmediate, Reading::kSpec);
  ASSERT_EQ(suspects.size(), 2u);
  ASSERT_TRUE(refusals
                  .Learn(suspects[1], ProgramInputs::kImmediate,
                         absl::StrCat("exit status 1", kToolSaid,
                                      "tool: /tmp/r/k.ptx:31: parse error: "
                                      "unknown instruction bmsk.clamp.b32\n"
                                      "; its output ends:\nconfig option 3 = 1"
                                      "\nkernel done: 2 tuples"))
                  .ok());
  const std::vector<RefusedStep> all = refusals.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].spelling, "bmsk.clamp.b32");
  EXPECT_EQ(all[0].why, "parse error: unknown instruction <instruction>");
}

// A class the tuple campaign confirmed on the same tool (the whole `shf`
// family) keeps every generated variant of it out of the programs.
TEST(ProgramRefusalsTest, AClassTheTupleCampaignLearnedIsRefused) {
  auto dir = TempDir::Create("program-refusals");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const RefusalMemory memory(dir->get()->File("refusals"), "tool {ptx}",
                             "sm_90");
  ASSERT_TRUE(memory
                  .RememberClass({.family = Family::kShf,
                                  .feature = {.kind = ClassFeature::kFamily},
                                  .written = false,
                                  .message = "error: 'shf' not implemented",
                                  .sampled = 3})
                  .ok());
  ProgramRefusals refusals(memory);
  ASSERT_TRUE(refusals.Load(GeneratedSpellings()).ok());
  EXPECT_THAT(refusals.Spellings(),
              testing::UnorderedElementsAre("shf.l.clamp.b32",
                                            "shf.r.wrap.b32"));
}

#ifdef PTXDIFF_INTERPRETER_PATH
// A campaign on a tool that refuses `bmsk` learns it from the first batch's
// refused programs and draws it no more; the next run on the same memory
// starts knowing it, and no program of it is refused again.
TEST(ProgramRefusalsCampaignTest, ARefusedInstructionIsLearnedOnceAndKept) {
  auto dir = TempDir::Create("program-refusals-campaign");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string command = absl::StrCat(
      PTXDIFF_INTERPRETER_PATH, " --refuse=bmsk {ptx} {in} {out}");
  const RefusalMemory memory(dir->get()->File("refusals"), command, "sm_90");
  // On the engine's worker of the tool.
  const ProgramBackendOptions backend{.backend =
                                          absl::StrCat("ptx-cmd:", command)};
  const absl::StatusOr<ProgramWorkers> workers = ProgramWorkersFor(backend);
  ASSERT_TRUE(workers.ok()) << workers.status();
  auto run = [&](int programs) {
    ProgramCampaignOptions o;
    o.threads = 1;
    o.seed = 3;
    o.triage_dir = dir->get()->File("triage");
    o.refusal_memory = memory;
    ProgramShape shape;  // as the campaign gives it before each batch
    o.on_shape = [&shape](const ProgramShape& s) { shape = s; };
    int drawn = 0;
    o.next = [&](std::mt19937_64& rng) -> std::optional<Program> {
      if (drawn++ == programs) return std::nullopt;
      return RandomProgram(rng, shape);
    };
    absl::StatusOr<ProgramCampaignReport> r =
        RunProgramsOnEngine(o, backend, *workers, nullptr);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ProgramCampaignReport{};
  };

  const ProgramCampaignReport first = run(2 * kProgramsPerPtxasRun);
  EXPECT_THAT(first.errors, testing::IsEmpty());
  ASSERT_THAT(SpellingsOf(first.refused), Contains("bmsk.clamp.b32"));
  EXPECT_THAT(first.refused, Contains(Field(&RefusedStep::remembered, false)));
  EXPECT_GE(first.refused_programs, 1);
  // Only the first batch, drawn before anything was learned, held it.
  EXPECT_LE(first.refused_programs, kProgramsPerPtxasRun);
  EXPECT_EQ(first.refusal_checks, 1);
  EXPECT_EQ(first.refusals_file, memory.path());
  // Nothing else the tool ran was taken for refused.
  EXPECT_EQ(first.refused.size(), 1u) << testing::PrintToString(
      SpellingsOf(first.refused));

  const ProgramCampaignReport second = run(kProgramsPerPtxasRun);
  EXPECT_THAT(second.refused,
              Contains(Field(&RefusedStep::remembered, true)));
  EXPECT_EQ(second.refused_programs, 0);
  EXPECT_EQ(second.refusal_checks, 0);
  EXPECT_EQ(second.programs, kProgramsPerPtxasRun);
}
#endif  // PTXDIFF_INTERPRETER_PATH

}  // namespace
}  // namespace ptxdiff
