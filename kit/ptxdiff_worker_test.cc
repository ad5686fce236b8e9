// Unit tests of the worker kit (kit/ptxdiff_worker.h): the codec, the
// spelling parser, and Serve driven over pipes the way ptxdiff's client
// drives a worker (frames, handshake, framing errors, malformed RUN, a batch
// of 2^20 tuples, decline dedup, exceptions).

#include "ptxdiff_worker.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff::kit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

WorkerInfo TestInfo() {
  WorkerInfo info;
  info.name = "kit-test";
  info.version = "7";
  info.device = "a CPU";
  info.supports = {"add", "bfe.u32"};
  return info;
}

// add.*: a + b (low 32 bits); "boom": throws; anything else: declined.
Answer AddOrDecline(const Variant& v, const uint64_t operands[4]) {
  if (v.opcode == "add")
    return Answer::Value((operands[0] + operands[1]) & 0xffffffff);
  if (v.opcode == "boom")
    throw std::runtime_error("boom at " + std::to_string(operands[0]));
  if (v.opcode == "weird") throw 42;
  return Answer::Decline(DeclineCode::kUnsupported, "no " + v.opcode + " here");
}

std::string Header(std::string magic, uint16_t version, uint16_t type,
                   uint64_t size) {
  std::string h = magic;
  internal::PutLe(h, version, 2);
  internal::PutLe(h, type, 2);
  internal::PutLe(h, size, 8);
  return h;
}

// ---------------------------------------------------------------------------
// Codec
// ---------------------------------------------------------------------------

TEST(KitFrameTest, HeaderLayoutIsLittleEndianPxdf) {
  const std::string h = EncodeFrameHeader(MessageType::kResults, 0x01020304ull);
  ASSERT_EQ(h.size(), kFrameHeaderSize);
  EXPECT_EQ(h, std::string(
                   "PXDF\x01\x00\x04\x00\x04\x03\x02\x01\x00\x00\x00\x00", 16));
  FrameHeader decoded;
  std::string error;
  ASSERT_TRUE(DecodeFrameHeader(h, &decoded, &error)) << error;
  EXPECT_EQ(decoded.type, MessageType::kResults);
  EXPECT_EQ(decoded.payload_size, 0x01020304ull);
  EXPECT_EQ(EncodeFrame(MessageType::kError, "why"),
            EncodeFrameHeader(MessageType::kError, 3) + "why");
}

TEST(KitFrameTest, BadHeadersAreRejectedWithWhatIsWrong) {
  FrameHeader h;
  std::string error;
  EXPECT_FALSE(DecodeFrameHeader(Header("PXDG", 1, 3, 0), &h, &error));
  EXPECT_THAT(error, HasSubstr("not a ptxdiff frame: magic bytes 50 58 44 47"));
  EXPECT_FALSE(DecodeFrameHeader(Header("PXDF", 2, 3, 0), &h, &error));
  EXPECT_THAT(error, HasSubstr("protocol version 2"));
  EXPECT_FALSE(DecodeFrameHeader(Header("PXDF", 1, 0, 0), &h, &error));
  EXPECT_THAT(error, HasSubstr("unknown message type 0"));
  EXPECT_FALSE(DecodeFrameHeader(Header("PXDF", 1, 7, 0), &h, &error));
  EXPECT_THAT(error, HasSubstr("unknown message type 7"));
  EXPECT_FALSE(
      DecodeFrameHeader(Header("PXDF", 1, 3, kMaxPayload + 1), &h, &error));
  EXPECT_THAT(error, HasSubstr("exceeds the limit of 2^30"));
  EXPECT_TRUE(DecodeFrameHeader(Header("PXDF", 1, 3, kMaxPayload), &h, &error));
  EXPECT_FALSE(DecodeFrameHeader("PXDF", &h, &error));
}

TEST(KitFrameTest, KeyValuesAndHelloReply) {
  EXPECT_THAT(
      DecodeKeyValues("protocol=1\nno equals sign\narch=sm_90\na=b=c\n"),
      ElementsAre(std::pair<std::string, std::string>("protocol", "1"),
                  std::pair<std::string, std::string>("arch", "sm_90"),
                  std::pair<std::string, std::string>("a", "b=c")));
  // Empty optional fields are left out; supports repeats.
  EXPECT_EQ(EncodeHelloReply(TestInfo()),
            "name=kit-test\nversion=7\ndevice=a "
            "CPU\nsupports=add\nsupports=bfe.u32\n");
}

