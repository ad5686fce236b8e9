// A kernel's code as the SASS evaluator runs it: the kernel's `.text` and
// every subroutine it calls, laid out as if the module were loaded at
// address 0, with the relocations between them applied.
//
// The ptxas executable places a subroutine (64-bit division's) after the
// kernel's EXIT in the kernel's own section and reaches it with
// CALL.REL.NOINC: its code needs no linking. nvJitLink, the in-process
// assembler, keeps the same subroutine as a function of its own
// (`.text.__cuda_sm20_div_u64`) and leaves the addresses to the loader:
// the caller's return address is `MOV R20, 32@lo(k + 0xb0)` and
// `MOV R21, 32@hi(k + 0xb0)` (R_CUDA_ABS32_LO_32, R_CUDA_ABS32_HI_32), the
// call `CALL.ABS.NOINC` (R_CUDA_ABS55_16_34: bits 16..23 hold bits 2..9 of
// the address, bits 34..80 its bits 10..56) and the return
// `RET.ABS.NODEC R20`. Those three are the relocation types applied; any
// other is an error naming it, so such a kernel is not run rather than run
// with an address left zero.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_CUBIN_LINK_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_CUBIN_LINK_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/ptxas/cubin.h"

namespace ptxdiff {

// The bytes of `.text.<kernel>` at address 0, then each code section its
// relocations reach (transitively), each at the next 128-byte boundary,
// with every relocation of those sections applied. A kernel without
// relocations is its section's bytes. NotFound if the cubin has no such
// kernel; InvalidArgument, naming the section and offset, for a relocation
// that is out of range, names a symbol outside code, or is of a type not
// applied here.
absl::StatusOr<std::string> LinkKernel(const ElfFile& cubin,
                                       absl::string_view kernel);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_CUBIN_LINK_H_
