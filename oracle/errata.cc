#include "oracle/errata.h"

#include <algorithm>
#include <array>

#include "isa/axes.h"
#include "isa/family_table.h"
#include "oracle/bits.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace {

// ---------------------------------------------------------------------------
// bfe-bfi-64-unmasked: 64-bit bfe/bfi use the whole 32-bit position and length
// ---------------------------------------------------------------------------

bool CoversBfeBfi64(const Variant& v) {
  return (v.family == Family::kBfe &&
          (v.type == Type::kU64 || v.type == Type::kS64)) ||
         (v.family == Family::kBfi && v.type == Type::kB64);
}

// Only where the spec's `& 0xff` changes an operand can the readings differ.
bool PosOrLenAbove255(const Variant& v, const Operands& o) {
  const int i = FirstAmountSource(v);  // position; length is i + 1
  return Low(o.v[i], 32) > 0xff || Low(o.v[i + 1], 32) > 0xff;
}

// The bfe/bfi pseudocode with `pos` and `len` not masked (as ptx_tests'
// bfe_host/bfi_host compute them for 64-bit types), in closed form.
uint64_t BfeBfi64Unmasked(const Variant& v, const Operands& o) {
  const int i = FirstAmountSource(v);  // position; length is i + 1
  const uint64_t pos = Low(o.v[i], 32), len = Low(o.v[i + 1], 32);
  const uint64_t msb = 63;
  // Bits pos .. pos+n-1 of the 64-bit value take part.
  const uint64_t n = pos > msb ? 0 : std::min(len, 64 - pos);
  const uint64_t field_mask = LowMask(static_cast<int>(n));
  if (v.family == Family::kBfi) {  // f = b; f[pos+i] = a[i] for i < n
    if (n == 0) return o.v[1];
    return (o.v[1] & ~(field_mask << pos)) | ((o.v[0] & field_mask) << pos);
  }
  const uint64_t a = o.v[0];
  const bool sbit = v.type == Type::kS64 && len != 0 &&
                    ((a >> std::min(pos + len - 1, msb)) & 1) != 0;
  const uint64_t field = n == 0 ? 0 : (a >> pos) & field_mask;
  return field | (sbit ? ~field_mask : 0);
}

// ---------------------------------------------------------------------------
// div-rem-by-zero-32: 32-bit div and rem by zero give all ones
// ---------------------------------------------------------------------------

bool CoversDivRem32(const Variant& v) {
  return (v.family == Family::kDiv || v.family == Family::kRem) &&
         (v.type == Type::kS32 || v.type == Type::kU32);
}

bool DivisorZero32(const Variant&, const Operands& o) {
  return Low(o.v[1], 32) == 0;
}

uint64_t AllOnes32(const Variant&, const Operands&) { return 0xffffffff; }

// ---------------------------------------------------------------------------
// rem-truncates: signed rem of operands of different signs truncates
// ---------------------------------------------------------------------------

bool CoversRemSigned(const Variant& v) {
  return v.family == Family::kRem &&
         (v.type == Type::kS32 || v.type == Type::kS64);
}

// Where truncating and flooring division give different remainders: b != 0,
// the remainder is not 0, and a and b have different signs.
bool RemainderSignDiffers(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const __int128 a = SignExtend(o.v[0], w), b = SignExtend(o.v[1], w);
  return b != 0 && a % b != 0 && (a < 0) != (b < 0);
}

// The C/C++ remainder: the sign of the dividend (exact in 128 bits, so
// MIN % -1 cannot trap; it has remainder 0 anyway).
uint64_t TruncatingRemainder(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const __int128 a = SignExtend(o.v[0], w), b = SignExtend(o.v[1], w);
  return Low(static_cast<uint64_t>(a % b), w);
}

// ---------------------------------------------------------------------------
// The table. docs/spec-notes.md ("Errata: the hardware reading") has one
// entry per row; ErrataDocTest holds the two together.
// ---------------------------------------------------------------------------

