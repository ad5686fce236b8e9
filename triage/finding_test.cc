#include "triage/finding.h"

#include <random>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "triage/testing/findings.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(FindingTest, EntryNamesParseBackIntoTheirFields) {
  std::mt19937_64 rng(5);
  const auto& all = AllVariants();
  for (int i = 0; i < 2000; ++i) {
    const Variant& v = all[rng() % all.size()];
    const Signature s{static_cast<FindingKind>(rng() % 5), Spell(v),
                      i % 2 ? "ptxas" : "my emulator~2", "bytes-0-3"};
    const std::string name = EntryName(s);
    EXPECT_EQ(name.find_first_of("/ ,"), std::string::npos) << name;
    auto parsed = ParseEntryName(name);
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    EXPECT_EQ(*parsed, s) << name;
  }
}

TEST(FindingTest, EntryNameExample) {
  const Signature s{FindingKind::kValueMismatch,
                    "vadd.u32.u32.u32.sat d.b1, a, b, c", "ptxas", "bytes-0"};
  EXPECT_EQ(EntryName(s),
            "value-mismatch~ptxas~bytes-0~vadd.u32.u32.u32.sat%20d.b1%2C%20a%"
            "2C%20b%2C%20c");
}

TEST(FindingTest, BadEntryNames) {
  EXPECT_THAT(ParseEntryName("INDEX.md").status().message(),
              HasSubstr("not a triage entry"));
  EXPECT_THAT(ParseEntryName("oops~a~b~add.s32").status().message(),
              HasSubstr("unknown finding kind 'oops'"));
  EXPECT_THAT(ParseEntryName("crash~a~b~add.s33").status().message(),
              HasSubstr("unknown variant"));
  EXPECT_FALSE(ParseEntryName("crash~a%2~b~add.s32").ok());
  EXPECT_FALSE(ParseEntryName("crash~a%zz~b~add.s32").ok());
}

TEST(FindingTest, DisagreementClassNamesTheDifferingBytes) {
  EXPECT_EQ(DisagreementClass(0x1234, 0x1235), "bytes-0");
  EXPECT_EQ(DisagreementClass(0x80000000, 0x7fffffff), "bytes-0-1-2-3");
  EXPECT_EQ(DisagreementClass(1ull << 40, 0), "bytes-5");
  EXPECT_EQ(DisagreementClass(7, 7), "none");
}

// The kinds' names are the entry directory names' first field: they must
// not change, and each parses back.
TEST(FindingTest, KindNamesAreStableAndParseBack) {
  const std::pair<FindingKind, const char*> kinds[] = {
      {FindingKind::kValueMismatch, "value-mismatch"},
      {FindingKind::kCrash, "crash"},
      {FindingKind::kHang, "hang"},
      {FindingKind::kProtocolError, "protocol-error"},
      {FindingKind::kDeviceFault, "device-fault"}};
  for (const auto& [kind, name] : kinds) {
    EXPECT_EQ(FindingKindName(kind), name);
    EXPECT_EQ(ParseFindingKind(name), kind);
  }
  EXPECT_EQ(ParseFindingKind("mismatch"), std::nullopt);
  EXPECT_EQ(FindingKindName(FromFault(FaultKind::kProtocol)),
            FaultKindName(FaultKind::kProtocol));
}

TEST(FindingTest, SignatureOfAFault) {
  Finding f;
  f.kind = FindingKind::kHang;
  f.tuple = {*ParseVariant("div.u64"), {}};
  f.backend = "ptxas";
  EXPECT_EQ(SignatureOf(f),
            (Signature{FindingKind::kHang, "div.u64", "ptxas", "hang"}));
}

// The same trigger with a runtime source is a cause of its own: its class
// names the runtime sources, and the entry name parses back.
TEST(FindingTest, SignatureOfARuntimeFormNamesItsRuntimeSources) {
  Finding f;
  f.tuple = {*ParseVariant("bfe.s32"), {{0, 40, 8}}, 0b001};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend = "ptxas";
  const Signature runtime = SignatureOf(f);
  Finding immediate = f;
  immediate.tuple.runtime = 0;
  EXPECT_EQ(runtime.disagreement_class,
            "runtime-a." + SignatureOf(immediate).disagreement_class);
  EXPECT_EQ(*ParseEntryName(EntryName(runtime)), runtime);
  EXPECT_EQ(EntryName(runtime).find('%'),
            std::string::npos);  // readable as it is
  f.tuple.runtime = 0b101;
  EXPECT_TRUE(
      absl::StartsWith(SignatureOf(f).disagreement_class, "runtime-a-c."));
}

// Issue 28: an unisolated fault was named after the batch's first variant,
// which is not known to be at fault. It is named after the batch: a hash of
// its variants, whatever their order and operands, in place of a variant.
TEST(FindingTest, AnUnisolatedFaultIsNamedAfterItsBatch) {
  const Variant add = *ParseVariant("add.cc.s32"),
                sat = *ParseVariant("add.sat.s32");
  Finding f = AnUnisolatedHangOfABatch();
  const Signature s = SignatureOf(f);
  EXPECT_EQ(s.disagreement_class, "unisolated-hang");
  EXPECT_TRUE(IsBatchName(s.spelling)) << s.spelling;
  EXPECT_TRUE(NamesABatch(s));
  EXPECT_EQ(s.spelling,
            BatchName(std::vector<Tuple>{{sat, {{1, 2}}}, {add, {{3, 4}}}}));
  EXPECT_NE(s.spelling, BatchName(std::vector<Tuple>{{sat, {{1, 2}}}}));
  const std::string name = EntryName(s);
  EXPECT_EQ(name, "hang~faulty~unisolated-hang~" + s.spelling);
  auto back = ParseEntryName(name);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
  // Only an unisolated fault is named after a batch, and only by a hash.
  EXPECT_FALSE(ParseEntryName("hang~faulty~hang~" + s.spelling).ok());
  EXPECT_FALSE(ParseEntryName("hang~faulty~unisolated-hang~batch-12345").ok());
  EXPECT_FALSE(
      ParseEntryName("hang~faulty~unisolated-hang~batch-1234567G").ok());
  // A fault of one tuple is that tuple's, named after its variant.
  f.unisolated = false;
  EXPECT_EQ(SignatureOf(f).spelling, "add.cc.s32");
}

}  // namespace
}  // namespace ptxdiff
