// A deliberately faulty worker for the client's fault tests. It serves the
// oracle backend over the protocol, except as --fault says:
//
//   none           behave
//   crash          abort() on every RUN (after a line on stderr)
//   crash-once     abort() on the first RUN of the first process (--state=FILE
//                  remembers it across the restart)
//   crash-on=SPELL abort() on a RUN containing that variant
//   wrong-on=PREFIX answer the tuples of variants whose spelling starts with
//                  PREFIX with bit 0 of the value flipped (a backend that
//                  disagrees with the oracle); with --when-operand=I:MIN only
//                  where operand I (0 = a) is at least MIN
//   wrong-carry-on=PREFIX  the same, but with the carry flag of the value
//                  flipped instead (the bits stay right): a carry-only
//                  mismatch on `.cc` variants, ignored on the others
//   claim-on=SPELL answer that variant's tuples with a runtime source
//                  (operand forms) all ones, as a compiler that claims a
//                  constant for every value of them would; --no-forms: say
//                  nothing of forms in HELLO_REPLY (a worker from before
//                  them), so that no runtime source is sent;
//                  --default-form=runtime|both: say that default form in
//                  HELLO_REPLY (a worker that runs code; a compiler whose
//                  code is also run); --note=TEXT: every value with the note
//                  TEXT ("\n" in it a line break), as ptxas says "executed"
//   device-fault-on=SPELL  exit 5 with a cuda-style device-fault line on a
//                  RUN containing that variant (as ptxdiff-worker
//                  --backend=cuda)
//   kernel-timeout-on=SPELL  exit 6 with a cuda-style kernel-timeout line
//                  on a RUN containing that variant
//   not-run-once-on=SPELL  decline that variant's tuples as not run (a
//                  backend whose batch time budget ran out) in the first RUN
//                  holding it, of the first process (--state=FILE remembers
//                  it across processes); answer them from then on
//   not-run-on=SPELL  the same in every RUN (a budget always too short)
//   decline-kept-on=SPELL  decline that variant's tuples whose operand a is
//                  not 0, each as of that value alone on kept code
//                  (kResultFlagKeptCode), as ptxas's code whose -O0 code
//                  disagrees too; answer those whose a is 0
//   decline-even-not-run-odd-on=SPELL  decline that variant's tuples whose
//                  operand a is even, and leave those whose a is odd not run,
//                  in every RUN (a backend that declines a variant, whose
//                  budget ran out before the rest of it)
//   hang           never answer a RUN
//   hang-on=SPELL  never answer a RUN holding a tuple of that variant (with
//                  --when-operand=I:MIN only one whose operand I >= MIN)
//   garbage-on=SPELL  the same, but answer garbage and exit
//   garbage        answer a RUN with bytes that are not a frame
//   short          answer a RUN with one result too few
//   error          answer a RUN with an ERROR frame
//   exit-at-hello  print a reason on stderr and exit 3 instead of HELLO_REPLY
//   bad-hello      answer HELLO with garbage
//   hang-at-hello  never answer HELLO
//   planted=NAME   one narrow planted bug, for bench/finding_power_benchmark:
//                  the oracle's answers everywhere except one condition where
//                  the oracle's result is defined and the answer is wrong:
//     video-selector       `vadd.s32.u32.s32.sat d.b1, a.h1, b.b2, c` (one of
//                          ~60k video variants), every operand: bit 0 of the
//                          destination byte (bit 8) flipped
//     sat-bound            `add.sat.s32` where the exact sum a + b is
//                          INT32_MAX + 1 (2^31): answers the wrapped sum
//                          0x80000000 instead of 0x7fffffff
//     field-width          `bfe.u32` where c & 0xff (length) != 0 and
//                          (b & 0xff) + (c & 0xff) == 32 (the field ends at
//                          the top bit exactly): bit 0 flipped
//     min-times-minus-one  `mul.lo.s64` with {a, b} = {INT64_MIN, -1} (either
//                          order): answers INT64_MAX (saturated) instead of
//                          INT64_MIN
//     defined-corner       `fns.b32` (mask, base, offset) with base == 31 and
//                          offset < 0 as s32 (bases > 31 are undefined): bit
//                          0 flipped
//     destination-max      `cvt.sat.u16.s32` where a == 0xffff (exactly the
//                          destination's MAX): answers 0xfffe, a clamp one
//                          too low
//     lane-sum-past-max    `vavrg4.s32.s32.s32` where lane 1's exact sum of
//                          the bytes its selector picks (as s8) is 128, one
//                          past the lane's MAX: bit 8 flipped
//     equal-plus-one       `setp.le.s64` where b == INT64_MIN and a == b + 1:
//                          the predicate flipped
//     video-operand-min    `vsub.s32.s32.s32.sat` (one of ~60k video
//                          variants) where b == INT32_MIN, any a: bit 0
//                          flipped
//     part-clamp           `vmax.u32.u32.u32.sat d.b0, a.h0, b.h0, c` where
//                          the half-words' max is past the byte: saturated
//                          at the register's bound, not the part's (the
//                          result's low byte merged instead of 0xff)
//     mask-one-bit-short   `vadd.u32.u32.u32.sat d.b2, a.b0, b.b1, c` where
//                          the bytes' sum is 0x80..0xfe: the saturation test
//                          masks 7 bits, so the part answers 0xff
//     lane-carry           `vadd4.u32.u32.u32.sat` where lane 0's exact sum
//                          (unsigned) is past 0xff and lane 1's below 0xff:
//                          lane 0's carry added into lane 1
//     hi-sat-bound         `mad.hi.sat.s32` where the high half of a * b
//                          plus c is exactly INT32_MAX + 1: answers the
//                          wrapped sum 0x80000000 instead of 0x7fffffff
//
// --programs: say programs=1 in HELLO_REPLY and answer RUN_PROGRAMS, each
// program with a check that agrees (judged), except as --fault says:
//   crash-on-program=TEXT  abort() on a batch holding a program whose text
//                  contains TEXT
//   hang-on-program=TEXT   never answer such a batch
//   slow-programs=MS  answer each batch MS milliseconds after it came
//   error          answer with an ERROR frame
// --progress (with --programs): say progress=1 in HELLO_REPLY where the
// client's HELLO does, and send a PROGRESS frame every 100 ms while a
// batch is slow (not while it hangs: a worker silent at work).
//
// --crash-on-undefined, beside any --fault: abort() on a RUN holding a
// tuple whose result the spec leaves open (a simulator that divides by zero).
// --supports=LIST (comma-separated) replaces the `supports` lines.
// --us-per-tuple=N answers a RUN no sooner than N microseconds per tuple
// after it came (a backend as slow as ptxas, for the campaign's calibration).

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/oracle/oracle_backend.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "program/program_wire.h"
#include "protocol/frame_io.h"

