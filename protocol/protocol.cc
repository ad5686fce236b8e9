#include "protocol/protocol.h"

#include <bit>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "protocol/wire.h"

namespace ptxdiff {
std::string EncodeFrameHeader(MessageType type, uint64_t payload_size) {
  std::string out;
  PutLe(out, kFrameMagic, 4);
  PutLe(out, kProtocolVersion, 2);
  PutLe(out, static_cast<uint16_t>(type), 2);
  PutLe(out, payload_size, 8);
  return out;
}

absl::StatusOr<FrameHeader> DecodeFrameHeader(absl::string_view header) {
  Reader r(header);
  PTXDIFF_READ(magic, r.Le(4, "magic"));
  PTXDIFF_READ(version, r.Le(2, "version"));
  PTXDIFF_READ(type, r.Le(2, "type"));
  PTXDIFF_READ(size, r.Le(8, "payload size"));
  if (magic != kFrameMagic) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "not a ptxdiff frame: magic 0x%08x, expected 0x%08x (\"PXDF\")", magic,
        kFrameMagic));
  }
  if (version != kProtocolVersion) {
    return absl::InvalidArgumentError(absl::StrCat("protocol version ", version,
                                                   ", this client speaks ",
                                                   kProtocolVersion));
  }
  if (type < 1 || type > kLastMessageType) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown message type ", type));
  }
  if (size > kMaxPayload) {
    return absl::InvalidArgumentError(
        absl::StrCat("payload of ", size, " bytes exceeds the limit of 2^30"));
  }
  return FrameHeader{static_cast<MessageType>(type), size};
}

std::string EncodeKeyValues(const KeyValues& kv) {
  std::string out;
  for (const auto& [key, value] : kv)
    absl::StrAppend(&out, key, "=", value, "\n");
  return out;
}

KeyValues DecodeKeyValues(absl::string_view text) {
  KeyValues kv;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    kv.emplace_back(std::string(line.substr(0, eq)),
                    std::string(line.substr(eq + 1)));
  }
  return kv;
}

bool WorkerIdentity::Supports(const Variant& v) const {
  if (HasCarryOut(v) && !carry) return false;
  const absl::string_view opcode = InfoOf(v.family).opcode;
  for (const std::string& s : supports) {
    if (s == "*" || s == opcode) return true;
  }
  const std::string spelling = Spell(v);
  for (const std::string& s : supports) {
    if (s == spelling) return true;
  }
  return false;
}

