#include "backends/ptxas/compiled_code.h"

#include <memory>
#include <vector>

#include "backends/ptxas/cubin.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "gtest/gtest.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

Tuple Of(absl::string_view spelling, Operands ops, uint8_t runtime) {
  return {ParseVariant(spelling).value(), ops, runtime};
}

TEST(CodeKeyTest, RuntimeValuesDoNotSplitAKeyButEverythingElseDoes) {
  const CodeKey key = CodeKeyOf(Of("bfe.s32", {{1, 40, 8}}, 0b001), 90, 3);
  // Another value of the runtime source: the same kernel.
  EXPECT_EQ(CodeKeyOf(Of("bfe.s32", {{0x7fffffff, 40, 8}}, 0b001), 90, 3), key);
  // Another immediate, form, variant, arch or -O level: another kernel.
  EXPECT_NE(CodeKeyOf(Of("bfe.s32", {{1, 41, 8}}, 0b001), 90, 3), key);
  EXPECT_NE(CodeKeyOf(Of("bfe.s32", {{1, 40, 8}}, 0b011), 90, 3), key);
  EXPECT_NE(CodeKeyOf(Of("bfe.u32", {{1, 40, 8}}, 0b001), 90, 3), key);
  EXPECT_NE(CodeKeyOf(Of("bfe.s32", {{1, 40, 8}}, 0b001), 80, 3), key);
  EXPECT_NE(CodeKeyOf(Of("bfe.s32", {{1, 40, 8}}, 0b001), 90, 0), key);
}

TEST(CodeKeyTest, ImmediatesAreCutToTheirWidthsAndStrayBitsIgnored) {
  // add.u16 reads 16 bits of b: 0x12345 is the kernel of 0x2345.
  EXPECT_EQ(CodeKeyOf(Of("add.u16", {{1, 0x12345}}, 0b01), 90, 3),
            CodeKeyOf(Of("add.u16", {{1, 0x2345}}, 0b01), 90, 3));
  // A source past the variant's: not part of its kernel.
  EXPECT_EQ(CodeKeyOf(Of("add.u32", {{1, 2, 99}}, 0b01), 90, 3),
            CodeKeyOf(Of("add.u32", {{1, 2, 0}}, 0b01), 90, 3));
  // A form bit of a source that cannot be a runtime value is no form.
  const Variant lop3 = ParseVariant("lop3.b32").value();
  const uint8_t capable = RuntimeCapableSources(lop3);
  EXPECT_EQ(CodeKeyOf({lop3, {{1, 2, 3, 0x96}}, 0b1111}, 90, 3),
            CodeKeyOf({lop3, {{1, 2, 3, 0x96}}, capable}, 90, 3));
}

std::shared_ptr<const CompiledKernel> KernelOfSize(int instructions) {
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->code.resize(instructions);
  kernel->compiled_for.resize(2);
  kernel->layout.slots.resize(2);
  return kernel;
}

CodeKey KeyNumbered(uint64_t n) {
  return CodeKeyOf(Of("add.u32", {{0, n}}, 0b01), 90, 3);
}

TEST(CompiledCodeCacheTest, FindsWhatWasInsertedAndCountsHitsAndMisses) {
  CompiledCodeCache cache(size_t{1} << 20);
  const auto kernel = KernelOfSize(10);
  EXPECT_EQ(cache.Find(KeyNumbered(1)), nullptr);
  cache.Insert(KeyNumbered(1), {.kernel = kernel, .slots = {1}});
  cache.Insert(KeyNumbered(2), {.claimed_bits = 0x1234, .claimed_carry = true});
  const CachedCode* one = cache.Find(KeyNumbered(1));
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->kernel, kernel);
  EXPECT_EQ(one->slots, std::vector<int>{1});
  const CachedCode* two = cache.Find(KeyNumbered(2));
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->kernel, nullptr);
  EXPECT_EQ(two->claimed_bits, 0x1234u);
  EXPECT_TRUE(two->claimed_carry);
  EXPECT_EQ(cache.Find(KeyNumbered(3)), nullptr);
  EXPECT_EQ(cache.stats().hits, 2);
  EXPECT_EQ(cache.stats().misses, 2);
  EXPECT_EQ(cache.stats().keys, 2);
  EXPECT_EQ(cache.stats().kernels, 1);
  // A key already held keeps its first code.
  cache.Insert(KeyNumbered(1), {.kernel = KernelOfSize(3), .slots = {0}});
  EXPECT_EQ(cache.Find(KeyNumbered(1))->kernel, kernel);
}

