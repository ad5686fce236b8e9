// ptxdiff worker kit: the worker side of ptxdiff's worker protocol, version 1
// (docs/worker-protocol.md), in one header.
//
// An emulator or translator author writes one function,
//
//   ptxdiff::kit::Answer Evaluate(const ptxdiff::kit::Variant& v,
//                                 const uint64_t operands[4]);
//
// and calls ptxdiff::kit::Serve(info, Evaluate) from main(). The kit does the
// rest: frames on stdin/stdout, the HELLO handshake, decoding RUN batches,
// parsing each canonical spelling once per batch into a Variant (opcode,
// modifiers, operands with selectors and negations), encoding RESULTS with
// deduplicated decline messages, BYE and end of input, and protocol errors
// (a stderr line and exit status 4, as ptxdiff-worker does). An exception
// thrown by Evaluate becomes a decline (code 4) with its text.
//
// Self-contained on purpose: C++17, the standard library and POSIX read/write
// only, nothing else from the ptxdiff tree, so it can be copied into any
// project. See kit/README.md.

#ifndef PTXDIFF_KIT_PTXDIFF_WORKER_H_
#define PTXDIFF_KIT_PTXDIFF_WORKER_H_

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ptxdiff {
namespace kit {

// ---------------------------------------------------------------------------
// Protocol constants (docs/worker-protocol.md)
// ---------------------------------------------------------------------------

inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeaderSize = 16;
inline constexpr uint64_t kMaxPayload = uint64_t{1} << 30;
inline constexpr uint32_t kMaxTuplesPerBatch = 1u << 24;
inline constexpr size_t kTupleSize = 40;  // u32 index, u32 reserved, 4 x u64
inline constexpr size_t kResultSize =
    16;  // u8 kind, u8 code, u16 flags, u32, u64
inline constexpr uint16_t kResultFlagCarry = 1;    // flags bit 0: CC.CF out
inline constexpr size_t kMaxMessageSize = 0xffff;  // u16 length prefix

// The exit statuses Serve returns (main should return them).
inline constexpr int kExitOk = 0;             // BYE, end of input, client gone
inline constexpr int kExitBadSetup = 2;       // WorkerInfo lacks name/version
inline constexpr int kExitCannotStart = 3;    // the on_hello callback threw
inline constexpr int kExitProtocolError = 4;  // garbage on stdin

enum class MessageType : uint16_t {
  kHello = 1,
  kHelloReply = 2,
  kRun = 3,
  kResults = 4,
  kError = 5,
  kBye = 6,
};

// Why a tuple gets no value. A decline is never a finding.
enum class DeclineCode : uint8_t {
  kUnsupported = 1,   // this variant is not implemented here
  kNotEvaluable = 2,  // implemented, but no value for these operands here
  kOperandForm = 3,   // operand form rejected (e.g. an immediate out of range)
  kOther = 4,         // anything else (the kit uses it for exceptions)
};

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------
// Bit helpers for Evaluate
// ---------------------------------------------------------------------------

// The low `width` bits of x (width 1..64).
inline uint64_t LowBits(uint64_t x, int width) {
  return width >= 64 ? x : x & ((uint64_t{1} << width) - 1);
}

// The low `width` bits of x as a two's-complement number (width 1..64).
inline int64_t SignExtend(uint64_t x, int width) {
  if (width >= 64) return static_cast<int64_t>(x);
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t low = LowBits(x, width);
  return static_cast<int64_t>((low ^ sign) - sign);  // no signed overflow
}

// The width in bits of a PTX type modifier ("u8".."s64", "b32", "u16x2" is
// 32), or 0 if `type` is not one.
inline int TypeBits(std::string_view type) {
  if (type.size() < 2) return 0;
  const char kind = type[0];
  if (kind != 'u' && kind != 's' && kind != 'b') return 0;
  const std::string_view w = type.substr(1);
  if (w == "8") return 8;
  if (w == "16") return 16;
  if (w == "32" || w == "16x2") return 32;
  if (w == "64") return 64;
  return 0;
}

// True for the signed PTX type modifiers ("s8".."s64", "s16x2").
inline bool IsSignedType(std::string_view type) {
  return TypeBits(type) != 0 && type[0] == 's';
}

// ---------------------------------------------------------------------------
// Variants: a canonical spelling, parsed
// ---------------------------------------------------------------------------

// One operand of the spelling's operand list, as written: `-a.b1` is
// {name "a", selector "b1", negated true}.
struct Operand {
  std::string name;      // "d", "a", "b", "c" (bfi's destination is "f")
  std::string selector;  // "b0".."b3", "h0", "h1", "b3210", ...; "" if none
  bool negated = false;

  std::string ToString() const {
    std::string out = negated ? "-" : "";
    out += name;
    if (!selector.empty()) out += "." + selector;
    return out;
  }
  friend bool operator==(const Operand& x, const Operand& y) {
    return x.name == y.name && x.selector == y.selector &&
           x.negated == y.negated;
  }
};

// A canonical spelling (what `ptxdiff variants` prints), parsed:
//   "vadd.u32.u32.u32.sat d.b1, a, b.h0, c"
//     opcode "vadd", modifiers {"u32","u32","u32","sat"},
//     operands {d.b1, a, b.h0, c}
//   "visa.shl.sat.d.ub.uw"  opcode "visa.shl", modifiers {"sat","d","ub","uw"}
//   "mul.wide.u32"          opcode "mul", modifiers {"wide","u32"}, operands {}
struct Variant {
  std::string spelling;                // exactly as received
  std::string opcode;                  // "add", "vmad", "visa.shl"
  std::vector<std::string> modifiers;  // in spelling order, without dots
  // Destination first, then the sources; empty when the spelling has no
  // operand list (it has one only where operands carry selectors or
  // negations).
  std::vector<Operand> operands;

  bool HasModifier(std::string_view m) const {
    for (const std::string& x : modifiers) {
      if (x == m) return true;
    }
    return false;
  }
  // The modifier at `i`, or "" past the end.
  std::string_view ModifierAt(size_t i) const {
    return i < modifiers.size() ? std::string_view(modifiers[i])
                                : std::string_view();
  }
  // The operand named `name`, or nullptr (also when there is no list).
  const Operand* FindOperand(std::string_view name) const {
    for (const Operand& op : operands) {
      if (op.name == name) return &op;
    }
    return nullptr;
  }
  // The selector of operand `name` ("b1", "h0"), or "" if it has none.
  std::string_view SelectorOf(std::string_view name) const {
    const Operand* op = FindOperand(name);
    return op ? std::string_view(op->selector) : std::string_view();
  }
  bool IsNegated(std::string_view name) const {
    const Operand* op = FindOperand(name);
    return op != nullptr && op->negated;
  }
  // The canonical spelling rebuilt from the parts (equals `spelling` for
  // every canonical spelling).
  std::string Spell() const {
    std::string out = opcode;
    for (const std::string& m : modifiers) out += "." + m;
    for (size_t i = 0; i < operands.size(); ++i) {
      out += i == 0 ? " " : ", ";
      out += operands[i].ToString();
    }
    return out;
  }
};

namespace internal {

inline std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r\n";
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos
                                        ? std::string_view::npos
                                        : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

inline bool Fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// Opcodes of other ISAs carry a namespace: `visa.shl` is one opcode.
inline bool IsOpcodeNamespace(std::string_view token) {
  return token == "visa";
}

inline bool ParseOperand(std::string_view text, Operand* op,
                         std::string* error) {
  std::string_view s = Trim(text);
  if (!s.empty() && s[0] == '-') {
    op->negated = true;
    s = Trim(s.substr(1));
  }
  const size_t dot = s.find('.');
  op->name = std::string(s.substr(0, dot));
  if (op->name.empty() || op->name.find_first_of(" \t") != std::string::npos) {
    return Fail(error, "bad operand '" + std::string(text) + "'");
  }
  if (dot != std::string_view::npos) {
    op->selector = std::string(s.substr(dot + 1));
    if (op->selector.empty()) {
      return Fail(error,
                  "empty selector in operand '" + std::string(text) + "'");
    }
  }
  return true;
}

}  // namespace internal

namespace internal {

inline bool ParseInto(std::string_view spelling, Variant* out,
                      std::string* error) {
  Variant v;
  v.spelling = std::string(spelling);
  std::string_view s = Trim(spelling);
  if (!s.empty() && s.back() == ';') s = Trim(s.substr(0, s.size() - 1));
  if (s.empty()) return Fail(error, "empty spelling");
  const size_t space = s.find_first_of(" \t");
  const std::string_view head = s.substr(0, space);
  const std::vector<std::string_view> tokens = Split(head, '.');
  for (std::string_view t : tokens) {
    if (t.empty()) {
      return Fail(error, "empty modifier in '" + std::string(head) + "'");
    }
  }
  size_t first_modifier = 1;
  v.opcode = std::string(tokens[0]);
  if (IsOpcodeNamespace(tokens[0]) && tokens.size() > 1) {
    v.opcode += "." + std::string(tokens[1]);
    first_modifier = 2;
  }
  for (size_t i = first_modifier; i < tokens.size(); ++i) {
    v.modifiers.emplace_back(tokens[i]);
  }
  if (space != std::string_view::npos) {
    for (std::string_view text : Split(s.substr(space), ',')) {
      Operand op;
      if (!ParseOperand(text, &op, error)) return false;
      v.operands.push_back(std::move(op));
    }
  }
  *out = std::move(v);
  return true;
}

}  // namespace internal

// Parses a spelling: `opcode{.modifier}` optionally followed by white space
// and a comma-separated operand list. Tolerates extra white space and a
// trailing `;`. Fails (nullopt, `*error` set) on an empty spelling, an empty
// modifier (`add..s32`) or an empty operand. The kit parses every spelling
// of a batch before calling Evaluate; this is for your own tests and tools.
inline std::optional<Variant> ParseVariant(std::string_view spelling,
                                           std::string* error = nullptr) {
  Variant v;
  if (!internal::ParseInto(spelling, &v, error)) return std::nullopt;
  return v;
}

// ---------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------

// What Evaluate gives for one tuple: a value (the destination's bits,
// zero-extended from the result width: 64 for mul.wide.u32, 32 for packed
// types) or a decline with a code and a reason. A `.cc` variant's value also
// carries its outgoing CC.CF: the carry out (add.cc, addc.cc, mad.cc,
// madc.cc) or the borrow (sub.cc, subc.cc); it is sent only if
// WorkerInfo::carry is set, and ignored for variants without `.cc`.
class Answer {
 public:
  static Answer Value(uint64_t bits, bool carry = false) {
    Answer a;
    a.bits_ = bits;
    a.carry_ = carry;
    return a;
  }
  static Answer Decline(DeclineCode code, std::string reason) {
    Answer a;
    a.code_ = static_cast<uint8_t>(code);
    a.reason_ = std::move(reason);
    return a;
  }

  bool is_value() const { return code_ == 0; }
  bool is_decline() const { return code_ != 0; }
  uint64_t bits() const { return bits_; }
  bool carry() const { return carry_; }
  DeclineCode code() const { return static_cast<DeclineCode>(code_); }
  const std::string& reason() const { return reason_; }

 private:
  Answer() = default;  // an Answer is always built as a value or a decline

  uint64_t bits_ = 0;
  bool carry_ = false;
  uint8_t code_ = 0;  // 0: a value
  std::string reason_;
};

// The author's function. `operands` holds a, b, c, d, each in the low bits of
// its uint64_t, as wide as that source; unused slots are 0. For addc, subc
// and madc the last source is the incoming CC.CF ("cf", 0 or 1): the
// carry-in, for subc the borrow-in. For the SIMD video instructions (vadd2 ..
// vset4) the fourth is "sel": the .asel/.bsel selectors, a nibble per lane,
// asel in the low half (0x3210 = .h10/.h32, 0x76543210 = .b3210/.b7654).
using EvaluateFn = std::function<Answer(const Variant&, const uint64_t*)>;

// What the worker says of itself in HELLO_REPLY.
struct WorkerInfo {
  std::string name;                       // required, e.g. "my-emulator"
  std::string version;                    // required, e.g. "0.3.1"
  std::string toolchain, driver, device;  // optional
  // "*", family opcodes ("add", "visa.shl") or canonical spellings. The
  // client declines (code 1) every tuple not covered without sending it.
  std::vector<std::string> supports;
  // True if Evaluate answers `.cc` variants with their carry-out
  // (Answer::Value(bits, carry)): HELLO_REPLY says carry=1. Without it the
  // client sends no `.cc` variant, whatever `supports` says.
  bool carry = false;
};

// ---------------------------------------------------------------------------
// The codec: pure functions on byte strings (also usable from tests)
// ---------------------------------------------------------------------------

namespace internal {

inline void PutLe(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

// Compilers turn this into one load on little-endian hosts.
inline uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  }
  return v;
}

inline void PutString(std::string& out, std::string_view s) {
  PutLe(out, s.size(), 2);
  out.append(s.data(), s.size());
}

// At most kMaxMessageSize bytes, cut at a UTF-8 character boundary.
inline std::string_view ClipMessage(std::string_view s) {
  if (s.size() <= kMaxMessageSize) return s;
  size_t n = kMaxMessageSize;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  return s.substr(0, n);
}

// Reads little-endian fields off a payload; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool Le(int bytes, const char* what, uint64_t* v, std::string* error) {
    if (data_.size() - pos_ < static_cast<size_t>(bytes)) {
      return Fail(error, std::string("truncated: ") + what + " at byte " +
                             std::to_string(pos_) + " of " +
                             std::to_string(data_.size()));
    }
    *v = GetLe(data_.data() + pos_, bytes);
    pos_ += static_cast<size_t>(bytes);
    return true;
  }
  bool String(const char* what, std::string* s, std::string* error) {
    uint64_t size = 0;
    if (!Le(2, what, &size, error)) return false;
    if (data_.size() - pos_ < size) {
      return Fail(error, std::string("truncated: ") + what + " of " +
                             std::to_string(size) + " bytes at byte " +
                             std::to_string(pos_));
    }
    s->assign(data_.data() + pos_, size);
    pos_ += size;
    return true;
  }
  // Fails unless `count` records of `size` bytes remain.
  bool Expect(uint64_t count, size_t size, const char* what,
              std::string* error) const {
    if ((data_.size() - pos_) / size >= count) return true;
    return Fail(error, "truncated: " + std::to_string(count) + " " + what +
                           " of " + std::to_string(size) + " bytes need " +
                           std::to_string(count * size) + " bytes, " +
                           std::to_string(data_.size() - pos_) + " left");
  }
  std::string_view Take(size_t n) {
    const std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool ExpectEnd(std::string* error) const {
    if (pos_ == data_.size()) return true;
    return Fail(error, std::to_string(data_.size() - pos_) +
                           " unexpected bytes at the end");
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace internal

inline const char* MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return "HELLO";
    case MessageType::kHelloReply:
      return "HELLO_REPLY";
    case MessageType::kRun:
      return "RUN";
    case MessageType::kResults:
      return "RESULTS";
    case MessageType::kError:
      return "ERROR";
    case MessageType::kBye:
      return "BYE";
  }
  return "?";
}

// The 16-byte header of a frame.
inline std::string EncodeFrameHeader(MessageType type, uint64_t payload_size) {
  std::string out = "PXDF";
  internal::PutLe(out, kProtocolVersion, 2);
  internal::PutLe(out, static_cast<uint16_t>(type), 2);
  internal::PutLe(out, payload_size, 8);
  return out;
}

inline std::string EncodeFrame(MessageType type, std::string_view payload) {
  return EncodeFrameHeader(type, payload.size()).append(payload);
}

struct FrameHeader {
  MessageType type = MessageType::kHello;
  uint64_t payload_size = 0;
};

// Validates magic, version, type and size of a 16-byte header.
inline bool DecodeFrameHeader(std::string_view header, FrameHeader* out,
                              std::string* error) {
  using internal::Fail;
  if (header.size() != kFrameHeaderSize) {
    return Fail(error, "frame header of " + std::to_string(header.size()) +
                           " bytes, expected 16");
  }
  if (header.substr(0, 4) != "PXDF") {
    char hex[64];
    std::snprintf(hex, sizeof(hex), "%02x %02x %02x %02x",
                  static_cast<unsigned char>(header[0]),
                  static_cast<unsigned char>(header[1]),
                  static_cast<unsigned char>(header[2]),
                  static_cast<unsigned char>(header[3]));
    return Fail(error, std::string("not a ptxdiff frame: magic bytes ") + hex +
                           ", expected 50 58 44 46 (\"PXDF\")");
  }
  const uint64_t version = internal::GetLe(header.data() + 4, 2);
  const uint64_t type = internal::GetLe(header.data() + 6, 2);
  const uint64_t size = internal::GetLe(header.data() + 8, 8);
  if (version != kProtocolVersion) {
    return Fail(error, "protocol version " + std::to_string(version) +
                           ", this worker speaks 1");
  }
  if (type < 1 || type > 6) {
    return Fail(error, "unknown message type " + std::to_string(type));
  }
  if (size > kMaxPayload) {
    return Fail(error, "payload of " + std::to_string(size) +
                           " bytes exceeds the limit of 2^30");
  }
  out->type = static_cast<MessageType>(type);
  out->payload_size = size;
  return true;
}

// Key-value text: `key=value` lines; keys may repeat; lines without `=` are
// ignored.
inline std::string EncodeKeyValues(const KeyValues& kv) {
  std::string out;
  for (const auto& [key, value] : kv) out += key + "=" + value + "\n";
  return out;
}

inline KeyValues DecodeKeyValues(std::string_view text) {
  KeyValues kv;
  for (std::string_view line : internal::Split(text, '\n')) {
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    kv.emplace_back(std::string(line.substr(0, eq)),
                    std::string(line.substr(eq + 1)));
  }
  return kv;
}

// HELLO_REPLY's payload; empty optional fields are left out.
inline std::string EncodeHelloReply(const WorkerInfo& info) {
  KeyValues kv = {{"name", info.name}, {"version", info.version}};
  const std::pair<const char*, const std::string*> optional[] = {
      {"toolchain", &info.toolchain},
      {"driver", &info.driver},
      {"device", &info.device}};
  for (const auto& [key, value] : optional) {
    if (!value->empty()) kv.emplace_back(key, *value);
  }
  for (const std::string& s : info.supports) kv.emplace_back("supports", s);
  if (info.carry) kv.emplace_back("carry", "1");
  return EncodeKeyValues(kv);
}

// A decoded RUN: the spellings and the raw 40-byte tuple records (a view
// into the payload, which must outlive it).
struct RunRequest {
  std::vector<std::string> spellings;
  uint32_t num_tuples = 0;
  std::string_view records;

  uint32_t VariantIndex(size_t i) const {
    return static_cast<uint32_t>(
        internal::GetLe(records.data() + i * kTupleSize, 4));
  }
  void Operands(size_t i, uint64_t out[4]) const {
    const char* p = records.data() + i * kTupleSize + 8;
    for (int k = 0; k < 4; ++k) out[k] = internal::GetLe(p + 8 * k, 8);
  }
};

// Validates a RUN payload: counts, lengths, the tuple count (1..2^24), every
// variant index, and no bytes past the end.
inline bool DecodeRunRequest(std::string_view payload, RunRequest* out,
                             std::string* error) {
  internal::Reader r(payload);
  uint64_t num_variants = 0, num_tuples = 0;
  if (!r.Le(4, "variant count", &num_variants, error)) return false;
  if (!r.Expect(num_variants, 2, "spellings", error)) return false;
  out->spellings.resize(num_variants);
  for (std::string& s : out->spellings) {
    if (!r.String("spelling", &s, error)) return false;
  }
  if (!r.Le(4, "tuple count", &num_tuples, error)) return false;
  if (num_tuples == 0 || num_tuples > kMaxTuplesPerBatch) {
    return internal::Fail(error, "tuple count " + std::to_string(num_tuples) +
                                     " outside 1.." +
                                     std::to_string(kMaxTuplesPerBatch));
  }
  if (!r.Expect(num_tuples, kTupleSize, "tuples", error)) return false;
  out->num_tuples = static_cast<uint32_t>(num_tuples);
  out->records = r.Take(num_tuples * kTupleSize);
  if (!r.ExpectEnd(error)) return false;
  for (uint32_t i = 0; i < out->num_tuples; ++i) {
    const uint32_t index = out->VariantIndex(i);
    if (index >= num_variants) {
      return internal::Fail(error,
                            "tuple " + std::to_string(i) + ": variant index " +
                                std::to_string(index) + " out of range (" +
                                std::to_string(num_variants) + " variants)");
    }
  }
  return true;
}

// RESULTS, built one answer at a time. Equal decline messages are stored
// once (the message index of every decline with that text points at it).
class ResultsBuilder {
 public:
  explicit ResultsBuilder(size_t expected = 0) {
    records_.reserve(expected * kResultSize);
  }

  void AddValue(uint64_t bits, bool carry = false) {
    AddRecord(0, 0, 0, bits, carry ? kResultFlagCarry : 0);
  }

  void AddDecline(DeclineCode code, std::string_view reason) {
    uint8_t c = static_cast<uint8_t>(code);
    std::string clipped;
    if (c < 1 || c > 4) {  // an invalid code would make the client fail
      clipped = "(invalid decline code " + std::to_string(c) + ") ";
      c = static_cast<uint8_t>(DeclineCode::kOther);
    }
    clipped.append(reason.data(), reason.size());
    AddRecord(1, c, MessageIndex(internal::ClipMessage(clipped)), 0, 0);
  }

  void Add(const Answer& a) {
    if (a.is_value()) {
      AddValue(a.bits(), a.carry());
    } else {
      AddDecline(a.code(), a.reason());
    }
  }

  size_t size() const { return records_.size() / kResultSize; }
  const std::vector<std::string>& messages() const { return messages_; }

  // The payload up to the results (counts and messages); the results
  // themselves are records(). Kept apart so a large batch is not copied.
  std::string EncodeHead() const {
    std::string out;
    internal::PutLe(out, size(), 4);
    internal::PutLe(out, messages_.size(), 4);
    for (const std::string& m : messages_) internal::PutString(out, m);
    return out;
  }
  const std::string& records() const { return records_; }
  std::string Encode() const { return EncodeHead() + records_; }

 private:
  void AddRecord(uint8_t kind, uint8_t code, uint32_t message, uint64_t bits,
                 uint16_t flags) {
    char record[kResultSize];
    const uint64_t head = uint64_t{kind} | uint64_t{code} << 8 |
                          uint64_t{flags} << 16 | uint64_t{message} << 32;
    for (int i = 0; i < 8; ++i) {
      record[i] = static_cast<char>(head >> (8 * i));
      record[8 + i] = static_cast<char>(bits >> (8 * i));
    }
    records_.append(record, kResultSize);
  }

  uint32_t MessageIndex(std::string_view message) {
    // Declines come in runs of the same reason: check the last one first.
    if (last_ < messages_.size() && messages_[last_] == message) return last_;
    auto [it, inserted] = index_.try_emplace(
        std::string(message), static_cast<uint32_t>(messages_.size()));
    if (inserted) messages_.emplace_back(message);
    last_ = it->second;
    return last_;
  }

  std::string records_;
  std::vector<std::string> messages_;
  std::unordered_map<std::string, uint32_t> index_;
  uint32_t last_ = 0;
};

// The client side of RUN and RESULTS, for tests of a worker (the kit's own,
// or yours): encode a request, decode a reply.
struct WireTuple {
  uint32_t variant_index = 0;
  uint64_t operands[4] = {0, 0, 0, 0};
};

inline std::string EncodeRunRequest(const std::vector<std::string>& spellings,
                                    const std::vector<WireTuple>& tuples) {
  std::string out;
  internal::PutLe(out, spellings.size(), 4);
  for (const std::string& s : spellings) internal::PutString(out, s);
  internal::PutLe(out, tuples.size(), 4);
  out.reserve(out.size() + tuples.size() * kTupleSize);
  for (const WireTuple& t : tuples) {
    internal::PutLe(out, t.variant_index, 4);
    internal::PutLe(out, 0, 4);
    for (uint64_t v : t.operands) internal::PutLe(out, v, 8);
  }
  return out;
}

struct WireResult {
  uint8_t kind = 0;    // 0 value, 1 decline
  uint8_t code = 0;    // DeclineCode for declines
  uint16_t flags = 0;  // kResultFlagCarry: a `.cc` variant's CC.CF out
  uint32_t message = 0;
  uint64_t bits = 0;
};

struct DecodedResults {
  std::vector<std::string> messages;
  std::vector<WireResult> results;
};

inline bool DecodeResults(std::string_view payload, DecodedResults* out,
                          std::string* error) {
  internal::Reader r(payload);
  uint64_t n = 0, m = 0;
  if (!r.Le(4, "result count", &n, error)) return false;
  if (!r.Le(4, "message count", &m, error)) return false;
  if (!r.Expect(m, 2, "messages", error)) return false;
  out->messages.resize(m);
  for (std::string& s : out->messages) {
    if (!r.String("message", &s, error)) return false;
  }
  if (!r.Expect(n, kResultSize, "results", error)) return false;
  const std::string_view records = r.Take(n * kResultSize);
  out->results.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const char* p = records.data() + i * kResultSize;
    WireResult& w = out->results[i];
    w.kind = static_cast<uint8_t>(p[0]);
    w.code = static_cast<uint8_t>(p[1]);
    w.flags = static_cast<uint16_t>(internal::GetLe(p + 2, 2));
    w.message = static_cast<uint32_t>(internal::GetLe(p + 4, 4));
    w.bits = internal::GetLe(p + 8, 8);
    if (w.kind > 1 ||
        (w.kind == 1 && (w.code < 1 || w.code > 4 || w.message >= m))) {
      return internal::Fail(error, "bad result " + std::to_string(i));
    }
  }
  return r.ExpectEnd(error);
}

