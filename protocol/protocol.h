// The worker protocol's messages and their byte layout
// (docs/worker-protocol.md).
//
// Encoding and decoding are pure functions on byte strings, so they are unit
// tested and fuzzed without a process; frame_io.h moves frames over file
// descriptors. Every decoder validates what it reads and answers garbage with
// an InvalidArgument status naming what is wrong, never with a crash.

#ifndef PTXDIFF_PROTOCOL_PROTOCOL_H_
#define PTXDIFF_PROTOCOL_PROTOCOL_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "isa/variant.h"
#include "protocol/fault_kind.h"

namespace ptxdiff {

inline constexpr uint32_t kFrameMagic = 0x46445850;  // "PXDF"
inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeaderSize = 16;
inline constexpr uint64_t kMaxPayload = uint64_t{1} << 30;
inline constexpr uint32_t kMaxTuplesPerBatch = 1u << 24;
// A string on the wire has a u16 length: a longer one is sent cut to this,
// ending in kCutMark.
inline constexpr size_t kMaxWireString = 0xffff;
inline constexpr absl::string_view kCutMark = " [cut: longer than a message]";

// An ERROR that begins with this is the harness's own failure on the
// worker's machine (its temporary files: TMPDIR full, read-only, gone), not
// the implementation's: the client stops the command instead of filing it.
inline constexpr absl::string_view kEnvironmentErrorPrefix = "environment: ";

enum class MessageType : uint16_t {
  kHello = 1,
  kHelloReply = 2,
  kRun = 3,
  kResults = 4,
  kError = 5,
  kBye = 6,
  // Program cases (HELLO_REPLY programs=1): a batch of programs and its
  // checks, below.
  kRunPrograms = 7,
  kProgramResults = 8,
  // Worker → client while it answers a RUN_PROGRAMS, empty: it is still at
  // work (sent only to a client whose HELLO said progress=1, by a worker
  // whose HELLO_REPLY says so), so that silence can be told from work.
  kProgress = 9,
};
inline constexpr uint16_t kLastMessageType = 9;

// HELLO and HELLO_REPLY key of PROGRESS frames: the client reads them, the
// worker sends them.
inline constexpr char kProgressKey[] = "progress";
// HELLO key: how long the client waits for a reply, in milliseconds; a
// backend that runs a tool ends a batch's runs within a share of it.
inline constexpr char kReplyTimeoutKey[] = "reply_timeout_ms";

struct FrameHeader {
  MessageType type;
  uint64_t payload_size;
};

// The 16-byte header of a frame with this type and payload size.
std::string EncodeFrameHeader(MessageType type, uint64_t payload_size);
// Validates magic, version, type and size.
absl::StatusOr<FrameHeader> DecodeFrameHeader(absl::string_view header);

// Key-value text (HELLO, HELLO_REPLY): `key=value` lines; keys may repeat.
using KeyValues = std::vector<std::pair<std::string, std::string>>;
std::string EncodeKeyValues(const KeyValues& kv);
KeyValues DecodeKeyValues(absl::string_view text);

// What a worker says of itself in HELLO_REPLY.
struct WorkerIdentity {
  std::string name, version, toolchain, driver, device;
  std::vector<std::string> supports;  // "*", family opcodes, or spellings
  // HELLO_REPLY `carry=1`: the worker writes the outgoing CC.CF of `.cc`
  // variants into a result's flags (TupleResult::carry). Without it no
  // `.cc` variant is supported, whatever the supports lines say: a worker
  // older than the carry flag lists `add` or `*` and would answer add.cc
  // with a carry of 0 (docs/worker-protocol.md).
  bool carry = false;
  // HELLO_REPLY `forms=1`: the worker runs a tuple's runtime sources as
  // runtime values (WireTuple::runtime; isa/operand_form.h). Without it the
  // client sends no tuple with a runtime source: an older worker would run
  // it as immediates and answer for another case.
  bool forms = false;
  // HELLO_REPLY `default_form=runtime` (with forms=1): the worker runs code
  // (a simulator, a GPU), for which every source a runtime value is the
  // cheapest shape and immediates are the extra one; a case that says no
  // form runs so (DefaultForm). Without it the default is all immediates,
  // a compiler's constant folding. Set only with `forms`: IdentityFromKeyValues
  // clears it for a worker that did not say forms=1, so a reader of an
  // identity from a HELLO_REPLY need not check both.
  bool runtime_by_default = false;
  // HELLO_REPLY `default_form=both` (with forms=1): a compiler whose emitted
  // code is also run (ptxas with its SASS evaluator). A case that says no
  // form is all immediates, as without it (its constant folding), and a
  // campaign gives each variant's first tuple in the runtime form too (the
  // code it emits), as early. Cleared like runtime_by_default without forms.
  bool both_forms = false;
  // HELLO_REPLY `programs=1`: the worker runs program cases (RUN_PROGRAMS).
  // Without it the client sends none: the kit and older workers are
  // tuple-only and keep working.
  bool programs = false;
  // HELLO_REPLY `progress=1`: while answering a RUN_PROGRAMS the worker
  // sends PROGRESS frames as its work goes on (at least one per finished
  // run of ptxas or a tool, at most about one a second), so a client may
  // take a long silence for a hang before the batch's time limit.
  bool progress = false;

