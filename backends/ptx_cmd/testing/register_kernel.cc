#include "backends/ptx_cmd/testing/register_kernel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

using Operand = RegisterKernel::Operand;
using Statement = RegisterKernel::Statement;

constexpr int kTupleBytes = 32;
constexpr int kResultBytes = 8;
// A variant that writes CC.CF: its result, then the flag word.
constexpr int kCarryResultBytes = 16;
// Every result slot of a batch module (kernel ABI 2).
constexpr int kBatchResultBytes = 16;

// Where the interpreter "maps" the two buffers: far apart, so that an offset
// that strays from one cannot land in the other.
constexpr uint64_t kInBase = 0x100000000000;
constexpr uint64_t kOutBase = 0x200000000000;

// The special registers a register-mode kernel reads, by Operand::value.
constexpr const char* kSpecials[] = {"%ctaid.x", "%ntid.x", "%tid.x",
                                     "%nctaid.x"};

absl::Status LineError(int line, absl::string_view text,
                       absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", line, ": ", why, ": '", text, "'"));
}

uint64_t Mask(uint64_t bits, int width) {
  return width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
}

// "u32" -> 32 (and "u8" -> 8, "s16" -> 16, "b64" -> 64, "pred" -> 1); 0 if
// unknown.
int TypeWidth(absl::string_view type) {
  if (type == "pred") return 1;
  if (type.size() < 2 || (type[0] != 'u' && type[0] != 's' && type[0] != 'b')) {
    return 0;
  }
  int width = 0;
  if (!absl::SimpleAtoi(type.substr(1), &width)) return 0;
  return width == 8 || width == 16 || width == 32 || width == 64 ? width : 0;
}

// Reads a kernel line by line, building the program.
class Parser {
 public:
  explicit Parser(std::map<std::string, int, std::less<>>& registers,
                  std::vector<int>& widths)
      : registers_(registers), widths_(widths) {}

  absl::Status Declare(int line, absl::string_view text) {
    // .reg .b32 %a, %b;
    absl::string_view rest = text;
    absl::ConsumePrefix(&rest, ".reg .");
    const size_t space = rest.find(' ');
    const int width = TypeWidth(rest.substr(0, space));
    if (space == absl::string_view::npos || width == 0 ||
        !absl::ConsumeSuffix(&rest, ";")) {
      return LineError(line, text, "cannot read this register declaration");
    }
    for (absl::string_view name :
         absl::StrSplit(rest.substr(space + 1), ',', absl::SkipWhitespace())) {
      name = absl::StripAsciiWhitespace(name);
      if (!absl::StartsWith(name, "%") ||
          !registers_.emplace(std::string(name), widths_.size()).second) {
        return LineError(line, text, "bad or repeated register name");
      }
      widths_.push_back(width);
    }
    return absl::OkStatus();
  }

  // A register operand, possibly with a video selector (`%src0.b1`) or a
  // negation (`-%src0`), which the oracle's variant carries.
  absl::StatusOr<int> Register(absl::string_view token) const {
    absl::ConsumePrefix(&token, "-");
    const absl::string_view name = token.substr(0, token.find('.'));
    auto it = registers_.find(name);
    if (it == registers_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("undeclared register '", name, "'"));
    }
    return it->second;
  }

  absl::StatusOr<Operand> Source(absl::string_view token) const {
    token = absl::StripAsciiWhitespace(token);
    for (int i = 0; i < 4; ++i) {
      if (token == kSpecials[i]) {
        return Operand{.kind = Operand::kSpecial, .value = uint64_t(i)};
      }
    }
    if (absl::StartsWith(token, "%") || absl::StartsWith(token, "-%")) {
      PTXDIFF_ASSIGN_OR_RETURN(const int reg, Register(token));
      return Operand{.kind = Operand::kRegister, .reg = reg};
    }
    uint64_t value = 0;
    int64_t negative = 0;
    absl::string_view hex = token;
    if (absl::ConsumePrefix(&hex, "0x") && absl::SimpleHexAtoi(hex, &value)) {
      return Operand{.kind = Operand::kImmediate, .value = value};
    }
    if (absl::SimpleAtoi(token, &value)) {
      return Operand{.kind = Operand::kImmediate, .value = value};
    }
    if (absl::SimpleAtoi(token, &negative)) {
      return Operand{.kind = Operand::kImmediate,
                     .value = static_cast<uint64_t>(negative)};
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read operand '", token, "'"));
  }

  // `[%reg+8]` or `[%reg]`.
  absl::Status Address(absl::string_view token, Statement& s) const {
    token = absl::StripAsciiWhitespace(token);
    if (!absl::ConsumePrefix(&token, "[") ||
        !absl::ConsumeSuffix(&token, "]")) {
      return absl::InvalidArgumentError("expected an address [%reg+offset]");
    }
    const size_t plus = token.find('+');
    if (plus != absl::string_view::npos &&
        !absl::SimpleAtoi(token.substr(plus + 1), &s.offset)) {
      return absl::InvalidArgumentError("cannot read the address offset");
    }
    PTXDIFF_ASSIGN_OR_RETURN(s.dst, Register(token.substr(0, plus)));
    return absl::OkStatus();
  }

  std::map<std::string, int, std::less<>>& registers_;
  std::vector<int>& widths_;
};

