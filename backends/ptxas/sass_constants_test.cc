#include "backends/ptxas/sass_constants.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/ptxas_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using Words = std::vector<std::pair<uint64_t, uint64_t>>;

// `.text` bytes from (low, high) instruction words.
std::string Text(const Words& words) {
  std::string text;
  for (const auto& [lo, hi] : words) {
    for (int b = 0; b < 8; ++b)
      text.push_back(static_cast<char>(lo >> (8 * b)));
    for (int b = 0; b < 8; ++b)
      text.push_back(static_cast<char>(hi >> (8 * b)));
  }
  return text;
}

SassArch Arch(absl::string_view name) { return FindSassArch(name).value(); }

// Words from ptxas 13.0 (docs/ptxas-folding-research.md §3.3): sm_90's
// kernel storing add.s32 0x11223344 + 0x01020304.
constexpr std::pair<uint64_t, uint64_t> kLdcStack = {0x00000a00ff017b82,
                                                     0x000ff00000000800};
constexpr std::pair<uint64_t, uint64_t> kLdcParam = {0x00008400ff027b82,
                                                     0x000e220000000a00};
constexpr std::pair<uint64_t, uint64_t> kUldcDesc = {0x0000820000047ab9,
                                                     0x000fcc0000000a00};
constexpr std::pair<uint64_t, uint64_t> kStgR5 = {0x0000000502007986,
                                                  0x001fe2000c101904};
constexpr std::pair<uint64_t, uint64_t> kExit = {0x000000000000794d,
                                                 0x000fea0003800000};
constexpr std::pair<uint64_t, uint64_t> kBraSelf = {0xfffffffc00fc7947,
                                                    0x000fc0000383ffff};
constexpr std::pair<uint64_t, uint64_t> kNop = {0x0000000000007918,
                                                0x000fc00000000000};

std::pair<uint64_t, uint64_t> Hfma2MmaR5(uint32_t imm) {
  return {uint64_t{imm} << 32 | 0xff057435, 0x000fe200000001ff};
}
std::pair<uint64_t, uint64_t> MovR(int r, uint32_t imm) {
  return {uint64_t{imm} << 32 | uint64_t(r) << 16 | 0x7802, 0x000fe20000000f00};
}

Words Sm90Kernel(std::pair<uint64_t, uint64_t> constant) {
  return {kLdcStack, kLdcParam, constant, kUldcDesc,
          kStgR5,    kExit,     kBraSelf, kNop};
}

std::string NotFoldedWhy(const SassArch& arch, const Words& words) {
  auto stores = DecodeConstantStores(arch, Text(words));
  EXPECT_FALSE(stores.ok());
  return std::string(stores.status().message());
}

TEST(SassConstantsTest, DecodesTheResearchExample) {
  auto stores = DecodeConstantStores(Arch("sm_90"),
                                     Text(Sm90Kernel(Hfma2MmaR5(0x12243648))));
  ASSERT_TRUE(stores.ok()) << stores.status();
  ASSERT_EQ(stores->size(), 1u);
  EXPECT_EQ((*stores)[0].offset, 0);
  EXPECT_EQ((*stores)[0].size, 4);
  EXPECT_EQ((*stores)[0].Low64(), 0x12243648u);
  EXPECT_EQ((*stores)[0].forms, kHfma2MmaImm);
}

TEST(SassConstantsTest, IgnoresSchedulingBits) {
  Words words = Sm90Kernel(Hfma2MmaR5(0x12243648));
  for (auto& [lo, hi] : words) hi ^= 0xabcdull << 48;
  auto stores = DecodeConstantStores(Arch("sm_90"), Text(words));
  ASSERT_TRUE(stores.ok()) << stores.status();
  EXPECT_EQ((*stores)[0].Low64(), 0x12243648u);
}

