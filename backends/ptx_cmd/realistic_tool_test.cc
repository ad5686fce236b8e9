// A tool at its full breadth (issue 62), through a real worker: the test
// interpreter's --realistic mode refuses as a real parser does, by feature
// class and one error line a run.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

const std::string kInterpreter = PTXDIFF_INTERPRETER_PATH;

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

absl::StatusOr<std::unique_ptr<WorkerClient>> StartTool(
    const std::string& command_template, KeyValues options = {}) {
  auto command =
      CommandForBackend("ptx-cmd:" + command_template, PTXDIFF_WORKER_PATH);
  if (!command.ok()) return command.status();
  for (auto& option : options) command->hello_options.push_back(option);
  return WorkerClient::Start(*command);
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
  auto client = StartTool(kInterpreter + " --realistic {ptx} {in} {out}");
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

}  // namespace
}  // namespace ptxdiff