// Splits "op.a.b x, y, z" into the opcode's dot-separated parts and the
// comma-separated operands.
void SplitStatement(absl::string_view text,
                    std::vector<absl::string_view>& opcode,
                    std::vector<absl::string_view>& operands) {
  const size_t space = text.find(' ');
  opcode = absl::StrSplit(text.substr(0, space), '.');
  operands.clear();
  if (space == absl::string_view::npos) return;
  for (absl::string_view o : absl::StrSplit(text.substr(space + 1), ',')) {
    operands.push_back(absl::StripAsciiWhitespace(o));
  }
}

}  // namespace

absl::StatusOr<RegisterKernel> RegisterKernel::Parse(absl::string_view ptx) {
  RegisterKernel kernel;
  // At most a statement a line: a batch module has tens of thousands.
  kernel.program_.reserve(std::count(ptx.begin(), ptx.end(), '\n') + 1);
  Parser parser(kernel.registers_, kernel.register_widths_);
  std::map<std::string, int, std::less<>> labels;
  std::vector<std::pair<size_t, std::string>> branches;  // statement, label
  enum { kHeader, kParams, kOpen, kBody, kDone } state = kHeader;
  std::string params;
  bool address_size = false;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(ptx, '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    absl::string_view rest = line;
    if (line.empty()) continue;
    if (absl::ConsumePrefix(&rest, "// ptxdiff variant: ")) {
      auto v = ParseVariant(rest);
      if (!v.ok()) return LineError(number, line, v.status().message());
      kernel.declared_variant_ = *v;
      continue;
    }
    if (absl::StartsWith(line, "// ptxdiff batch: ")) {
      kernel.batch_ = true;  // kernel ABI 2: 16-byte result slots
      continue;
    }
    if (kernel.batch_ && absl::ConsumePrefix(&rest, "// tuples ")) {
      // "// tuples 0..15: add.sat.s32": a segment's variant.
      const size_t colon = rest.find(": ");
      auto v = ParseVariant(rest.substr(
          colon == absl::string_view::npos ? rest.size() : colon + 2));
      if (!v.ok()) return LineError(number, line, v.status().message());
      kernel.segment_variants_.insert(*v);
      kernel.segment_opcodes_.emplace(InfoOf(v->family).opcode);
      continue;
    }
    if (absl::StartsWith(line, "//")) continue;
    switch (state) {
      case kHeader:
        if (absl::StartsWith(line, ".version ") ||
            absl::StartsWith(line, ".target ")) {
          continue;
        }
        if (line == ".address_size 64") {
          address_size = true;
          continue;
        }
        if (absl::ConsumePrefix(&rest, ".visible .entry ")) {
          const size_t paren = rest.find('(');
          if (paren == absl::string_view::npos) {
            return LineError(number, line, "expected '(' after the entry name");
          }
          kernel.entry_ = std::string(rest.substr(0, paren));
          params = std::string(rest.substr(paren + 1));
          state = absl::StrContains(params, ')') ? kOpen : kParams;
          continue;
        }
        return LineError(number, line, "not a module directive ptxdiff writes");
      case kParams:
        absl::StrAppend(&params, line);
        if (absl::StrContains(line, ')')) state = kOpen;
        continue;
      case kOpen:
        if (line != "{") return LineError(number, line, "expected '{'");
        state = kBody;
        continue;
      case kDone:
        return LineError(number, line,
                         "more after the kernel's '}' (one entry per module)");
      case kBody:
        break;
    }
    if (line == "}") {
      state = kDone;
      continue;
    }
    if (absl::StartsWith(line, ".reg ")) {
      PTXDIFF_RETURN_IF_ERROR(parser.Declare(number, line));
      continue;
    }
    if (absl::ConsumeSuffix(&rest, ":")) {
      labels[std::string(rest)] = kernel.program_.size();
      continue;
    }
    if (!absl::ConsumeSuffix(&rest, ";")) {
      return LineError(number, line, "a statement must end with ';'");
    }
    Statement s{.line = number, .text = std::string(line)};
    if (absl::ConsumePrefix(&rest, "@")) {
      s.guard_negated = absl::ConsumePrefix(&rest, "!");
      const size_t space = rest.find(' ');
      auto guard = parser.Register(rest.substr(0, space));
      if (!guard.ok() || space == absl::string_view::npos) {
        return LineError(number, line, "cannot read the guard predicate");
      }
      s.guard = *guard;
      rest.remove_prefix(space + 1);
    }
    std::vector<absl::string_view> opcode, operands;
    SplitStatement(rest, opcode, operands);
    auto fail = [&](absl::string_view why) {
      return LineError(number, line, why);
    };
    auto set_dst = [&](absl::string_view token) -> absl::Status {
      auto reg = parser.Register(token);
      if (!reg.ok()) return fail(reg.status().message());
      s.dst = *reg;
      return absl::OkStatus();
    };
    auto add_source = [&](absl::string_view token) -> absl::Status {
      auto operand = parser.Source(token);
      if (!operand.ok()) return fail(operand.status().message());
      s.sources.push_back(*operand);
      return absl::OkStatus();
    };
    const absl::string_view op = opcode[0];
    if (s.guard >= 0 && (op == "ld" || op == "st" || op == "ret")) {
      return fail("a memory access or a return may not be guarded here");
    }
    // The parser wants plain names: `add.s32 dst, src0, src1`. Only lines
    // that may be instructions are parsed (a failed parse searches for the
    // nearest spellings).
    auto parse = [&] {
      return ParseVariant(absl::StrReplaceAll(rest, {{"%", ""}}));
    };
    auto add_oracle = [&](const Variant& v) -> absl::Status {
      // A SIMD selector is written as a/b suffixes, not as an operand.
      const int written = NumWrittenSources(v);
      if (operands.size() != static_cast<size_t>(written) + 1) {
        return fail(
            absl::StrCat("expected a destination and ", written, " sources"));
      }
      s.kind = Statement::kOracle;
      s.variant = v;
      PTXDIFF_RETURN_IF_ERROR(set_dst(operands[0]));
      for (size_t i = 1; i < operands.size(); ++i) {
        PTXDIFF_RETURN_IF_ERROR(add_source(operands[i]));
      }
      if (IsSimdVideo(v.family)) {
        auto sel =
            SpelledSimdSelector(v, absl::StrReplaceAll(rest, {{"%", ""}}));
        if (!sel.ok()) return fail(sel.status().message());
        s.sources.push_back(
            Operand{.kind = Operand::kImmediate, .value = *sel});
      }
      return absl::OkStatus();
    };
    // The variant under test goes to the oracle even where it has the form
    // of the frame's own setp or cvt (setp.ge.u32, cvt.u64.u16): a tool runs
    // every instruction of that variant alike.
    std::optional<Variant> under_test;
    if (kernel.UnderTest(op)) {
      if (auto v = parse(); v.ok() && kernel.UnderTest(*v)) under_test = *v;
    }
    if (under_test.has_value()) {
      PTXDIFF_RETURN_IF_ERROR(add_oracle(*under_test));
    } else if (op == "ret" && opcode.size() == 1 && operands.empty()) {
      s.kind = Statement::kReturn;
    } else if (op == "bra" && operands.size() == 1) {
      s.kind = Statement::kBranch;
      branches.emplace_back(kernel.program_.size(), std::string(operands[0]));
    } else if (op == "ld" && opcode.size() == 3 && opcode[1] == "param" &&
               operands.size() == 2) {
      s.kind = Statement::kLoadParam;
      s.width = TypeWidth(opcode[2]);
      absl::string_view name = operands[1];
      if (!absl::ConsumePrefix(&name, "[") ||
          !absl::ConsumeSuffix(&name, "]")) {
        return fail("expected [parameter]");
      }
      s.text = std::string(name);  // resolved against the parameters below
      PTXDIFF_RETURN_IF_ERROR(set_dst(operands[0]));
    } else if (op == "ld" && opcode.size() == 3 && opcode[1] == "global" &&
               operands.size() == 2) {
      s.kind = Statement::kLoadGlobal;
      s.width = TypeWidth(opcode[2]);
      PTXDIFF_RETURN_IF_ERROR(set_dst(operands[0]));
      Statement address;
      if (!parser.Address(operands[1], address).ok())
        return fail("bad address");
      s.sources.push_back({.kind = Operand::kRegister, .reg = address.dst});
      s.offset = address.offset;
    } else if (op == "st" && opcode.size() == 3 && opcode[1] == "global" &&
               operands.size() == 2) {
      s.kind = Statement::kStoreGlobal;
      s.width = TypeWidth(opcode[2]);
      Statement address;
      if (!parser.Address(operands[0], address).ok())
        return fail("bad address");
      s.sources.push_back({.kind = Operand::kRegister, .reg = address.dst});
      s.offset = address.offset;
      PTXDIFF_RETURN_IF_ERROR(add_source(operands[1]));
    } else if ((op == "mov" && opcode.size() == 2 && operands.size() == 2) ||
               (op == "cvta" &&
                absl::StrJoin(opcode, ".") == "cvta.to.global.u64" &&
                operands.size() == 2)) {
      // A generic address is the global one here: cvta is a move.
      s.kind = Statement::kMove;
      PTXDIFF_RETURN_IF_ERROR(set_dst(operands[0]));
      PTXDIFF_RETURN_IF_ERROR(add_source(operands[1]));
    } else if (op == "cvt" && opcode.size() == 3 && opcode[1][0] == 'u' &&
               opcode[2][0] == 'u' && operands.size() == 2) {
      s.kind = Statement::kConvert;
      s.width = std::min(TypeWidth(opcode[1]), TypeWidth(opcode[2]));
      PTXDIFF_RETURN_IF_ERROR(set_dst(operands[0]));
      PTXDIFF_RETURN_IF_ERROR(add_source(operands[1]));
    } else if (op == "setp" && opcode.size() == 3 && operands.size() == 3) {
      s.kind = Statement::kSetp;
      s.compare = std::string(opcode[1]);
      s.width = TypeWidth(opcode[2]);
      s.is_signed = opcode[2][0] == 's';
      static const char* kCompares[] = {"eq", "ne", "lt", "le", "gt", "ge"};
      if (std::find(std::begin(kCompares), std::end(kCompares), s.compare) ==
          std::end(kCompares)) {
        return fail("unknown comparison");
      }
      PTXDIFF_RETURN_IF_ERROR(set_dst(operands[0]));
      PTXDIFF_RETURN_IF_ERROR(add_source(operands[1]));
      PTXDIFF_RETURN_IF_ERROR(add_source(operands[2]));
    } else {
      const absl::StatusOr<Variant> as_variant = parse();
      if (!as_variant.ok()) {
        return fail(
            absl::StrCat("not a statement this interpreter knows, nor "
                         "an instruction ptxdiff knows (",
                         as_variant.status().message(), ")"));
      }
      PTXDIFF_RETURN_IF_ERROR(add_oracle(*as_variant));
    }
    if ((s.kind == Statement::kLoadParam || s.kind == Statement::kLoadGlobal ||
         s.kind == Statement::kStoreGlobal || s.kind == Statement::kSetp ||
         s.kind == Statement::kConvert) &&
        s.width == 0) {
      return fail("unsupported type");
    }
    kernel.program_.push_back(std::move(s));
  }
  if (state != kDone) {
    return absl::InvalidArgumentError(
        kernel.entry_.empty() ? "no `.visible .entry` in the module"
                              : "the kernel's body does not end with '}'");
  }
  if (!address_size) {
    return absl::InvalidArgumentError("the module is not `.address_size 64`");
  }

  // The parameters: (.param .u64 in, .param .u64 out, .param .u32 n).
  absl::string_view list = params;
  list = list.substr(0, list.find(')'));
  for (absl::string_view p :
       absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    std::vector<absl::string_view> words =
        absl::StrSplit(absl::StripAsciiWhitespace(p), ' ', absl::SkipEmpty());
    if (words.size() != 3 || words[0] != ".param" || words[1].size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read the parameter '", p, "'"));
    }
    kernel.params_.push_back(
        {std::string(words[2]), std::string(words[1].substr(1))});
  }
  std::vector<std::string> types;
  for (const Param& p : kernel.params_) types.push_back(p.type);
  if (types != std::vector<std::string>{"u64", "u64", "u32"}) {
    return absl::InvalidArgumentError(
        absl::StrCat("the entry's parameters are (", absl::StrJoin(types, ", "),
                     "); the register-mode ABI is (u64 in, u64 out, u32 n)"));
  }
  for (Statement& s : kernel.program_) {
    if (s.kind != Statement::kLoadParam) continue;
    for (size_t i = 0; i < kernel.params_.size(); ++i) {
      if (kernel.params_[i].name == s.text) s.param = i;
    }
    if (s.param < 0) {
      return LineError(s.line, s.text, "no parameter of this name");
    }
  }
  for (const auto& [index, label] : branches) {
    auto it = labels.find(label);
    if (it == labels.end()) {
      return LineError(kernel.program_[index].line, kernel.program_[index].text,
                       "no such label");
    }
    kernel.program_[index].target = it->second;
  }
  if (kernel.declared_variant_.has_value()) {
    const std::vector<Variant> evaluated = kernel.OracleInstructions();
    if (std::find(evaluated.begin(), evaluated.end(),
                  *kernel.declared_variant_) == evaluated.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the module says it tests ", Spell(*kernel.declared_variant_),
          " but no instruction is that variant"));
    }
  }
  return kernel;
}