// -0 * 0 + h gives h back except for NaN halves, which become 0x7fff.
TEST(SassConstantsTest, Hfma2ConstantsOnlyWhereFp16GivesThemBack) {
  for (uint32_t imm : {0x7fff3c00u, 0x7c00fc00u, 0x80000001u, 0x03ff8000u}) {
    auto stores =
        DecodeConstantStores(Arch("sm_90"), Text(Sm90Kernel(Hfma2MmaR5(imm))));
    ASSERT_TRUE(stores.ok()) << std::hex << imm << stores.status();
    EXPECT_EQ((*stores)[0].Low64(), imm);
  }
  for (uint32_t imm : {0x7c013c00u, 0x3c007e00u, 0xffff0000u, 0x0000fc01u}) {
    EXPECT_THAT(NotFoldedWhy(Arch("sm_90"), Sm90Kernel(Hfma2MmaR5(imm))),
                HasSubstr("not a known constant"))
        << std::hex << imm;
  }
}

TEST(SassConstantsTest, FormsAreAcceptedOnlyOnTheirArchs) {
  // HFMA2.MMA and LDC are sm_90 forms, not sm_75 or sm_100 ones.
  EXPECT_THAT(NotFoldedWhy(Arch("sm_75"), Sm90Kernel(Hfma2MmaR5(1))),
              HasSubstr("not seen on sm_75"));
  Words words = Sm90Kernel(Hfma2MmaR5(1));
  words[0] = words[1] = {0x0000000000007918, 0};  // NOPs for the LDCs
  EXPECT_THAT(NotFoldedWhy(Arch("sm_100"), words),
              HasSubstr("not seen on sm_100"));
}

TEST(SassConstantsTest, AnythingNotUnderstoodIsNotFolded) {
  const SassArch sm90 = Arch("sm_90");
  const auto constant = MovR(5, 42);
  Words w = Sm90Kernel(constant);
  w[4].first &= ~0xf000ull;  // @P0 STG
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("predicated store"));
  w = Sm90Kernel(constant);
  w.insert(w.begin() + 3, {0x0000000505057227, 0x000fe200078e02ff});  // IMAD.HI
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("op 0x227"));
  w = Sm90Kernel(constant);
  w.insert(w.begin() + 3, kBraSelf);
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("op 0x947"));
  w = Sm90Kernel(constant);
  w.insert(w.begin() + 6, MovR(5, 1));
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("after EXIT"));
  w = Sm90Kernel(constant);
  w.resize(5);  // up to the STG
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("no unconditional EXIT"));
  w = Sm90Kernel(constant);
  w[5].first &= ~0xf000ull;  // @P0 EXIT
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("no unconditional EXIT"));
  w = Sm90Kernel(constant);
  w[2] = MovR(6, 42);  // R5 is never set
  EXPECT_THAT(NotFoldedWhy(sm90, w),
              HasSubstr("stores R5, not a known constant"));
  w = Sm90Kernel(constant);
  w[2].second ^= 1;  // MOV with other operand bits
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("not understood"));
  w = Sm90Kernel(constant);
  w[4].second ^= 1 << 20;  // another kind of store
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("store form not seen on sm_90"));
  w = Sm90Kernel(constant);
  w[4].second = (w[4].second & ~0x7ull << 9) | 3 << 9;  // STG.S16
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("store form"));
  EXPECT_THAT(NotFoldedWhy(sm90, {}), HasSubstr("not whole"));
  auto odd =
      DecodeConstantStores(sm90, Text(Sm90Kernel(constant)).substr(0, 40));
  EXPECT_THAT(odd.status().message(), HasSubstr("not whole"));
}

