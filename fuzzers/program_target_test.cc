#include "fuzzers/program_target.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/program_encoding.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

TEST(ProgramFuzzConfigTest, ReadsItsVariables) {
  auto c = ProgramFuzzConfigFromPairs({{"PTXDIFF_MODE", "crash"},
                                       {"PTXDIFF_BACKEND", "ptx-cmd:t {ptx}"},
                                       {"PTXDIFF_ARCH", "sm_80"},
                                       {"PTXDIFF_TRIAGE_DIR", "/tmp/t"},
                                       {"PTXDIFF_READING", "hardware"},
                                       {"PTXDIFF_TIMEOUT", "3"},
                                       {"PTXDIFF_THREADS", "1"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, ProgramFuzzConfig::Mode::kCrash);
  EXPECT_EQ(c->backend.backend, "ptx-cmd:t {ptx}");
  EXPECT_EQ(c->backend.arch, "sm_80");
  EXPECT_EQ(c->triage_dir, "/tmp/t");
  EXPECT_EQ(c->reading, Reading::kHardware);
  EXPECT_EQ(c->backend.timeout, absl::Seconds(3));
  EXPECT_EQ(c->threads, 1);
}

// On OSS-Fuzz no variable of ours is set: the settings come from a file
// (.clusterfuzzlite/build.sh writes program_fuzzer.conf beside the target;
// here PTXDIFF_CONFIG names one), and the environment overrides it.
TEST(ProgramFuzzConfigTest, ReadsAFileThenTheEnvironment) {
  auto dir = TempDir::Create("program-fuzz-conf");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string conf = (*dir)->File("program_fuzzer.conf");
  ASSERT_TRUE(WriteFile(conf, "# crash mode\nPTXDIFF_MODE=crash\n"
                              "PTXDIFF_TIMEOUT=7\nPTXDIFF_THREADS=3\n")
                  .ok());
  setenv("PTXDIFF_CONFIG", conf.c_str(), 1);
  setenv("PTXDIFF_THREADS", "1", 1);
  auto c = ProgramFuzzConfigFromEnvironment();
  unsetenv("PTXDIFF_CONFIG");
  unsetenv("PTXDIFF_THREADS");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, ProgramFuzzConfig::Mode::kCrash);
  EXPECT_EQ(c->backend.timeout, absl::Seconds(7));
  EXPECT_EQ(c->threads, 1);  // the environment's
}

TEST(ProgramFuzzConfigTest, ABadValueNamesItsVariable) {
  auto reading = ProgramFuzzConfigFromPairs({{"PTXDIFF_READING", "mine"}});
  EXPECT_TRUE(absl::StrContains(reading.status().message(), "PTXDIFF_READING"))
      << reading.status();
  auto mode = ProgramFuzzConfigFromPairs({{"PTXDIFF_MODE", "crashes"}});
  EXPECT_TRUE(absl::StrContains(mode.status().message(), "PTXDIFF_MODE"))
      << mode.status();
  auto timeout = ProgramFuzzConfigFromPairs({{"PTXDIFF_TIMEOUT", "0"}});
  EXPECT_TRUE(absl::StrContains(timeout.status().message(), "PTXDIFF_TIMEOUT"))
      << timeout.status();
  auto backend = ProgramFuzzTarget::Create(
      *ProgramFuzzConfigFromPairs({{"PTXDIFF_BACKEND", "cobol"}}));
  EXPECT_TRUE(absl::StrContains(backend.status().message(), "cobol"))
      << backend.status();
}

#ifdef PTXDIFF_INTERPRETER_PATH

std::string Bytes(const std::string& body) {
  absl::StatusOr<std::string> bytes = ProgramInputBytes(ProgramOf(body));
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.value_or("");
}

int Feed(ProgramFuzzTarget& target, const std::string& bytes) {
  return target.RunInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                         bytes.size());
}