// Evaluates a decoded RUN: each spelling parsed once, then `fn` per tuple.
// A spelling that does not parse declines its tuples (code 1); an exception
// from `fn` declines that tuple (code 4) with the exception's text.
inline ResultsBuilder EvaluateRun(const RunRequest& request,
                                  const EvaluateFn& fn) {
  std::vector<Variant> variants(request.spellings.size());
  std::vector<std::string> parse_errors(request.spellings.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string error;
    if (!internal::ParseInto(request.spellings[i], &variants[i], &error)) {
      parse_errors[i] =
          "cannot parse spelling '" + request.spellings[i] + "': " + error;
    }
  }
  ResultsBuilder results(request.num_tuples);
  uint64_t operands[4];
  for (uint32_t i = 0; i < request.num_tuples; ++i) {
    const uint32_t index = request.VariantIndex(i);
    if (!parse_errors[index].empty()) {
      results.AddDecline(DeclineCode::kUnsupported, parse_errors[index]);
      continue;
    }
    request.Operands(i, operands);
    try {
      results.Add(fn(variants[index], operands));
    } catch (const std::exception& e) {
      results.AddDecline(DeclineCode::kOther,
                         std::string("Evaluate threw: ") + e.what());
    } catch (...) {
      results.AddDecline(DeclineCode::kOther,
                         "Evaluate threw a non-std::exception");
    }
  }
  return results;
}