TEST(KitRunTest, DecodesAWellFormedRun) {
  WireTuple t0{1, {1, 2, 3, 4}}, t1{0, {~0ull, 0, 0, 5}};
  const std::string payload =
      EncodeRunRequest({"add.s32", "bfe.u32"}, {t0, t1});
  RunRequest r;
  std::string error;
  ASSERT_TRUE(DecodeRunRequest(payload, &r, &error)) << error;
  EXPECT_THAT(r.spellings, ElementsAre("add.s32", "bfe.u32"));
  ASSERT_EQ(r.num_tuples, 2u);
  EXPECT_EQ(r.VariantIndex(0), 1u);
  EXPECT_EQ(r.VariantIndex(1), 0u);
  uint64_t ops[4];
  r.Operands(1, ops);
  EXPECT_EQ(ops[0], ~0ull);
  EXPECT_EQ(ops[3], 5u);
}

TEST(KitRunTest, MalformedRunsAreRejectedWithWhatIsWrong) {
  const std::string good =
      EncodeRunRequest({"add.s32"}, {WireTuple{0, {1, 2, 0, 0}}});
  auto error_of = [](const std::string& payload) {
    RunRequest r;
    std::string error;
    return DecodeRunRequest(payload, &r, &error) ? std::string("ok") : error;
  };
  EXPECT_EQ(error_of(good), "ok");
  EXPECT_THAT(error_of(good.substr(0, 3)),
              HasSubstr("truncated: variant count"));
  EXPECT_THAT(error_of(good.substr(0, 8)), HasSubstr("truncated: spelling"));
  EXPECT_THAT(
      error_of(good.substr(0, good.size() - 1)),
      HasSubstr("truncated: 1 tuples of 40 bytes need 40 bytes, 39 left"));
  EXPECT_THAT(error_of(good + "x"), HasSubstr("1 unexpected bytes at the end"));
  // Wrong counts: three variants announced, one sent; two tuples announced.
  EXPECT_THAT(error_of(std::string("\x03\x00\x00\x00\x07\x00"
                                   "add.s32",
                                   13)),
              HasSubstr("truncated: spelling at byte 13 of 13"));
  std::string two_tuples = good;
  two_tuples[4 + 2 + 7] = 2;  // the tuple count after "add.s32"
  EXPECT_THAT(error_of(two_tuples), HasSubstr("truncated: 2 tuples"));
  EXPECT_THAT(error_of(EncodeRunRequest({"add.s32"}, {})),
              HasSubstr("tuple count 0 outside"));
  EXPECT_THAT(error_of(EncodeRunRequest({"add.s32"}, {WireTuple{1, {}}})),
              HasSubstr("variant index 1 out of range (1 variants)"));
  std::string too_many = EncodeRunRequest({}, {});
  too_many.replace(4, 4, std::string("\x01\x00\x00\x01", 4));  // 2^24 + 1
  EXPECT_THAT(error_of(too_many),
              HasSubstr("tuple count 16777217 outside 1..16777216"));
}

TEST(KitResultsTest, DeclineMessagesAreStoredOnce) {
  ResultsBuilder b;
  b.AddDecline(DeclineCode::kUnsupported, "no vadd");
  b.AddValue(7);
  b.AddDecline(DeclineCode::kNotEvaluable, "not folded");
  b.Add(Answer::Decline(DeclineCode::kUnsupported, "no vadd"));
  b.AddDecline(DeclineCode::kNotEvaluable, "not folded");
  b.Add(Answer::Value(~0ull));
  EXPECT_THAT(b.messages(), ElementsAre("no vadd", "not folded"));
  DecodedResults d;
  std::string error;
  ASSERT_TRUE(DecodeResults(b.Encode(), &d, &error)) << error;
  ASSERT_EQ(d.results.size(), 6u);
  const uint32_t expected_message[] = {0, 0, 1, 0, 1, 0};
  const uint8_t expected_kind[] = {1, 0, 1, 1, 1, 0};
  const uint8_t expected_code[] = {1, 0, 2, 1, 2, 0};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(d.results[i].kind, expected_kind[i]) << i;
    EXPECT_EQ(d.results[i].code, expected_code[i]) << i;
    EXPECT_EQ(d.results[i].message, expected_message[i]) << i;
  }
  EXPECT_EQ(d.results[1].bits, 7u);
  EXPECT_EQ(d.results[5].bits, ~0ull);
}

