#include "protocol/protocol.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(ProtocolTest, FrameHeaderRoundTripsAndHasTheDocumentedBytes) {
  const std::string h = EncodeFrameHeader(MessageType::kRun, 0x0102);
  EXPECT_EQ(h, std::string(
                   "PXDF\x01\x00\x03\x00\x02\x01\x00\x00\x00\x00\x00\x00", 16));
  auto d = DecodeFrameHeader(h);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->type, MessageType::kRun);
  EXPECT_EQ(d->payload_size, 0x0102u);
}

TEST(ProtocolTest, BadHeadersAreErrorsNamingTheProblem) {
  std::string h = EncodeFrameHeader(MessageType::kRun, 1);
  h[0] = 'Q';
  EXPECT_THAT(DecodeFrameHeader(h).status().message(), HasSubstr("magic"));
  h = EncodeFrameHeader(MessageType::kRun, 1);
  h[4] = 9;
  EXPECT_THAT(DecodeFrameHeader(h).status().message(), HasSubstr("version 9"));
  h = EncodeFrameHeader(static_cast<MessageType>(77), 1);
  EXPECT_THAT(DecodeFrameHeader(h).status().message(), HasSubstr("type 77"));
  h = EncodeFrameHeader(MessageType::kRun, kMaxPayload + 1);
  EXPECT_THAT(DecodeFrameHeader(h).status().message(), HasSubstr("limit"));
  EXPECT_FALSE(DecodeFrameHeader("PXDF").ok());
}

TEST(ProtocolTest, RunRequestRoundTrips) {
  RunRequest r;
  r.spellings = {"add.s32", "vadd.u32.u32.u32.sat d.b1, a, b.h0, c"};
  r.tuples = {{0, {{1, 2, 0, 0}}}, {1, {{~0ull, 5, 6, 7}}}};
  const std::string bytes = EncodeRunRequest(r);
  EXPECT_EQ(bytes.size(),
            4 + (2 + 7) + (2 + r.spellings[1].size()) + 4 + 2 * 40);
  auto d = DecodeRunRequest(bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->spellings, r.spellings);
  ASSERT_EQ(d->tuples.size(), 2u);
  EXPECT_EQ(d->tuples[1].variant_index, 1u);
  EXPECT_EQ(d->tuples[1].operands.v[0], ~0ull);
  EXPECT_EQ(d->tuples[1].operands.v[3], 7u);
}

TEST(ProtocolTest, MalformedRunRequests) {
  RunRequest r{{"add.s32"}, {{0, {{1, 2, 0, 0}}}}};
  const std::string good = EncodeRunRequest(r);
  EXPECT_THAT(
      DecodeRunRequest(good.substr(0, good.size() - 1)).status().message(),
      HasSubstr("truncated"));
  EXPECT_THAT(DecodeRunRequest(good + "x").status().message(),
              HasSubstr("unexpected bytes"));
  RunRequest bad_index{{"add.s32"}, {{3, {}}}};
  EXPECT_THAT(DecodeRunRequest(EncodeRunRequest(bad_index)).status().message(),
              HasSubstr("variant index 3 out of range"));
  RunRequest empty{{"add.s32"}, {}};
  EXPECT_THAT(DecodeRunRequest(EncodeRunRequest(empty)).status().message(),
              HasSubstr("tuple count 0"));
  // A huge count with no data behind it fails before allocating.
  std::string huge = good.substr(0, 4 + 9) + std::string("\xff\xff\xff\x00", 4);
  EXPECT_FALSE(DecodeRunRequest(huge).ok());
}

TEST(ProtocolTest, RunReplyRoundTripsAndDeduplicatesMessages) {
  RunReply r;
  r.AddValue(42);
  r.AddDecline(DeclineCode::kNotEvaluable, "not folded");
  r.AddDecline(DeclineCode::kNotEvaluable, "not folded");
  r.AddDecline(DeclineCode::kOperandForm, "immediate out of range");
  EXPECT_EQ(r.messages.size(), 2u);
  auto d = DecodeRunReply(EncodeRunReply(r), 4);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->results, r.results);
  EXPECT_EQ(d->messages, r.messages);
  // A message already in the reply (one a backend wrote itself) is reused.
  EXPECT_EQ(r.InternMessage("immediate out of range"), 1u);
  EXPECT_EQ(r.InternMessage("not folded"), 0u);
  EXPECT_EQ(r.InternMessage("unsupported"), 2u);
  EXPECT_EQ(r.messages.size(), 3u);
}

