"""Tests of the Python worker kit (ptxdiff_worker.py): the codec, the
spelling parser (every line `ptxdiff variants` prints when PTXDIFF_BIN names
the binary), serve() on in-memory streams (handshake, framing errors, a
malformed RUN, decline dedup, exceptions, a large batch), and one real
worker process whose stray print() must not reach the frame stream.

    python3 -m unittest discover -s kit/python -p '*_test.py'
"""

import io
import os
import re
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxdiff_worker as kit  # pylint: disable=wrong-import-position

INFO = kit.WorkerInfo(name="kit-test", version="7", device="a CPU",
                      supports=["add", "bfe.u32"])


def header(magic=b"PXDF", version=1, message_type=3, size=0):
    return struct.pack("<4sHHQ", magic, version, message_type, size)


def add_or_decline(v, ops):
    if v.opcode == "add":
        return kit.value((ops[0] + ops[1]) & 0xFFFFFFFF)
    if v.opcode == "boom":
        raise RuntimeError("boom at %d" % ops[0])
    if v.opcode == "negative":
        return -1
    return kit.decline(kit.UNSUPPORTED, "no %s here" % v.opcode)


def converse(data, evaluate=add_or_decline, info=INFO, on_hello=None):
    """Runs serve() on `data`; returns (status, reply frames, stderr text)."""
    out, err = io.BytesIO(), io.StringIO()
    status = kit.serve(info, evaluate, stdin=io.BytesIO(data), stdout=out,
                       stderr=err, on_hello=on_hello)
    frames = []
    stream = io.BytesIO(out.getvalue())
    while True:
        frame = kit.read_frame(stream)
        if frame is None:
            break
        frames.append(frame)
    return status, frames, err.getvalue()


HELLO = kit.encode_frame(kit.HELLO, b"protocol=1\narch=sm_90\n")


def run_frame(spellings, tuples):
    return kit.encode_frame(kit.RUN, kit.encode_run(spellings, tuples))


class CodecTest(unittest.TestCase):

    def test_header_layout(self):
        frame = kit.encode_frame(kit.RESULTS, b"xyz")
        self.assertEqual(frame[:16], b"PXDF\x01\x00\x04\x00\x03" + b"\x00" * 7)
        self.assertEqual(kit.decode_frame_header(frame[:16]), (kit.RESULTS, 3))

    def test_bad_headers(self):
        cases = [(header(magic=b"XXDF"), "not a ptxdiff frame: magic bytes 58 58 44 46"),
                 (header(version=2), "protocol version 2"),
                 (header(message_type=7), "unknown message type 7"),
                 (header(size=kit.MAX_PAYLOAD + 1), "exceeds the limit of 2^30")]
        for data, message in cases:
            with self.assertRaisesRegex(kit.ProtocolError, re.escape(message)):
                kit.decode_frame_header(data)
        self.assertEqual(kit.decode_frame_header(header(size=kit.MAX_PAYLOAD)),
                         (kit.RUN, kit.MAX_PAYLOAD))

    def test_key_values_and_hello_reply(self):
        self.assertEqual(kit.decode_key_values(b"protocol=1\nnoise\na=b=c\n"),
                         [("protocol", "1"), ("a", "b=c")])
        self.assertEqual(kit.encode_hello_reply(INFO),
                         b"name=kit-test\nversion=7\ndevice=a CPU\n"
                         b"supports=add\nsupports=bfe.u32\n")

    def test_run_round_trip(self):
        payload = kit.encode_run(["add.s32", "bfe.u32"], [(1, (1, 2, 3, 4)), (0, (2**64 - 1, 0, 0, 5))])
        spellings, n, records = kit.decode_run(payload)
        self.assertEqual(spellings, ["add.s32", "bfe.u32"])
        self.assertEqual(n, 2)
        self.assertEqual(list(struct.iter_unpack("<I4xQQQQ", records)),
                         [(1, 1, 2, 3, 4), (0, 2**64 - 1, 0, 0, 5)])

    def test_malformed_runs(self):
        good = kit.encode_run(["add.s32"], [(0, (1, 2, 0, 0))])
        cases = [(good[:3], "truncated: variant count"),
                 (good[:8], "truncated: spelling"),
                 (good[:-1], "truncated: 1 tuples of 40 bytes need 40 bytes, 39 left"),
                 (good + b"x", "1 unexpected bytes at the end"),
                 (good[:13] + b"\x02" + good[14:], "truncated: 2 tuples"),
                 (kit.encode_run(["add.s32"], []), "tuple count 0 outside"),
                 (kit.encode_run(["add.s32"], [(1, (0, 0, 0, 0))]),
                  "variant index 1 out of range"),
                 (kit.encode_run([], [])[:4] + struct.pack("<I", (1 << 24) + 1),
                  "tuple count 16777217 outside")]
        for payload, message in cases:
            with self.assertRaisesRegex(ValueError, re.escape(message)):
                kit.decode_run(payload)


