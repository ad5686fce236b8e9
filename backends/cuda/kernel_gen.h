// PTX modules that run one instruction variant on a GPU.
//
// Two kernel modes, both printed from the instruction table (PtxInstruction),
// never from hand-written per-variant text:
//
//   register   one kernel per variant: each thread of a grid-stride loop
//              loads one 32-byte operand tuple (u64 a, b, c, d,
//              little-endian) from global memory into registers as wide as
//              the variant's sources, executes the instruction and stores the
//              result zero-extended to 8 bytes (and a `.cc` variant's flag
//              word, what CC.CF read back gives, in 8 more). Compiled once per
//              variant and device, then cached (module_cache.h).
//   immediate  the operands are written into the PTX text as immediates (a
//              `mov` into a register first where PTX does not allow an
//              immediate there), so the JIT's handling of constants is under
//              test too. One single-thread kernel per group of tuples, compiled
//              for each batch.
//
// `.target` is the device's SM (the newest the table knows that is not above
// it); `.version` is the lowest PTX ISA that both the target and the variant
// (LevelOf) need, so that the oldest driver that can run a variant accepts
// its module.
//
// A module is a header, then kernels made of the parts below; the parts are
// public so that the ptxas test assembles exactly these texts for every
// variant, many variants per kernel.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_KERNEL_GEN_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_KERNEL_GEN_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "isa/tuple.h"
#include "isa/variant.h"

