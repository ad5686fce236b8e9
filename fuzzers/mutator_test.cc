#include "fuzzers/mutator.h"

#include <algorithm>
#include <set>

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

TEST(MutatorTest, OutputAlwaysDecodesAndIsDeterministic) {
  std::vector<uint8_t> buf(4096), again(4096);
  size_t size = 0;  // start from nothing: the mutator makes a fresh input
  std::set<int> families;
  // One step in 8 picks a random family: 6000 steps reach all 65 (3000
  // missed one once the SIMD video families came).
  for (unsigned seed = 0; seed < 6000; ++seed) {
    std::copy(buf.begin(), buf.end(), again.begin());
    const size_t a = MutateFuzzInput(again.data(), size, again.size(), seed);
    size = MutateFuzzInput(buf.data(), size, buf.size(), seed);
    ASSERT_EQ(a, size);
    ASSERT_TRUE(std::equal(buf.begin(), buf.begin() + size, again.begin()));
    auto tuples = DecodeFuzzInput(
        absl::string_view(reinterpret_cast<const char*>(buf.data()), size));
    ASSERT_TRUE(tuples.ok()) << tuples.status();
    families.insert(static_cast<int>((*tuples)[0].variant.family));
  }
  EXPECT_EQ(families.size(), static_cast<size_t>(kNumFamilies));  // it wanders
}

TEST(MutatorTest, RespectsTheFamilyFilterAndMaxSize) {
  VariantFilter only_shifts{.include = {Family::kShf, Family::kVshl}};
  std::vector<uint8_t> buf(64);
  size_t size = 0;
  for (unsigned seed = 0; seed < 500; ++seed) {
    size = MutateFuzzInput(buf.data(), size, buf.size(), seed, only_shifts);
    ASSERT_LE(size, buf.size());
    auto tuples = DecodeFuzzInput(
        absl::string_view(reinterpret_cast<const char*>(buf.data()), size));
    ASSERT_TRUE(tuples.ok());
    EXPECT_TRUE(only_shifts.Allows((*tuples)[0].variant.family));
  }
}

TEST(MutatorTest, CrossOverMixesTuplesUnderOneVariant) {
  std::mt19937_64 rng(1);
  const std::string a = RandomFuzzInput(rng, {}, 8),
                    b = RandomFuzzInput(rng, {}, 8);
  std::vector<uint8_t> out(4096);
  const size_t n =
      CrossOverFuzzInputs(reinterpret_cast<const uint8_t*>(a.data()), a.size(),
                          reinterpret_cast<const uint8_t*>(b.data()), b.size(),
                          out.data(), out.size(), 7);
  auto tuples = DecodeFuzzInput(
      absl::string_view(reinterpret_cast<char*>(out.data()), n));
  ASSERT_TRUE(tuples.ok()) << tuples.status();
  EXPECT_EQ((*tuples)[0].variant, (*DecodeFuzzInput(a))[0].variant);
}

// Against a worker whose default form is runtime, a mutation starts from
// that form, and writes forms only where a tuple leaves it: an input whose
// tuples are all in it stays without forms, one with a toggled source
// carries every tuple's form.
TEST(MutatorTest, MutationsStartFromTheDefaultForm) {
  const VariantFilter runtime{.runtime_forms = true,
                              .runtime_by_default = true};
  const Variant v = *ParseVariant("bfe.s32");
  const std::string seed = EncodeFuzzInput(v, {{{1, 40, 8}}, {{2, 3, 4}}});
  int without_forms = 0, with_forms = 0;
  for (unsigned s = 0; s < 400; ++s) {
    std::vector<uint8_t> buf(seed.begin(), seed.end());
    buf.resize(4096);
    const size_t n =
        MutateFuzzInput(buf.data(), seed.size(), buf.size(), s, runtime);
    const absl::string_view out(reinterpret_cast<const char*>(buf.data()), n);
    auto tuples = DecodeFuzzInputInDefaultForm(out, true);
    ASSERT_TRUE(tuples.ok()) << tuples.status();
    if (!FuzzInputHasForms(out)) {
      ++without_forms;
      continue;
    }
    ++with_forms;
    // A tagged input differs from the default somewhere: a toggle of one
    // source from every source runtime.
    const uint8_t capable = RuntimeCapableSources((*tuples)[0].variant);
    EXPECT_TRUE(
        std::any_of(tuples->begin(), tuples->end(),
                    [&](const Tuple& t) { return t.runtime != capable; }));
  }
  EXPECT_GT(without_forms, 0);
  EXPECT_GT(with_forms, 0);
}