TEST(SassConstantsTest, StoresMustShareOneBase) {
  const SassArch sm90 = Arch("sm_90");
  const auto stg_r5_plus8 =
      std::make_pair(kStgR5.first | (8ull << 40), kStgR5.second);
  Words w = {kLdcStack, kLdcParam,    MovR(5, 1), kUldcDesc,
             kStgR5,    stg_r5_plus8, kExit};
  auto stores = DecodeConstantStores(sm90, Text(w));
  ASSERT_TRUE(stores.ok()) << stores.status();
  ASSERT_EQ(stores->size(), 2u);
  EXPECT_EQ((*stores)[1].offset, 8);
  // The address register R2 changed between the stores.
  Words changed = w;
  changed.insert(changed.begin() + 5, MovR(2, 0x1000));
  EXPECT_THAT(NotFoldedWhy(sm90, changed), HasSubstr("address not loaded"));
  // Loaded again from the same word of the constant bank, into R6: the
  // same base.
  Words reloaded = w;
  reloaded.insert(reloaded.begin() + 5,
                  {0x00008400ff067b82, 0x000e220000000a00});
  reloaded[6].first = (reloaded[6].first & ~(0xffull << 24)) | 6ull << 24;
  stores = DecodeConstantStores(sm90, Text(reloaded));
  ASSERT_TRUE(stores.ok()) << stores.status();
  EXPECT_EQ(stores->size(), 2u);
  // From another word: another base.
  reloaded[5].first ^= 0x100ull << 32;
  EXPECT_THAT(NotFoldedWhy(sm90, reloaded), HasSubstr("different bases"));
  // An indexed constant-bank load is not understood.
  Words indexed = w;
  indexed[1].first = (indexed[1].first & ~(0xffull << 24)) | 7ull << 24;
  EXPECT_THAT(NotFoldedWhy(sm90, indexed), HasSubstr("not understood"));
  // The address was never loaded from the constant bank.
  w = {MovR(5, 1), kUldcDesc, kStgR5, kExit};
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("address not loaded"));
  // Another descriptor, in UR6.
  w = {kLdcParam, MovR(5, 1),
       kUldcDesc, {0x0000830000067ab9, 0x000fcc0000000a00},
       kStgR5,    {stg_r5_plus8.first, stg_r5_plus8.second + 2},
       kExit};
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("different bases"));
  // Two stores to one offset.
  w = {kLdcParam, MovR(5, 1), kUldcDesc, kStgR5, kStgR5, kExit};
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("two stores to byte 0"));
}

TEST(SassConstantsTest, SixtyFourBitStores) {
  const SassArch sm90 = Arch("sm_90");
  // STG.E.64 of R4:R5 (size field 5), and of the RZ pair.
  const std::pair<uint64_t, uint64_t> stg64 = {0x0000000402007986,
                                               0x001fe2000c101b04};
  const std::pair<uint64_t, uint64_t> stg64_rz = {0x000008ff02007986,
                                                  0x001fe2000c101b04};
  Words w = {kLdcParam,
             {0x55667788ff047435, 0x000fe200000001ff},
             MovR(5, 0x11223344),
             kUldcDesc,
             stg64,
             stg64_rz,
             kExit};
  auto stores = DecodeConstantStores(sm90, Text(w));
  ASSERT_TRUE(stores.ok()) << stores.status();
  ASSERT_EQ(stores->size(), 2u);
  EXPECT_EQ((*stores)[0].size, 8);
  EXPECT_EQ((*stores)[0].Low64(), 0x1122334455667788u);
  EXPECT_EQ((*stores)[0].forms, kHfma2MmaImm | kMovImm32);
  EXPECT_EQ((*stores)[1].offset, 8);
  EXPECT_EQ((*stores)[1].Low64(), 0u);
  EXPECT_EQ((*stores)[1].forms, kZeroRegister);
  // An odd data register cannot start a pair.
  w[4].first = 0x0000000502007986;
  EXPECT_THAT(NotFoldedWhy(sm90, w), HasSubstr("data registers"));
}

TEST(SassConstantsTest, Sm120Mov64) {
  // LDC.64 R2, LDCU.64 UR4, MOV.64 R4, 0x1122334455667788, STG.E.64.
  Words w = {{0x00008400ff027b82, 0x000e220000000a00},
             {0x00006b00ff0477ac, 0x000e220008000a00},
             {0x4455667788047402, 0x000fcc0000112233},
             {0x0000000402007986, 0x001fe2000c101b04},
             kExit};
  auto stores = DecodeConstantStores(Arch("sm_120"), Text(w));
  ASSERT_TRUE(stores.ok()) << stores.status();
  EXPECT_EQ((*stores)[0].Low64(), 0x1122334455667788u);
  EXPECT_EQ((*stores)[0].forms, kMov64Imm);
  EXPECT_THAT(NotFoldedWhy(Arch("sm_100"), w), HasSubstr("not seen on sm_100"));
}

