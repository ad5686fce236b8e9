#include "backends/ptxas/cubin_link.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sass/sass_decoder.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kProgbits = 1, kSymtab = 2, kRela = 4;

std::string Le(uint64_t value, int bytes) {
  std::string out(bytes, '\0');
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>(value >> (8 * i));
  return out;
}

// One 16-byte instruction from its two words.
std::string Insn(uint64_t lo, uint64_t hi) { return Le(lo, 8) + Le(hi, 8); }

std::string Symbol(uint16_t section, uint64_t value) {
  return Le(0, 4) + Le(0x12, 1) + Le(0, 1) + Le(section, 2) + Le(value, 8) +
         Le(0, 8);
}

std::string Relocation(uint64_t offset, uint32_t type, uint32_t symbol,
                       int64_t addend) {
  return Le(offset, 8) + Le(type, 4) + Le(symbol, 4) +
         Le(static_cast<uint64_t>(addend), 8);
}

// nvJitLink's layout of a kernel `k` (section 1) that calls `sub` (section
// 2): the return address set by two MOVs, the CALL.ABS.NOINC, then EXIT;
// `sub` is RET.ABS.NODEC R20. Symbols: 0 null, 1 `sub`, 2 `k`.
ElfFile NvJitLinkLike(uint32_t call_type = 0x4b, uint16_t sub_section = 2) {
  static const std::string kernel =
      Insn(0x0000000000147802, 0x0000000000000f00) +  // MOV R20, 0x0
      Insn(0x0000000000157802, 0x0000000000000f00) +  // MOV R21, 0x0
      Insn(0x0000000000007943, 0x0000000003c00000) +  // CALL.ABS.NOINC 0x0
      Insn(0x000000000000794d, 0x0000000003800000);   // EXIT
  static const std::string sub =
      Insn(0x0000000014007950, 0x0000000003e00000);  // RET.ABS.NODEC R20 0x0
  // Every file's tables stay: the sections are views.
  static std::deque<std::string> tables;
  const std::string& symbols =
      tables.emplace_back(Symbol(0, 0) + Symbol(sub_section, 0) + Symbol(1, 0));
  const std::string& relocations = tables.emplace_back(
      Relocation(0x00, 0x38, 2, 0x30) + Relocation(0x10, 0x39, 2, 0x30) +
      Relocation(0x20, call_type, 1, 0));
  ElfFile elf;
  elf.machine = kElfMachineCuda;
  elf.sections = {{.name = ""},
                  {.name = ".text.k", .type = kProgbits, .bytes = kernel},
                  {.name = ".text.sub", .type = kProgbits, .bytes = sub},
                  {.name = ".symtab", .type = kSymtab, .bytes = symbols},
                  {.name = ".rela.text.k",
                   .type = kRela,
                   .link = 3,
                   .info = 1,
                   .bytes = relocations},
                  {.name = ".nv.info", .type = kProgbits, .bytes = "info"}};
  return elf;
}

std::vector<SassSlot> Decode(const std::string& image) {
  absl::StatusOr<std::vector<SassSlot>> slots =
      DecodeSassKernel(*FindSassArchInfo("sm_90"), image);
  EXPECT_TRUE(slots.ok()) << slots.status();
  return slots.ok() ? *slots : std::vector<SassSlot>{};
}

TEST(CubinLinkTest, PlacesTheSubroutineAndAppliesItsAddresses) {
  const absl::StatusOr<std::string> image = LinkKernel(NvJitLinkLike(), "k");
  ASSERT_TRUE(image.ok()) << image.status();
  ASSERT_EQ(image->size(), 128u + 16);  // `sub` at the next 128 bytes
  const std::vector<SassSlot> slots = Decode(*image);
  ASSERT_EQ(slots.size(), 9u);
  for (int i : {0, 1, 2, 3, 8}) EXPECT_TRUE(slots[i].ok()) << slots[i].why_not;
  EXPECT_EQ(slots[0].insn.src[1].value, 0x30u);  // 32@lo(k + 0x30)
  EXPECT_EQ(slots[1].insn.src[1].value, 0u);     // 32@hi(k + 0x30)
  EXPECT_EQ(slots[2].insn.op, SassOp::kCall);
  EXPECT_TRUE(slots[2].insn.absolute);
  EXPECT_EQ(slots[2].insn.target, 0x80);
  EXPECT_EQ(SassText(slots[2].insn), "CALL.ABS.NOINC 0x80");
  EXPECT_EQ(slots[8].insn.op, SassOp::kRet);
  EXPECT_TRUE(slots[8].insn.absolute);
  EXPECT_EQ(slots[8].insn.target, 0);
}

TEST(CubinLinkTest, AKernelWithoutRelocationsIsItsSection) {
  ElfFile elf = NvJitLinkLike();
  elf.sections[4].info = 2;  // the relocations patch `sub`, not `k`
  elf.sections[4].bytes = "";
  const absl::StatusOr<std::string> image = LinkKernel(elf, "k");
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(*image, elf.sections[1].bytes);
}

TEST(CubinLinkTest, RefusesWhatItCannotApply) {
  EXPECT_EQ(LinkKernel(NvJitLinkLike(), "nope").status().code(),
            absl::StatusCode::kNotFound);
  const absl::Status type = LinkKernel(NvJitLinkLike(0x72), "k").status();
  EXPECT_THAT(type.message(),
              HasSubstr(".rela.text.k at +0x20: relocation type 0x72, not "
                        "one the evaluator applies"));
  const absl::Status data = LinkKernel(NvJitLinkLike(0x4b, 5), "k").status();
  EXPECT_THAT(data.message(), HasSubstr("symbol 1 is not in a code section"));
  ElfFile cut = NvJitLinkLike();
  cut.sections[1].bytes = cut.sections[1].bytes.substr(0, 40);
  EXPECT_THAT(LinkKernel(cut, "k").status().message(),
              HasSubstr("+0x20: not an instruction of the section"));
  ElfFile ragged = NvJitLinkLike();
  ragged.sections[4].bytes = ragged.sections[4].bytes.substr(0, 30);
  EXPECT_THAT(LinkKernel(ragged, "k").status().message(),
              HasSubstr("not whole 24-byte relocations"));
}

}  // namespace
}  // namespace ptxdiff