TEST(CompiledCodeCacheTest, AKernelOfSeveralKeysCountsOnceAndGoesWithTheLast) {
  const auto kernel = KernelOfSize(100);
  CompiledCodeCache cache(size_t{1} << 20);
  cache.Insert(KeyNumbered(1), {.kernel = kernel, .slots = {0}});
  const int64_t one_key = cache.stats().bytes;
  EXPECT_GE(one_key, static_cast<int64_t>(kernel->Bytes()));
  cache.Insert(KeyNumbered(2), {.kernel = kernel, .slots = {1}});
  EXPECT_EQ(cache.stats().kernels, 1);
  // The second key adds its own entry, not the kernel again.
  EXPECT_LT(cache.stats().bytes - one_key,
            static_cast<int64_t>(kernel->Bytes()));
}

TEST(CompiledCodeCacheTest, PastItsBoundTheOldestKeysGo) {
  const size_t kernel_bytes = KernelOfSize(100)->Bytes();
  // Room for about three kernels of a key each.
  CompiledCodeCache cache(3 * kernel_bytes + 3 * 256);
  for (uint64_t n = 0; n < 10; ++n) {
    cache.Insert(KeyNumbered(n), {.kernel = KernelOfSize(100), .slots = {0}});
    EXPECT_LE(cache.stats().bytes,
              static_cast<int64_t>(3 * kernel_bytes + 3 * 256));
  }
  EXPECT_EQ(cache.stats().keys, 3);
  EXPECT_EQ(cache.stats().kernels, 3);
  EXPECT_EQ(cache.stats().evicted, 7);
  for (uint64_t n = 0; n < 7; ++n)
    EXPECT_EQ(cache.Find(KeyNumbered(n)), nullptr);
  for (uint64_t n = 7; n < 10; ++n)
    EXPECT_NE(cache.Find(KeyNumbered(n)), nullptr);
  // A bound of 0 keeps nothing.
  CompiledCodeCache none(0);
  none.Insert(KeyNumbered(1), {.kernel = KernelOfSize(1), .slots = {0}});
  EXPECT_EQ(none.Find(KeyNumbered(1)), nullptr);
  EXPECT_EQ(none.stats().bytes, 0);
}

// `tuples` compiled by the ptxas executable at -O3 into one kernel, or
// null where there is no ptxas (or it fails).
std::shared_ptr<const CompiledKernel> OneKernel(
    const SassArchInfo& arch, const std::vector<Tuple>& tuples) {
  const absl::StatusOr<std::string> ptxas = FindPtxas({});
  if (!ptxas.ok()) return nullptr;
  const PtxModule module = BuildPtxModule(
      tuples, {.target = arch.name,
               .tuples_per_kernel = static_cast<int>(tuples.size())});
  const absl::StatusOr<PtxasOutput> out =
      RunPtxas(*ptxas, arch.name, module.text);
  if (!out.ok() || !out->ok) return nullptr;
  const absl::StatusOr<ElfFile> elf = ParseElf(out->cubin);
  if (!elf.ok()) return nullptr;
  const auto texts = KernelTexts(*elf);
  if (!texts.ok()) return nullptr;
  absl::StatusOr<std::vector<SassSlot>> code =
      DecodeSassKernel(arch, texts->at(module.kernels[0]));
  if (!code.ok()) return nullptr;
  return std::make_shared<const CompiledKernel>(
      KernelOf(module, 0, tuples, *std::move(code)));
}

