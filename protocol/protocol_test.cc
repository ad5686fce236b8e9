#include "protocol/protocol.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(ProtocolTest, FrameHeaderRoundTripsAndHasTheDocumentedBytes) {
  const std::string h = EncodeFrameHeader(MessageType::kRun, 0x0102);
  EXPECT_EQ(h, std::string("PXDF\x01\x00\x03\x00\x02\x01\x00\x00\x00\x00\x00\x00", 16));
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
  EXPECT_EQ(bytes.size(), 4 + (2 + 7) + (2 + r.spellings[1].size()) + 4 + 2 * 40);
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
  EXPECT_THAT(DecodeRunRequest(good.substr(0, good.size() - 1)).status().message(),
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
  bad_message[8] = 1, bad_message[9] = 2, bad_message[12] = 5;  // decline, msg 5
  EXPECT_THAT(DecodeRunReply(bad_message, 2).status().message(),
              HasSubstr("message index 5 out of range"));
}

TEST(ProtocolTest, IdentityAndSupports) {
  WorkerIdentity id{.name = "ptxas", .version = "1", .toolchain = "ptxas 13.0",
                    .supports = {"add", "vset.u32.u32.eq"}};
  auto back = IdentityFromKeyValues(DecodeKeyValues(EncodeKeyValues(IdentityToKeyValues(id))));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->supports, id.supports);
  EXPECT_TRUE(back->Supports(*ParseVariant("add.sat.s32")));
  EXPECT_TRUE(back->Supports(*ParseVariant("vset.u32.u32.eq")));
  EXPECT_FALSE(back->Supports(*ParseVariant("vset.u32.u32.ne")));
  EXPECT_EQ(back->Describe(), "ptxas 1 (ptxas 13.0)");
  EXPECT_FALSE(IdentityFromKeyValues({{"name", "x"}}).ok());
}

}  // namespace
}  // namespace ptxdiff