// The carry out of a `.cc` variant is bit 0 of the u16 flags (bytes 2-3 of
// a result record); other flag bits and a carry on a decline are ignored.
TEST(ProtocolTest, CarryFlagRoundTripsInBytesTwoAndThree) {
  RunReply r;
  r.AddValue(0, /*carry=*/true);
  r.AddValue(0xffffffff, /*carry=*/false);
  r.AddValue(7);
  const std::string bytes = EncodeRunReply(r);
  // 4 + 4 (counts, no messages), then 16 bytes per result.
  ASSERT_EQ(bytes.size(), 8u + 3 * 16);
  EXPECT_EQ(bytes[8 + 2], '\x01');
  EXPECT_EQ(bytes[8 + 3], '\x00');
  EXPECT_EQ(bytes[24 + 2], '\x00');
  EXPECT_EQ(bytes[40 + 2], '\x00');
  auto d = DecodeRunReply(bytes, 3);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->results, r.results);
  EXPECT_TRUE(d->results[0].carry);
  EXPECT_FALSE(d->results[1].carry);
  EXPECT_NE(d->results[0], (TupleResult{.bits = 0}));  // carry takes part
  // Reserved flag bits: ignored (bit 1 is the note's: the next test).
  std::string reserved = bytes;
  reserved[24 + 2] = '\x04', reserved[24 + 3] = '\x80';
  auto e = DecodeRunReply(reserved, 3);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->results[1].carry);
  // A decline has no carry, even with the bit set.
  RunReply declined;
  declined.AddDecline(DeclineCode::kOther, "no");
  std::string flagged = EncodeRunReply(declined);
  flagged[flagged.size() - 16 + 2] = '\x01';
  auto f = DecodeRunReply(flagged, 1);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->results[0].carry);
  EXPECT_EQ(f->results[0].kind, ResultKind::kDecline);
  // And the encoder never writes one for a decline.
  declined.results[0].carry = true;
  EXPECT_EQ(EncodeRunReply(declined)[EncodeRunReply(declined).size() - 16 + 2],
            '\x00');
}

// Bit 1 of a value's flags: its message index names a note on how it was
// obtained, interned with the decline messages; without the bit a value's
// index is 0 and means nothing, and an index out of range with it is an
// error naming it.
TEST(ProtocolTest, AValuesNoteRoundTripsThroughFlagsBitOne) {
  RunReply r;
  r.AddValue(5, /*carry=*/true, "executed: its code, run on the CPU");
  r.AddDecline(DeclineCode::kNotEvaluable, "not folded");
  r.AddValue(6, /*carry=*/false, "executed: its code, run on the CPU");
  r.AddValue(7);
  EXPECT_EQ(r.messages.size(), 2u);
  const std::string bytes = EncodeRunReply(r);
  auto d = DecodeRunReply(bytes, 4);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->results, r.results);
  EXPECT_EQ(d->NoteOf(0), "executed: its code, run on the CPU");
  EXPECT_TRUE(d->results[0].carry);
  EXPECT_EQ(d->NoteOf(2), "executed: its code, run on the CPU");
  EXPECT_EQ(d->NoteOf(3), "");
  EXPECT_FALSE(d->results[3].has_note);
  // The note takes no part in what a value is: a judge compares bits.
  EXPECT_EQ(d->results[0].bits, 5u);
  // The bit with an index past the messages.
  std::string bad = bytes;
  const size_t last = bad.size() - 16;
  bad[last + 2] = '\x02';
  bad[last + 4] = '\x09';
  auto e = DecodeRunReply(bad, 4);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              testing::HasSubstr("message index 9 out of range"));
  // A value's index without the bit is read as 0.
  std::string stray = bytes;
  stray[last + 4] = '\x09';
  auto f = DecodeRunReply(stray, 4);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->results[3], (TupleResult{.bits = 7}));
}