namespace ptxdiff {

enum class KernelMode : uint8_t {
  // Operands from a device buffer: the fast mode, and the default.
  kRegister,
  // Operands as PTX immediates: tests constant handling; compiles per batch.
  kImmediate,
};
absl::string_view KernelModeName(KernelMode mode);  // "register", "immediate"
std::optional<KernelMode> ParseKernelMode(absl::string_view name);

// A PTX `.target` and the lowest `.version` that accepts it.
struct PtxTarget {
  int sm = 0;       // 90 for sm_90
  int min_ptx = 0;  // PTX ISA as major*10+minor: 78 for 7.8
};

// The target for a device of compute capability `device_sm` (90 for 9.0): the
// newest SM in the table that is not above it, since a device runs PTX written
// for an older target. nullopt below sm_50.
std::optional<PtxTarget> TargetForDevice(int device_sm);

// The SM of a device the cuda backend describes as "NAME (sm_90, ...)"
// (its handshake's `device`); nullopt for any other text.
std::optional<int> DeviceSm(absl::string_view device);

// The newest PTX ISA that the JIT of a driver accepts, from
// cuDriverGetVersion (12040 for CUDA 12.4): 84. Drivers newer than the table
// get its newest entry (every module here needs at most that).
int MaxPtxOfDriver(int driver_version);

// The `.version` of `v`'s module on `target`.
int PtxVersionFor(const Variant& v, const PtxTarget& target);

// Why `v` cannot run on a device of `device_sm` whose driver accepts PTX ISA
// up to `max_ptx` ("needs sm_90; the device is sm_80"); nullopt if it can.
// Families that are not PTX (Intel vISA SHL) never run.
std::optional<std::string> WhyUnsupported(const Variant& v, int device_sm,
                                          int max_ptx);

// Byte sizes of the buffers the kernels read and write.
inline constexpr int kTupleBytes = 32;  // u64 a, b, c, d
inline constexpr int kResultBytes = 8;  // the result, zero-extended
// A variant that writes CC.CF (HasCarryOut): the result, then the flag word
// (what the CC.CF reader left, zero-extended; carry_support.h).
inline constexpr int kCarryResultBytes = 16;
// The bytes of one tuple's result of `v`: kCarryResultBytes or kResultBytes.
int ResultBytes(const Variant& v);

// Register mode: one entry,
//   kRegisterEntry(.param .u64 in, .param .u64 out, .param .u32 n)
// evaluating tuples in[0..n) into out[0..n).
inline constexpr char kRegisterEntry[] = "ptxdiff_register";
std::string RegisterModule(const Variant& v, const PtxTarget& target);

// Register mode for a whole batch (kernel ABI 2, docs/kernel-abi.md): one
// module, one entry kRegisterEntry with the same parameters, in which
// segment k runs its variant on tuples [first, first + count) of the input
// in a grid-stride loop of its own. Every tuple's result slot is
// kBatchResultBytes: the result, then the flag word of a `.cc` variant (0
// for the others). `.version` is the highest any segment needs.
//
// A segment may instead run its tuples as written (kernel ABI 2's written
// segments): each tuple's runtime sources (Tuple::runtime) are loaded from
// its input slot and the others are immediates in the instruction, so a tool
// sees the operand form the case holds. The grid's first thread runs them
// one after the other.
struct BatchSegment {
  Variant variant;
  uint32_t first = 0;
  uint32_t count = 0;
  // Empty: the loop, every source from the input buffer. Otherwise `count`
  // tuples of `variant`, tuple j the batch's tuple first + j.
  std::vector<Tuple> written;
  // The loop of a variant with a DispatchSource: the DispatchValues its
  // tuples hold (DispatchValuesOf), the only ones it branches to; empty, all
  // of them (a 2-lane SIMD variant's 256 selectors: ~1,000 lines).
  std::vector<int> dispatch_values;
};
inline constexpr int kBatchResultBytes = 16;
std::string BatchModule(std::span<const BatchSegment> segments,
                        const PtxTarget& target);

// Immediate mode: entries ImmediateEntryName(0), (1), ... with one parameter,
//   (.param .u64 out),
// entry k evaluating tuples [k*group_size, (k+1)*group_size) and storing the
// result of its j-th tuple at out + ResultBytes(v)*j. One thread runs an
// entry.
std::string ImmediateEntryName(int k);
std::string ImmediateModule(const Variant& v, const PtxTarget& target,
                            std::span<const Operands> tuples, int group_size);
// True if source `i` of `v` holding `bits` is written as an immediate; false
// where PTX wants a register (video operands, packed types, bfe/bfi
// positions and lengths above 255, which ptxas rejects).
bool UsesImmediate(const Variant& v, int i, uint64_t bits);

// The parts of a module ---------------------------------------------------

// `.version`, `.target`, `.address_size` and a comment naming the variant.
std::string ModuleHeader(const Variant& v, const PtxTarget& target);
// The `.reg` lines of `v`'s kernels: one register per source, as wide as it,
// and the destination (and CC.CF's registers where `v` reads or writes it).
// Equal for all variants with the same widths.
std::string OperandDeclarations(const Variant& v);
// The same with every register named within `scope` ("v3_": %v3_src0,
// %v3_dst, ...), so that many variants' registers share one kernel.
std::string ScopedDeclarations(const Variant& v, absl::string_view scope);
// The register-mode loop body for `v`: its result slot (ResultBytes(v) per
// tuple), load, execute, store. A variant that reads CC.CF sets it from its
// `cf` operand just before the instruction; one that writes it reads it back
// just after and stores the flag word at slot + 8 (carry_support.h).
std::string RegisterBody(const Variant& v);
// The same within `scope` (ScopedDeclarations; labels too), storing each
// result in a slot of `slot_bytes` (ResultBytes(v), or kBatchResultBytes:
// then a variant without a flag word stores 0 in the slot's second half).
std::string ScopedRegisterBody(const Variant& v, absl::string_view scope,
                               int slot_bytes,
                               std::span<const int> dispatch_values = {});
// The source of `v` a register kernel branches on, since PTX takes only an
// immediate there (a 2-lane SIMD selector, lop3's immLut), or -1: the
// kernel has an instruction for each value it may hold.
int DispatchSource(const Variant& v);
// The branch that source holding `operand` takes (a 2-lane selector's
// index: its four lane fields packed).
int DispatchValue(const Variant& v, uint64_t operand);
// The DispatchValues `tuples` of `v` take, sorted and distinct (empty where
// `v` has no DispatchSource).
std::vector<int> DispatchValuesOf(const Variant& v,
                                  std::span<const Operands> tuples);
// A register-mode kernel named `entry` running `bodies` (RegisterBody texts)
// in its loop, with `declarations` (OperandDeclarations).
std::string RegisterKernel(absl::string_view entry,
                           absl::string_view declarations,
                           absl::string_view bodies);
// The immediate-mode text for one tuple, stored at out + 8*`slot`.
std::string ImmediateBody(const Variant& v, const Operands& tuple, int slot);
// An immediate-mode kernel named `entry` running `bodies` (ImmediateBody
// texts) once, with `declarations` (OperandDeclarations).
std::string ImmediateKernel(absl::string_view entry,
                            absl::string_view declarations,
                            absl::string_view bodies);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_KERNEL_GEN_H_