// sm_87's prologue, then the body of research §3.4's kernel.
Words Sm87Kernel() {
  return {{0x00000002ff007c0c, 0x000fda000bf05070},
          {0x0000012000000947, 0x000fea0003800000},
          {0xffffffff00007956, 0x000fe80000000000},
          {0x0000000000017f55, 0x000fe80000100000},
          {0x0000000001027f55, 0x000fe80000100000},
          {0x0000000002037f55, 0x000fe80000100000},
          {0x0000000003047f55, 0x000fe80000100000},
          {0x0000000004057f55, 0x000fe80000100000},
          {0x0000000005067f55, 0x000fe80000100000},
          {0x0000000006077f55, 0x000fe80000100000},
          {0x0000000007087f55, 0x000fe80000100000},
          {0x0000000008097f55, 0x000fe80000100000},
          {0x00000000090a7f55, 0x000fe80000100000},
          {0x000000000a0b7f55, 0x000fe80000100000},
          {0x000000000b0c7f55, 0x000fe80000100000},
          {0x000000000c0d7f55, 0x000fe80000100000},
          {0x000000000d0e7f55, 0x000fe80000100000},
          {0x000000000e0f7f55, 0x000fe80000100000},
          {0x000000000f007956, 0x000fe80000000000},
          {0x0000000100027882, 0x000fe40000000000},
          {0x00000a00ff017624, 0x000fe400078e00ff},
          {0x12243648ff057424, 0x000fe200078e00ff},
          {0x0000580000027a02, 0x000fe20000000f00},
          {0x0000460000047ab9, 0x000fe20000000a00},
          {0x0000590000037a02, 0x000fca0000000f00},
          {0x0000000502007986, 0x000fe2000c101904},
          kExit,
          {0xfffffff000007947, 0x000fc0000383ffff},
          kNop};
}

TEST(SassConstantsTest, Sm87PrologueIsAcceptedByteForByte) {
  auto stores = DecodeConstantStores(Arch("sm_87"), Text(Sm87Kernel()));
  ASSERT_TRUE(stores.ok()) << stores.status();
  EXPECT_EQ((*stores)[0].Low64(), 0x12243648u);
  Words w = Sm87Kernel();
  w[7].first ^= 1ull << 24;
  EXPECT_THAT(NotFoldedWhy(Arch("sm_87"), w),
              HasSubstr("differs from the sm_87 prologue"));
  // Other archs never accept it.
  EXPECT_THAT(NotFoldedWhy(Arch("sm_86"), Sm87Kernel()), HasSubstr("op 0xc0c"));
  // And sm_87 insists on it.
  w = Sm87Kernel();
  w.erase(w.begin(), w.begin() + 20);
  EXPECT_THAT(NotFoldedWhy(Arch("sm_87"), w), HasSubstr("prologue"));
}

TEST(SassConstantsTest, KnownArchs) {
  const std::vector<std::string> archs = KnownArchs();
  EXPECT_EQ(archs.front(), "sm_75");
  EXPECT_EQ(archs.back(), "sm_121f");
  EXPECT_EQ(Arch("sm_90a").sm, 90);
  EXPECT_EQ(Arch("sm_100f").sm, 100);
  EXPECT_THAT(FindSassArch("sm_70").status().message(),
              HasSubstr("sm_75, sm_80"));
}

// ---------------------------------------------------------------------------
// The decoder on what ptxas writes, for every arch.

struct Constant {
  int bits;
  uint64_t value;
};

std::vector<Constant> KnownConstants() {
  std::vector<Constant> out;
  // 32-bit: small, extremes, and fp16-looking halves (NaNs, infinities,
  // denormals, -0) that an HFMA2 move must not be trusted with unless exact.
  for (uint64_t v : {0x0ull, 0x1ull, 0xffffffffull, 0x7fffull, 0x80000000ull,
                     0x7fffffffull, 0x12345678ull, 0x7fff7fffull, 0x7c017e00ull,
                     0xfc00fc00ull, 0x7c007c01ull, 0xffff0000ull, 0x00007fffull,
                     0x7fff0000ull, 0x80008000ull, 0x3c003c00ull, 0x000103ffull,
                     0xfe00fd01ull, 0x00010001ull}) {
    out.push_back({32, v});
  }
  for (uint64_t v :
       {0x0ull, 0x1ull, 0xffffffffull, 0x100000000ull, 0xffffffffffffffffull,
        0x1122334455667788ull, 0x7fff7fff7fff7fffull, 0x7c017c01fc01fc01ull,
        0x8000000000000000ull, 0x00007fff00000000ull}) {
    out.push_back({64, v});
  }
  for (uint64_t v :
       {0x0ull, 0x1ull, 0x7fffull, 0xffffull, 0x7c01ull, 0x8000ull}) {
    out.push_back({16, v});
  }
  return out;
}