std::vector<bool> SupportedVariants(const WorkerIdentity& id) {
  const absl::Span<const Variant> all = AllVariants();
  std::vector<bool> supported(all.size(), false);
  std::vector<bool> family_runs(kNumFamilies, false);
  for (const std::string& line : id.supports) {
    if (line == "*") family_runs.assign(kNumFamilies, true);
    if (const std::optional<Family> f = FamilyByOpcode(line)) {
      family_runs[static_cast<int>(*f)] = true;
    } else if (absl::StatusOr<Variant> v = ParseVariant(line);
               v.ok() && Spell(*v) == line) {
      supported[VariantIndex(*v)] = true;  // a canonical spelling
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (family_runs[static_cast<int>(all[i].family)]) supported[i] = true;
    if (HasCarryOut(all[i]) && !id.carry) supported[i] = false;
  }
  return supported;
}

std::string WorkerIdentity::Describe() const {
  std::string extra = toolchain;
  for (const std::string* s : {&driver, &device}) {
    if (s->empty()) continue;
    absl::StrAppend(&extra, extra.empty() ? "" : ", ", *s);
  }
  return absl::StrCat(name, " ", version, extra.empty() ? "" : " (", extra,
                      extra.empty() ? "" : ")");
}

KeyValues IdentityToKeyValues(const WorkerIdentity& id) {
  KeyValues kv = {{"name", id.name},
                  {"version", id.version},
                  {"toolchain", id.toolchain},
                  {"driver", id.driver},
                  {"device", id.device}};
  for (const std::string& s : id.supports) kv.emplace_back("supports", s);
  if (id.carry) kv.emplace_back("carry", "1");
  if (id.forms) kv.emplace_back("forms", "1");
  if (id.programs) kv.emplace_back("programs", "1");
  if (id.progress) kv.emplace_back(kProgressKey, "1");
  if (id.forms && id.runtime_by_default) {
    kv.emplace_back("default_form", "runtime");
  } else if (id.forms && id.both_forms) {
    kv.emplace_back("default_form", "both");
  }
  return kv;
}

absl::StatusOr<WorkerIdentity> IdentityFromKeyValues(const KeyValues& kv) {
  WorkerIdentity id;
  for (const auto& [key, value] : kv) {
    if (key == "name") id.name = value;
    if (key == "version") id.version = value;
    if (key == "toolchain") id.toolchain = value;
    if (key == "driver") id.driver = value;
    if (key == "device") id.device = value;
    if (key == "supports") id.supports.push_back(value);
    if (key == "carry") id.carry = value == "1";
    if (key == "forms") id.forms = value == "1";
    if (key == "programs") id.programs = value == "1";
    if (key == kProgressKey) id.progress = value == "1";
    if (key == "default_form") {
      id.runtime_by_default = value == "runtime";
      id.both_forms = value == "both";
    }
  }
  id.runtime_by_default &= id.forms;
  id.both_forms &= id.forms;
  if (id.name.empty() || id.version.empty()) {
    return absl::InvalidArgumentError(
        "HELLO_REPLY lacks the required keys name= and version=");
  }
  return id;
}

std::string EncodeRunRequest(const RunRequest& request) {
  const std::vector<absl::string_view> spellings(request.spellings.begin(),
                                                 request.spellings.end());
  return EncodeRunRequest(spellings, request.tuples);
}

std::string EncodeRunRequest(std::span<const absl::string_view> spellings,
                             std::span<const WireTuple> tuples) {
  std::string out;
  size_t bytes = 8 + 40 * tuples.size();
  for (absl::string_view s : spellings) bytes += 2 + s.size();
  out.reserve(bytes);
  PutLe(out, spellings.size(), 4);
  for (absl::string_view s : spellings) PutString(out, s);
  PutLe(out, tuples.size(), 4);
  size_t at = out.size();
  out.resize(at + 40 * tuples.size());
  for (const WireTuple& t : tuples) {
    const uint64_t index_and_form = t.variant_index | uint64_t{t.runtime} << 32;
    std::memcpy(&out[at], &index_and_form, 8);
    std::memcpy(&out[at + 8], t.operands.v, 32);
    at += 40;
  }
  return out;
}

absl::StatusOr<RunRequest> DecodeRunRequest(absl::string_view payload) {
  Reader r(payload);
  RunRequest request;
  PTXDIFF_READ(num_variants, r.Le(4, "variant count"));
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(num_variants, 2, "spellings"));
  for (uint64_t i = 0; i < num_variants; ++i) {
    PTXDIFF_READ(spelling, r.String("spelling"));
    request.spellings.push_back(std::move(spelling));
  }
  PTXDIFF_READ(num_tuples, r.Le(4, "tuple count"));
  if (num_tuples == 0 || num_tuples > kMaxTuplesPerBatch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tuple count ", num_tuples, " outside 1..", kMaxTuplesPerBatch));
  }
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(num_tuples, 40, "tuples"));
  request.tuples.resize(num_tuples);
  const char* p = r.Take(num_tuples * 40);
  for (WireTuple& t : request.tuples) {
    const uint32_t index = LoadLe<uint32_t>(p);
    if (index >= num_variants) {
      return absl::InvalidArgumentError(
          absl::StrCat("variant index ", index, " out of range (", num_variants,
                       " variants)"));
    }
    t.variant_index = index;
    // Bits of sources that cannot be runtime values are the backend's to
    // ignore: it checks the form against the variant (IsLegalForm).
    t.runtime = static_cast<uint8_t>(p[4]);
    std::memcpy(t.operands.v, p + 8, 32);
    p += 40;
  }
  PTXDIFF_RETURN_IF_ERROR(r.ExpectEnd());
  return request;
}

uint32_t RunReply::InternMessage(absl::string_view message) {
  // Newest first: a backend declines a variant's tuples together, and the
  // messages are one per reason (tens), so a scan beats keeping an index in
  // step with a public vector.
  for (size_t i = messages.size(); i-- > 0;) {
    if (messages[i] == message) return static_cast<uint32_t>(i);
  }
  messages.emplace_back(message);
  return static_cast<uint32_t>(messages.size() - 1);
}

void RunReply::AddDecline(DeclineCode code, absl::string_view message,
                          bool kept_code) {
  results.push_back({.kind = ResultKind::kDecline,
                     .code = code,
                     .message = InternMessage(message),
                     .kept_code = kept_code});
}

