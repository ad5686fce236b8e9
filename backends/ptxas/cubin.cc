#include "backends/ptxas/cubin.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

constexpr size_t kElfHeaderSize = 64;
constexpr size_t kSectionHeaderSize = 64;
constexpr uint32_t kShtNobits = 8;

// A little-endian field of `bytes` at `offset`; the caller has checked that
// it is inside the file.
uint64_t Le(absl::string_view bytes, size_t offset, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) {
    v |= uint64_t{static_cast<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return v;
}

// True if [offset, offset + size) lies inside a file of `file_size` bytes,
// without overflowing.
bool InFile(uint64_t offset, uint64_t size, size_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

absl::Status CheckIdent(absl::string_view file) {
  if (file.size() < kElfHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not an ELF file: ", file.size(), " bytes, shorter than the ",
        kElfHeaderSize, "-byte ELF64 header"));
  }
  if (!absl::StartsWith(file, "\177ELF")) {
    return absl::InvalidArgumentError("not an ELF file: bad magic");
  }
  if (file[4] != 2 || file[5] != 1) {
    return absl::InvalidArgumentError(
        "not a little-endian ELF64 file (EI_CLASS/EI_DATA)");
  }
  return absl::OkStatus();
}

struct SectionTable {
  uint64_t offset;
  uint64_t count;
  uint64_t names_index;
};

absl::StatusOr<SectionTable> ReadSectionTable(absl::string_view file) {
  const SectionTable t = {Le(file, 0x28, 8), Le(file, 0x3c, 2),
                          Le(file, 0x3e, 2)};
  const uint64_t entry_size = Le(file, 0x3a, 2);
  if (t.count == 0) {
    return absl::InvalidArgumentError(
        "ELF file without sections (or with extended section numbering)");
  }
  if (entry_size != kSectionHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("ELF section header size ", entry_size, ", expected 64"));
  }
  if (!InFile(t.offset, t.count * kSectionHeaderSize, file.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ELF section table (", t.count, " entries at offset ", t.offset,
        ") runs past the end of the ", file.size(), "-byte file"));
  }
  if (t.names_index >= t.count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ELF section-name table index ", t.names_index, " out of range"));
  }
  return t;
}

// The bytes of section `index` (empty for SHT_NOBITS), checked to be inside
// the file.
absl::StatusOr<absl::string_view> SectionBytes(absl::string_view file,
                                               const SectionTable& t,
                                               uint64_t index) {
  const size_t header = t.offset + index * kSectionHeaderSize;
  if (Le(file, header + 4, 4) == kShtNobits) return absl::string_view();
  const uint64_t offset = Le(file, header + 24, 8);
  const uint64_t size = Le(file, header + 32, 8);
  if (!InFile(offset, size, file.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ELF section ", index, " (", size, " bytes at offset ", offset,
        ") runs past the end of the ", file.size(), "-byte file"));
  }
  return file.substr(offset, size);
}

absl::StatusOr<std::string> SectionName(absl::string_view names,
                                        uint64_t name_offset, uint64_t index) {
  if (name_offset >= names.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ELF section ", index, ": name offset ", name_offset,
                     " outside the ", names.size(), "-byte name table"));
  }
  const size_t end = names.find('\0', name_offset);
  if (end == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("ELF section ", index, ": name is not NUL-terminated"));
  }
  return std::string(names.substr(name_offset, end - name_offset));
}

}  // namespace

absl::StatusOr<ElfFile> ParseElf(absl::string_view file) {
  PTXDIFF_RETURN_IF_ERROR(CheckIdent(file));
  PTXDIFF_ASSIGN_OR_RETURN(const SectionTable table, ReadSectionTable(file));
  PTXDIFF_ASSIGN_OR_RETURN(const absl::string_view names,
                           SectionBytes(file, table, table.names_index));
  ElfFile elf;
  elf.machine = static_cast<uint16_t>(Le(file, 0x12, 2));
  elf.flags = static_cast<uint32_t>(Le(file, 0x30, 4));
  elf.sections.reserve(table.count);
  for (uint64_t i = 0; i < table.count; ++i) {
    const size_t header = table.offset + i * kSectionHeaderSize;
    ElfSection section;
    section.type = static_cast<uint32_t>(Le(file, header + 4, 4));
    section.link = static_cast<uint32_t>(Le(file, header + 40, 4));
    section.info = static_cast<uint32_t>(Le(file, header + 44, 4));
    PTXDIFF_ASSIGN_OR_RETURN(section.name,
                             SectionName(names, Le(file, header, 4), i));
    PTXDIFF_ASSIGN_OR_RETURN(section.bytes, SectionBytes(file, table, i));
    elf.sections.push_back(std::move(section));
  }
  return elf;
}

absl::StatusOr<absl::flat_hash_map<std::string, absl::string_view>> KernelTexts(
    const ElfFile& elf) {
  if (elf.machine != kElfMachineCuda) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a cubin: ELF machine ", elf.machine, ", expected ",
                     kElfMachineCuda, " (EM_CUDA)"));
  }
  absl::flat_hash_map<std::string, absl::string_view> texts;
  for (const ElfSection& section : elf.sections) {
    absl::string_view name = section.name;
    if (!absl::ConsumePrefix(&name, ".text.")) continue;
    if (!texts.emplace(name, section.bytes).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("cubin has two sections named '.text.", name, "'"));
    }
  }
  return texts;
}

}  // namespace ptxdiff