  // True if a `supports` line covers `v` (and, for a variant that writes
  // CC.CF, the worker said carry=1).
  bool Supports(const Variant& v) const;
  // "ptxas 1 (ptxas 13.0.48, sm_90)" for reports.
  std::string Describe() const;
};
// Supports(v) for every variant at once, by VariantIndex: read from the
// supports lines in one pass rather than asking about 81k variants.
std::vector<bool> SupportedVariants(const WorkerIdentity& id);
KeyValues IdentityToKeyValues(const WorkerIdentity& id);
absl::StatusOr<WorkerIdentity> IdentityFromKeyValues(const KeyValues& kv);

// One tuple on the wire: an index into the batch's variant list.
struct WireTuple {
  uint32_t variant_index = 0;
  Operands operands;
  uint8_t runtime = 0;  // Tuple::runtime: byte 4 of the record, once reserved
};

struct RunRequest {
  std::vector<std::string> spellings;
  std::vector<WireTuple> tuples;
};
std::string EncodeRunRequest(const RunRequest& request);
// The same bytes from views of the spellings: the client's batches, whose
// spellings are views of the spelling table, are encoded without copying
// each one first.
std::string EncodeRunRequest(std::span<const absl::string_view> spellings,
                             std::span<const WireTuple> tuples);
absl::StatusOr<RunRequest> DecodeRunRequest(absl::string_view payload);

enum class ResultKind : uint8_t {
  kValue = 0,
  kDecline = 1,
  // The implementation under test crashed or hung on this tuple alone (the
  // worker survived it: a tool run per batch, ptx-cmd). A finding, like a
  // crashing worker; its message says how it ended.
  kFault = 2,
};

// How the implementation failed on a kFault tuple (the code byte): a
// CaseFault (fault_kind.h).

enum class DeclineCode : uint8_t {
  kNone = 0,
  kUnsupportedVariant = 1,  // the backend does not implement this variant
  kNotEvaluable = 2,        // e.g. ptxas did not constant-fold it
  kOperandForm = 3,         // e.g. an immediate out of range
  kOther = 4,
};

// A decline whose message starts with this says the tuple was not
// evaluated at all (a time budget ran out while the backend or the client
// isolated a fault): no evidence of what the backend declines, so a
// campaign does not learn from it.
inline constexpr absl::string_view kNotRunPrefix = "not run: ";
// How often a tuple declined as not run is sent again (a campaign, a sweep)
// before the decline stands: enough rounds for a campaign's quarantine to
// catch up with a family whose hangs span several classes, and for a sweep
// to run them all (the ptx-cmd backend runs 8 hanging runs of a family a
// batch, then leaves its other tuples unrun), few enough that a backend that
// never runs a tuple (a driver entry point it lacks) costs little.
inline constexpr int kMaxSendsAgain = 8;

// Bits of a result record's u16 flags (bytes 2-3).
inline constexpr uint16_t kResultFlagCarry = 1;  // bit 0: CC.CF out
// Bit 1: a value's message index names a note on how the value was obtained
// ("folded", "executed ..."): for reports, never for judging.
inline constexpr uint16_t kResultFlagNote = 2;
// Bit 2: a value computed by code compiled for another tuple of the same
// kernel shape (compile once, run every input: the ptxas backend's code
// cache, a GPU's module cache). For counting, never for judging.
inline constexpr uint16_t kResultFlagReused = 4;
// Bit 3, on a decline: this value alone is declined; the code compiled for
// the tuple's variant, form and immediates is kept and runs at other values
// (the ptxas backend's code whose value here its -O0 code cannot confirm).
// A campaign then sends the variant's other values to that code.
inline constexpr uint16_t kResultFlagKeptCode = 8;

struct TupleResult {
  ResultKind kind = ResultKind::kValue;
  DeclineCode code = DeclineCode::kNone;
  // Index into RunReply::messages: declines, faults, and values with a note.
  uint32_t message = 0;
  uint64_t bits = 0;
  // A value's outgoing CC.CF (flags bit 0): the carry, or for sub.cc/subc.cc
  // the borrow. Meaningful only for variants with `.cc` (HasCarryOut); the
  // decoder cannot tell those apart, so the judge ignores it for the others.
  // Always false for a decline.
  bool carry = false;
  // A value whose `message` says how the backend obtained it (flags bit 1):
  // ptxas's "folded to a constant" or "its code, run on the CPU", with the
  // code. Reports show it; the judge ignores it.
  bool has_note = false;
  // A value computed by code compiled before, for another tuple
  // (flags bit 2): counted by a campaign, ignored by the judge.
  bool reused = false;
  // A decline of this value alone, on code kept for the tuple's key (flags
  // bit 3): a campaign may send other values; the judge ignores it.
  bool kept_code = false;
  CaseFault fault = CaseFault::kNone;  // for kFault