// A message longer than its u16 length can say is cut (on a character's
// boundary) and says so; the records after it are read right.
TEST(ProtocolTest, AMessageTooLongForItsLengthIsCutNotWrapped) {
  RunReply r;
  std::string listing = "executed: the SASS that ran:\n";
  while (listing.size() < 70000) listing += "IADD3 R5, R4, R5, RZ \xc3\xa9\n";
  r.AddValue(5, false, listing);
  r.AddDecline(DeclineCode::kNotEvaluable, "not run");
  r.AddValue(7);
  auto d = DecodeRunReply(EncodeRunReply(r), 3);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->results[0].bits, 5u);
  const std::string note(d->NoteOf(0));
  EXPECT_LE(note.size(), kMaxWireString);
  EXPECT_TRUE(absl::EndsWith(note, kCutMark));
  EXPECT_EQ(note.substr(0, 100), listing.substr(0, 100));
  EXPECT_EQ(d->results[1].kind, ResultKind::kDecline);
  EXPECT_EQ(d->messages[d->results[1].message], "not run");
  EXPECT_EQ(d->results[2].bits, 7u);
}

// Bit 3 on a decline: of this value alone, the code kept (a campaign sends
// the key's other values); ignored on a value, as bit 2 is on a decline.
TEST(ProtocolTest, KeptCodeOfADeclineRoundTripsThroughFlagsBitThree) {
  RunReply r;
  r.AddDecline(DeclineCode::kNotEvaluable, "-O0 disagrees too",
               /*kept_code=*/true);
  r.AddDecline(DeclineCode::kNotEvaluable, "not folded");
  r.AddValue(7);
  const std::string bytes = EncodeRunReply(r);
  const size_t records = bytes.size() - 3 * 16;
  EXPECT_EQ(bytes[records + 2], '\x08');
  EXPECT_EQ(bytes[records + 16 + 2], '\x00');
  auto d = DecodeRunReply(bytes, 3);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->results[0].kept_code);
  EXPECT_FALSE(d->results[1].kept_code);
  EXPECT_FALSE(d->results[2].kept_code);
  std::string stray = bytes;
  stray[records + 32 + 2] = '\x08';
  auto e = DecodeRunReply(stray, 3);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->results[2].kept_code);
  // Not part of what the answer is.
  TupleResult plain = d->results[0];
  plain.kept_code = false;
  EXPECT_EQ(d->results[0], plain);
}

TEST(ProtocolTest, ReusedCodeRoundTripsThroughFlagsBitTwo) {
  RunReply r;
  r.AddValue(5, /*carry=*/false, "executed", /*reused=*/true);
  r.AddValue(6, /*carry=*/true, "", /*reused=*/true);
  r.AddValue(7);
  r.AddDecline(DeclineCode::kNotEvaluable, "not run");
  const std::string bytes = EncodeRunReply(r);
  // Bit 2 of the flags (byte 2 of each record) and nothing else beside
  // the carry: the first record's flags are note | reused.
  const size_t records = bytes.size() - 4 * 16;
  EXPECT_EQ(bytes[records + 2], '\x06');
  EXPECT_EQ(bytes[records + 16 + 2], '\x05');
  EXPECT_EQ(bytes[records + 32 + 2], '\x00');
  auto d = DecodeRunReply(bytes, 4);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->results[0].reused);
  EXPECT_TRUE(d->results[1].reused);
  EXPECT_TRUE(d->results[1].carry);
  EXPECT_FALSE(d->results[2].reused);
  EXPECT_FALSE(d->results[3].reused);
  // A decline's bit is ignored, as the carry's is.
  std::string stray = bytes;
  stray[records + 48 + 2] = '\x04';
  auto e = DecodeRunReply(stray, 4);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->results[3].reused);
  // Reuse takes no part in what an answer is.
  EXPECT_EQ(d->results[0], (TupleResult{.message = d->results[0].message,
                                        .bits = 5,
                                        .has_note = true}));
}

