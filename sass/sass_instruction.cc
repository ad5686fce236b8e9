#include "sass/sass_instruction.h"

#include <iterator>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace ptxdiff {
namespace {

constexpr const char* kMnemonics[] = {
#define PTXDIFF_SASS_OP(Name, mnemonic) mnemonic,
#include "sass/sass_ops.inc"
#undef PTXDIFF_SASS_OP
};
static_assert(std::size(kMnemonics) == kNumSassOps);

const char* BaseName(SassOp op) { return kMnemonics[static_cast<int>(op)]; }

// The operation whose base name `mnemonic` is, or starts with before a
// suffix; the longest: "IMAD.WIDE.U32" is IMAD.WIDE, not IMAD.
std::optional<SassOp> OpOfMnemonic(absl::string_view mnemonic) {
  std::optional<SassOp> found;
  size_t found_length = 0;
  for (int op = 0; op < kNumSassOps; ++op) {
    const absl::string_view base = kMnemonics[op];
    if (base.size() > found_length && absl::StartsWith(mnemonic, base) &&
        (mnemonic.size() == base.size() || mnemonic[base.size()] == '.')) {
      found = static_cast<SassOp>(op);
      found_length = base.size();
    }
  }
  return found;
}

std::string Reg(int r, bool uniform) {
  if (uniform) return r == kSassUrz ? "URZ" : absl::StrCat("UR", r);
  return r == kSassRz ? "RZ" : absl::StrCat("R", r);
}

std::string Pred(const SassPredicate& p) {
  const std::string name =
      p.index == kSassPt ? "PT" : absl::StrCat("P", p.index);
  return absl::StrCat(p.negated ? "!" : "", p.uniform ? "U" : "", name);
}

std::string Operand(const SassOperand& o) {
  std::string text;
  switch (o.kind) {
    case SassOperand::kNone:
      return "";
    case SassOperand::kRegister:
      text = Reg(o.reg, false);
      break;
    case SassOperand::kUniform:
      text = Reg(o.reg, true);
      break;
    case SassOperand::kImmediate:
      return absl::StrFormat("0x%x", o.value);
    case SassOperand::kConstant:
      text = absl::StrFormat("c[0x%x][0x%x]", o.bank, o.value);
      break;
  }
  if (o.abs) text = absl::StrCat("|", text, "|");
  return absl::StrCat(o.negate ? "-" : "", o.invert ? "~" : "", text);
}

const char* CompareName(SassCompare c) {
  static constexpr const char* kNames[] = {"F",  "LT", "EQ", "LE",
                                           "GT", "NE", "GE", "T"};
  return kNames[static_cast<int>(c)];
}

const char* FloatCompareName(SassFloatCompare c) {
  static constexpr const char* kNames[] = {
      "F",   "LT",  "EQ",  "LE",  "GT",  "NE",  "GE",  "NUM",
      "NAN", "LTU", "EQU", "LEU", "GTU", "NEU", "GEU", "T"};
  return kNames[static_cast<int>(c)];
}

constexpr const char* kSetOps[] = {"AND", "OR", "XOR", "?"};

std::string Suffixes(const SassInstruction& i) {
  switch (i.op) {
    case SassOp::kFsetp:
      return absl::StrCat(".", FloatCompareName(i.float_compare), ".",
                          kSetOps[i.set_op & 3]);
    case SassOp::kIsetp: {
      return absl::StrCat(".", CompareName(i.compare),
                          i.is_signed ? "" : ".U32", i.extended ? ".EX" : "",
                          ".", kSetOps[i.set_op & 3]);
    }
    case SassOp::kShf:
      return absl::StrCat(i.right ? ".R" : ".L", i.wrap ? ".W" : "",
                          i.is_signed ? ".S" : ".U", i.width,
                          i.hi ? ".HI" : "");
    case SassOp::kLea:
      return absl::StrCat(i.hi ? ".HI" : "", i.extended ? ".X" : "",
                          i.is_signed ? ".SX32" : "");
    case SassOp::kIdp4a:
      return i.dp2a ? (i.hi ? " (.2A.HI)" : " (.2A)") : "";
    case SassOp::kIabsdiff:
      return i.is_signed ? "" : ".U32";
    case SassOp::kIadd3:
    case SassOp::kImad:
      return i.extended ? ".X" : "";
    case SassOp::kImadHi:
    case SassOp::kImadWide:
      return i.is_signed ? "" : ".U32";
    case SassOp::kSgxt:
      return i.is_signed ? "" : ".U32";
    case SassOp::kVimnmx:
      return absl::StrCat(i.is_signed ? ".S" : ".U", i.simd16 ? "16x2" : "32",
                          i.relu ? ".RELU" : "");
    case SassOp::kViadd:
      return i.simd16 ? ".16x2" : "";
    case SassOp::kI2i:
      return absl::StrCat(i.is_signed ? ".S" : ".U", i.width, ".S32.SAT");
    case SassOp::kI2f: {
      static constexpr absl::string_view kRounds[] = {"", ".RM", ".RP",
                                                      ".RZ"};
      // I2F of an s32 is spelt without its source type.
      const std::string source =
          i.width == 32 && i.is_signed
              ? ""
              : absl::StrCat(i.is_signed ? ".S" : ".U", i.width);
      const std::string part =
          i.source_part == 0
              ? ""
              : absl::StrCat(i.width == 8 ? ".B" : ".H", i.source_part);
      return absl::StrCat(source, kRounds[static_cast<int>(i.round)], part);
    }
    case SassOp::kF2i:
      if (i.width == 64) return ".U64.TRUNC";
      return i.ftz ? ".FTZ.U32.TRUNC.NTZ" : ".U32.TRUNC.NTZ";
    case SassOp::kFmul:
    case SassOp::kFadd: {
      static constexpr absl::string_view kRounds[] = {"", ".RM", ".RP",
                                                      ".RZ"};
      return std::string(kRounds[static_cast<int>(i.round)]);
    }
    case SassOp::kFlo:
      return absl::StrCat(i.is_signed ? "" : ".U32",
                          i.shift_amount ? ".SH" : "");
    case SassOp::kBmsk:
      return i.wrap ? ".W" : "";
    case SassOp::kCall:
      return i.absolute ? ".ABS.NOINC" : ".REL.NOINC";
    case SassOp::kRet:
      return i.absolute ? ".ABS.NODEC" : ".REL.NODEC";
    case SassOp::kLdg:
      if (i.width < 4)
        return absl::StrCat(i.is_signed ? ".S" : ".U", i.width * 8);
      [[fallthrough]];
    case SassOp::kLdc:
    case SassOp::kStg:
      return i.width == 4 ? "" : absl::StrCat(".", i.width * 8);
    default:
      return "";
  }
}

}  // namespace