void RunReply::AddValue(uint64_t bits, bool carry, absl::string_view note,
                        bool reused) {
  if (note.empty()) {
    results.push_back({.bits = bits, .carry = carry, .reused = reused});
    return;
  }
  results.push_back({.message = InternMessage(note),
                     .bits = bits,
                     .carry = carry,
                     .has_note = true,
                     .reused = reused});
}

void RunReply::AddFault(CaseFault fault, absl::string_view message) {
  results.push_back({.kind = ResultKind::kFault,
                     .message = InternMessage(message),
                     .fault = fault});
}

std::string EncodeRunReply(const RunReply& reply) {
  std::string out;
  PutLe(out, reply.results.size(), 4);
  PutLe(out, reply.messages.size(), 4);
  for (const std::string& m : reply.messages) PutString(out, m);
  size_t at = out.size();
  out.resize(at + 16 * reply.results.size());
  for (const TupleResult& t : reply.results) {
    const bool value = t.kind == ResultKind::kValue;
    const uint16_t flags =
        (value && t.carry ? kResultFlagCarry : 0) |
        (value && t.has_note ? kResultFlagNote : 0) |
        (value && t.reused ? kResultFlagReused : 0) |
        (t.kind == ResultKind::kDecline && t.kept_code ? kResultFlagKeptCode
                                                       : 0);
    const uint32_t message = !value || t.has_note ? t.message : 0;
    // The code byte: a decline's code, or a fault's kind.
    const uint8_t code = t.kind == ResultKind::kFault
                             ? static_cast<uint8_t>(t.fault)
                             : static_cast<uint8_t>(t.code);
    const uint64_t head = uint64_t{static_cast<uint8_t>(t.kind)} |
                          uint64_t{code} << 8 | uint64_t{flags} << 16 |
                          uint64_t{message} << 32;
    std::memcpy(&out[at], &head, 8);
    std::memcpy(&out[at + 8], &t.bits, 8);
    at += 16;
  }
  return out;
}

absl::StatusOr<RunReply> DecodeRunReply(absl::string_view payload,
                                        size_t expected_tuples) {
  Reader r(payload);
  RunReply reply;
  PTXDIFF_READ(num_results, r.Le(4, "result count"));
  if (num_results != expected_tuples) {
    return absl::InvalidArgumentError(absl::StrCat("worker returned ",
                                                   num_results, " results for ",
                                                   expected_tuples, " tuples"));
  }
  PTXDIFF_READ(num_messages, r.Le(4, "message count"));
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(num_messages, 2, "messages"));
  for (uint64_t i = 0; i < num_messages; ++i) {
    PTXDIFF_READ(message, r.String("message"));
    reply.messages.push_back(std::move(message));
  }
  PTXDIFF_RETURN_IF_ERROR(r.ExpectRecords(num_results, 16, "results"));
  reply.results.resize(num_results);
  const char* p = r.Take(num_results * 16);
  for (TupleResult& t : reply.results) {
    const uint8_t kind = p[0], code = p[1];
    // Flag bits other than the carry, the note and reuse (on a value) and
    // kept code (on a decline) are reserved and ignored: a worker from
    // before the flags wrote 0 here.
    const uint16_t flags = LoadLe<uint16_t>(p + 2);
    const bool note = kind == 0 && (flags & kResultFlagNote) != 0;
    const uint32_t message = LoadLe<uint32_t>(p + 4);
    const uint64_t bits = LoadLe<uint64_t>(p + 8);
    p += 16;
    if (kind > 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown result kind ", kind));
    }
    if (kind == 1 && (code < 1 || code > 4)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown decline code ", code));
    }
    if (kind == 2 && (code < 1 || code > 2)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown fault code ", code));
    }
    if ((kind != 0 || note) && message >= num_messages) {
      return absl::InvalidArgumentError(
          absl::StrCat("message index ", message, " out of range (",
                       num_messages, " messages)"));
    }
    const bool fault = kind == 2;
    t = {.kind = static_cast<ResultKind>(kind),
         .code = fault ? DeclineCode::kNone : static_cast<DeclineCode>(code),
         .message = kind != 0 || note ? message : 0,
         .bits = bits,
         .carry = kind == 0 && (flags & kResultFlagCarry) != 0,
         .has_note = note,
         .reused = kind == 0 && (flags & kResultFlagReused) != 0,
         .kept_code = kind == 1 && (flags & kResultFlagKeptCode) != 0,
         .fault = fault ? static_cast<CaseFault>(code) : CaseFault::kNone};
  }
  PTXDIFF_RETURN_IF_ERROR(r.ExpectEnd());
  return reply;
}

}  // namespace ptxdiff