// A `.cc` variant's carry-out: flags bit 0 of a value's record (bytes 2-3),
// never of a decline; WorkerInfo::carry says carry=1 in HELLO_REPLY.
TEST(KitResultsTest, TheCarryIsFlagsBitZero) {
  ResultsBuilder b;
  b.Add(Answer::Value(0, /*carry=*/true));
  b.Add(Answer::Value(5));
  b.AddValue(0xffffffff, true);
  b.AddDecline(DeclineCode::kOther, "no");
  EXPECT_TRUE(Answer::Value(1, true).carry());
  EXPECT_FALSE(Answer::Value(1).carry());
  const std::string payload = b.Encode();
  EXPECT_EQ(b.records()[2], '\x01');
  EXPECT_EQ(b.records()[3], '\x00');
  DecodedResults d;
  std::string error;
  ASSERT_TRUE(DecodeResults(payload, &d, &error)) << error;
  EXPECT_EQ(d.results[0].flags, kResultFlagCarry);
  EXPECT_EQ(d.results[0].bits, 0u);
  EXPECT_EQ(d.results[1].flags, 0);
  EXPECT_EQ(d.results[2].flags, kResultFlagCarry);
  EXPECT_EQ(d.results[3].flags, 0);
  WorkerInfo info = TestInfo();
  info.carry = true;
  EXPECT_EQ(
      EncodeHelloReply(info),
      "name=kit-test\nversion=7\ndevice=a CPU\nsupports=add\nsupports=bfe.u32\n"
      "carry=1\n");
}

TEST(KitResultsTest, LongMessagesAreClippedAndBadCodesBecomeOther) {
  ResultsBuilder b;
  std::string long_reason(kMaxMessageSize - 1, 'x');
  long_reason += "\xc3\xa9 and more";  // a two-byte character across the limit
  b.AddDecline(DeclineCode::kOther, long_reason);
  b.AddDecline(static_cast<DeclineCode>(9), "odd");
  DecodedResults d;
  std::string error;
  ASSERT_TRUE(DecodeResults(b.Encode(), &d, &error)) << error;
  EXPECT_EQ(d.messages[0], std::string(kMaxMessageSize - 1, 'x'));
  EXPECT_EQ(d.results[1].code, 4);
  EXPECT_EQ(d.messages[1], "(invalid decline code 9) odd");
}

// ---------------------------------------------------------------------------
// Spellings
// ---------------------------------------------------------------------------

TEST(KitSpellingTest, ParsesOpcodeModifiersAndOperands) {
  auto v = ParseVariant("vadd.u32.u32.u32.sat d.b1, a, b.h0, c");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->opcode, "vadd");
  EXPECT_THAT(v->modifiers, ElementsAre("u32", "u32", "u32", "sat"));
  EXPECT_TRUE(v->HasModifier("sat"));
  EXPECT_FALSE(v->HasModifier("s32"));
  ASSERT_EQ(v->operands.size(), 4u);
  EXPECT_EQ(v->operands[0], (Operand{"d", "b1", false}));
  EXPECT_EQ(v->operands[2], (Operand{"b", "h0", false}));
  EXPECT_EQ(v->SelectorOf("d"), "b1");
  EXPECT_EQ(v->SelectorOf("a"), "");
  EXPECT_EQ(v->SelectorOf("x"), "");
  EXPECT_EQ(v->Spell(), v->spelling);

  auto shl = ParseVariant("visa.shl.sat.d.ub.uw");
  ASSERT_TRUE(shl.has_value());
  EXPECT_EQ(shl->opcode, "visa.shl");
  EXPECT_THAT(shl->modifiers, ElementsAre("sat", "d", "ub", "uw"));
  EXPECT_TRUE(shl->operands.empty());

  auto wide = ParseVariant("mul.wide.u32");
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->opcode, "mul");
  EXPECT_THAT(wide->modifiers, ElementsAre("wide", "u32"));
  EXPECT_EQ(wide->ModifierAt(1), "u32");
  EXPECT_EQ(wide->ModifierAt(2), "");

  auto vmad = ParseVariant("vmad.s32.u32.s32.sat.shr7 d, -a.b1, b, -c");
  ASSERT_TRUE(vmad.has_value());
  EXPECT_TRUE(vmad->IsNegated("a"));
  EXPECT_FALSE(vmad->IsNegated("b"));
  EXPECT_TRUE(vmad->IsNegated("c"));
  EXPECT_EQ(vmad->Spell(), vmad->spelling);

  // A four-byte selector (prmt-like) is kept as written.
  auto prmt = ParseVariant("prmt.b32 d, a.b3210, b");
  ASSERT_TRUE(prmt.has_value());
  EXPECT_EQ(prmt->SelectorOf("a"), "b3210");
}