class SpellingTest(unittest.TestCase):

    def test_parts(self):
        v = kit.parse_variant("vadd.u32.u32.u32.sat d.b1, a, b.h0, c")
        self.assertEqual(v.opcode, "vadd")
        self.assertEqual(v.modifiers, ("u32", "u32", "u32", "sat"))
        self.assertTrue(v.has_modifier("sat"))
        self.assertEqual(v.operands[0], kit.Operand("d", "b1"))
        self.assertEqual(v.selector_of("b"), "h0")
        self.assertEqual(v.selector_of("a"), "")
        self.assertEqual(v.spell(), v.spelling)
        shl = kit.parse_variant("visa.shl.sat.d.ub.uw")
        self.assertEqual((shl.opcode, shl.modifiers, shl.operands),
                         ("visa.shl", ("sat", "d", "ub", "uw"), ()))
        vmad = kit.parse_variant("vmad.s32.u32.s32.sat.shr7 d, -a.b1, b, -c")
        self.assertTrue(vmad.is_negated("a") and vmad.is_negated("c"))
        self.assertFalse(vmad.is_negated("b"))
        self.assertEqual(kit.parse_variant("prmt.b32 d, a.b3210, b").selector_of("a"), "b3210")
        self.assertEqual(kit.parse_variant(" vshr.s32.u32.u32.clamp.add  d ,a.b1, c ; ").spell(),
                         "vshr.s32.u32.u32.clamp.add d, a.b1, c")
        for bad, message in [("", "empty spelling"), ("add..s32", "empty modifier"),
                             ("vadd.u32.u32.u32 d, , b", "bad operand"),
                             ("vadd.u32.u32.u32 d., a", "empty selector")]:
            with self.assertRaisesRegex(ValueError, re.escape(message)):
                kit.parse_variant(bad)

    @unittest.skipUnless(os.environ.get("PTXDIFF_BIN"), "PTXDIFF_BIN not set")
    def test_every_printed_spelling_round_trips(self):
        lines = subprocess.run([os.environ["PTXDIFF_BIN"], "variants"], check=True,
                               capture_output=True, text=True).stdout.splitlines()
        self.assertGreater(len(lines), 70000)
        count = int(subprocess.run([os.environ["PTXDIFF_BIN"], "variants", "--count"],
                                   check=True, capture_output=True,
                                   text=True).stdout.split()[0])
        self.assertEqual(len(lines), count)
        with_operands = 0
        for line in lines:
            v = kit.parse_variant(line)
            self.assertEqual(v.spell(), line)
            with_operands += bool(v.operands)
            self.assertEqual(bool(v.operands), " " in line)
        print("%d spellings round-tripped, %d with operand lists" % (len(lines), with_operands))

    def test_bit_helpers(self):
        self.assertEqual(kit.type_bits("u16x2"), 32)
        self.assertEqual(kit.type_bits("sat"), 0)
        self.assertTrue(kit.is_signed_type("s64"))
        self.assertEqual(kit.sign_extend(0x80, 8), -128)
        self.assertEqual(kit.low_bits(-1, 16), 0xFFFF)