bool RegisterKernel::UnderTest(absl::string_view opcode) const {
  if (declared_variant_ && InfoOf(declared_variant_->family).opcode == opcode) {
    return true;
  }
  return segment_opcodes_.contains(opcode);
}

bool RegisterKernel::UnderTest(const Variant& v) const {
  return (declared_variant_ && *declared_variant_ == v) ||
         segment_variants_.contains(v);
}

std::vector<Variant> RegisterKernel::OracleInstructions() const {
  std::vector<Variant> out;
  for (const Statement& s : program_) {
    if (s.kind == Statement::kOracle) out.push_back(s.variant);
  }
  return out;
}

std::vector<int> RegisterKernel::OracleInstructionLines() const {
  std::vector<int> out;
  for (const Statement& s : program_) {
    if (s.kind == Statement::kOracle) out.push_back(s.line);
  }
  return out;
}

namespace {

// One thread's machine state and the memory it shares with the others.
struct Machine {
  absl::string_view in;
  std::string& out;
  std::vector<bool>& stored;  // per output byte
  const std::vector<int>& widths;
  uint64_t params[3];
  uint64_t specials[4];  // ctaid.x, ntid.x, tid.x, nctaid.x
  std::vector<uint64_t> regs;
  bool immediates_read_as_32_bits = false;
  // CC.CF: unset until an instruction writes it, then a carry (add kind) or
  // a borrow (sub kind), whose bit only the same kind reads.
  enum class Flag : uint8_t {
    kUnset,
    kCarry,
    kBorrow
  } flag_kind = Flag::kUnset;
  bool flag = false;

