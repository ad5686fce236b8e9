#include "isa/operand_text.h"

#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

TEST(OperandTextTest, ParsesHexDecimalAndNegative) {
  EXPECT_EQ(*ParseOperand("0x10", 32), 16u);
  EXPECT_EQ(*ParseOperand("0XfF", 8), 255u);
  EXPECT_EQ(*ParseOperand("42", 16), 42u);
  EXPECT_EQ(*ParseOperand("-1", 16), 0xffffu);
  EXPECT_EQ(*ParseOperand("-2147483648", 32), 0x80000000u);
  EXPECT_EQ(*ParseOperand("-9223372036854775808", 64), 0x8000000000000000u);
  EXPECT_EQ(*ParseOperand("0xffffffffffffffff", 64), ~uint64_t{0});
}

TEST(OperandTextTest, RejectsOutOfRangeAndGarbage) {
  EXPECT_FALSE(ParseOperand("0x10000", 16).ok());
  EXPECT_FALSE(ParseOperand("-32769", 16).ok());
  EXPECT_FALSE(ParseOperand("4294967296", 32).ok());
  EXPECT_FALSE(ParseOperand("0x1ffffffffffffffff", 64).ok());
  EXPECT_FALSE(ParseOperand("18446744073709551616", 64).ok());
  EXPECT_FALSE(ParseOperand("", 32).ok());
  EXPECT_FALSE(ParseOperand("0x", 32).ok());
  EXPECT_FALSE(ParseOperand("12ab", 32).ok());
  EXPECT_FALSE(ParseOperand("--1", 32).ok());
  EXPECT_FALSE(ParseOperand("+1", 32).ok());
  EXPECT_NE(ParseOperand("65536", 16).status().message().find("16 bits"),
            std::string::npos);
}

TEST(OperandTextTest, HexHasTheWidthsDigits) {
  EXPECT_EQ(HexOperand(0xf, 32), "0x0000000f");
  EXPECT_EQ(HexOperand(0xf, 16), "0x000f");
  EXPECT_EQ(HexOperand(1, 64), "0x0000000000000001");
  EXPECT_EQ(HexOperand(1, 1), "0x1");  // the carry-in cf
}

// A tuple may hold bits above a source's width (they are ignored); its
// operand text drops them, so that it parses back to the same operands
// (`compare` prints one tuple for two variants of different widths).
TEST(OperandTextTest, OperandsAreWrittenAtTheirWidthsOnly) {
  const Variant v = *ParseVariant("add.cc.u32");
  Operands ops;
  ops.v[0] = 0x007fffffffffffff;
  ops.v[1] = 0x0000000100400001;
  const std::vector<std::string> text = HexOperands(v, ops);
  EXPECT_EQ(text, (std::vector<std::string>{"0xffffffff", "0x00400001"}));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(*ParseOperand(text[i], 32), ops.v[i] & 0xffffffff);
  }
}

TEST(OperandTextTest, TheCarryInIsOneBit) {
  EXPECT_EQ(*ParseOperand("1", 1), 1u);
  EXPECT_EQ(*ParseOperand("0x0", 1), 0u);
  EXPECT_FALSE(ParseOperand("2", 1).ok());
}

TEST(OperandTextTest, ResultTextShowsTheCarryOfCcVariants) {
  EXPECT_EQ(ResultText(*ParseVariant("add.u32"), 3, false), "0x00000003");
  EXPECT_EQ(ResultText(*ParseVariant("add.u32"), 3, true), "0x00000003");
  EXPECT_EQ(ResultText(*ParseVariant("addc.u32"), 0, true), "0x00000000");
  EXPECT_EQ(ResultText(*ParseVariant("add.cc.u32"), 0, true),
            "0x00000000 cf=1");
  EXPECT_EQ(ResultText(*ParseVariant("subc.cc.u64"), 1, false),
            "0x0000000000000001 cf=0");
}

}  // namespace
}  // namespace ptxdiff
