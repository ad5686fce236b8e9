#include "backends/ptxas/cubin.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/ptxas/ptxas_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

void PutLe(std::string& out, size_t offset, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out[offset + i] = static_cast<char>(value >> (8 * i));
}

// A small ELF64 file as ptxas lays one out: the header, the sections' bytes,
// the section-name table, then the section table at the end. Section 0 is
// the null section, the last one the name table.
std::string MakeElf(
    const std::vector<std::pair<std::string, std::string>>& sections,
    uint16_t machine = kElfMachineCuda, uint32_t flags = 0x6005a04) {
  std::string file(64, '\0');
  std::string names(1, '\0');
  struct Entry {
    uint32_t name, type;
    uint64_t offset, size;
  };
  std::vector<Entry> entries = {{0, 0, 0, 0}};
  for (const auto& [name, bytes] : sections) {
    entries.push_back(
        {static_cast<uint32_t>(names.size()), 1, file.size(), bytes.size()});
    names += name + '\0';
    file += bytes;
  }
  const uint32_t own_name = static_cast<uint32_t>(names.size());
  names += std::string(".shstrtab") + '\0';
  entries.push_back({own_name, 3, file.size(), names.size()});
  file += names;
  const size_t table = file.size();
  file.resize(table + 64 * entries.size(), '\0');
  for (size_t i = 0; i < entries.size(); ++i) {
    const size_t h = table + 64 * i;
    PutLe(file, h, entries[i].name, 4);
    PutLe(file, h + 4, entries[i].type, 4);
    PutLe(file, h + 24, entries[i].offset, 8);
    PutLe(file, h + 32, entries[i].size, 8);
  }
  file.replace(0, 7, "\177ELF\2\1\1", 7);
  PutLe(file, 0x12, machine, 2);
  PutLe(file, 0x28, table, 8);
  PutLe(file, 0x30, flags, 4);
  PutLe(file, 0x34, 64, 2);
  PutLe(file, 0x3a, 64, 2);
  PutLe(file, 0x3c, entries.size(), 2);
  PutLe(file, 0x3e, entries.size() - 1, 2);
  return file;
}

std::string TwoKernels() {
  return MakeElf({{".nv.info", "info"},
                  {".text.k0", std::string(32, 'a')},
                  {".text.k1", std::string(16, 'b')}});
}

// The offset of section `index`'s header in a MakeElf file.
size_t SectionHeader(const std::string& file, int index) {
  return file.size() - 64 * (static_cast<size_t>(file[0x3c]) - index);
}

TEST(CubinTest, ReadsSectionsAndKernelTexts) {
  const std::string file = TwoKernels();
  auto elf = ParseElf(file);
  ASSERT_TRUE(elf.ok()) << elf.status();
  EXPECT_EQ(elf->machine, kElfMachineCuda);
  EXPECT_EQ(CubinSm(*elf), 90);
  ASSERT_EQ(elf->sections.size(), 5u);
  EXPECT_EQ(elf->sections[1].name, ".nv.info");
  EXPECT_EQ(elf->sections[1].bytes, "info");
  auto texts = KernelTexts(*elf);
  ASSERT_TRUE(texts.ok()) << texts.status();
  ASSERT_EQ(texts->size(), 2u);
  EXPECT_EQ(texts->at("k0"), std::string(32, 'a'));
  EXPECT_EQ(texts->at("k1"), std::string(16, 'b'));
}

TEST(CubinTest, EveryTruncationIsAnError) {
  const std::string file = TwoKernels();
  for (size_t size = 0; size < file.size(); ++size) {
    EXPECT_FALSE(ParseElf(file.substr(0, size)).ok()) << size;
  }
}

TEST(CubinTest, HeaderErrorsSayWhatIsWrong) {
  const std::string good = TwoKernels();
  auto error = [](std::string file) {
    return std::string(ParseElf(file).status().message());
  };
  std::string f = good;
  f[1] = 'X';
  EXPECT_THAT(error(f), HasSubstr("magic"));
  f = good;
  f[4] = 1;  // ELF32
  EXPECT_THAT(error(f), HasSubstr("ELF64"));
  f = good;
  f[5] = 2;  // big-endian
  EXPECT_THAT(error(f), HasSubstr("little-endian"));
  f = good;
  PutLe(f, 0x3a, 40, 2);
  EXPECT_THAT(error(f), HasSubstr("section header size 40"));
  f = good;
  PutLe(f, 0x3c, 0, 2);
  EXPECT_THAT(error(f), HasSubstr("without sections"));
  f = good;
  PutLe(f, 0x3e, 9, 2);
  EXPECT_THAT(error(f), HasSubstr("index 9 out of range"));
  f = good;
  PutLe(f, 0x28, ~0ull, 8);  // section table offset: would overflow
  EXPECT_THAT(error(f), HasSubstr("runs past the end"));
  f = good;
  PutLe(f, 0x3c, 0xffff, 2);
  EXPECT_THAT(error(f), HasSubstr("runs past the end"));
}