  uint64_t Read(const Operand& o) const {
    switch (o.kind) {
      case Operand::kRegister:
        return regs[o.reg];
      case Operand::kImmediate:
        return immediates_read_as_32_bits ? o.value & 0xffffffff : o.value;
      case Operand::kSpecial:
        return specials[o.value];
    }
    return 0;
  }
  void Write(int reg, uint64_t bits) { regs[reg] = Mask(bits, widths[reg]); }
};

absl::Status AccessError(const Statement& s, absl::string_view what,
                         uint64_t address) {
  return LineError(s.line, s.text,
                   absl::StrCat(what, " at 0x", absl::Hex(address)));
}

absl::Status Load(Machine& m, const Statement& s) {
  const uint64_t address = m.Read(s.sources[0]) + s.offset;
  const uint64_t bytes = s.width / 8;
  if (address % bytes != 0) return AccessError(s, "misaligned load", address);
  if (address < kInBase || address - kInBase + bytes > m.in.size()) {
    return AccessError(s, "load outside the input buffer", address);
  }
  uint64_t bits = 0;
  std::memcpy(&bits, m.in.data() + (address - kInBase), bytes);
  m.Write(s.dst, bits);
  return absl::OkStatus();
}

absl::Status Store(Machine& m, const Statement& s) {
  const uint64_t address = m.Read(s.sources[0]) + s.offset;
  const uint64_t bytes = s.width / 8;
  if (address % bytes != 0) return AccessError(s, "misaligned store", address);
  if (address < kOutBase || address - kOutBase + bytes > m.out.size()) {
    return AccessError(s, "store outside the output buffer", address);
  }
  const uint64_t at = address - kOutBase;
  for (uint64_t i = at; i < at + bytes; ++i) {
    if (m.stored[i]) return AccessError(s, "a second store to", address);
    m.stored[i] = true;
  }
  const uint64_t bits = m.Read(s.sources[1]);
  std::memcpy(m.out.data() + at, &bits, bytes);
  return absl::OkStatus();
}

bool Compare(const Statement& s, uint64_t a, uint64_t b) {
  a = Mask(a, s.width);
  b = Mask(b, s.width);
  if (s.is_signed && s.width < 64) {
    const uint64_t sign = uint64_t{1} << (s.width - 1);
    a = (a ^ sign) - sign;
    b = (b ^ sign) - sign;
  }
  const bool lt =
      s.is_signed ? static_cast<int64_t>(a) < static_cast<int64_t>(b) : a < b;
  if (s.compare == "eq") return a == b;
  if (s.compare == "ne") return a != b;
  if (s.compare == "lt") return lt;
  if (s.compare == "le") return lt || a == b;
  if (s.compare == "gt") return !lt && a != b;
  return !lt;  // ge
}

Machine::Flag FlagKindOf(const Variant& v) {
  return CarryIsBorrow(v) ? Machine::Flag::kBorrow : Machine::Flag::kCarry;
}

// The incoming CC.CF of `s` (HasCarryIn): an error where nothing of its
// kind set it (the spec says nothing of reading a borrow as a carry).
absl::StatusOr<bool> ReadFlag(const Machine& m, const Statement& s) {
  if (m.flag_kind == Machine::Flag::kUnset) {
    return LineError(s.line, s.text, "reads CC.CF before anything set it");
  }
  if (m.flag_kind != FlagKindOf(s.variant)) {
    return LineError(
        s.line, s.text,
        m.flag_kind == Machine::Flag::kBorrow
            ? "reads a borrow as a carry (the spec leaves it open)"
            : "reads a carry as a borrow (the spec leaves it open)");
  }
  return m.flag;
}

// True if a source of `s` that could be a runtime value is an immediate.
bool HasImmediateForm(const Statement& s) {
  for (size_t i = 0; i < s.sources.size(); ++i) {
    if (s.sources[i].kind == RegisterKernel::Operand::kImmediate &&
        CanBeRuntime(s.variant, static_cast<int>(i))) {
      return true;
    }
  }
  return false;
}

// Runs `s` through the oracle, reading and writing CC.CF as it does, with
// the wrong behaviours of `options`.
absl::StatusOr<uint64_t> EvaluateOracle(
    Machine& m, const Statement& s, const RegisterKernel::RunOptions& options) {
  Operands operands;
  for (size_t i = 0; i < s.sources.size(); ++i)
    operands.v[i] = m.Read(s.sources[i]);
  const int cf = CarryInSource(s.variant);
  if (cf >= 0) {
    PTXDIFF_ASSIGN_OR_RETURN(const bool flag, ReadFlag(m, s));
    operands.v[cf] = flag;
  }
  if (options.before_instruction)
    options.before_instruction(s.variant, operands);
  const Variant* v = &s.variant;
  for (const auto& [from, to] : options.substitutions) {
    if (from == s.variant) v = &to;
  }
  const Result result = Evaluate(*v, operands);
  const auto& unwritten = options.carry_flag_unwritten;
  if (HasCarryOut(s.variant) && std::find(unwritten.begin(), unwritten.end(),
                                          s.variant) == unwritten.end()) {
    m.flag_kind = FlagKindOf(s.variant);
    m.flag = result.carry;
  }
  if (options.flip_low_bit && options.flip_low_bit(s.variant, operands)) {
    return result.bits ^ 1;
  }
  if (HasImmediateForm(s) &&
      absl::c_linear_search(options.immediate_forms_flipped, s.variant)) {
    return result.bits ^ 1;
  }
  return result.bits;
}

// The bytes of one tuple's result: 16 in a batch module (kernel ABI 2);
// in a one-variant module, a variant that writes CC.CF, which the module's
// header names, stores its flag word after the result.
int ResultBytesOf(bool batch, const std::optional<Variant>& declared) {
  if (batch) return kBatchResultBytes;
  return declared.has_value() && HasCarryOut(*declared) ? kCarryResultBytes
                                                        : kResultBytes;
}

}  // namespace

