// The seam every backend shares (backends/backend.h): what Backend::Run
// declines before a backend sees a batch, and what it hands on.

#include "backends/backend.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// Runs everything but `bfe`, answering each tuple with its first operand
// plus its form, and remembers the batch it was given.
class EchoBackend : public Backend {
 public:
  ResolvedBatch last;
  std::vector<WireTuple> last_tuples;

 protected:
  WorkerIdentity Describe() const override {
    return {.name = "echo", .version = "1"};
  }
  std::optional<std::string> WhyUnsupported(const Variant& v) const override {
    if (v.family == Family::kBfe) return "echo runs no bfe";
    return std::nullopt;
  }
  absl::Status RunSupported(const ResolvedBatch& batch,
                            RunReply& reply) override {
    last.variants = batch.variants;
    last_tuples.assign(batch.tuples.begin(), batch.tuples.end());
    for (const WireTuple& t : batch.tuples)
      reply.AddValue(t.operands.v[0] + t.runtime);
    return absl::OkStatus();
  }
};

// Unknown spellings and unsupported variants are declined once each, with
// why; the other tuples reach the backend in order, with their forms, and
// their answers come back at their positions.
TEST(BackendTest, RunDeclinesWhatTheBackendDoesNotRunAndPassesTheRestOn) {
  EchoBackend backend;
  RunRequest request;
  request.spellings = {"add.s32", "bfe.u32", "no.such", "sub.s32"};
  request.tuples = {
      {0, {{10}}, 0b01}, {1, {{20}}}, {2, {{30}}}, {3, {{40}}}, {0, {{50}}}};
  RunReply reply;
  ASSERT_TRUE(backend.Run(request, reply).ok());
  ASSERT_EQ(reply.results.size(), 5u);
  EXPECT_EQ(reply.results[0].bits, 11u);  // operand plus its form
  EXPECT_EQ(reply.results[3].bits, 40u);
  EXPECT_EQ(reply.results[4].bits, 50u);
  EXPECT_EQ(reply.results[1].kind, ResultKind::kDecline);
  EXPECT_EQ(reply.results[1].code, DeclineCode::kUnsupportedVariant);
  EXPECT_EQ(reply.messages[reply.results[1].message], "echo runs no bfe");
  EXPECT_THAT(reply.messages[reply.results[2].message],
              HasSubstr("unknown variant 'no.such'"));
  // The backend saw only what it runs, re-indexed, with the forms kept.
  ASSERT_EQ(backend.last.variants.size(), 2u);
  EXPECT_EQ(Spell(backend.last.variants[1]), "sub.s32");
  ASSERT_EQ(backend.last_tuples.size(), 3u);
  EXPECT_EQ(backend.last_tuples[0].runtime, 0b01);
  EXPECT_EQ(backend.last_tuples[1].variant_index, 1u);
}

TEST(BackendTest, ABadVariantIndexIsAnError) {
  EchoBackend backend;
  RunRequest request;
  request.spellings = {"add.s32"};
  request.tuples = {{3, {{1}}}};
  RunReply reply;
  EXPECT_THAT(backend.Run(request, reply).message(),
              HasSubstr("variant index 3 of 1"));
}

// Identity lists a family's opcode where every variant runs, and nothing of
// a family it runs none of.
TEST(BackendTest, IdentityListsWhatTheBackendRuns) {
  EchoBackend backend;
  const WorkerIdentity id = backend.Identity();
  EXPECT_EQ(id.name, "echo");
  EXPECT_THAT(id.supports, ::testing::Contains("add"));
  EXPECT_THAT(id.supports, ::testing::Not(::testing::Contains("bfe")));
  EXPECT_TRUE(id.Supports(*ParseVariant("add.s32")));
  EXPECT_FALSE(id.Supports(*ParseVariant("bfe.u32")));
}

// GroupByVariant: groups in order of first appearance, positions in order.
TEST(BackendTest, GroupByVariantKeepsFirstAppearanceOrder) {
  const std::vector<WireTuple> tuples = {
      {1, {}}, {0, {}}, {1, {}}, {2, {}}, {0, {}}};
  ResolvedBatch batch{
      .variants = {*ParseVariant("add.s32"), *ParseVariant("sub.s32"),
                   *ParseVariant("mul.lo.s32")},
      .tuples = tuples};
  const std::vector<VariantGroup> groups = GroupByVariant(batch);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].variant_index, 1u);
  EXPECT_EQ(groups[0].positions, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(groups[1].positions, (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(groups[2].positions, (std::vector<uint32_t>{3}));
}

TEST(BackendTest, IntOptionNamesTheBackendTheKeyAndTheRange) {
  int out = 7;
  EXPECT_TRUE(IntOption({{"jobs", "3"}}, "x", "jobs", 1, 8, out).ok());
  EXPECT_EQ(out, 3);
  EXPECT_TRUE(IntOption({}, "x", "jobs", 1, 8, out).ok());
  EXPECT_EQ(out, 3);
  const absl::Status bad =
      IntOption({{"jobs", "9"}}, "ptx-cmd", "jobs", 1, 8, out);
  EXPECT_EQ(bad.message(),
            "ptx-cmd backend option jobs=9: expected an integer in [1, 8]");
  EXPECT_EQ(out, 3);
  EXPECT_EQ(OptionValue({{"a", "1"}, {"a", "2"}}, "a"), "2");
}

}  // namespace
}  // namespace ptxdiff