// Kind 2: a tuple the implementation crashed or hung on, with how (the code
// byte) and a message.
TEST(ProtocolTest, TupleFaultsRoundTrip) {
  RunReply r;
  r.AddValue(3);
  r.AddFault(CaseFault::kCrash, "killed by signal 11 (SIGSEGV)");
  r.AddFault(CaseFault::kHang, "timed out after 2s");
  r.AddFault(CaseFault::kCrash, "killed by signal 11 (SIGSEGV)");
  const std::string bytes = EncodeRunReply(r);
  auto d = DecodeRunReply(bytes, 4);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->results, r.results);
  EXPECT_EQ(d->messages.size(), 2u);
  EXPECT_EQ(d->results[1].kind, ResultKind::kFault);
  EXPECT_EQ(d->results[1].fault, CaseFault::kCrash);
  EXPECT_EQ(d->results[2].fault, CaseFault::kHang);
  EXPECT_EQ(d->messages[d->results[2].message], "timed out after 2s");
  EXPECT_EQ(d->results[0].fault, CaseFault::kNone);
  const size_t first_fault = bytes.size() - 3 * 16;
  EXPECT_EQ(bytes[first_fault], '\x02');      // kind
  EXPECT_EQ(bytes[first_fault + 1], '\x01');  // crash
  std::string bad = bytes;
  bad[first_fault + 1] = 3;
  EXPECT_THAT(DecodeRunReply(bad, 4).status().message(),
              HasSubstr("unknown fault code 3"));
  bad[first_fault + 1] = 1, bad[first_fault + 4] = 9;  // message 9 of 2
  EXPECT_THAT(DecodeRunReply(bad, 4).status().message(),
              HasSubstr("message index 9 out of range"));
}

TEST(ProtocolTest, MalformedReplies) {
  RunReply r;
  r.AddValue(1);
  r.AddValue(2);
  const std::string good = EncodeRunReply(r);
  EXPECT_THAT(DecodeRunReply(good, 3).status().message(),
              HasSubstr("worker returned 2 results for 3 tuples"));
  EXPECT_THAT(DecodeRunReply(good.substr(0, 20), 2).status().message(),
              HasSubstr("truncated"));
  std::string bad_kind = good;
  bad_kind[8] = 7;  // first result's kind
  EXPECT_THAT(DecodeRunReply(bad_kind, 2).status().message(),
              HasSubstr("unknown result kind 7"));
  std::string bad_message = good;
  bad_message[8] = 1, bad_message[9] = 2,
  bad_message[12] = 5;  // decline, msg 5
  EXPECT_THAT(DecodeRunReply(bad_message, 2).status().message(),
              HasSubstr("message index 5 out of range"));
}

TEST(ProtocolTest, IdentityAndSupports) {
  WorkerIdentity id{.name = "ptxas",
                    .version = "1",
                    .toolchain = "ptxas 13.0",
                    .supports = {"add", "vset.u32.u32.eq"}};
  auto back = IdentityFromKeyValues(
      DecodeKeyValues(EncodeKeyValues(IdentityToKeyValues(id))));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->supports, id.supports);
  EXPECT_TRUE(back->Supports(*ParseVariant("add.sat.s32")));
  EXPECT_TRUE(back->Supports(*ParseVariant("vset.u32.u32.eq")));
  EXPECT_FALSE(back->Supports(*ParseVariant("vset.u32.u32.ne")));
  EXPECT_EQ(back->Describe(), "ptxas 1 (ptxas 13.0)");
  EXPECT_FALSE(IdentityFromKeyValues({{"name", "x"}}).ok());
}

// default_form comes with forms=1: alone it means nothing, as a worker
// without forms is never sent a form. `runtime` (a worker that runs code)
// and `both` (a compiler whose code is also run: immediates by default,
// runtime forms as early) each set their own field and not the other's.
TEST(ProtocolTest, EachDefaultFormRoundTripsAndNeedsForms) {
  struct Form {
    const char* value;
    bool WorkerIdentity::*field;
    bool WorkerIdentity::*other;
  };
  for (const Form& f :
       {Form{"runtime", &WorkerIdentity::runtime_by_default,
             &WorkerIdentity::both_forms},
        Form{"both", &WorkerIdentity::both_forms,
             &WorkerIdentity::runtime_by_default}}) {
    SCOPED_TRACE(f.value);
    WorkerIdentity id{.name = "w", .version = "2", .forms = true};
    id.*f.field = true;
    KeyValues kv = IdentityToKeyValues(id);
    EXPECT_NE(std::find(kv.begin(), kv.end(),
                        std::pair<std::string, std::string>{"default_form",
                                                            f.value}),
              kv.end());
    auto back = IdentityFromKeyValues(DecodeKeyValues(EncodeKeyValues(kv)));
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(back->forms);
    EXPECT_TRUE((*back).*f.field);
    EXPECT_FALSE((*back).*f.other);
    auto without_forms = IdentityFromKeyValues(
        {{"name", "x"}, {"version", "1"}, {"default_form", f.value}});
    ASSERT_TRUE(without_forms.ok());
    EXPECT_FALSE((*without_forms).*f.field);
  }
}

