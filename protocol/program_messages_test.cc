#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/protocol.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ProgramRunRequest TwoPrograms() {
  return {.form = 1,
          .reading = 1,
          .until_fault = true,
          .time_limit_ms = 1234,
          .programs = {"# ptxdiff program 1\nfirst", std::string(70000, 'x')}};
}

TEST(ProgramMessagesTest, ARequestRoundTripsWithCasesLongerThanAU16String) {
  const absl::StatusOr<ProgramRunRequest> back =
      DecodeProgramRunRequest(EncodeProgramRunRequest(TwoPrograms()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->form, 1);
  EXPECT_EQ(back->reading, 1);
  EXPECT_TRUE(back->until_fault);
  EXPECT_EQ(back->time_limit_ms, 1234u);
  EXPECT_EQ(back->programs, TwoPrograms().programs);
}

TEST(ProgramMessagesTest, ARequestHasTheDocumentedHeader) {
  const std::string bytes = EncodeProgramRunRequest(TwoPrograms());
  // form, reading, flags (until_fault), reserved, u32 limit, u32 count.
  EXPECT_EQ(
      bytes.substr(0, 12),
      std::string("\x01\x01\x01\x00\xd2\x04\x00\x00\x02\x00\x00\x00", 12));
}

TEST(ProgramMessagesTest, MalformedRequestsAreErrorsNamingTheField) {
  std::string bytes = EncodeProgramRunRequest(TwoPrograms());
  EXPECT_THAT(DecodeProgramRunRequest(bytes.substr(0, bytes.size() - 1))
                  .status()
                  .message(),
              HasSubstr("truncated: program 1"));
  std::string bad_form = bytes;
  bad_form[0] = 2;
  EXPECT_THAT(DecodeProgramRunRequest(bad_form).status().message(),
              HasSubstr("input form 2"));
  std::string bad_flags = bytes;
  bad_flags[2] = 4;
  EXPECT_THAT(DecodeProgramRunRequest(bad_flags).status().message(),
              HasSubstr("unknown flags"));
  // A count the payload cannot hold fails before anything is reserved.
  std::string huge = bytes.substr(0, 8) + std::string("\xff\xff\x0f\x00", 4);
  EXPECT_THAT(DecodeProgramRunRequest(huge).status().message(),
              HasSubstr("truncated"));
  std::string none = bytes.substr(0, 8) + std::string(4, '\0');
  EXPECT_THAT(DecodeProgramRunRequest(none).status().message(),
              HasSubstr("0 programs"));
  EXPECT_THAT(DecodeProgramRunRequest(bytes + "z").status().message(),
              HasSubstr("unexpected bytes"));
}

TEST(ProgramMessagesTest, AReplyRoundTripsAndMustHaveOneCheckAProgram) {
  const std::string bytes = EncodeProgramRunReply({.checks = {"a", "", "c"}});
  const absl::StatusOr<ProgramRunReply> back = DecodeProgramRunReply(bytes, 3);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->checks, ElementsAre("a", "", "c"));
  EXPECT_THAT(DecodeProgramRunReply(bytes, 2).status().message(),
              HasSubstr("3 checks for a batch of 2"));
}

TEST(ProgramMessagesTest, TheMessageTypesAreFramesAndProgramsIsNegotiated) {
  for (MessageType t : {MessageType::kRunPrograms, MessageType::kProgramResults,
                        MessageType::kProgress}) {
    const absl::StatusOr<FrameHeader> h =
        DecodeFrameHeader(EncodeFrameHeader(t, 5));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->type, t);
  }
  EXPECT_FALSE(
      DecodeFrameHeader(EncodeFrameHeader(static_cast<MessageType>(10), 5))
          .ok());
  WorkerIdentity id{
      .name = "w", .version = "1", .programs = true, .progress = true};
  EXPECT_TRUE(IdentityFromKeyValues(IdentityToKeyValues(id))->programs);
  EXPECT_TRUE(IdentityFromKeyValues(IdentityToKeyValues(id))->progress);
  id.programs = false;
  id.progress = false;
  EXPECT_FALSE(IdentityFromKeyValues(IdentityToKeyValues(id))->programs);
  EXPECT_FALSE(IdentityFromKeyValues(IdentityToKeyValues(id))->progress);
}

}  // namespace
}  // namespace ptxdiff
