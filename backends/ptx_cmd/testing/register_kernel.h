// A host interpreter of exactly the register-mode kernels ptxdiff generates
// (backends/cuda/kernel_gen.h, documented in docs/kernel-abi.md): the
// test fixture standing in for a tool that runs PTX.
//
// It reads the kernel as a tool would, not by recognising ptxdiff's text:
// the entry and its parameters (the ABI's in, out, n), the register
// declarations, and every statement, which it then executes thread by
// thread over a grid. The frame's few statements (ld.param, cvta, mov from
// special registers, setp, bra, ld.global, st.global, cvt, ret; any but a
// memory access or ret may be guarded, `@%p`) are
// interpreted directly; every other statement must be an integer instruction
// ptxdiff knows (ParseVariant), and is evaluated by the CPU oracle, the
// instruction under test among them. Each thread has a CC.CF, which the
// extended-precision instructions (add.cc, addc, ...) write and read; reading
// it before it is set, or reading one kind's flag with the other kind
// (a sub.cc borrow with addc), is an error. Anything else — another statement,
// a second entry, parameters other than (u64, u64, u32), an access outside the
// buffers, a result slot stored twice or never — is an error naming what it
// found, so a generator change that breaks the ABI fails loudly.

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_TESTING_REGISTER_KERNEL_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_TESTING_REGISTER_KERNEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

class RegisterKernel {
 public:
  struct Param {
    std::string name;
    std::string type;  // "u64", "u32", ...
  };
  struct Grid {
    uint32_t blocks = 3;
    uint32_t threads = 4;  // per block
  };
  struct RunOptions {
    Grid grid;
    // Instructions of the first variant are evaluated as the second: a
    // deliberately wrong tool (add.sat.s32 as add.s32 wraps).
    std::vector<std::pair<Variant, Variant>> substitutions;
    // These `.cc` variants that read CC.CF (addc.cc.u32) write no CC.CF,
    // which keeps their carry in: a wrong tool whose result bits are right
    // and whose carries are not.
    std::vector<Variant> carry_flag_unwritten;
    // Called before the oracle evaluates each instruction, with its
    // operands: where a fixture crashes or hangs on a chosen input.
    std::function<void(const Variant&, const Operands&)> before_instruction;
    // Where it says so, the instruction's result has its low bit flipped: a
    // planted value bug on a chosen input.
    std::function<bool(const Variant&, const Operands&)> flip_low_bit;
    // Instructions of these variants with an immediate where a runtime value
    // could be (isa/operand_form.h) have their result's low bit flipped: a
    // tool whose constant path is wrong and whose register path is right.
    std::vector<Variant> immediate_forms_flipped;
    // Immediates are read as their low 32 bits, as a lexer that parses
    // every literal into 32 bits would: wrong for 64-bit constants only.
    bool immediates_read_as_32_bits = false;
  };

  // Parses a module holding one register-mode kernel.
  static absl::StatusOr<RegisterKernel> Parse(absl::string_view ptx);

  // Runs the kernel on `in` (32 bytes per tuple; n = in.size() / 32) and
  // returns the output buffer (8 bytes per tuple; 16 where the declared
  // variant writes CC.CF: the result, then the flag word).
  absl::StatusOr<std::string> Run(absl::string_view in,
                                  const RunOptions& options) const;

  const std::string& entry() const { return entry_; }
  const std::vector<Param>& params() const { return params_; }
  // The `// ptxdiff variant:` line's variant, if the module has one.
  const std::optional<Variant>& declared_variant() const {
    return declared_variant_;
  }
  // The instructions the oracle evaluates, in program order.
  std::vector<Variant> OracleInstructions() const;
  // Their lines in the module (1 for the first), in the same order.
  std::vector<int> OracleInstructionLines() const;

  // Public for the implementation's helpers; not part of the interface.
  struct Operand {
    enum Kind : uint8_t { kRegister, kImmediate, kSpecial } kind = kImmediate;
    int reg = -1;        // kRegister: index into the register file
    uint64_t value = 0;  // kImmediate: the bits; kSpecial: which (0..3)
  };
  struct Statement;

 private:
  RegisterKernel() = default;

  std::string entry_;
  std::vector<Param> params_;
  std::optional<Variant> declared_variant_;
  bool batch_ = false;  // a `// ptxdiff batch:` module (kernel ABI 2)
  // A batch module's `// tuples A..B: <spelling>` lines: their variants
  // and opcodes, looked up for every statement.
  absl::flat_hash_set<Variant> segment_variants_;
  absl::flat_hash_set<std::string> segment_opcodes_;
  // True if the header names a variant under test of `opcode`, or `v`.
  bool UnderTest(absl::string_view opcode) const;
  bool UnderTest(const Variant& v) const;
  std::vector<int> register_widths_;  // bits; 1 for predicates
  std::vector<Statement> program_;
  std::map<std::string, int, std::less<>> registers_;
};

struct RegisterKernel::Statement {
  enum Kind : uint8_t {
    kLoadParam,    // ld.param.T dst, [param]
    kMove,         // mov.T dst, src; cvta.to.global.u64 dst, src
    kConvert,      // cvt.uD.uS dst, src (zero-extends or truncates)
    kSetp,         // setp.CMP.T dst, a, b
    kBranch,       // [@[!]p] bra label
    kLoadGlobal,   // ld.global.T dst, [reg+offset]
    kStoreGlobal,  // st.global.T [reg+offset], src
    kReturn,       // ret
    kOracle,       // an integer instruction: the oracle
  };
  Kind kind = kReturn;
  int line = 0;
  std::string text;
  int dst = -1;
  std::vector<Operand> sources;
  int width = 0;           // memory access, conversion or comparison width
  bool is_signed = false;  // setp
  std::string compare;     // setp: eq ne lt le gt ge
  int guard = -1;          // predicate register, or -1
  bool guard_negated = false;
  int target = -1;     // branch: statement index
  int64_t offset = 0;  // memory access
  int param = -1;      // ld.param
  Variant variant;     // kOracle
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_TESTING_REGISTER_KERNEL_H_