class ServeTest(unittest.TestCase):

    def test_handshake_run_and_bye(self):
        seen = []
        data = (HELLO + run_frame(["add.s32", "mul.lo.s32"],
                                  [(0, (0xFFFFFFFF, 2, 0, 0)), (1, (3, 4, 0, 0)), (0, (40, 2, 0, 0))])
                + kit.encode_frame(kit.BYE, b"") + b"ignored after BYE")
        status, frames, err = converse(data, on_hello=seen.extend)
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(seen, [("protocol", "1"), ("arch", "sm_90")])
        self.assertEqual(frames[0], (kit.HELLO_REPLY, kit.encode_hello_reply(INFO)))
        self.assertEqual(frames[1][0], kit.RESULTS)
        messages, results = kit.decode_results(frames[1][1])
        self.assertEqual(messages, ["no mul here"])
        self.assertEqual(results, [(0, 0, 0, 1), (1, 1, 0, 0), (0, 0, 0, 42)])

    def test_carry_is_flags_bit_zero(self):
        def evaluate(v, ops):
            if ops[0] == 1:
                return kit.value(7, carry=True)
            if ops[0] == 2:
                return kit.value(7, carry=False)
            return kit.decline(kit.OTHER, "no")

        info = kit.WorkerInfo(name="kit-test", version="7", supports=["add"], carry=True)
        self.assertIn(b"\ncarry=1\n", kit.encode_hello_reply(info))
        self.assertNotIn(b"carry", kit.encode_hello_reply(INFO))
        _, frames, _ = converse(HELLO + run_frame(
            ["add.cc.u32"], [(0, (1, 0, 0, 0)), (0, (2, 0, 0, 0)), (0, (3, 0, 0, 0))]),
            evaluate=evaluate, info=info)
        _, results = kit.decode_results(frames[1][1], flags=True)
        self.assertEqual(results[0], (0, 0, kit.RESULT_FLAG_CARRY, 0, 7))
        self.assertEqual(results[1], (0, 0, 0, 0, 7))
        self.assertEqual(results[2][:3], (1, kit.OTHER, 0))
        self.assertEqual(kit.decode_results(frames[1][1])[1][0], (0, 0, 0, 7))

    def test_end_of_input_exits_zero(self):
        self.assertEqual(converse(b"")[0], 0)
        self.assertEqual(converse(HELLO)[0], 0)

    def test_framing_errors_exit_four(self):
        run = kit.encode_run(["add.s32"], [(0, (1, 2, 0, 0))])
        cases = [(header(magic=b"XXDF"), "not a ptxdiff frame"),
                 (header(version=2), "protocol version 2, this worker speaks 1"),
                 (header(message_type=9), "unknown message type 9"),
                 (header(size=kit.MAX_PAYLOAD + 1), "exceeds the limit of 2^30"),
                 (b"PXDF\x01\x00", "truncated frame header: input ended after 6 of 16"),
                 (header(size=len(run)) + run[:10], "truncated frame: RUN payload of"),
                 (kit.encode_frame(kit.RESULTS, b""), "expected RUN or BYE, got RESULTS")]
        for data, message in cases:
            status, frames, err = converse(HELLO + data)
            self.assertEqual(status, 4, message)
            self.assertEqual(len(frames), 1)  # HELLO_REPLY only
            self.assertIn("kit-test: protocol error: ", err)
            self.assertIn(message, err)
            self.assertEqual(err.count("\n"), 1)
        status, _, err = converse(run_frame(["add.s32"], [(0, (0, 0, 0, 0))]))
        self.assertEqual(status, 4)
        self.assertIn("expected HELLO, got RUN", err)

    def test_malformed_run_gets_error_and_serving_goes_on(self):
        bad = kit.encode_run(["add.s32"], [(0, (1, 2, 0, 0))])
        bad = bad[:13] + b"\x03" + bad[14:]
        status, frames, _ = converse(HELLO + kit.encode_frame(kit.RUN, bad)
                                     + run_frame(["add.s32"], [(0, (2, 3, 0, 0))]))
        self.assertEqual(status, 0)
        self.assertEqual(frames[1][0], kit.ERROR)
        self.assertIn(b"malformed RUN: truncated: 3 tuples", frames[1][1])
        self.assertEqual(kit.decode_results(frames[2][1])[1], [(0, 0, 0, 5)])

    def test_declines_dedup_exceptions_and_bad_answers(self):
        status, frames, _ = converse(HELLO + run_frame(
            ["boom", "add.u32", "mul.lo.u32", "negative", "add..s32"],
            [(0, (1, 0, 0, 0)), (2, (0, 0, 0, 0)), (1, (1, 1, 0, 0)), (0, (1, 0, 0, 0)),
             (2, (0, 0, 0, 0)), (3, (0, 0, 0, 0)), (4, (0, 0, 0, 0)), (4, (0, 0, 0, 0))]))
        self.assertEqual(status, 0)
        messages, results = kit.decode_results(frames[1][1])
        self.assertEqual(messages[results[0][2]], "evaluate raised RuntimeError: boom at 1")
        self.assertEqual(results[0][:2], (1, kit.OTHER))
        self.assertEqual(results[2], (0, 0, 0, 2))
        self.assertEqual(results[3][2], results[0][2])  # the same text, stored once
        self.assertEqual(results[4][2], results[1][2])
        self.assertEqual(messages[results[1][2]], "no mul here")
        self.assertIn("evaluate returned -1", messages[results[5][2]])
        self.assertEqual(results[6][1], kit.UNSUPPORTED)
        self.assertIn("cannot parse spelling 'add..s32'", messages[results[6][2]])
        self.assertEqual(len(messages), 4)

    def test_invalid_decline_code_and_long_reason(self):
        long_reason = "x" * (kit.MAX_MESSAGE_SIZE - 1) + "\u00e9 more"

        def evaluate(v, ops):
            return kit.decline(9, "odd") if ops[0] else kit.decline(kit.OTHER, long_reason)

        _, frames, _ = converse(HELLO + run_frame(["add.s32"], [(0, (1, 0, 0, 0)), (0, (0, 0, 0, 0))]),
                                evaluate=evaluate)
        messages, results = kit.decode_results(frames[1][1])
        self.assertEqual(results[0][1], kit.OTHER)
        self.assertEqual(messages[0], "(invalid decline code 9) odd")
        self.assertEqual(messages[1], "x" * (kit.MAX_MESSAGE_SIZE - 1))

    def test_missing_version_exits_two(self):
        status, frames, err = converse(HELLO, info=kit.WorkerInfo(name="x", version=""))
        self.assertEqual((status, frames), (2, []))
        self.assertIn("needs a name and a version", err)

    def test_large_batch(self):
        n = 1 << 18
        tuples = [(i % 3, (i * 2654435761 & (2**64 - 1), i, i, 0)) for i in range(n)]

        def evaluate(v, ops):
            if v.opcode == "bfe":
                return kit.decline(kit.NOT_EVALUABLE, "odd" if ops[2] % 2 else "even")
            return kit.value((ops[0] + ops[1]) & (2**64 - 1))

        data = HELLO + run_frame(["add.u64", "add.s64", "bfe.u32"], tuples)
        start = time.perf_counter()
        status, frames, _ = converse(data, evaluate=evaluate)
        seconds = time.perf_counter() - start
        self.assertEqual(status, 0)
        messages, results = kit.decode_results(frames[1][1])
        self.assertEqual(len(results), n)
        self.assertEqual(sorted(messages), ["even", "odd"])
        for i, (index, ops) in enumerate(tuples):
            if index == 2:
                self.assertEqual(messages[results[i][2]], "odd" if i % 2 else "even")
            else:
                self.assertEqual(results[i], (0, 0, 0, (ops[0] + ops[1]) & (2**64 - 1)))
        print("%d tuples served in %.2f s (%.0f/s)" % (n, seconds, n / seconds))