  // The same answer: a value's note (has_note, message) takes no part.
  friend bool operator==(const TupleResult& a, const TupleResult& b) {
    return a.kind == b.kind && a.code == b.code && a.bits == b.bits &&
           a.carry == b.carry && a.fault == b.fault &&
           (a.kind == ResultKind::kValue || a.message == b.message);
  }
};

struct RunReply {
  std::vector<std::string> messages;
  std::vector<TupleResult> results;

  // The index of `message` in `messages`, appended if no equal one is there:
  // the one place where a reply's decline messages are deduplicated.
  uint32_t InternMessage(absl::string_view message);
  // Appends a decline with InternMessage(message); `kept_code`: of this
  // value alone (kResultFlagKeptCode).
  void AddDecline(DeclineCode code, absl::string_view message,
                  bool kept_code = false);
  // Appends a fault with InternMessage(message).
  void AddFault(CaseFault fault, absl::string_view message);
  // Appends a value; `carry` is the outgoing CC.CF of a `.cc` variant, a
  // non-empty `note` (interned) says how it was obtained, and `reused` that
  // it was computed by code compiled for another tuple.
  void AddValue(uint64_t bits, bool carry = false, absl::string_view note = {},
                bool reused = false);
  // The note of result `i`, or "" where it has none.
  absl::string_view NoteOf(size_t i) const {
    return results[i].has_note ? messages[results[i].message]
                               : absl::string_view();
  }
};
std::string EncodeRunReply(const RunReply& reply);
// Also checks that the reply has `expected_tuples` results and that every
// message index is in range.
absl::StatusOr<RunReply> DecodeRunReply(absl::string_view payload,
                                        size_t expected_tuples);

// RUN_PROGRAMS: a batch of program cases, each in the text form of
// docs/programs.md, and how to run them. The cases and their checks are
// opaque here: program/program_wire.h reads and writes them, so the codec
// of frames stays below the program floor.
struct ProgramRunRequest {
  uint8_t form = 0;     // ProgramInputs: 0 runtime, 1 immediate
  uint8_t reading = 0;  // Reading: 0 the spec, 1 the hardware
  // Stop at the first program the implementation crashes or hangs on: the
  // ones after it may come back cut (a minimizer of a fault asks so).
  bool until_fault = false;
  // The caller's deadline, as milliseconds from the request's arrival; 0:
  // none. Runs past it are cut and not judged.
  uint32_t time_limit_ms = 0;
  std::vector<std::string> programs;
};
inline constexpr uint32_t kMaxProgramsPerBatch = 1u << 20;
// `deadline` as a time limit from `now`, and back. 0 says "none", so a
// deadline already passed is the least limit, which still cuts every run.
uint32_t TimeLimitMs(absl::Time deadline, absl::Time now);
absl::Time DeadlineOf(uint32_t time_limit_ms, absl::Time now);
std::string EncodeProgramRunRequest(const ProgramRunRequest& request);
absl::StatusOr<ProgramRunRequest> DecodeProgramRunRequest(
    absl::string_view payload);

// PROGRAM_RESULTS: one check per program of the request, in order.
struct ProgramRunReply {
  std::vector<std::string> checks;
};
std::string EncodeProgramRunReply(const ProgramRunReply& reply);
// Also checks that the reply has `expected_programs` checks.
absl::StatusOr<ProgramRunReply> DecodeProgramRunReply(absl::string_view payload,
                                                      size_t expected_programs);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_PROTOCOL_H_