// A steer whose one variant under its share is `next`; `spent` has had its.
class OneVariantSteer : public FuzzSteer {
 public:
  OneVariantSteer(Variant spent, Variant next) : spent_(spent), next_(next) {}
  bool HadItsShare(const Variant& v) override { return v == spent_; }
  std::optional<Variant> NextToExplore() override {
    ++asked;
    return next_;
  }
  int asked = 0;

 private:
  Variant spent_, next_;
};

// An input of a variant that had its share goes to the steer's variant with
// two of its tuples, each masked to it and with one operand changed; an
// input of a variant still under its share is mutated as without a steer.
TEST(MutatorTest, AnInputWhoseVariantHadItsShareGoesWhereTheSteerSays) {
  const Variant spent = *ParseVariant("add.u64");
  const Variant next = *ParseVariant("vadd.u32.u32.u32.sat d.b0, a, b, c");
  OneVariantSteer steer(spent, next);
  const std::vector<Operands> ops = {
      {{~0ull, 5, 0}}, {{7, ~0ull, 0}}, {{1, 2, 0}}, {{3, 4, 0}}};
  const std::string input = EncodeFuzzInput(spent, ops);
  for (unsigned s = 0; s < 50; ++s) {
    std::vector<uint8_t> buf(input.begin(), input.end());
    buf.resize(4096);
    const size_t n =
        MutateFuzzInput(buf.data(), input.size(), buf.size(), s, {}, &steer);
    auto tuples = DecodeFuzzInput(
        absl::string_view(reinterpret_cast<const char*>(buf.data()), n));
    ASSERT_TRUE(tuples.ok()) << tuples.status();
    ASSERT_EQ(tuples->size(), 2u);  // of the four: a steered input is small
    for (size_t i = 0; i < 2; ++i) {
      const Tuple& t = (*tuples)[i];
      EXPECT_EQ(t.variant, next);
      for (int k = 0; k < NumSources(next); ++k)
        EXPECT_EQ(t.operands.v[k] & ~SourceMask(next, k), 0u);
    }
  }
  // Under its share: the steer's variant is never asked for.
  OneVariantSteer elsewhere(next, spent);
  const std::string other =
      EncodeFuzzInput(*ParseVariant("sub.u32"), {{{1, 2}}});
  int stayed = 0;
  for (unsigned s = 0; s < 50; ++s) {
    std::vector<uint8_t> buf(other.begin(), other.end());
    buf.resize(4096);
    const size_t n = MutateFuzzInput(buf.data(), other.size(), buf.size(), s,
                                     {}, &elsewhere);
    auto tuples = DecodeFuzzInput(
        absl::string_view(reinterpret_cast<const char*>(buf.data()), n));
    ASSERT_TRUE(tuples.ok()) << tuples.status();
    stayed += (*tuples)[0].variant == *ParseVariant("sub.u32");
  }
  EXPECT_EQ(elsewhere.asked, 0);
  EXPECT_GT(stayed, 25);  // most mutations keep the variant
}

// A crossover of an input whose variant had its share goes there too.
TEST(MutatorTest, ACrossOverWhoseVariantHadItsShareGoesWhereTheSteerSays) {
  const Variant spent = *ParseVariant("add.u64");
  const Variant next = *ParseVariant("sad.u32");
  OneVariantSteer steer(spent, next);
  const std::string a = EncodeFuzzInput(
      spent, {{{~0ull, 5}}, {{7, 9}}, {{1, 2}}, {{3, 4}}, {{5, 6}}});
  const std::string b = EncodeFuzzInput(*ParseVariant("sub.u32"), {{{1, 2}}});
  std::vector<uint8_t> out(4096);
  for (unsigned s = 0; s < 20; ++s) {
    const size_t n = CrossOverFuzzInputs(
        reinterpret_cast<const uint8_t*>(a.data()), a.size(),
        reinterpret_cast<const uint8_t*>(b.data()), b.size(), out.data(),
        out.size(), s, {}, &steer);
    auto tuples = DecodeFuzzInput(
        absl::string_view(reinterpret_cast<const char*>(out.data()), n));
    ASSERT_TRUE(tuples.ok()) << tuples.status();
    EXPECT_LE(tuples->size(), 2u);
    for (const Tuple& t : *tuples) EXPECT_EQ(t.variant, next);
  }
  EXPECT_EQ(steer.asked, 20);
}

}  // namespace
}  // namespace ptxdiff