namespace ptxdiff {
namespace {

struct Flags {
  std::string fault = "none";
  std::string state;
  std::string supports;
  int when_operand = -1;
  uint64_t when_min = 0;
  int us_per_tuple = 0;
  bool forms = true;
  std::string default_form;  // HELLO_REPLY's default_form, if any
  std::string note;          // every value's note, if any
  bool crash_on_undefined = false;
  bool programs = false;
  bool progress = false;  // --progress, where the client's HELLO asks
};

bool FirstTime(const std::string& state) {
  if (state.empty() || std::ifstream(state).good()) return false;
  std::ofstream(state) << "crashed once\n";
  return true;
}

// A planted bug: where `hit` holds for a tuple of the variant spelled
// `spelling`, the answer is wrong(oracle's bits, the operands).
struct Planted {
  std::string spelling;
  bool (*hit)(const Operands&);
  uint64_t (*wrong)(uint64_t, const Operands&);
};

int64_t S32(uint64_t x) {
  return static_cast<int32_t>(static_cast<uint32_t>(x));
}

// The exact sum of lane `lane`'s bytes of a 4-lane SIMD video tuple with
// signed a and b, as its selector (source 3) picks them from {b, a}: worked
// out here, not by the code the benchmark measures.
int64_t LaneSum(const Operands& o, int lane) {
  const uint64_t ba = (o.v[1] << 32) | (o.v[0] & 0xffffffff);
  const auto part = [&](int nibble) {
    const int index = (o.v[3] >> (4 * nibble)) & 7;
    return static_cast<int64_t>(static_cast<int8_t>(ba >> (8 * index)));
  };
  return part(lane) + part(lane + 4);
}

// The exact sum of lane `lane`'s bytes of a 4-lane SIMD video tuple with
// unsigned a and b, as the selector picks them (see LaneSum).
int64_t UnsignedLaneSum(const Operands& o, int lane) {
  const uint64_t ba = (o.v[1] << 32) | (o.v[0] & 0xffffffff);
  const auto part = [&](int nibble) {
    const int index = (o.v[3] >> (4 * nibble)) & 7;
    return static_cast<int64_t>((ba >> (8 * index)) & 0xff);
  };
  return part(lane) + part(lane + 4);
}

// A scalar video tuple's half-word or byte of x at `index` (unsigned).
uint64_t HalfOf(uint64_t x, int index) { return (x >> (16 * index)) & 0xffff; }
uint64_t ByteOf(uint64_t x, int index) { return (x >> (8 * index)) & 0xff; }

std::optional<Planted> PlantedBug(absl::string_view name) {
  struct Row {
    absl::string_view name, spelling;
    Planted bug;
  };
  static const Row kRows[] = {
      {"video-selector",
       "vadd.s32.u32.s32.sat d.b1, a.h1, b.b2, c",
       {"", [](const Operands&) { return true; },
        [](uint64_t r, const Operands&) { return r ^ 0x100; }}},
      {"sat-bound",
       "add.sat.s32",
       {"",
        [](const Operands& o) {
          return S32(o.v[0]) + S32(o.v[1]) == int64_t{1} << 31;
        },
        [](uint64_t, const Operands&) { return uint64_t{0x80000000}; }}},
      {"field-width",
       "bfe.u32",
       {"",
        [](const Operands& o) {
          return (o.v[2] & 0xff) != 0 &&
                 (o.v[1] & 0xff) + (o.v[2] & 0xff) == 32;
        },
        [](uint64_t r, const Operands&) { return r ^ 1; }}},
      {"min-times-minus-one",
       "mul.lo.s64",
       {"",
        [](const Operands& o) {
          constexpr uint64_t kMin = uint64_t{1} << 63, kMinusOne = ~uint64_t{0};
          return (o.v[0] == kMin && o.v[1] == kMinusOne) ||
                 (o.v[0] == kMinusOne && o.v[1] == kMin);
        },
        [](uint64_t, const Operands&) {
          return uint64_t{0x7fffffffffffffff};
        }}},
      {"defined-corner",
       "fns.b32",
       {"",
        [](const Operands& o) {
          return static_cast<uint32_t>(o.v[1]) == 31 && S32(o.v[2]) < 0;
        },
        [](uint64_t r, const Operands&) { return r ^ 1; }}},
      {"destination-max",
       "cvt.sat.u16.s32",
       {"",
        [](const Operands& o) {
          return static_cast<uint32_t>(o.v[0]) == 0xffff;
        },
        [](uint64_t, const Operands&) { return uint64_t{0xfffe}; }}},
      {"lane-sum-past-max",
       "vavrg4.s32.s32.s32",
       {"", [](const Operands& o) { return LaneSum(o, 1) == 128; },
        [](uint64_t r, const Operands&) { return r ^ 0x100; }}},
      {"equal-plus-one",
       "setp.le.s64",
       {"",
        [](const Operands& o) {
          constexpr uint64_t kMin = uint64_t{1} << 63;
          return o.v[1] == kMin && o.v[0] == kMin + 1;
        },
        [](uint64_t r, const Operands&) { return r ^ 1; }}},
      {"video-operand-min",
       "vsub.s32.s32.s32.sat",
       {"",
        [](const Operands& o) {
          return static_cast<uint32_t>(o.v[1]) == 0x80000000;
        },
        [](uint64_t r, const Operands&) { return r ^ 1; }}},
      // Issue 43's middle-value kinds: values inside the ranges.
      {"part-clamp",
       "vmax.u32.u32.u32.sat d.b0, a.h0, b.h0, c",
       {"",
        [](const Operands& o) {
          return std::max(HalfOf(o.v[0], 0), HalfOf(o.v[1], 0)) > 0xff;
        },
        [](uint64_t r, const Operands& o) {
          const uint64_t tmp = std::max(HalfOf(o.v[0], 0), HalfOf(o.v[1], 0));
          return (r & ~uint64_t{0xff}) | (tmp & 0xff);
        }}},
      {"mask-one-bit-short",
       "vadd.u32.u32.u32.sat d.b2, a.b0, b.b1, c",
       {"",
        [](const Operands& o) {
          const uint64_t tmp = ByteOf(o.v[0], 0) + ByteOf(o.v[1], 1);
          return tmp >= 0x80 && tmp < 0xff;
        },
        [](uint64_t r, const Operands&) { return r | 0xff0000; }}},
      {"lane-carry",
       "vadd4.u32.u32.u32.sat",
       {"",
        [](const Operands& o) {
          return UnsignedLaneSum(o, 0) >= 0x100 && UnsignedLaneSum(o, 1) < 0xff;
        },
        [](uint64_t r, const Operands&) { return r + 0x100; }}},
      // A saturation bound past a product's part (issue 43).
      {"hi-sat-bound",
       "mad.hi.sat.s32",
       {"",
        [](const Operands& o) {
          const int64_t hi = (S32(o.v[0]) * S32(o.v[1])) >> 32;
          return hi + S32(o.v[2]) == int64_t{1} << 31;
        },
        [](uint64_t, const Operands&) { return uint64_t{0x80000000}; }}},
  };
  for (const Row& row : kRows) {
    if (row.name != name) continue;
    auto v = ParseVariant(row.spelling);
    if (!v.ok()) return std::nullopt;
    Planted bug = row.bug;
    bug.spelling = Spell(*v);  // the canonical form the client sends
    return bug;
  }
  return std::nullopt;
}

void ApplyPlanted(const Planted& bug, const RunRequest& request,
                  RunReply& reply) {
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const WireTuple& t = request.tuples[i];
    if (reply.results[i].kind == ResultKind::kValue &&
        request.spellings[t.variant_index] == bug.spelling &&
        bug.hit(t.operands)) {
      reply.results[i].bits = bug.wrong(reply.results[i].bits, t.operands);
    }
  }
}

void Crash() {
  std::fprintf(stderr, "faulty_worker: crashing on purpose\n");
  std::fflush(stderr);
  std::abort();
}

// True if `request` holds a tuple of `spelling` that --when-operand admits.
bool HoldsTupleOf(const RunRequest& request, absl::string_view spelling,
                  const Flags& flags) {
  for (const WireTuple& t : request.tuples) {
    if (request.spellings[t.variant_index] != spelling) continue;
    if (flags.when_operand < 0 ||
        t.operands.v[flags.when_operand] >= flags.when_min) {
      return true;
    }
  }
  return false;
}

bool HoldsUndefined(const RunRequest& request) {
  return absl::c_any_of(request.tuples, [&](const WireTuple& t) {
    const auto v = ParseVariant(request.spellings[t.variant_index]);
    return v.ok() && !Evaluate(*v, t.operands).defined();
  });
}

// A RUN_PROGRAMS as --fault says (--programs); false for a request that
// does not decode.
bool AnswerPrograms(const Flags& flags, absl::string_view payload) {
  absl::StatusOr<ProgramRunRequest> request = DecodeProgramRunRequest(payload);
  if (!request.ok()) return false;
  absl::string_view text = flags.fault;
  const bool crash = absl::ConsumePrefix(&text, "crash-on-program=");
  const bool hang = !crash && absl::ConsumePrefix(&text, "hang-on-program=");
  for (const std::string& program : request->programs) {
    if (crash && absl::StrContains(program, text)) Crash();
    if (hang && absl::StrContains(program, text)) pause();
  }
  if (flags.fault == "error") {
    (void)WriteFrame(STDOUT_FILENO, MessageType::kError, "cannot do that");
    return true;
  }
  absl::string_view slow = flags.fault;
  int slow_ms = 0;
  if (absl::ConsumePrefix(&slow, "slow-programs=") &&
      absl::SimpleAtoi(slow, &slow_ms)) {
    const absl::Time answer_at = absl::Now() + absl::Milliseconds(slow_ms);
    while (absl::Now() < answer_at) {
      absl::SleepFor(
          std::min(absl::Milliseconds(100), answer_at - absl::Now()));
      if (flags.progress)
        (void)WriteFrame(STDOUT_FILENO, MessageType::kProgress, "");
    }
  }
  ProgramRunReply reply;
  for (size_t i = 0; i < request->programs.size(); ++i) {
    reply.checks.push_back(EncodeProgramCheck({.judged = true}));
  }
  (void)WriteFrame(STDOUT_FILENO, MessageType::kProgramResults,
                   EncodeProgramRunReply(reply));
  return true;
}

int Serve(Flags flags) {
  auto hello = ReadFrame(STDIN_FILENO);
  if (!hello.ok()) return 4;
  if (flags.fault == "exit-at-hello") {
    std::fprintf(stderr, "faulty_worker: no device here\n");
    return 3;
  }
  if (flags.fault == "hang-at-hello") {
    while (true) pause();
  }
  if (flags.fault == "bad-hello") {
    (void)write(STDOUT_FILENO, "this is not a frame at all", 26);
    return 0;
  }
  std::optional<Planted> planted;
  absl::string_view planted_name = flags.fault;
  if (absl::ConsumePrefix(&planted_name, "planted=")) {
    planted = PlantedBug(planted_name);
    if (!planted) {
      std::fprintf(stderr, "faulty_worker: unknown planted bug '%s'\n",
                   std::string(planted_name).c_str());
      return 2;
    }
  }
  std::unique_ptr<Backend> backend = MakeOracleBackend();
  WorkerIdentity id = backend->Identity();
  id.name = "faulty";
  if (!flags.supports.empty())
    id.supports = absl::StrSplit(flags.supports, ',');
  id.forms = flags.forms;
  id.runtime_by_default = flags.default_form == "runtime";
  id.both_forms = flags.default_form == "both";
  id.programs = flags.programs;
  // PROGRESS frames only to a client that asked (as ptxdiff-worker).
  flags.progress &= flags.programs &&
                    absl::c_linear_search(
                        DecodeKeyValues(hello->payload),
                        std::pair<std::string, std::string>(kProgressKey, "1"));
  id.progress = flags.progress;
  (void)WriteFrame(STDOUT_FILENO, MessageType::kHelloReply,
                   EncodeKeyValues(IdentityToKeyValues(id)));
  while (true) {
    auto frame = ReadFrame(STDIN_FILENO);
    if (!frame.ok() || frame->type == MessageType::kBye) return 0;
    if (frame->type == MessageType::kRunPrograms) {
      if (!AnswerPrograms(flags, frame->payload)) return 4;
      continue;
    }
    auto request = DecodeRunRequest(frame->payload);
    if (!request.ok()) return 4;
    const std::string& f = flags.fault;
    if (f == "crash" || (f == "crash-once" && FirstTime(flags.state))) Crash();
    if (flags.crash_on_undefined && HoldsUndefined(*request)) Crash();
    absl::string_view bad = f;
    if (absl::ConsumePrefix(&bad, "crash-on=")) {
      for (const std::string& s : request->spellings) {
        if (s == bad) Crash();
      }
    }
    absl::string_view faulting = f;
    if (absl::ConsumePrefix(&faulting, "device-fault-on=")) {
      for (const std::string& s : request->spellings) {
        if (s == faulting) {
          std::fprintf(
              stderr,
              "ptxdiff-worker: cuda device fault: illegal instruction; "
              "in flight: %s\n",
              s.c_str());
          std::exit(5);
        }
      }
    }
    absl::string_view timing_out = f;
    if (absl::ConsumePrefix(&timing_out, "kernel-timeout-on=")) {
      for (const std::string& s : request->spellings) {
        if (s == timing_out) {
          std::fprintf(stderr,
                       "ptxdiff-worker: cuda kernel timeout: the kernel ran "
                       "longer than the timeout of 300ms; in flight: %s\n",
                       s.c_str());
          std::exit(6);
        }
      }
    }
    if (f == "hang") pause();
    absl::string_view culprit = f;
    const bool hang_on = absl::ConsumePrefix(&culprit, "hang-on=");
    if ((hang_on || absl::ConsumePrefix(&culprit, "garbage-on=")) &&
        HoldsTupleOf(*request, culprit, flags)) {
      if (hang_on) pause();
      (void)write(STDOUT_FILENO, "\x01\x02garbage garbage garbage", 25);
      return 0;
    }
    if (f == "garbage") {
      (void)write(STDOUT_FILENO, "\x01\x02garbage garbage garbage", 25);
      continue;
    }
    if (f == "error") {
      (void)WriteFrame(STDOUT_FILENO, MessageType::kError, "cannot do that");
      continue;
    }
    if (flags.us_per_tuple > 0)
      usleep(flags.us_per_tuple * request->tuples.size());
    RunReply reply;
    (void)backend->Run(*request, reply);
    if (f == "short") reply.results.pop_back();
    absl::string_view unrun = f;
    const bool always = absl::ConsumePrefix(&unrun, "not-run-on=");
    if ((always || absl::ConsumePrefix(&unrun, "not-run-once-on=")) &&
        absl::c_linear_search(request->spellings, unrun) &&
        (always || FirstTime(flags.state))) {
      const uint32_t why = reply.InternMessage(
          absl::StrCat(kNotRunPrefix,
                       "faulty_worker: the batch's time budget "
                       "was spent"));
      for (size_t i = 0; i < request->tuples.size(); ++i) {
        if (request->spellings[request->tuples[i].variant_index] != unrun)
          continue;
        reply.results[i] = {.kind = ResultKind::kDecline,
                            .code = DeclineCode::kOther,
                            .message = why};
      }
    }
    absl::string_view kept = f;
    if (absl::ConsumePrefix(&kept, "decline-kept-on=")) {
      const uint32_t why =
          reply.InternMessage("faulty_worker: this value alone declined");
      for (size_t i = 0; i < request->tuples.size(); ++i) {
        const WireTuple& t = request->tuples[i];
        if (request->spellings[t.variant_index] != kept || t.operands.v[0] == 0)
          continue;
        reply.results[i] = {.kind = ResultKind::kDecline,
                            .code = DeclineCode::kNotEvaluable,
                            .message = why,
                            .kept_code = true};
      }
    }
    absl::string_view split = f;
    if (absl::ConsumePrefix(&split, "decline-even-not-run-odd-on=")) {
      const uint32_t declined = reply.InternMessage("faulty_worker: declined");
      const uint32_t not_run = reply.InternMessage(absl::StrCat(
          kNotRunPrefix, "faulty_worker: the batch's time budget was spent"));
      for (size_t i = 0; i < request->tuples.size(); ++i) {
        const WireTuple& t = request->tuples[i];
        if (request->spellings[t.variant_index] != split) continue;
        reply.results[i] = {
            .kind = ResultKind::kDecline,
            .code = DeclineCode::kOther,
            .message = t.operands.v[0] % 2 == 0 ? declined : not_run};
      }
    }
    absl::string_view claimed = f;
    if (absl::ConsumePrefix(&claimed, "claim-on=")) {
      for (size_t i = 0; i < request->tuples.size(); ++i) {
        const WireTuple& t = request->tuples[i];
        if (request->spellings[t.variant_index] == claimed && t.runtime != 0 &&
            reply.results[i].kind == ResultKind::kValue) {
          const int width = ResultWidth(*ParseVariant(claimed));
          reply.results[i].bits = ~uint64_t{0} >> (64 - width);
        }
      }
    }
    absl::string_view wrong = f;
    const bool wrong_bits = absl::ConsumePrefix(&wrong, "wrong-on=");
    const bool wrong_carry =
        !wrong_bits && absl::ConsumePrefix(&wrong, "wrong-carry-on=");
    if (wrong_bits || wrong_carry) {
      for (size_t i = 0; i < request->tuples.size(); ++i) {
        const uint32_t index = request->tuples[i].variant_index;
        const bool operand_matches =
            flags.when_operand < 0 ||
            request->tuples[i].operands.v[flags.when_operand] >= flags.when_min;
        if (absl::StartsWith(request->spellings[index], wrong) &&
            operand_matches && reply.results[i].kind == ResultKind::kValue) {
          if (wrong_bits) reply.results[i].bits ^= 1;
          if (wrong_carry) reply.results[i].carry = !reply.results[i].carry;
        }
      }
    }
    if (planted) ApplyPlanted(*planted, *request, reply);
    if (!flags.note.empty()) {
      const uint32_t note = reply.InternMessage(flags.note);
      for (TupleResult& r : reply.results) {
        if (r.kind != ResultKind::kValue) continue;
        r.has_note = true;
        r.message = note;
      }
    }
    (void)WriteFrame(STDOUT_FILENO, MessageType::kResults,
                     EncodeRunReply(reply));
  }
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  ptxdiff::Flags flags;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--fault=")) flags.fault = std::string(arg);
    if (absl::ConsumePrefix(&arg, "--state=")) flags.state = std::string(arg);
    if (absl::ConsumePrefix(&arg, "--supports="))
      flags.supports = std::string(arg);
    if (arg == "--no-forms") flags.forms = false;
    if (arg == "--programs") flags.programs = true;
    if (arg == "--progress") flags.progress = true;
    if (arg == "--crash-on-undefined") flags.crash_on_undefined = true;
    if (absl::ConsumePrefix(&arg, "--default-form="))
      flags.default_form = std::string(arg);
    if (absl::ConsumePrefix(&arg, "--note="))
      flags.note = absl::StrReplaceAll(arg, {{"\\n", "\n"}});
    if (absl::ConsumePrefix(&arg, "--us-per-tuple=") &&
        !absl::SimpleAtoi(arg, &flags.us_per_tuple)) {
      std::fprintf(stderr, "faulty_worker: bad %s\n", argv[i]);
      return 2;
    }
    if (absl::ConsumePrefix(&arg, "--when-operand=")) {
      std::pair<std::string, std::string> parts = absl::StrSplit(arg, ':');
      if (!absl::SimpleAtoi(parts.first, &flags.when_operand) ||
          !absl::SimpleAtoi(parts.second, &flags.when_min) ||
          flags.when_operand > 3) {
        std::fprintf(stderr, "faulty_worker: bad --when-operand=%s\n", argv[i]);
        return 2;
      }
    }
  }
  return ptxdiff::Serve(flags);
}