TEST(KitSpellingTest, ToleratesWhiteSpaceAndSemicolonAndRejectsEmptyParts) {
  auto v = ParseVariant("  vshr.s32.u32.u32.clamp.add   d ,a.b1,  b.h1 , c ; ");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->Spell(), "vshr.s32.u32.u32.clamp.add d, a.b1, b.h1, c");
  std::string error;
  EXPECT_FALSE(ParseVariant("", &error).has_value());
  EXPECT_EQ(error, "empty spelling");
  EXPECT_FALSE(ParseVariant("add..s32", &error).has_value());
  EXPECT_THAT(error, HasSubstr("empty modifier"));
  EXPECT_FALSE(ParseVariant("vadd.u32.u32.u32 d, , b", &error).has_value());
  EXPECT_THAT(error, HasSubstr("bad operand"));
  EXPECT_FALSE(ParseVariant("vadd.u32.u32.u32 d., a, b", &error).has_value());
  EXPECT_THAT(error, HasSubstr("empty selector"));
}

TEST(KitBitsTest, Helpers) {
  EXPECT_EQ(TypeBits("u16x2"), 32);
  EXPECT_EQ(TypeBits("s64"), 64);
  EXPECT_EQ(TypeBits("b8"), 8);
  EXPECT_EQ(TypeBits("sat"), 0);
  EXPECT_TRUE(IsSignedType("s16x2"));
  EXPECT_FALSE(IsSignedType("sat"));
  EXPECT_EQ(SignExtend(0x80, 8), -128);
  EXPECT_EQ(SignExtend(0x7fffffff, 32), 0x7fffffff);
  EXPECT_EQ(SignExtend(~0ull, 64), -1);
  EXPECT_EQ(LowBits(~0ull, 16), 0xffffu);
}

// ---------------------------------------------------------------------------
// Serve, over pipes
// ---------------------------------------------------------------------------

// Serve on a thread, talking to the test through pipes as a client would.
class ServedWorker {
 public:
  explicit ServedWorker(
      WorkerInfo info = TestInfo(), EvaluateFn fn = AddOrDecline,
      std::function<void(const KeyValues&)> on_hello = nullptr) {
    int in[2], out[2], err[2];
    EXPECT_EQ(pipe(in), 0);
    EXPECT_EQ(pipe(out), 0);
    EXPECT_EQ(pipe(err), 0);
    to_worker_ = in[1];
    from_worker_ = out[0];
    stderr_ = err[0];
    ServeOptions options;
    options.in_fd = in[0];
    options.out_fd = out[1];
    options.err_fd = err[1];
    options.on_hello = std::move(on_hello);
    thread_ = std::thread([=, info = std::move(info), fn = std::move(fn)] {
      status_ = Serve(info, fn, options);
      close(in[0]);
      close(out[1]);
      close(err[1]);
    });
  }
  ~ServedWorker() {
    CloseInput();
    if (thread_.joinable()) thread_.join();
    close(from_worker_);
    close(stderr_);
  }