TEST(CubinTest, SectionErrorsSayWhatIsWrong) {
  const std::string good = TwoKernels();
  auto error = [](std::string file) {
    return std::string(ParseElf(file).status().message());
  };
  std::string f = good;
  PutLe(f, SectionHeader(f, 2) + 24, f.size() - 8, 8);  // offset near the end
  EXPECT_THAT(error(f), HasSubstr("section 2 (32 bytes"));
  f = good;
  PutLe(f, SectionHeader(f, 2) + 32, ~0ull - 10, 8);  // size: would overflow
  EXPECT_THAT(error(f), HasSubstr("runs past the end"));
  f = good;
  PutLe(f, SectionHeader(f, 2), 100000, 4);
  EXPECT_THAT(error(f), HasSubstr("name offset 100000"));
  f = good;
  // The name table (38 bytes) without its final NUL: the last name,
  // ".shstrtab", runs off its end.
  PutLe(f, SectionHeader(f, 4) + 32, 37, 8);
  EXPECT_THAT(error(f), HasSubstr("not NUL-terminated"));
}

TEST(CubinTest, NobitsSectionsHaveNoBytesWhateverTheirSize) {
  std::string f = TwoKernels();
  PutLe(f, SectionHeader(f, 1) + 4, 8, 4);            // SHT_NOBITS
  PutLe(f, SectionHeader(f, 1) + 32, 1ull << 40, 8);  // larger than the file
  auto elf = ParseElf(f);
  ASSERT_TRUE(elf.ok()) << elf.status();
  EXPECT_TRUE(elf->sections[1].bytes.empty());
}

TEST(CubinTest, KernelTextsWantsACubinWithDistinctKernels) {
  auto other = ParseElf(MakeElf({{".text.k0", "x"}}, /*machine=*/62));
  ASSERT_TRUE(other.ok());
  EXPECT_THAT(KernelTexts(*other).status().message(), HasSubstr("not a cubin"));
  auto twice = ParseElf(MakeElf({{".text.k0", "x"}, {".text.k0", "y"}}));
  ASSERT_TRUE(twice.ok());
  EXPECT_THAT(KernelTexts(*twice).status().message(),
              HasSubstr("two sections"));
}

// Garbage and damaged files give a status, never a crash (ASan checks every
// read).
TEST(CubinTest, GarbageAndDamagedFilesNeverCrash) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (i % 2 == 0 && junk.size() >= 6) junk.replace(0, 6, "\177ELF\2\1", 6);
    auto elf = ParseElf(junk);
    if (elf.ok()) (void)KernelTexts(*elf);
  }
  const std::string good = TwoKernels();
  for (int i = 0; i < 5000; ++i) {
    std::string damaged = good;
    for (int flips = 1 + rng() % 4; flips > 0; --flips) {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    auto elf = ParseElf(damaged);
    if (elf.ok()) (void)KernelTexts(*elf);
  }
}

TEST(CubinTest, ReadsWhatPtxasWrites) {
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
  const std::string kernel =
      "(.param .u64 out)\n{\n  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
      "  ld.param.u64 %rd0, [out];\n  cvta.to.global.u64 %rd1, %rd0;\n"
      "  mov.b32 %r0, 7;\n  st.global.b32 [%rd1], %r0;\n  ret;\n}\n";
  const std::string ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry first" +
      kernel + ".visible .entry second" + kernel;
  auto out = RunPtxas(*ptxas, "sm_90", ptx);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->ok) << out->log;
  auto elf = ParseElf(out->cubin);
  ASSERT_TRUE(elf.ok()) << elf.status();
  EXPECT_EQ(CubinSm(*elf), 90);
  auto texts = KernelTexts(*elf);
  ASSERT_TRUE(texts.ok()) << texts.status();
  ASSERT_EQ(texts->size(), 2u);
  for (const auto& [name, text] : *texts) {
    EXPECT_TRUE(name == "first" || name == "second") << name;
    EXPECT_EQ(text.size() % 16, 0u);
    EXPECT_FALSE(text.empty());
  }
  for (size_t size = 0; size < out->cubin.size(); size += 7) {
    auto cut = ParseElf(absl::string_view(out->cubin).substr(0, size));
    if (cut.ok()) (void)KernelTexts(*cut);
  }
}

}  // namespace
}  // namespace ptxdiff