std::string Store(const Constant& c, int64_t offset) {
  const char* reg = c.bits == 16 ? "%h0" : c.bits == 32 ? "%r0" : "%rd0";
  return absl::StrFormat(
      "  mov.b%d %s, 0x%x;\n  st.global.b%d [%%p1+%d], %s;\n", c.bits, reg,
      c.value, c.bits, offset, reg);
}

std::string Kernel(absl::string_view name, absl::string_view body) {
  return absl::StrCat(
      ".visible .entry ", name,
      "(.param .u64 out)\n{\n  .reg .b16 %h<1>;\n  .reg .b32 %r<1>;\n"
      "  .reg .b64 %rd<1>;\n  .reg .b64 %p<2>;\n"
      "  ld.param.u64 %p0, [out];\n  cvta.to.global.u64 %p1, %p0;\n",
      body, "  ret;\n}\n");
}

uint64_t Mask(int bits) { return bits == 64 ? ~0ull : (1ull << bits) - 1; }

// One kernel per constant, then one kernel per width storing all constants
// of that width at 8-byte offsets: every constant must come back exactly,
// on every arch. (Mixing widths in one kernel lets ptxas merge 16-bit values
// into halves of registers with PRMT, which the decoder declines.)
TEST(SassConstantsTest, DecodesKnownConstantsOnEveryArch) {
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
  const std::vector<Constant> constants = KnownConstants();
  for (const std::string& name : KnownArchs()) {
    SCOPED_TRACE(name);
    std::string ptx =
        absl::StrCat(".version 9.0\n.target ", name, "\n.address_size 64\n");
    std::string all[65];
    for (size_t i = 0; i < constants.size(); ++i) {
      absl::StrAppend(&ptx,
                      Kernel(absl::StrCat("c", i), Store(constants[i], 0)));
      absl::StrAppend(&all[constants[i].bits], Store(constants[i], 8 * i));
    }
    for (int bits : {16, 32, 64}) {
      absl::StrAppend(&ptx, Kernel(absl::StrCat("all", bits), all[bits]));
    }
    auto out = RunPtxas(*ptxas, name, ptx);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(out->ok) << out->log;
    auto elf = ParseElf(out->cubin);
    ASSERT_TRUE(elf.ok()) << elf.status();
    EXPECT_EQ(CubinSm(*elf), Arch(name).sm);
    auto texts = KernelTexts(*elf);
    ASSERT_TRUE(texts.ok()) << texts.status();
    for (size_t i = 0; i < constants.size(); ++i) {
      auto stores =
          DecodeConstantStores(Arch(name), texts->at(absl::StrCat("c", i)));
      ASSERT_TRUE(stores.ok())
          << std::hex << constants[i].value << ": " << stores.status();
      ASSERT_EQ(stores->size(), 1u);
      EXPECT_EQ((*stores)[0].size * 8, constants[i].bits);
      EXPECT_EQ((*stores)[0].Low64() & Mask(constants[i].bits),
                constants[i].value);
    }
    size_t stored = 0;
    for (int bits : {16, 32, 64}) {
      auto stores = DecodeConstantStores(Arch(name),
                                         texts->at(absl::StrCat("all", bits)));
      ASSERT_TRUE(stores.ok()) << bits << ": " << stores.status();
      for (const ConstantStore& s : *stores) {
        ASSERT_EQ(s.offset % 8, 0);
        const Constant& c = constants[s.offset / 8];
        EXPECT_EQ(s.size * 8, c.bits);
        EXPECT_EQ(s.Low64() & Mask(c.bits), c.value) << "at " << s.offset;
      }
      stored += stores->size();
    }
    EXPECT_EQ(stored, constants.size());
  }
}

}  // namespace
}  // namespace ptxdiff