class ProgramFuzzTargetTest : public testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("program-fuzz-test");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *std::move(dir);
  }
  // The tests' interpreter as the tool, with a wrong xor.b32 planted.
  std::unique_ptr<ProgramFuzzTarget> Target(
      ProgramFuzzConfig::Mode mode = ProgramFuzzConfig::Mode::kCampaign) {
    ProgramFuzzConfig config;
    config.mode = mode;
    config.backend.backend =
        absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                     " --flip-on=xor.b32 {ptx} {in} {out}");
    config.triage_dir = dir_->File("triage");
    auto target = ProgramFuzzTarget::Create(config);
    EXPECT_TRUE(target.ok()) << target.status();
    return target.ok() ? *std::move(target) : nullptr;
  }
  std::unique_ptr<TempDir> dir_;
};

// Every program run is checked, and the planted bug is minimized and filed.
TEST_F(ProgramFuzzTargetTest, QueuedProgramsAreCheckedAndWhatDisagreesFiled) {
  auto target = Target();
  ASSERT_NE(target, nullptr);
  const std::string right = Bytes(
      "input %a .b32 5\ninput %b .b32 9\nadd.u32 %r, %a, %b;\n"
      "output %r\n");
  const std::string wrong = Bytes(
      "input %a .b32 5\ninput %b .b32 9\nadd.u32 %s, %a, %b;\n"
      "xor.b32 %r, %s, %a;\noutput %r\n");
  for (int k = 0; k < 40; ++k) ASSERT_EQ(Feed(*target, right), 0);
  ASSERT_EQ(Feed(*target, wrong), 0);
  const ProgramCampaignReport& report = target->Stop();
  EXPECT_EQ(report.programs, 41);
  EXPECT_GE(report.disagreements, 1);
  ASSERT_EQ(report.filed.size(), 1u) << ProgramFuzzTarget::Summary(report);
  EXPECT_TRUE(absl::StrContains(report.filed[0].what, "xor.b32"))
      << report.filed[0].what;
  EXPECT_EQ(report.filed[0].steps, 1);
  EXPECT_TRUE(ReadFile(absl::StrCat(dir_->File("triage"), "/",
                                    report.filed[0].entry, "/case.txt"))
                  .ok());
  EXPECT_TRUE(absl::StrContains(ProgramFuzzTarget::Summary(report),
                                "41 programs checked"));
}

// Issue 64: the mutator learns what the campaign no longer generates (a
// cause filed as one instruction) or generates seldom, as the generator
// does.
TEST_F(ProgramFuzzTargetTest, TheMutatorsShapeLearnsWhatTheCampaignAvoids) {
  auto target = Target();
  ASSERT_NE(target, nullptr);
  EXPECT_TRUE(target->Shape().suppressed.empty());
  ASSERT_EQ(Feed(*target, Bytes("input %a .b32 5\ninput %b .b32 9\n"
                                "xor.b32 %r, %a, %b;\noutput %r\n")),
            0);
  const ProgramCampaignReport& report = target->Stop();
  ASSERT_EQ(report.filed.size(), 1u) << ProgramFuzzTarget::Summary(report);
  EXPECT_THAT(report.suppressed, testing::Contains("xor.b32"));
  EXPECT_THAT(target->Shape().suppressed, testing::Contains("xor.b32"));
}

TEST_F(ProgramFuzzTargetTest, WhatIsNoProgramIsNotQueued) {
  auto target = Target();
  ASSERT_NE(target, nullptr);
  std::vector<uint8_t> counters(kProgramSignalCounters);
  target->SetSignalCounters(counters.data());
  EXPECT_EQ(Feed(*target, "\n"), 0);
  EXPECT_EQ(counters[kNumFamilies * kNumSemanticClasses + kNotAProgram], 1);
  EXPECT_EQ(target->Stop().programs, 0);
  // Stopped: an input is neither queued nor waited on.
  EXPECT_EQ(Feed(*target, Bytes("mov.b32 %r, 1;\noutput %r\n")), 0);
  EXPECT_EQ(target->Stop().programs, 0);
}