bool Hfma2GivesBack(uint32_t imm) {
  for (uint32_t h : {imm & 0xffff, imm >> 16}) {
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (nan && h != 0x7fff) return false;
  }
  return true;
}

std::string SassOpName(SassOp op, bool uniform) {
  return absl::StrCat(uniform ? "U" : "", BaseName(op));
}

std::optional<SassOp> SassOpOfText(absl::string_view text) {
  if (absl::StartsWith(text, "@")) {  // a guard: "@!P0 "
    const size_t space = text.find(' ');
    if (space == absl::string_view::npos) return std::nullopt;
    text.remove_prefix(space + 1);
  }
  absl::string_view mnemonic = text.substr(0, text.find(' '));
  if (const std::optional<SassOp> op = OpOfMnemonic(mnemonic)) return op;
  // The uniform datapath's form of one ("ULOP3.LUT").
  if (absl::ConsumePrefix(&mnemonic, "U")) return OpOfMnemonic(mnemonic);
  return std::nullopt;
}

std::string SassText(const SassInstruction& i) {
  std::vector<std::string> parts;
  const bool u = i.uniform;
  auto pdsts = [&] {
    for (int p : i.pdst) {
      if (p != kSassPt) {
        parts.push_back(Pred({.index = p, .uniform = i.pdst_uniform}));
      }
    }
  };
  switch (i.op) {
    case SassOp::kBra:
    case SassOp::kBssy:
    case SassOp::kCall:
      parts.push_back(absl::StrFormat("0x%x", i.target));
      break;
    case SassOp::kRet:
      parts.push_back(Reg(i.src[0].reg, false));
      parts.push_back(absl::StrFormat("0x%x", i.target));
      break;
    case SassOp::kStg:
      parts.push_back(
          absl::StrFormat("[R%d.64+0x%x]", i.src[0].reg, i.src[2].value));
      parts.push_back(Reg(i.src[1].reg, false));
      break;
    case SassOp::kLdg:
      parts.push_back(Reg(i.dst, false));
      parts.push_back(
          absl::StrFormat("[R%d.64+0x%x]", i.src[0].reg, i.src[2].value));
      break;
    case SassOp::kExit:
    case SassOp::kNop:
    case SassOp::kBsync:
      break;
    case SassOp::kPlop3:
      pdsts();
      for (const SassPredicate& p : i.psrc) parts.push_back(Pred(p));
      parts.push_back(absl::StrFormat("0x%x, 0x%x", i.lut & 0xff, i.lut >> 8));
      break;
    case SassOp::kP2r:
      parts.push_back(Reg(i.dst, false));
      parts.push_back("PR");
      parts.push_back(Reg(i.src[0].reg, false));
      parts.push_back(absl::StrFormat("0x%x", i.src[1].value));
      break;
    case SassOp::kS2r:
    case SassOp::kCs2r:
      parts.push_back(Reg(i.dst, false));
      parts.push_back(absl::StrFormat("SR%d", i.special));
      break;
    default:
      if (i.op != SassOp::kIsetp && i.op != SassOp::kFsetp &&
          i.op != SassOp::kSignLut) {
        parts.push_back(Reg(i.dst, u || i.op == SassOp::kR2ur));
      }
      pdsts();
      for (const SassOperand& o : i.src) {
        if (o.kind != SassOperand::kNone) parts.push_back(Operand(o));
      }
      if (i.op == SassOp::kLop3 || i.op == SassOp::kSignLut)
        parts.push_back(absl::StrFormat("0x%x", i.lut));
      if (i.op == SassOp::kLea) parts.push_back(absl::StrCat(i.shift));
      if (i.op == SassOp::kSel || i.op == SassOp::kFsel ||
          i.op == SassOp::kVimnmx ||
          (i.extended && i.op != SassOp::kIsetp)) {
        parts.push_back(Pred(i.psrc[0]));
      }
      if (i.op == SassOp::kIsetp || i.op == SassOp::kFsetp) {
        parts.push_back(Pred(i.psrc[1]));
        if (i.extended) parts.push_back(Pred(i.psrc[0]));
      }
      break;
  }
  const std::string guard = i.guard.index == kSassPt && !i.guard.negated
                                ? ""
                                : absl::StrCat("@", Pred(i.guard), " ");
  return absl::StrCat(guard, SassOpName(i.op, u), Suffixes(i), " ",
                      absl::StrJoin(parts, ", "));
}

}  // namespace ptxdiff