// SupportedVariants reads the supports lines once; it must say what
// Supports says of every variant, for "*", opcodes, spellings (one not
// canonical: a line a worker got wrong covers nothing) and the carry flag.
TEST(ProtocolTest, SupportedVariantsIsSupportsForEveryVariant) {
  const std::vector<WorkerIdentity> identities = {
      {.name = "all", .supports = {"*"}},
      {.name = "all-carry", .supports = {"*"}, .carry = true},
      {.name = "some",
       .supports = {"bfe", "vset.u32.u32.eq", "add.cc.u32", "ADD.S32"}},
      {.name = "some-carry",
       .supports = {"addc", "add.cc.u32", "shl"},
       .carry = true},
      {.name = "none", .supports = {}},
  };
  for (const WorkerIdentity& id : identities) {
    const std::vector<bool> supported = SupportedVariants(id);
    ASSERT_EQ(supported.size(), AllVariants().size());
    int64_t n = 0;
    for (size_t i = 0; i < supported.size(); ++i) {
      ASSERT_EQ(supported[i], id.Supports(AllVariants()[i]))
          << id.name << ": " << Spell(AllVariants()[i]);
      n += supported[i];
    }
    EXPECT_EQ(n == 0, id.name == "none") << id.name;
  }
}

// A worker covers `.cc` variants only if it says carry=1: one that lists
// `add` or `*` without it (every worker older than the carry flag) is never
// sent add.cc, whose carry it would leave 0. Carry-in alone needs nothing.
TEST(ProtocolTest, CcVariantsNeedCarryInTheHelloReply) {
  WorkerIdentity old{.name = "old", .version = "1", .supports = {"add", "*"}};
  EXPECT_FALSE(old.carry);
  EXPECT_TRUE(old.Supports(*ParseVariant("add.u32")));
  EXPECT_FALSE(old.Supports(*ParseVariant("add.cc.u32")));
  EXPECT_FALSE(old.Supports(*ParseVariant("madc.lo.cc.u32")));
  EXPECT_TRUE(old.Supports(*ParseVariant("addc.u32")));
  WorkerIdentity spelled{
      .name = "s", .version = "1", .supports = {"add.cc.u32"}};
  EXPECT_FALSE(spelled.Supports(*ParseVariant("add.cc.u32")));
  spelled.carry = true;
  EXPECT_TRUE(spelled.Supports(*ParseVariant("add.cc.u32")));
  EXPECT_FALSE(spelled.Supports(*ParseVariant("add.cc.s32")));

  WorkerIdentity carry{
      .name = "new", .version = "1", .supports = {"add"}, .carry = true};
  const KeyValues kv = IdentityToKeyValues(carry);
  EXPECT_NE(std::find(kv.begin(), kv.end(),
                      std::pair<std::string, std::string>("carry", "1")),
            kv.end());
  auto back = IdentityFromKeyValues(DecodeKeyValues(EncodeKeyValues(kv)));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->carry);
  EXPECT_TRUE(back->Supports(*ParseVariant("add.cc.u32")));
  // No carry key unless it is set: an identity without it reads back false.
  const KeyValues plain = IdentityToKeyValues(old);
  for (const auto& [key, value] : plain) EXPECT_NE(key, "carry");
  auto plain_back = IdentityFromKeyValues(plain);
  ASSERT_TRUE(plain_back.ok());
  EXPECT_FALSE(plain_back->carry);
}

}  // namespace
}  // namespace ptxdiff