// Past its max_time the campaign takes no more programs, and the fuzz loop
// does not wait on the full queue (it would wait for ever).
TEST_F(ProgramFuzzTargetTest, PastItsTimeInputsAreNotWaitedOn) {
  ProgramFuzzConfig config;
  config.backend.backend =
      absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH, " {ptx} {in} {out}");
  config.triage_dir = dir_->File("triage");
  config.max_time = absl::ZeroDuration();
  auto target = ProgramFuzzTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  const std::string program = Bytes("mov.b32 %r, 1;\noutput %r\n");
  for (size_t k = 0; k < 3 * config.queue; ++k) {
    ASSERT_EQ(Feed(**target, program), 0);
  }
  EXPECT_EQ((*target)->Stop().programs, 0);
}

TEST_F(ProgramFuzzTargetTest, TheSignalCountsStepClassesAndFeatures) {
  auto target = Target();
  ASSERT_NE(target, nullptr);
  std::vector<uint8_t> counters(kProgramSignalCounters);
  target->SetSignalCounters(counters.data());
  ASSERT_EQ(Feed(*target, Bytes("input %a .b32 0x80000000\nmov.b32 %r, 0;\n"
                                "loop 2 {\nadd.u32 %r, %r, %a;\n}\n"
                                "output %r\n")),
            0);
  const Family add = ParseVariant("add.u32")->family;
  const int min_class = __builtin_ctz(kMinOperand);
  EXPECT_GT(counters[static_cast<int>(add) * kNumSemanticClasses + min_class],
            0);
  const uint8_t* features =
      counters.data() + kNumFamilies * kNumSemanticClasses;
  EXPECT_GT(features[kHasLoop], 0);
  EXPECT_EQ(features[kHasGuard], 0);
  EXPECT_EQ(features[kThreadInput], 0);
  ASSERT_EQ(Feed(*target, Bytes("input %t .b32 %laneid 9\n"
                                "add.u32 %r, %t, 1;\noutput %r\n")),
            0);
  EXPECT_GT(features[kThreadInput], 0);
  EXPECT_EQ(features[kHasBranchOrLabel], 0);
  EXPECT_EQ(features[kHasExit], 0);
  ASSERT_EQ(Feed(*target, Bytes("input %a .b32 3\nsetp.lt.u32 %p, %a, 2;\n"
                                "mov.b32 %r, 1;\n@%p bra L;\n"
                                "add.u32 %r, %r, 1;\nL:\n@!%p exit;\n"
                                "output %r\n")),
            0);
  EXPECT_GT(features[kHasBranchOrLabel], 0);
  EXPECT_GT(features[kHasExit], 0);
  // A tool runs programs on one thread: the mutator makes no thread inputs.
  EXPECT_FALSE(target->Shape().thread_inputs);
  target->Stop();
}

using ProgramFuzzTargetDeathTest = ProgramFuzzTargetTest;

// Crash mode: no campaign; a program that agrees is checked at once, one
// that disagrees aborts with its cause, a culprit's as its tuple's
// (program_crash_cause.h).
TEST_F(ProgramFuzzTargetDeathTest, CrashModeChecksAtOnceAndAbortsWithTheCause) {
  {
    auto target = Target(ProgramFuzzConfig::Mode::kCrash);
    ASSERT_NE(target, nullptr);
    ASSERT_EQ(Feed(*target, Bytes("input %a .b32 5\ninput %b .b32 9\n"
                                  "add.u32 %r, %a, %b;\noutput %r\n")),
              0);
    const ProgramCampaignReport& report = target->Stop();
    EXPECT_EQ(report.programs, 1);
    EXPECT_EQ(report.folded, 1);
    EXPECT_EQ(report.claimed, 1);
    EXPECT_TRUE(report.filed.empty());
  }
  const std::string wrong = Bytes(
      "input %a .b32 0x35\ninput %b .b32 0x1c\nand.b32 %s, %a, %b;\n"
      "xor.b32 %r, %s, %a;\noutput %r\n");
  EXPECT_DEATH(
      {
        auto target = Target(ProgramFuzzConfig::Mode::kCrash);
        Feed(*target, wrong);
      },
      "ptxdiff: value-mismatch ptx-cmd [a-z-]+ program \\(and.b32, "
      "xor.b32\\); key: xor.b32; cause: value-mismatch in xor");
}

#endif  // PTXDIFF_INTERPRETER_PATH

}  // namespace
}  // namespace ptxdiff