absl::StatusOr<std::string> RegisterKernel::Run(
    absl::string_view in, const RunOptions& options) const {
  if (in.size() % kTupleBytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the input is ", in.size(), " bytes, not a multiple of ", kTupleBytes));
  }
  const uint64_t n = in.size() / kTupleBytes;
  if (n > UINT32_MAX) return absl::InvalidArgumentError("too many tuples");
  const int result_bytes = ResultBytesOf(batch_, declared_variant_);
  std::string out(n * result_bytes, '\0');
  std::vector<bool> stored(out.size(), false);
  const Grid grid = options.grid;
  // Generous: a thread's share of the loops, at most 64 statements a tuple,
  // and each statement once more (a batch kernel's segments).
  const uint64_t max_steps =
      64 * (n / (uint64_t{grid.blocks} * grid.threads) + 2) + program_.size() +
      1000;
  for (uint32_t block = 0; block < grid.blocks; ++block) {
    for (uint32_t thread = 0; thread < grid.threads; ++thread) {
      Machine m{
          .in = in,
          .out = out,
          .stored = stored,
          .widths = register_widths_,
          .params = {kInBase, kOutBase, n},
          .specials = {block, grid.threads, thread, grid.blocks},
          .regs = std::vector<uint64_t>(register_widths_.size(), 0),
          .immediates_read_as_32_bits = options.immediates_read_as_32_bits};
      size_t pc = 0;
      for (uint64_t steps = 0;; ++steps) {
        if (pc >= program_.size()) {
          return absl::InvalidArgumentError("the kernel runs past its end");
        }
        if (steps > max_steps) {
          return absl::InvalidArgumentError(absl::StrCat(
              "thread ", thread, " of block ", block, " ran ", max_steps,
              " statements without returning (n = ", n, ")"));
        }
        const Statement& s = program_[pc++];
        // A guarded statement whose predicate does not hold does nothing.
        if (s.guard >= 0 && (m.regs[s.guard] != 0) == s.guard_negated) continue;
        switch (s.kind) {
          case Statement::kReturn:
            break;
          case Statement::kBranch:
            pc = s.target;
            continue;
          case Statement::kLoadParam:
            m.Write(s.dst, m.params[s.param]);
            continue;
          case Statement::kMove:
            m.Write(s.dst, m.Read(s.sources[0]));
            continue;
          case Statement::kConvert:
            m.Write(s.dst, Mask(m.Read(s.sources[0]), s.width));
            continue;
          case Statement::kSetp:
            m.Write(s.dst,
                    Compare(s, m.Read(s.sources[0]), m.Read(s.sources[1])));
            continue;
          case Statement::kLoadGlobal:
            PTXDIFF_RETURN_IF_ERROR(Load(m, s));
            continue;
          case Statement::kStoreGlobal:
            PTXDIFF_RETURN_IF_ERROR(Store(m, s));
            continue;
          case Statement::kOracle: {
            PTXDIFF_ASSIGN_OR_RETURN(const uint64_t bits,
                                     EvaluateOracle(m, s, options));
            m.Write(s.dst, bits);
            continue;
          }
        }
        break;  // ret
      }
    }
  }
  for (size_t i = 0; i < stored.size(); ++i) {
    if (!stored[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("the kernel never stored byte ", i % result_bytes,
                       " of tuple ", i / result_bytes, "'s result"));
    }
  }
  return out;
}

}  // namespace ptxdiff
