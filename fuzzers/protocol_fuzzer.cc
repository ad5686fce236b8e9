// libFuzzer target: the worker protocol's decoders on arbitrary bytes. They
// must reject garbage with a status, never crash, and whatever they accept
// must encode back to the same bytes.

#include <string>

#include "absl/strings/string_view.h"
#include "common/check.h"
#include "protocol/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return -1;
  const absl::string_view bytes(reinterpret_cast<const char*>(data) + 1,
                                size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto header = ptxdiff::DecodeFrameHeader(bytes);
      if (header.ok()) {
        PTXDIFF_CHECK(
            ptxdiff::EncodeFrameHeader(header->type, header->payload_size) ==
                bytes.substr(0, ptxdiff::kFrameHeaderSize),
            "a frame header does not encode back to its bytes");
      }
      break;
    }
    case 1: {
      auto request = ptxdiff::DecodeRunRequest(bytes);
      if (request.ok()) {
        // Reserved fields are ignored on input and written as 0, so compare
        // a second round trip.
        const std::string once = ptxdiff::EncodeRunRequest(*request);
        PTXDIFF_CHECK(
            ptxdiff::EncodeRunRequest(*ptxdiff::DecodeRunRequest(once)) == once,
            "a RUN request does not round-trip");
      }
      break;
    }
    case 2: {
      // The expected count comes from the payload's own first bytes, so both
      // the count check and the body are reached.
      const size_t expected =
          bytes.size() >= 4 ? static_cast<uint8_t>(bytes[0]) : 0;
      auto reply = ptxdiff::DecodeRunReply(bytes, expected);
      if (reply.ok()) {
        const std::string once = ptxdiff::EncodeRunReply(*reply);
        PTXDIFF_CHECK(ptxdiff::EncodeRunReply(
                          *ptxdiff::DecodeRunReply(once, expected)) == once,
                      "a RESULTS reply does not round-trip");
      }
      break;
    }
    default: {
      auto kv = ptxdiff::DecodeKeyValues(bytes);
      (void)ptxdiff::IdentityFromKeyValues(kv);
      break;
    }
  }
  return 0;
}