  void Send(const std::string& bytes) {
    ASSERT_TRUE(internal::WriteFully(to_worker_, bytes));
  }
  void Send(MessageType type, const std::string& payload) {
    Send(EncodeFrame(type, payload));
  }
  void Hello() {
    Send(MessageType::kHello, "protocol=1\narch=sm_90\n");
    ASSERT_EQ(Read().first, MessageType::kHelloReply);
  }
  std::pair<MessageType, std::string> Read() {
    FrameHeader h;
    std::string payload, error;
    EXPECT_EQ(internal::ReadFrame(from_worker_, &h, &payload, &error),
              internal::ReadStatus::kOk)
        << error;
    return {h.type, payload};
  }
  DecodedResults Run(const std::vector<std::string>& spellings,
                     const std::vector<WireTuple>& tuples) {
    Send(MessageType::kRun, EncodeRunRequest(spellings, tuples));
    auto [type, payload] = Read();
    EXPECT_EQ(type, MessageType::kResults) << payload;
    DecodedResults d;
    std::string error;
    EXPECT_TRUE(DecodeResults(payload, &d, &error)) << error;
    EXPECT_EQ(d.results.size(), tuples.size());
    return d;
  }
  void CloseInput() {
    if (to_worker_ >= 0) close(to_worker_);
    to_worker_ = -1;
  }
  // Closes the input, waits for Serve, and returns its exit status.
  int Finish() {
    CloseInput();
    thread_.join();
    return status_;
  }
  std::string Stderr() {  // after Finish()
    std::string all(4096, '\0');
    const int64_t n = internal::ReadFully(stderr_, all.data(), all.size());
    all.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return all;
  }

 private:
  int to_worker_ = -1, from_worker_ = -1, stderr_ = -1;
  int status_ = -1;
  std::thread thread_;
};

TEST(KitServeTest, HandshakeRunAndBye) {
  KeyValues hello;
  ServedWorker w(TestInfo(), AddOrDecline,
                 [&hello](const KeyValues& kv) { hello = kv; });
  w.Send(MessageType::kHello, "protocol=1\narch=sm_90\n");
  auto [type, reply] = w.Read();
  EXPECT_EQ(type, MessageType::kHelloReply);
  EXPECT_EQ(reply, EncodeHelloReply(TestInfo()));
  ASSERT_EQ(hello.size(), 2u);
  EXPECT_EQ(hello[1].second, "sm_90");

  const DecodedResults d =
      w.Run({"add.s32", "mul.lo.s32"},
            {WireTuple{0, {0xffffffff, 2, 0, 0}}, WireTuple{1, {3, 4, 0, 0}},
             WireTuple{0, {40, 2, 0, 0}}});
  EXPECT_EQ(d.results[0].kind, 0);
  EXPECT_EQ(d.results[0].bits, 1u);
  EXPECT_EQ(d.results[1].kind, 1);
  EXPECT_EQ(d.results[1].code, 1);
  EXPECT_EQ(d.messages.at(d.results[1].message), "no mul here");
  EXPECT_EQ(d.results[2].bits, 42u);
  w.Send(MessageType::kBye, "");
  EXPECT_EQ(w.Finish(), kExitOk);
  EXPECT_EQ(w.Stderr(), "");
}

TEST(KitServeTest, EndOfInputExitsZero) {
  ServedWorker before_hello;
  EXPECT_EQ(before_hello.Finish(), kExitOk);
  ServedWorker after_hello;
  after_hello.Hello();
  EXPECT_EQ(after_hello.Finish(), kExitOk);
}

struct FramingCase {
  const char* name;
  std::string bytes;  // sent after HELLO, then the input is closed
  const char* stderr_says;
};

