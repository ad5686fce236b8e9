#include "backends/ptxas/cubin_link.h"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtRela = 4;
constexpr size_t kSymbolSize = 24;      // Elf64_Sym
constexpr size_t kRelocationSize = 24;  // Elf64_Rela
constexpr size_t kCodeAlign = 128;      // as the cubin aligns `.text`

// The relocation types nvJitLink leaves in a kernel that calls a subroutine.
constexpr uint32_t kAbs32Lo32 = 0x38;    // R_CUDA_ABS32_LO_32
constexpr uint32_t kAbs32Hi32 = 0x39;    // R_CUDA_ABS32_HI_32
constexpr uint32_t kAbs55_16_34 = 0x4b;  // R_CUDA_ABS55_16_34

uint64_t Le(absl::string_view bytes, size_t offset, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) {
    v |= uint64_t{static_cast<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return v;
}

// Sets bits [bit, bit + width) of the 128-bit instruction at `at` to the
// low bits of `value`.
void PutBits(std::string& image, size_t at, int bit, int width,
             uint64_t value) {
  for (int i = 0; i < width; ++i) {
    const int b = bit + i;
    char& byte = image[at + b / 8];
    const char mask = static_cast<char>(1 << (b % 8));
    byte =
        static_cast<char>(((value >> i) & 1) ? (byte | mask) : (byte & ~mask));
  }
}

struct Relocation {
  uint64_t offset = 0;
  uint32_t type = 0;
  uint32_t symbol = 0;
  int64_t addend = 0;
};

// Where a symbol is: its section and its offset there.
struct Symbol {
  uint16_t section = 0;
  uint64_t value = 0;
};

class Linker {
 public:
  explicit Linker(const ElfFile& elf) : elf_(elf) {}

  absl::StatusOr<std::string> Link(size_t kernel) {
    Place(kernel);
    while (!pending_.empty()) {
      const size_t section = pending_.front();
      pending_.pop_front();
      PTXDIFF_RETURN_IF_ERROR(ApplyRelocationsOf(section));
    }
    return std::move(image_);
  }

 private:
  // Appends a code section to the image, once; returns its address.
  uint64_t Place(size_t section) {
    if (auto it = base_.find(section); it != base_.end()) return it->second;
    image_.resize((image_.size() + kCodeAlign - 1) / kCodeAlign * kCodeAlign,
                  '\0');
    const uint64_t base = image_.size();
    const absl::string_view bytes = elf_.sections[section].bytes;
    image_.append(bytes.data(), bytes.size());
    base_[section] = base;
    pending_.push_back(section);
    return base;
  }

  absl::Status ApplyRelocationsOf(size_t section) {
    for (size_t r = 0; r < elf_.sections.size(); ++r) {
      const ElfSection& rela = elf_.sections[r];
      if (rela.type != kShtRela || rela.info != section) continue;
      if (rela.bytes.size() % kRelocationSize != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(rela.name, ": ", rela.bytes.size(),
                         " bytes, not whole 24-byte relocations"));
      }
      for (size_t at = 0; at < rela.bytes.size(); at += kRelocationSize) {
        const Relocation rel{
            .offset = Le(rela.bytes, at, 8),
            .type = static_cast<uint32_t>(Le(rela.bytes, at + 8, 4)),
            .symbol = static_cast<uint32_t>(Le(rela.bytes, at + 12, 4)),
            .addend = static_cast<int64_t>(Le(rela.bytes, at + 16, 8))};
        PTXDIFF_RETURN_IF_ERROR(Apply(section, rela, rel));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Apply(size_t section, const ElfSection& rela,
                     const Relocation& rel) {
    const std::string where =
        absl::StrFormat("%s at +0x%x", rela.name, rel.offset);
    const size_t size = elf_.sections[section].bytes.size();
    if (rel.offset % 16 != 0 || rel.offset > size || size - rel.offset < 16) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": not an instruction of the section"));
    }
    PTXDIFF_ASSIGN_OR_RETURN(const Symbol symbol,
                             SymbolOf(rela.link, rel.symbol, where));
    const uint64_t address = Place(symbol.section) + symbol.value +
                             static_cast<uint64_t>(rel.addend);
    const size_t at = base_[section] + rel.offset;
    switch (rel.type) {
      case kAbs32Lo32:
        PutBits(image_, at, 32, 32, address);
        return absl::OkStatus();
      case kAbs32Hi32:
        PutBits(image_, at, 32, 32, address >> 32);
        return absl::OkStatus();
      case kAbs55_16_34:
        PutBits(image_, at, 16, 8, address >> 2);
        PutBits(image_, at, 34, 47, address >> 10);
        return absl::OkStatus();
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: relocation type 0x%x, not one the evaluator applies "
            "(0x38, 0x39, 0x4b)",
            where, rel.type));
    }
  }

  // Symbol `index` of the symbol table `table`, which must be in a code
  // section.
  absl::StatusOr<Symbol> SymbolOf(uint32_t table, uint32_t index,
                                  const std::string& where) const {
    if (table >= elf_.sections.size() ||
        elf_.sections[table].type != kShtSymtab) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": its symbol table (section ", table, ") is not one"));
    }
    const absl::string_view symbols = elf_.sections[table].bytes;
    if (index >= symbols.size() / kSymbolSize) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": symbol ", index, " past the table's end"));
    }
    const size_t at = index * kSymbolSize;
    const Symbol symbol{
        .section = static_cast<uint16_t>(Le(symbols, at + 6, 2)),
        .value = Le(symbols, at + 8, 8)};
    if (symbol.section >= elf_.sections.size() ||
        !absl::StartsWith(elf_.sections[symbol.section].name, ".text.")) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": symbol ", index, " is not in a code section"));
    }
    return symbol;
  }

  const ElfFile& elf_;
  std::string image_;
  absl::flat_hash_map<size_t, uint64_t> base_;
  std::deque<size_t> pending_;
};

}  // namespace

absl::StatusOr<std::string> LinkKernel(const ElfFile& cubin,
                                       absl::string_view kernel) {
  const std::string name = absl::StrCat(".text.", kernel);
  for (size_t i = 0; i < cubin.sections.size(); ++i) {
    if (cubin.sections[i].name == name) return Linker(cubin).Link(i);
  }
  return absl::NotFoundError(absl::StrCat("the cubin has no ", name));
}

}  // namespace ptxdiff
