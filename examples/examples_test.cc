// The example workers (examples/) driven by ptxdiff itself: through the
// WorkerClient (client/worker_client.h) with every tuple judged against
// the oracle, and through `ptxdiff sweep` as a user would run them. The C++
// and Python examples must agree everywhere on the families they support and
// have everything else declined; the deliberately wrong example must be
// caught, and only on add.sat.s32.

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "client/worker_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "kit/ptxdiff_worker.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

// The kit is one standalone header, so it keeps its own copy of the
// protocol's constants; these pin the copy to the harness's codec.
static_assert(kit::kProtocolVersion == kProtocolVersion);
static_assert(kit::kFrameHeaderSize == kFrameHeaderSize);
static_assert(kit::kMaxPayload == kMaxPayload);
static_assert(kit::kMaxTuplesPerBatch == kMaxTuplesPerBatch);
static_assert(kit::kResultFlagCarry == kResultFlagCarry);
static_assert(static_cast<int>(kit::MessageType::kHello) ==
              static_cast<int>(MessageType::kHello));
static_assert(static_cast<int>(kit::MessageType::kBye) ==
              static_cast<int>(MessageType::kBye));
static_assert(static_cast<int>(kit::DeclineCode::kUnsupported) ==
              static_cast<int>(DeclineCode::kUnsupportedVariant));
static_assert(static_cast<int>(kit::DeclineCode::kOther) ==
              static_cast<int>(DeclineCode::kOther));

using ::testing::HasSubstr;

constexpr int kPerVariant = 64;

