// Reading a cubin: the ELF64 file ptxas writes, down to the `.text.<kernel>`
// section that holds each kernel's SASS.
//
// The bytes come from another program, so nothing in them is trusted: every
// offset, size, count and name is checked against the file before it is
// used, and a truncated or garbage file is an InvalidArgument status naming
// what is wrong, never a crash or a read past the end. Only what the ptxas
// backend needs is read (the section table and its names); the section views
// point into the caller's buffer, which must outlive them.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_CUBIN_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_CUBIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {

inline constexpr uint16_t kElfMachineCuda = 190;  // EM_CUDA

struct ElfSection {
  std::string name;
  uint32_t type = 0;        // SHT_*; SHT_NOBITS (8) sections have no bytes
  uint32_t link = 0;        // sh_link: a symbol table's or relocations' table
  uint32_t info = 0;        // sh_info: the section relocations patch
  absl::string_view bytes;  // into the file; empty for SHT_NOBITS
};

struct ElfFile {
  uint16_t machine = 0;  // e_machine: 190 for a cubin
  uint32_t flags = 0;    // e_flags: a cubin keeps its SM number in bits 8..15
  std::vector<ElfSection> sections;
};

// Parses the header and section table of a little-endian ELF64 file.
absl::StatusOr<ElfFile> ParseElf(absl::string_view file);

// The SM number a cubin was compiled for (90 for sm_90 and sm_90a), from
// e_flags.
inline int CubinSm(const ElfFile& elf) { return (elf.flags >> 8) & 0xff; }

// The SASS of every kernel of a cubin: `.text.<kernel>` by kernel name. A
// file that is not a cubin (another e_machine) or that names a kernel twice
// is InvalidArgument.
absl::StatusOr<absl::flat_hash_map<std::string, absl::string_view>> KernelTexts(
    const ElfFile& cubin);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_CUBIN_H_