constexpr std::array<Erratum, 3> kErrata = {{
    {
        .id = "bfe-bfi-64-unmasked",
        .scope =
            "bfe.u64 and bfe.s64 with position b or length c above 255, and "
            "bfi.b64 with position c or length d above 255 (the operands are "
            ".u32; the spec's pseudocode keeps only their low 8 bits)",
        .hardware_result =
            "the spec's pseudocode evaluated with the whole 32-bit position "
            "and length instead of `pos = b & 0xff`, `len = c & 0xff`: bfe "
            "takes min(len, 64 - pos) bits of a from pos (none when pos >= "
            "64) and fills the rest with sbit = a[min(pos + len - 1, 63)] for "
            ".s64 (0 for .u64 or len = 0), so a position of 64 or more gives 0 "
            "or all ones and a length of 64 or more extracts up to the msb; "
            "bfi inserts the low min(len, 64 - pos) bits of a into b at pos, "
            "and gives b when pos >= 64 or len = 0",
        .evidence =
            "vosen/ptx_tests (ZLUDA's test suite: it runs each PTX test "
            "through the CUDA driver it is given and compares every output "
            "with a host reference; against NVIDIA's driver and GPU the "
            "expected values are the hardware's). src/testcase/bfe.rs and "
            "src/testcase/bfi.rs (stored commit "
            "01e82da1e5f5605cbff7f9045453a41a494fa3d6; the same comment in the "
            "older src/bfe.rs, commit "
            "453455c15061e1855ce478a052a3b01804868df4) "
            "say 'ERRATA: len and pos parameters in 64 bit variant use whole "
            "32 bits, not just bottom 8', and their host references (bfe_host, "
            "bfi_host) are the pseudocode without the masking for 64-bit "
            "types; src/testcase/bfe.ptx loads pos and len from memory, so the "
            "GPU computes them, and the random generators draw pos and len "
            "from 0..511. The GPU model, driver and toolkit are not recorded "
            "in the files read. ptxas 13.0 (V13.0.88) constant folding gives "
            "this reading's values: on both checked-in triage entries "
            "(triage/entries/value-mismatch~ptxas~ge256~bfe.u64 and "
            "value-mismatch~ptxas~ge64_ge256~bfi.b64, on every arch tried) "
            "and, run here with `ptxdiff eval --backend=ptxas` on sm_90 (some "
            "also on sm_75 and sm_120), on positions and lengths 0x104, "
            "0x10000, 0x10001, 0x10004, 0x10008, 0x80000000 and 0xffffffff, "
            "including bfe.s64 0x8000000000000000 2 0xffffffff = "
            "0xe000000000000000 (pos + len - 1 computed without 32-bit "
            "wrap-around). Not confirmed on a GPU: positions and lengths of "
            "512 and above (ptx_tests draws 0..511).",
        .confidence =
            "high for positions and lengths 256..511 (hardware-tested by "
            "ptx_tests, matched by ptxas 13.0 folding); above 511 from the "
            "ptx_tests authors' statement and ptxas 13.0 folding only",
        .sources = {"vosen/ptx_tests src/testcase/bfe.rs",
                    "vosen/ptx_tests src/testcase/bfi.rs", "ptxas 13.0", ""},
        .covers = CoversBfeBfi64,
        .triggers = PosOrLenAbove255,
        .hardware_value = BfeBfi64Unmasked,
    },
    {
        .id = "div-rem-by-zero-32",
        .scope = "div.s32, div.u32, rem.s32 and rem.u32 with divisor b = 0, "
                 "any dividend (the spec: 'an unspecified, machine-specific "
                 "value')",
        .hardware_result = "0xffffffff (all ones), for div and rem alike",
        .evidence =
            "Stack Overflow question 12960005 ('Undefined division in CUDA "
            "kernel', https://stackoverflow.com/questions/12960005/), accepted "
            "answer: 'In the case of division by zero, the integer division "
            "operators on NVIDIA GPUs return a result with all bits set to 1 "
            "... The same applies to a modulo operator' (no GPU named; CUDA C, "
            "which compiles int / and % to div.s32/rem.s32). PyTorch "
            "test/test_binary_ufuncs.py, test_fmod_remainder_by_zero_integral "
            "(as quoted in pytorch/pytorch PR #180781 and "
            "intel/torch-xpu-ops PR #3401): on CUDA, fmod and remainder by "
            "zero give -1 for int32 (and 255 for uint8) for dividends -9..9. "
            "sonots/cumo PR #218: on an NVIDIA GPU Int32 1/0 and 2 % 0 give "
            "4294967295. HansKristian-Work/vkd3d-proton PR #3284: NVIDIA's "
            "D3D12 driver returns 0xffffffff for signed and unsigned div and "
            "rem by 0. ptxas 13.0 (V13.0.88) folds div/rem .s32/.u32 by zero "
            "to 0xffffffff whatever the dividend, on sm_75..sm_121 "
            "(docs/ptxas-folding-research.md). Not included: the 16-bit forms "
            "(CUDA C promotes them to 32 bits, so none of the evidence runs "
            "PTX div.s16/.u16) and the 64-bit forms, which run a software "
            "routine whose result depends on the dividend (PyTorch: int64 "
            "remainder by 0 is 0xffffffff, not all ones, for dividends 0..9, "
            "and -1 for -9..-1; pytorch/pytorch issue #135330: int64 "
            "floor_divide(1, 0) = 4294967295 on an RTX 4090).",
        .confidence =
            "high (several independent reports of CUDA programs on NVIDIA "
            "GPUs, and ptxas folds it so); negative dividends of div.s32 are "
            "covered by the general statements and ptxas, not by a recorded "
            "GPU run",
        .sources = {"stackoverflow.com/questions/12960005",
                    "test_fmod_remainder_by_zero_integral", "ptxas 13.0", ""},
        .covers = CoversDivRem32,
        .triggers = DivisorZero32,
        .hardware_value = AllOnes32,
    },
    {
        .id = "rem-truncates",
        .scope = "rem.s32 and rem.s64 where a and b have different signs and "
                 "the remainder is not 0 (the spec: 'machine-dependent', "
                 "truncating or flooring division)",
        .hardware_result =
            "the truncating remainder, which has the sign of the dividend "
            "(C and C++ `%`): rem.s32 -7, 2 is -1 (0xffffffff), not 1",
        .evidence =
            "nvcc 13.0 (V13.0.88, run here: `nvcc -ptx -arch=sm_90`) compiles "
            "the C++ `%` of int and long long operands to rem.s32 and "
            "rem.s64 with no fix-up code; C++ (since C++11, [expr.mul]) "
            "defines `%` by the quotient truncated toward zero, so NVIDIA's "
            "hardware must compute these instructions truncating for CUDA "
            "C++ to be correct. ptxas 13.0 folds rem.s32 the same way "
            "(`0xffffffff % 2 = 0xffffffff`, docs/ptxas-folding-research.md). "
            "An inference from the compiler's contract, not a recorded GPU "
            "run; rem.s16 is left out (C++ promotes 16-bit operands, so nvcc "
            "never emits it).",
        .confidence = "high, by inference from nvcc's lowering of C++ `%`",
        .sources = {"nvcc 13.0", "[expr.mul]", "", ""},
        .covers = CoversRemSigned,
        .triggers = RemainderSignDiffers,
        .hardware_value = TruncatingRemainder,
    },
}};

}  // namespace