// Also keeps the Python worker from leaving __pycache__ in the source tree.
bool Python3OnPath() {
  setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    if (access((std::string(dir) + "/python3").c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Edge tuples of every variant of `families`, drawn for each variant from
// its own seed (its stable id), so that variants added to a family do not
// change the tuples of the others.
std::vector<Tuple> TuplesOf(const std::set<std::string>& families) {
  std::vector<Tuple> tuples;
  std::vector<Operands> ops(kPerVariant);
  for (const Variant& v : AllVariants()) {
    if (!families.count(std::string(InfoOf(v.family).opcode))) continue;
    std::mt19937_64 rng(7 ^ StableId(v));
    FillEdgeTuples(v, rng, ops);
    for (const Operands& o : ops) tuples.push_back({v, o});
  }
  return tuples;
}

struct Judged {
  JudgeCounts counts;
  std::map<std::string, int> agreed_per_family;
  std::set<std::string> variants_agreed, variants_mismatched;
  std::vector<TupleResult> results;
};

Judged RunAndJudge(const std::string& worker,
                   const std::vector<Tuple>& tuples) {
  Judged j;
  auto command = CommandForBackend("exec:" + worker, "");
  EXPECT_TRUE(command.ok()) << command.status();
  auto client = WorkerClient::Start(*command);
  EXPECT_TRUE(client.ok()) << client.status();
  if (!client.ok()) return j;
  const BatchOutcome out = (*client)->Run(tuples);
  EXPECT_FALSE(out.fault.has_value()) << out.fault->detail;
  if (out.fault) return j;
  j.results = out.results;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const Judgement verdict = JudgeTuple(tuples[i], out.results[i]);
    j.counts.Count(verdict.verdict);
    const std::string spelling = Spell(tuples[i].variant);
    if (verdict.verdict == Verdict::kAgree) {
      ++j.agreed_per_family[std::string(
          InfoOf(tuples[i].variant.family).opcode)];
      j.variants_agreed.insert(spelling);
    }
    if (verdict.verdict == Verdict::kMismatch)
      j.variants_mismatched.insert(spelling);
  }
  return j;
}

struct CommandOutput {
  int status = -1;
  std::string text;
};

CommandOutput RunCommand(const std::string& command) {
  CommandOutput out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;)
    out.text.append(buf, n);
  const int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The number after `label` in a sweep summary ("  agreed          2560").
int64_t SweepCount(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\n  " + label + " +([0-9]+)")))
    return -1;
  return std::stoll(m[1]);
}

std::string Sweep(const std::string& worker,
                  const std::set<std::string>& families) {
  std::string command =
      std::string(PTXDIFF_BIN) + " sweep --backend exec:" + worker;
  for (const std::string& f : families) command += " --family " + f;
  return command + " --tuples " + std::to_string(kPerVariant);
}

int VariantsOf(const std::set<std::string>& families) {
  int n = 0;
  for (const Variant& v : AllVariants())
    n += families.count(std::string(InfoOf(v.family).opcode));
  return n;
}

const std::set<std::string> kCppFamilies = {"add", "sub", "min", "max", "bfe"};
const std::set<std::string> kPythonFamilies = {"add", "sub", "min", "max"};

// A worker that must agree on every tuple of `families` and have tuples of
// other families declined as unsupported.
void ExpectAgreesAndDeclinesTheRest(const std::string& worker,
                                    const std::set<std::string>& families) {
  const std::vector<Tuple> tuples = TuplesOf(families);
  const Judged j = RunAndJudge(worker, tuples);
  EXPECT_EQ(j.counts.mismatched, 0) << *j.variants_mismatched.begin();
  EXPECT_EQ(j.counts.declined, 0);
  EXPECT_EQ(j.counts.agreed + j.counts.unspecified,
            static_cast<int64_t>(tuples.size()));
  EXPECT_EQ(j.counts.agreed, static_cast<int64_t>(tuples.size()));
  EXPECT_EQ(j.variants_agreed.size(),
            static_cast<size_t>(VariantsOf(families)));
  for (const std::string& f : families) {
    EXPECT_GT(j.agreed_per_family.count(f) ? j.agreed_per_family.at(f) : 0, 0)
        << f;
  }
  std::printf("%s: %zu tuples of %zu variants agreed\n", worker.c_str(),
              tuples.size(), j.variants_agreed.size());

  const std::vector<Tuple> others =
      TuplesOf({"mul", "bfi", "vadd", "visa.shl"});
  const Judged d = RunAndJudge(worker, others);
  EXPECT_EQ(d.counts.declined, static_cast<int64_t>(others.size()));
  for (const TupleResult& r : d.results) {
    ASSERT_EQ(r.code, DeclineCode::kUnsupportedVariant);
  }
}

void ExpectCleanSweep(const std::string& worker,
                      const std::set<std::string>& families) {
  const CommandOutput out = RunCommand(Sweep(worker, families));
  const int tuples = VariantsOf(families) * kPerVariant;
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_THAT(out.text,
              HasSubstr("sweep: " + std::to_string(VariantsOf(families)) +
                        " variants x 64 tuples = " + std::to_string(tuples)));
  EXPECT_EQ(SweepCount(out.text, "agreed"), tuples) << out.text;
  EXPECT_EQ(SweepCount(out.text, "mismatched"), 0) << out.text;
  EXPECT_EQ(SweepCount(out.text, "declined"), 0) << out.text;
  EXPECT_EQ(SweepCount(out.text, "faulty batches"), 0) << out.text;
}

TEST(CppExampleTest, AgreesOnEveryVariantOfItsFamiliesAndDeclinesTheRest) {
  ExpectAgreesAndDeclinesTheRest(CPP_EXAMPLE_WORKER, kCppFamilies);
}

TEST(CppExampleTest, SweepShowsNoMismatch) {
  ExpectCleanSweep(CPP_EXAMPLE_WORKER, kCppFamilies);
}

TEST(PythonExampleTest, AgreesOnEveryVariantOfItsFamiliesAndDeclinesTheRest) {
  if (!Python3OnPath()) GTEST_SKIP() << "python3 is not on PATH";
  ExpectAgreesAndDeclinesTheRest(PYTHON_EXAMPLE_WORKER, kPythonFamilies);
}

TEST(PythonExampleTest, SweepShowsNoMismatch) {
  if (!Python3OnPath()) GTEST_SKIP() << "python3 is not on PATH";
  ExpectCleanSweep(PYTHON_EXAMPLE_WORKER, kPythonFamilies);
}

TEST(WrongExampleTest, MismatchesOnlyOnAddSatS32) {
  const std::vector<Tuple> tuples = TuplesOf({"add"});
  const Judged j = RunAndJudge(WRONG_EXAMPLE_WORKER, tuples);
  EXPECT_GT(j.counts.mismatched, 0);
  EXPECT_EQ(j.variants_mismatched, std::set<std::string>{"add.sat.s32"});
  // 9 add variants and 4 add.cc; add.sat.s32 agrees where it does not
  // overflow.
  EXPECT_EQ(j.variants_agreed.size(), 13u);
  EXPECT_EQ(j.counts.agreed + j.counts.mismatched,
            static_cast<int64_t>(tuples.size()));
}

TEST(WrongExampleTest, SweepCatchesIt) {
  const CommandOutput out = RunCommand(Sweep(WRONG_EXAMPLE_WORKER, {"add"}));
  EXPECT_EQ(out.status, 1) << out.text;  // exit 1: a mismatch
  const int64_t mismatched = SweepCount(out.text, "mismatched");
  EXPECT_GT(mismatched, 0) << out.text;
  EXPECT_EQ(SweepCount(out.text, "agreed") + mismatched, 13 * kPerVariant)
      << out.text;
  EXPECT_THAT(out.text, HasSubstr("mismatches (first "));
  // Every replay line names the wrong variant and the backend.
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(out.text, '\n')) {
    if (!absl::StartsWith(line, "  ptxdiff eval ")) continue;
    ++lines;
    EXPECT_THAT(std::string(line), HasSubstr("ptxdiff eval 'add.sat.s32'"));
    EXPECT_THAT(std::string(line), HasSubstr("wrong-example"));
  }
  EXPECT_EQ(lines, static_cast<size_t>(std::min<int64_t>(mismatched, 20)));
}

}  // namespace
}  // namespace ptxdiff