class ProcessTest(unittest.TestCase):

    def test_stray_print_goes_to_stderr(self):
        script = ("import sys; sys.path.insert(0, %r)\n"
                  "import ptxdiff_worker as kit\n"
                  "def evaluate(v, ops):\n"
                  "    print('evaluating', v.spelling)\n"
                  "    return kit.value(ops[0] + 1)\n"
                  # Buffered before serve, as a library's banner at import.
                  "print('loaded')\n"
                  "sys.exit(kit.serve(kit.WorkerInfo('p', '1', supports=['*']), evaluate))\n"
                  % os.path.dirname(os.path.abspath(__file__)))
        data = (HELLO + run_frame(["add.s32"], [(0, (41, 0, 0, 0))])
                + kit.encode_frame(kit.BYE, b""))
        # Buffered, as Python's stdout on a pipe is by default.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        proc = subprocess.run([sys.executable, "-c", script], input=data, env=env,
                              capture_output=True, check=False, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        stream = io.BytesIO(proc.stdout)
        self.assertEqual(kit.read_frame(stream)[0], kit.HELLO_REPLY)
        message_type, payload = kit.read_frame(stream)
        self.assertEqual(message_type, kit.RESULTS)
        self.assertEqual(kit.decode_results(payload)[1], [(0, 0, 0, 42)])
        self.assertIsNone(kit.read_frame(stream))
        self.assertEqual(proc.stderr, b"loaded\nevaluating add.s32\n")

    def test_protocol_error_exit_status(self):
        proc = subprocess.run(
            [sys.executable, "-c",
             "import sys; sys.path.insert(0, %r)\nimport ptxdiff_worker as kit\n"
             "sys.exit(kit.serve(kit.WorkerInfo('p', '1'), lambda v, o: 0))\n"
             % os.path.dirname(os.path.abspath(__file__))],
            input=HELLO + b"garbage garbage!", capture_output=True, check=False, timeout=60)
        self.assertEqual(proc.returncode, 4)
        self.assertIn(b"p: protocol error: not a ptxdiff frame", proc.stderr)


if __name__ == "__main__":
    unittest.main()