// ---------------------------------------------------------------------------
// Serving on file descriptors
// ---------------------------------------------------------------------------

struct ServeOptions {
  int in_fd = 0;   // frames from the client
  int out_fd = 1;  // frames to the client
  int err_fd = 2;  // diagnostics
  // When out_fd is 1: keep the real stdout for frames only and point fd 1 at
  // stderr (MoveFramesOffStdout), so a stray printf or std::cout in Evaluate,
  // or a library that prints, cannot corrupt the stream.
  bool protect_stdout = true;
  // Called with HELLO's options (e.g. arch=sm_90) before HELLO_REPLY; if it
  // throws, the worker answers ERROR and exits with kExitCannotStart.
  std::function<void(const KeyValues&)> on_hello;
};

namespace internal {

enum class ReadStatus { kOk, kEndOfInput, kError };

// Reads up to `size` bytes; returns how many (fewer only at end of input),
// or -1 on a read error.
inline int64_t ReadFully(int fd, char* data, size_t size) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return static_cast<int64_t>(got);
}

// False when the client has gone away (EPIPE) or another write error.
inline bool WriteFully(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One frame. kEndOfInput only at a frame boundary; a frame cut short is an
// error.
inline ReadStatus ReadFrame(int fd, FrameHeader* header, std::string* payload,
                            std::string* error) {
  char buf[kFrameHeaderSize];
  const int64_t got = ReadFully(fd, buf, sizeof(buf));
  if (got == 0) return ReadStatus::kEndOfInput;
  if (got < 0) {
    const int read_errno = errno;
    Fail(error, std::string("read: ") + std::strerror(read_errno));
    return ReadStatus::kError;
  }
  if (got < static_cast<int64_t>(sizeof(buf))) {
    Fail(error, "truncated frame header: input ended after " +
                    std::to_string(got) + " of 16 bytes");
    return ReadStatus::kError;
  }
  if (!DecodeFrameHeader(std::string_view(buf, sizeof(buf)), header, error)) {
    return ReadStatus::kError;
  }
  payload->resize(header->payload_size);
  const int64_t body = ReadFully(fd, payload->data(), payload->size());
  if (body != static_cast<int64_t>(payload->size())) {
    Fail(error, std::string("truncated frame: ") +
                    MessageTypeName(header->type) + " payload of " +
                    std::to_string(payload->size()) + " bytes ended after " +
                    std::to_string(body < 0 ? 0 : body));
    return ReadStatus::kError;
  }
  return ReadStatus::kOk;
}

inline bool WriteFrame(int fd, MessageType type, std::string_view head,
                       std::string_view tail = {}) {
  return WriteFully(fd, EncodeFrameHeader(type, head.size() + tail.size())) &&
         WriteFully(fd, head) && WriteFully(fd, tail);
}

inline int Complain(int err_fd, const WorkerInfo& info, int status,
                    const std::string& message) {
  const std::string line =
      (info.name.empty() ? std::string("worker") : info.name) + ": " + message +
      "\n";
  WriteFully(err_fd, line);
  return status;
}

inline bool IsOneLine(const std::string& s) {
  return s.find_first_of("\r\n") == std::string::npos;
}

inline std::string CheckInfo(const WorkerInfo& info) {
  if (info.name.empty() || info.version.empty()) {
    return "WorkerInfo needs a name and a version (HELLO_REPLY requires both)";
  }
  for (const std::string* s : {&info.name, &info.version, &info.toolchain,
                               &info.driver, &info.device}) {
    if (!IsOneLine(*s)) return "WorkerInfo field with a line break: " + *s;
  }
  for (const std::string& s : info.supports) {
    if (!IsOneLine(s)) return "supports line with a line break: " + s;
  }
  return "";
}

// The descriptor frames moved to, or -1 before the move.
inline int& MovedFramesFd() {
  static int fd = -1;
  return fd;
}

// Takes the real stdout for frames and points fd 1 at `err_fd`, once.
// Returns the fd to write frames to (1 if the move failed).
inline int ProtectStdout(int err_fd) {
  int& moved = MovedFramesFd();
  if (moved >= 0) return moved;
  // Close-on-exec: the commands the worker runs do not inherit the stream.
  const int frames = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (frames < 0) return 1;  // keep going; stray output is the author's risk
  if (::dup2(err_fd, 1) < 0) {
    ::close(frames);
    return 1;
  }
  // Flushed only after the move, so that what stdio buffered before it
  // (a library's banner at load) goes to stderr, not into the stream; then
  // by lines, so that a library's text reaches the log before a crash.
  std::cout.flush();
  std::fflush(stdout);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  moved = frames;
  return frames;
}

// Answers one RUN frame: RESULTS, or ERROR for a malformed payload.
inline bool AnswerRun(int out_fd, const std::string& payload,
                      const EvaluateFn& fn) {
  RunRequest request;
  std::string error;
  if (!DecodeRunRequest(payload, &request, &error)) {
    return WriteFrame(out_fd, MessageType::kError, "malformed RUN: " + error);
  }
  const ResultsBuilder results = EvaluateRun(request, fn);
  return WriteFrame(out_fd, MessageType::kResults, results.EncodeHead(),
                    results.records());
}

// The handshake. Returns -1 to go on serving, else the exit status.
inline int Handshake(int frames_out, const WorkerInfo& info,
                     const ServeOptions& options) {
  FrameHeader header;
  std::string payload, error;
  switch (ReadFrame(options.in_fd, &header, &payload, &error)) {
    case ReadStatus::kEndOfInput:
      return kExitOk;
    case ReadStatus::kError:
      return Complain(options.err_fd, info, kExitProtocolError,
                      "protocol error: " + error);
    case ReadStatus::kOk:
      break;
  }
  if (header.type == MessageType::kBye) return kExitOk;
  if (header.type != MessageType::kHello) {
    return Complain(options.err_fd, info, kExitProtocolError,
                    std::string("protocol error: expected HELLO, got ") +
                        MessageTypeName(header.type));
  }
  if (options.on_hello) {
    try {
      options.on_hello(DecodeKeyValues(payload));
    } catch (const std::exception& e) {
      WriteFrame(frames_out, MessageType::kError, e.what());
      return Complain(options.err_fd, info, kExitCannotStart,
                      std::string("cannot start: ") + e.what());
    }
  }
  if (!WriteFrame(frames_out, MessageType::kHelloReply,
                  EncodeHelloReply(info))) {
    return kExitOk;  // the client went away
  }
  return -1;
}

}  // namespace internal