absl::string_view ReadingName(Reading reading) {
  return reading == Reading::kHardware ? "hardware" : "spec";
}

std::optional<Reading> ParseReading(absl::string_view name) {
  for (Reading r : kAllReadings) {
    if (name == ReadingName(r)) return r;
  }
  return std::nullopt;
}

std::span<const Erratum> AllErrata() { return kErrata; }

const Erratum* FindErratum(absl::string_view id) {
  for (const Erratum& e : kErrata) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

const Erratum* ErratumFor(const Variant& v, const Operands& o) {
  for (const Erratum& e : kErrata) {
    if (e.Applies(v, o)) return &e;
  }
  return nullptr;
}

ReadResult Read(Reading reading, const Variant& v, const Operands& o) {
  if (reading == Reading::kHardware) {
    if (const Erratum* e = ErratumFor(v, o)) {
      return {{e->hardware_value(v, o), Undefined::kDefined}, e};
    }
  }
  return {Evaluate(v, o), nullptr};
}

Result EvaluateWithReading(Reading reading, const Variant& v,
                           const Operands& o) {
  return Read(reading, v, o).result;
}

void EvaluateBatchWithReading(Reading reading, const Variant& v,
                              std::span<const Operands> operands,
                              std::span<Result> results) {
  EvaluateBatch(v, operands, results);
  if (reading == Reading::kSpec) return;
  // The errata that concern this variant, in table order (usually none).
  std::array<const Erratum*, kErrata.size()> relevant;
  size_t n = 0;
  for (const Erratum& e : kErrata) {
    if (e.covers(v)) relevant[n++] = &e;
  }
  if (n == 0) return;
  for (size_t i = 0; i < operands.size(); ++i) {
    for (size_t k = 0; k < n; ++k) {
      if (relevant[k]->triggers(v, operands[i])) {
        results[i] = {relevant[k]->hardware_value(v, operands[i]),
                      Undefined::kDefined};
        break;
      }
    }
  }
}

const Erratum* ErratumExplaining(const Variant& v, const Operands& o,
                                 uint64_t backend_bits) {
  const Erratum* e = ErratumFor(v, o);
  if (e == nullptr || e->hardware_value(v, o) != backend_bits) return nullptr;
  const Result spec = Evaluate(v, o);
  if (spec.defined() && spec.bits == backend_bits) return nullptr;
  return e;
}

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