// The bits of each slot of a run, or {} where it did not run.
std::vector<uint64_t> Bits(const std::vector<SlotValue>* values) {
  std::vector<uint64_t> out;
  if (values != nullptr) {
    for (const SlotValue& v : *values) out.push_back(v.bits);
  }
  return out;
}

std::vector<uint64_t> Bits(
    const std::optional<std::vector<SlotValue>>& values) {
  return Bits(values.has_value() ? &*values : nullptr);
}

uint64_t Want(const Tuple& t) { return Evaluate(t.variant, t.operands).bits; }

class CompiledKernelRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Three keys of add.u32 with a runtime a, and a mul.lo.u32 with both
    // sources runtime values: slots of other argument layouts side by side.
    own_ = {Of("add.u32", {{1, 10}}, 0b01), Of("add.u32", {{2, 20}}, 0b01),
            Of("mul.lo.u32", {{3, 5}}, 0b11), Of("add.u32", {{4, 40}}, 0b01)};
    kernel_ = OneKernel(arch_, own_);
    if (kernel_ == nullptr) GTEST_SKIP() << "no ptxas here";
  }

  SassArchInfo arch_ = FindSassArchInfo("sm_90").value();
  std::vector<Tuple> own_;
  std::shared_ptr<const CompiledKernel> kernel_;
};

TEST_F(CompiledKernelRunnerTest, EachRunAnswersAsRunCompiledDoes) {
  CompiledKernelRunner runner(arch_, *kernel_);
  std::string why;
  const std::vector<uint64_t> compiled = {11, 22, 15, 44};
  EXPECT_EQ(Bits(runner.Run({}, {}, why)), compiled) << why;
  // Other runtime values at slots 1 and 2 (the others keep their own).
  const Tuple b = Of("add.u32", {{0xfffffff0, 20}}, 0b01);
  const Tuple c = Of("mul.lo.u32", {{0x10001, 0x30003}}, 0b11);
  const int slots[] = {2, 1};
  const Tuple* at[] = {&c, &b};
  const std::vector<uint64_t> want = {11, Want(b), Want(c), 44};
  EXPECT_EQ(Bits(runner.Run(slots, at, why)), want) << why;
  EXPECT_EQ(Bits(RunCompiled(arch_, *kernel_, slots, at, why)), want) << why;
  // A run after it fills no slot: the compiled tuples' arguments are back.
  EXPECT_EQ(Bits(runner.Run({}, {}, why)), compiled) << why;
  EXPECT_EQ(Bits(runner.Run(std::span<const int>(slots, 1), at, why)),
            (std::vector<uint64_t>{11, 22, Want(c), 44}))
      << why;
}

// A tuple of another form than its slot's is laid out as RunCompiled lays
// it out (the arguments after it shift): the runner gives what it gives.
TEST_F(CompiledKernelRunnerTest, ATupleOfAnotherFormRunsAsRunCompiledRunsIt) {
  CompiledKernelRunner runner(arch_, *kernel_);
  std::string why;
  const Tuple both = Of("add.u32", {{7, 8}}, 0b11);  // b a runtime value too
  const int slots[] = {0};
  const Tuple* at[] = {&both};
  std::string why_compiled;
  const auto compiled = RunCompiled(arch_, *kernel_, slots, at, why_compiled);
  const std::vector<SlotValue>* ran = runner.Run(slots, at, why);
  EXPECT_EQ(Bits(ran), Bits(compiled));
  EXPECT_EQ(why, why_compiled);
  EXPECT_EQ(Bits(runner.Run({}, {}, why)),
            (std::vector<uint64_t>{11, 22, 15, 44}))
      << why;
}

}  // namespace
}  // namespace ptxdiff