TEST(KitServeTest, FramingErrorsExitFourWithAStderrLine) {
  const std::string run =
      EncodeRunRequest({"add.s32"}, {WireTuple{0, {1, 2, 0, 0}}});
  const std::vector<FramingCase> cases = {
      {"bad magic", Header("XXDF", 1, 3, 0),
       "not a ptxdiff frame: magic bytes 58 58 44 46"},
      {"bad version", Header("PXDF", 2, 3, 0),
       "protocol version 2, this worker speaks 1"},
      {"unknown type", Header("PXDF", 1, 9, 0), "unknown message type 9"},
      {"oversized", Header("PXDF", 1, 3, kMaxPayload + 1),
       "exceeds the limit of 2^30"},
      {"truncated header", std::string("PXDF\x01\x00", 6),
       "truncated frame header: input ended after 6 of 16"},
      {"truncated payload",
       EncodeFrameHeader(MessageType::kRun, run.size()) + run.substr(0, 10),
       "truncated frame: RUN payload of"},
      {"wrong type", EncodeFrame(MessageType::kResults, ""),
       "expected RUN or BYE, got RESULTS"},
      {"second hello", EncodeFrame(MessageType::kHello, ""),
       "expected RUN or BYE, got HELLO"},
  };
  for (const FramingCase& c : cases) {
    SCOPED_TRACE(c.name);
    ServedWorker w;
    w.Hello();
    w.Send(c.bytes);
    EXPECT_EQ(w.Finish(), kExitProtocolError);
    const std::string err = w.Stderr();
    EXPECT_THAT(err, HasSubstr("kit-test: protocol error: "));
    EXPECT_THAT(err, HasSubstr(c.stderr_says));
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

TEST(KitServeTest, RunBeforeHelloIsAProtocolError) {
  ServedWorker w;
  w.Send(MessageType::kRun, EncodeRunRequest({"add.s32"}, {WireTuple{}}));
  EXPECT_EQ(w.Finish(), kExitProtocolError);
  EXPECT_THAT(w.Stderr(), HasSubstr("expected HELLO, got RUN"));
}

TEST(KitServeTest, MalformedRunGetsErrorAndServingGoesOn) {
  ServedWorker w;
  w.Hello();
  std::string wrong_count =
      EncodeRunRequest({"add.s32"}, {WireTuple{0, {1, 2, 0, 0}}});
  wrong_count[4 + 2 + 7] = 3;  // three tuples announced, one sent
  w.Send(MessageType::kRun, wrong_count);
  auto [type, text] = w.Read();
  EXPECT_EQ(type, MessageType::kError);
  EXPECT_THAT(text, HasSubstr("malformed RUN: truncated: 3 tuples"));
  w.Send(MessageType::kRun, EncodeRunRequest({"add.s32"}, {WireTuple{5, {}}}));
  auto [type2, text2] = w.Read();
  EXPECT_EQ(type2, MessageType::kError);
  EXPECT_THAT(text2, HasSubstr("variant index 5 out of range"));
  const DecodedResults d = w.Run({"add.s32"}, {WireTuple{0, {2, 3, 0, 0}}});
  EXPECT_EQ(d.results[0].bits, 5u);
  EXPECT_EQ(w.Finish(), kExitOk);
}

TEST(KitServeTest, ExceptionsBecomeDeclinesWithTheirText) {
  ServedWorker w;
  w.Hello();
  const DecodedResults d =
      w.Run({"boom", "add.u32", "weird"},
            {WireTuple{0, {1, 0, 0, 0}}, WireTuple{1, {1, 1, 0, 0}},
             WireTuple{0, {1, 0, 0, 0}}, WireTuple{0, {2, 0, 0, 0}},
             WireTuple{2, {}}});
  EXPECT_EQ(d.results[0].kind, 1);
  EXPECT_EQ(d.results[0].code, static_cast<uint8_t>(DeclineCode::kOther));
  EXPECT_EQ(d.messages.at(d.results[0].message), "Evaluate threw: boom at 1");
  EXPECT_EQ(d.results[1].kind, 0);
  EXPECT_EQ(d.results[1].bits, 2u);
  EXPECT_EQ(d.results[2].message,
            d.results[0].message);  // same text, stored once
  EXPECT_EQ(d.messages.at(d.results[3].message), "Evaluate threw: boom at 2");
  EXPECT_EQ(d.messages.at(d.results[4].message),
            "Evaluate threw a non-std::exception");
  EXPECT_EQ(d.messages.size(), 3u);
  EXPECT_EQ(w.Finish(), kExitOk);
}

TEST(KitServeTest, UnparsableSpellingDeclinesItsTuples) {
  ServedWorker w;
  w.Hello();
  const DecodedResults d =
      w.Run({"add..s32", "add.s32"},
            {WireTuple{0, {}}, WireTuple{1, {1, 1, 0, 0}}, WireTuple{0, {}}});
  EXPECT_EQ(d.results[0].code, static_cast<uint8_t>(DeclineCode::kUnsupported));
  EXPECT_THAT(d.messages.at(d.results[0].message),
              HasSubstr("cannot parse spelling 'add..s32'"));
  EXPECT_EQ(d.results[1].bits, 2u);
  EXPECT_EQ(d.results[2].message, d.results[0].message);
  EXPECT_EQ(d.messages.size(), 1u);
}

TEST(KitServeTest, MissingNameOrVersionExitsTwo) {
  WorkerInfo info = TestInfo();
  info.version.clear();
  ServedWorker w(info);
  EXPECT_EQ(w.Finish(), kExitBadSetup);
  EXPECT_THAT(w.Stderr(), HasSubstr("needs a name and a version"));
}

TEST(KitServeTest, OnHelloThatThrowsAnswersErrorAndExitsThree) {
  ServedWorker w(TestInfo(), AddOrDecline, [](const KeyValues&) {
    throw std::runtime_error("no device 3");
  });
  w.Send(MessageType::kHello, "device=3\n");
  auto [type, text] = w.Read();
  EXPECT_EQ(type, MessageType::kError);
  EXPECT_EQ(text, "no device 3");
  EXPECT_EQ(w.Finish(), kExitCannotStart);
  EXPECT_THAT(w.Stderr(), HasSubstr("cannot start: no device 3"));
}

TEST(KitServeTest, MillionTupleBatchRoundTrips) {
  constexpr uint32_t kTuples = (1u << 20) + 3;
  std::vector<WireTuple> tuples(kTuples);
  for (uint32_t i = 0; i < kTuples; ++i) {
    tuples[i] = {i % 3, {i * 2654435761ull, ~uint64_t{i}, i, 0}};
  }
  // Variant 2 is declined for odd operands: 2 messages over ~175k declines.
  auto fn = [](const Variant& v, const uint64_t* o) {
    if (v.opcode == "sub") return Answer::Value(o[0] - o[1]);
    if (v.opcode == "add") return Answer::Value(o[0] + o[1]);
    if (o[2] % 2 == 1)
      return Answer::Decline(DeclineCode::kNotEvaluable, "odd");
    return Answer::Decline(DeclineCode::kOperandForm, "even");
  };
  ServedWorker w(TestInfo(), fn);
  w.Hello();
  const auto start = std::chrono::steady_clock::now();
  const DecodedResults d = w.Run({"add.u64", "sub.u64", "bfe.u32"}, tuples);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%u tuples round trip in %.2f s\n", kTuples, seconds);
  ASSERT_EQ(d.results.size(), kTuples);
  ASSERT_EQ(d.messages.size(), 2u);
  size_t mismatches = 0;
  for (uint32_t i = 0; i < kTuples; ++i) {
    const WireTuple& t = tuples[i];
    const WireResult& r = d.results[i];
    bool ok;
    if (t.variant_index == 2) {
      ok = r.kind == 1 && r.code == (i % 2 ? 2 : 3) &&
           d.messages[r.message] == (i % 2 ? "odd" : "even");
    } else {
      const uint64_t want = t.variant_index == 0
                                ? t.operands[0] + t.operands[1]
                                : t.operands[0] - t.operands[1];
      ok = r.kind == 0 && r.bits == want;
    }
    mismatches += ok ? 0 : 1;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(w.Finish(), kExitOk);
}

// What a worker run in a real process with pipes as its stdin, stdout and
// stderr (as ptxdiff starts it) gave back for HELLO, one RUN of add.s32 41
// and BYE: its frames' bytes, its stderr, its exit status.
struct ProcessRun {
  std::string out;
  std::string err;
  int status = -1;
};

std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

// `worker` runs in the child and returns its exit status; stdout there is
// fully buffered, as on a pipe in a freshly started process.
ProcessRun RunInAProcess(const std::function<int()>& worker) {
  int in[2], out[2], err[2];
  if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) return {};
  std::fflush(nullptr);  // nothing of this test's own output in the child's
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    std::setvbuf(stdout, nullptr, _IOFBF, BUFSIZ);
    _exit(worker());
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  internal::WriteFully(
      in[1], EncodeFrame(MessageType::kHello, "") +
                 EncodeFrame(MessageType::kRun,
                             EncodeRunRequest({"add.s32"},
                                              {WireTuple{0, {41, 0, 0, 0}}})) +
                 EncodeFrame(MessageType::kBye, ""));
  close(in[1]);
  ProcessRun run;
  run.out = ReadToEnd(out[0]);  // to its end: the worker exits after BYE
  run.err = ReadToEnd(err[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    run.status = WEXITSTATUS(status);
  }
  close(out[0]);
  close(err[0]);
  return run;
}

// The frame at the start of `*rest`, whose payload goes to `payload`;
// taken off `*rest`.
bool TakeFrame(std::string* rest, FrameHeader* h, std::string* payload,
               std::string* error) {
  if (!DecodeFrameHeader(std::string_view(*rest).substr(0, kFrameHeaderSize),
                         h, error)) {
    return false;
  }
  if (rest->size() < kFrameHeaderSize + h->payload_size) {
    *error = "frame cut short";
    return false;
  }
  *payload = rest->substr(kFrameHeaderSize, h->payload_size);
  rest->erase(0, kFrameHeaderSize + h->payload_size);
  return true;
}

// `out` is HELLO_REPLY and RESULTS with the value 42, and nothing else.
void ExpectHelloReplyAndFortyTwo(std::string out) {
  std::string payload, error;
  FrameHeader h;
  ASSERT_TRUE(TakeFrame(&out, &h, &payload, &error)) << error;
  EXPECT_EQ(h.type, MessageType::kHelloReply);
  ASSERT_TRUE(TakeFrame(&out, &h, &payload, &error)) << error;
  ASSERT_EQ(h.type, MessageType::kResults);
  DecodedResults d;
  ASSERT_TRUE(DecodeResults(payload, &d, &error)) << error;
  EXPECT_EQ(d.results.at(0).bits, 42u);
  EXPECT_EQ(out, "");
}

// Serve keeps fd 1 for frames and sends a stray printf from Evaluate to
// stderr.
TEST(KitServeTest, StrayStdoutOutputGoesToStderr) {
  const ProcessRun run = RunInAProcess([] {
    auto chatty = [](const Variant& v, const uint64_t* o) {
      std::printf("evaluating %s\n", v.spelling.c_str());
      std::fflush(stdout);
      return Answer::Value(o[0] + 1);
    };
    return Serve(TestInfo(), chatty);
  });
  ExpectHelloReplyAndFortyTwo(run.out);
  EXPECT_EQ(run.err, "evaluating add.s32\n");
  EXPECT_EQ(run.status, kExitOk);
}

// A worker that loads a printing library before Serve moves the stream
// first: text stdio buffered before the move (a library linked in, whose
// banner is printed at start-up) and text printed after it (a library
// loaded in main, one called from on_hello or Evaluate, unflushed) all go
// to stderr, line by line; Serve writes its frames where the move put them.
TEST(KitServeTest, PrintingLibrariesLoadedBeforeServeGoToStderr) {
  const ProcessRun run = RunInAProcess([] {
    std::printf("banner at start-up\n");
    const int frames = MoveFramesOffStdout();
    if (frames <= 2 || MoveFramesOffStdout() != frames) return 9;
    std::printf("banner at load\n");
    ServeOptions options;
    options.on_hello = [](const KeyValues&) { std::cout << "hello\n"; };
    auto evaluate = [](const Variant&, const uint64_t* o) {
      std::printf("a call\n");
      return Answer::Value(o[0] + 1);
    };
    return Serve(TestInfo(), evaluate, options);  // then _exit: no flush
  });
  ExpectHelloReplyAndFortyTwo(run.out);
  EXPECT_EQ(run.err, "banner at start-up\nbanner at load\nhello\na call\n");
  EXPECT_EQ(run.status, kExitOk);
}

}  // namespace
}  // namespace ptxdiff::kit