// Moves the protocol stream off fd 1: keeps the real stdout on a descriptor
// of its own (close-on-exec) and points fd 1 at stderr, which ptxdiff keeps
// as the worker's log. Serve does this before the handshake; call it first
// in main when your worker loads a library or starts anything before Serve
// (a simulator's library may print a banner on stdout when it is loaded).
// Returns the descriptor frames go to, the same one on every call; Serve
// then writes there.
inline int MoveFramesOffStdout() { return internal::ProtectStdout(2); }

// Serves the protocol until BYE or end of input (returns kExitOk), or a
// protocol error on the input (a stderr line, returns kExitProtocolError).
// A malformed RUN payload is answered with ERROR and serving goes on.
// Use as `int main() { return ptxdiff::kit::Serve(info, Evaluate); }`.
inline int Serve(const WorkerInfo& info, const EvaluateFn& fn,
                 const ServeOptions& options = ServeOptions()) {
  const std::string bad_info = internal::CheckInfo(info);
  if (!bad_info.empty()) {
    return internal::Complain(options.err_fd, info, kExitBadSetup, bad_info);
  }
  // A vanished client shows up as a failed write (EPIPE), not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  const int frames_out = options.out_fd == 1 && options.protect_stdout
                             ? internal::ProtectStdout(options.err_fd)
                             : options.out_fd;
  const int status = internal::Handshake(frames_out, info, options);
  if (status >= 0) return status;
  FrameHeader header;
  std::string payload, error;
  while (true) {
    switch (internal::ReadFrame(options.in_fd, &header, &payload, &error)) {
      case internal::ReadStatus::kEndOfInput:
        return kExitOk;
      case internal::ReadStatus::kError:
        return internal::Complain(options.err_fd, info, kExitProtocolError,
                                  "protocol error: " + error);
      case internal::ReadStatus::kOk:
        break;
    }
    if (header.type == MessageType::kBye) return kExitOk;
    if (header.type != MessageType::kRun) {
      return internal::Complain(
          options.err_fd, info, kExitProtocolError,
          std::string("protocol error: expected RUN or BYE, got ") +
              MessageTypeName(header.type));
    }
    if (!internal::AnswerRun(frames_out, payload, fn)) return kExitOk;
  }
}

}  // namespace kit
}  // namespace ptxdiff

#endif  // PTXDIFF_KIT_PTXDIFF_WORKER_H_
