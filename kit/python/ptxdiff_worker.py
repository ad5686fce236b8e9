"""ptxdiff worker kit for Python: the worker side of ptxdiff's worker protocol,
version 1 (docs/worker-protocol.md), in one module (Python 3.8 or newer,
standard library only).

An emulator or translator author writes one function,

    def evaluate(variant, operands):   # operands: (a, b, c, d) as ints
        return value(bits)             # or decline(UNSUPPORTED, "why")

and calls ``sys.exit(serve(WorkerInfo(...), evaluate))``. The kit does the
rest: frames on stdin/stdout, the HELLO handshake, decoding RUN batches,
parsing each canonical spelling once per batch into a Variant (opcode,
modifiers, operands with selectors and negations), encoding RESULTS with
deduplicated decline messages, BYE and end of input, and protocol errors (a
stderr line and exit status 4, as ptxdiff-worker does). An exception raised
by evaluate becomes a decline (code OTHER) with its text. See kit/README.md.
"""

import array
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

PROTOCOL_VERSION = 1
FRAME_HEADER_SIZE = 16
MAX_PAYLOAD = 1 << 30
MAX_TUPLES_PER_BATCH = 1 << 24
MAX_MESSAGE_SIZE = 0xFFFF
TUPLE_SIZE = 40
RESULT_SIZE = 16
RESULT_FLAG_CARRY = 1  # flags bit 0 (bytes 2-3 of a result): CC.CF out
MASK64 = (1 << 64) - 1

# Message types.
HELLO, HELLO_REPLY, RUN, RESULTS, ERROR, BYE = 1, 2, 3, 4, 5, 6
MESSAGE_NAMES = {HELLO: "HELLO", HELLO_REPLY: "HELLO_REPLY", RUN: "RUN",
                 RESULTS: "RESULTS", ERROR: "ERROR", BYE: "BYE"}

# Decline codes: why a tuple gets no value (a decline is never a finding).
UNSUPPORTED = 1    # this variant is not implemented here
NOT_EVALUABLE = 2  # implemented, but no value for these operands here
OPERAND_FORM = 3   # operand form rejected (e.g. an immediate out of range)
OTHER = 4          # anything else (the kit uses it for exceptions)

# Exit statuses serve() returns.
EXIT_OK = 0
EXIT_BAD_SETUP = 2
EXIT_CANNOT_START = 3
EXIT_PROTOCOL_ERROR = 4

_HEADER = struct.Struct("<4sHHQ")
_TUPLE_FMT = "<I4xQQQQ"  # variant index, reserved, operands a..d


class ProtocolError(Exception):
    """The input is not a valid frame stream: the worker exits with 4."""


# ---------------------------------------------------------------------------
# Variants: a canonical spelling, parsed
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Operand:
    """One operand as written: ``-a.b1`` is Operand("a", "b1", True)."""
    name: str
    selector: str = ""
    negated: bool = False

    def __str__(self):
        return (("-" if self.negated else "") + self.name +
                ("." + self.selector if self.selector else ""))


class Variant:
    """A canonical spelling (what ``ptxdiff variants`` prints), parsed.

    ``vadd.u32.u32.u32.sat d.b1, a, b.h0, c``: opcode ``vadd``, modifiers
    ``("u32", "u32", "u32", "sat")``, operands d.b1, a, b.h0, c.
    ``visa.shl.sat.d.ub.uw``: opcode ``visa.shl``. The operand list is empty
    when the spelling has none (only selectors and negations bring one).
    """
    __slots__ = ("spelling", "opcode", "modifiers", "operands")

    def __init__(self, spelling: str, opcode: str, modifiers: Tuple[str, ...],
                 operands: Tuple[Operand, ...]):
        self.spelling = spelling
        self.opcode = opcode
        self.modifiers = modifiers
        self.operands = operands

    def has_modifier(self, modifier: str) -> bool:
        return modifier in self.modifiers

    def operand(self, name: str) -> Optional[Operand]:
        for op in self.operands:
            if op.name == name:
                return op
        return None

    def selector_of(self, name: str) -> str:
        op = self.operand(name)
        return op.selector if op else ""

    def is_negated(self, name: str) -> bool:
        op = self.operand(name)
        return bool(op and op.negated)

    def spell(self) -> str:
        """The canonical spelling rebuilt from the parts."""
        head = ".".join((self.opcode,) + self.modifiers)
        if not self.operands:
            return head
        return head + " " + ", ".join(str(op) for op in self.operands)

    def __repr__(self):
        return "Variant(%r)" % self.spelling


_OPCODE_NAMESPACES = ("visa",)  # `visa.shl` is one opcode


def _parse_operand(text: str) -> Operand:
    s = text.strip()
    negated = s.startswith("-")
    if negated:
        s = s[1:].strip()
    name, dot, selector = s.partition(".")
    if not name or any(c in name for c in " \t"):
        raise ValueError("bad operand %r" % text)
    if dot and not selector:
        raise ValueError("empty selector in operand %r" % text)
    return Operand(name, selector, negated)


def parse_variant(spelling: str) -> Variant:
    """Parses a spelling; raises ValueError on an empty spelling, an empty
    modifier (``add..s32``) or an empty operand. Tolerates extra white space
    and a trailing ``;``."""
    s = spelling.strip()
    if s.endswith(";"):
        s = s[:-1].strip()
    if not s:
        raise ValueError("empty spelling")
    head, _, rest = s.replace("\t", " ").partition(" ")
    tokens = head.split(".")
    if any(not t for t in tokens):
        raise ValueError("empty modifier in %r" % head)
    first = 1
    opcode = tokens[0]
    if opcode in _OPCODE_NAMESPACES and len(tokens) > 1:
        opcode += "." + tokens[1]
        first = 2
    operands = tuple(_parse_operand(t) for t in rest.split(",")) if rest.strip() else ()
    return Variant(spelling, opcode, tuple(tokens[first:]), operands)


# ---------------------------------------------------------------------------
# Answers and bit helpers
# ---------------------------------------------------------------------------

class Decline:
    """A tuple without a value: a decline code and a reason."""
    __slots__ = ("code", "reason")

    def __init__(self, code: int, reason: str):
        self.code = code
        self.reason = reason

    def __repr__(self):
        return "decline(%d, %r)" % (self.code, self.reason)


class Carried(tuple):
    """A value with a set carry flag: (bits, True). Made by value()."""
    __slots__ = ()

    @property
    def bits(self) -> int:
        return self[0]


def value(bits: int, carry: bool = False):
    """A value answer: the destination's bits, zero-extended from the result
    width (64 for mul.wide.u32, 32 for packed types). A plain int returned
    from evaluate means the same. ``carry``: a ``.cc`` variant's outgoing
    CC.CF (the carry out; for sub.cc/subc.cc the borrow), sent only if
    WorkerInfo.carry is set and ignored for variants without ``.cc``."""
    return Carried((bits, True)) if carry else bits


def decline(code: int, reason: str) -> Decline:
    return Decline(code, reason)


def low_bits(x: int, width: int) -> int:
    return x & ((1 << width) - 1)


def sign_extend(x: int, width: int) -> int:
    x = low_bits(x, width)
    return x - (1 << width) if x >> (width - 1) else x


def type_bits(t: str) -> int:
    """Width of a PTX type modifier ("u8".."s64", "b32"; "u16x2" is 32), else 0."""
    if len(t) < 2 or t[0] not in "usb":
        return 0
    return {"8": 8, "16": 16, "32": 32, "16x2": 32, "64": 64}.get(t[1:], 0)


def is_signed_type(t: str) -> bool:
    return type_bits(t) != 0 and t[0] == "s"


@dataclass
class WorkerInfo:
    """What the worker says of itself in HELLO_REPLY. ``supports``: "*",
    family opcodes ("add", "visa.shl") or canonical spellings; the client
    declines every tuple not covered without sending it."""
    name: str
    version: str
    toolchain: str = ""
    driver: str = ""
    device: str = ""
    supports: List[str] = field(default_factory=list)
    # True if evaluate answers .cc variants with value(bits, carry): HELLO_REPLY
    # says carry=1. Without it the client sends no .cc variant.
    carry: bool = False


# ---------------------------------------------------------------------------
# The codec
# ---------------------------------------------------------------------------

def encode_frame(message_type: int, payload: bytes) -> bytes:
    return _HEADER.pack(b"PXDF", PROTOCOL_VERSION, message_type, len(payload)) + payload


def decode_frame_header(header: bytes) -> Tuple[int, int]:
    """(type, payload size) of a 16-byte header; raises ProtocolError."""
    if len(header) != FRAME_HEADER_SIZE:
        raise ProtocolError("frame header of %d bytes, expected 16" % len(header))
    magic, version, message_type, size = _HEADER.unpack(header)
    if magic != b"PXDF":
        raise ProtocolError('not a ptxdiff frame: magic bytes %s, expected '
                            '50 58 44 46 ("PXDF")' % magic.hex(" "))
    if version != PROTOCOL_VERSION:
        raise ProtocolError("protocol version %d, this worker speaks 1" % version)
    if not 1 <= message_type <= 6:
        raise ProtocolError("unknown message type %d" % message_type)
    if size > MAX_PAYLOAD:
        raise ProtocolError("payload of %d bytes exceeds the limit of 2^30" % size)
    return message_type, size


def encode_key_values(pairs: Sequence[Tuple[str, str]]) -> bytes:
    return "".join("%s=%s\n" % kv for kv in pairs).encode()


def decode_key_values(payload: bytes) -> List[Tuple[str, str]]:
    pairs = []
    for line in payload.decode("utf-8", "replace").split("\n"):
        key, eq, val = line.partition("=")
        if eq:
            pairs.append((key, val))
    return pairs


def encode_hello_reply(info: WorkerInfo) -> bytes:
    pairs = [("name", info.name), ("version", info.version)]
    pairs += [(k, getattr(info, k)) for k in ("toolchain", "driver", "device")
              if getattr(info, k)]
    pairs += [("supports", s) for s in info.supports]
    if info.carry:
        pairs.append(("carry", "1"))
    return encode_key_values(pairs)


def _string(payload, at: int, what: str) -> Tuple[str, int]:
    if len(payload) - at < 2:
        raise ValueError("truncated: %s at byte %d of %d" % (what, at, len(payload)))
    (n,) = struct.unpack_from("<H", payload, at)
    at += 2
    if len(payload) - at < n:
        raise ValueError("truncated: %s of %d bytes at byte %d" % (what, n, at))
    return bytes(payload[at:at + n]).decode("utf-8", "replace"), at + n


def _u32(payload, at: int, what: str) -> int:
    if len(payload) - at < 4:
        raise ValueError("truncated: %s at byte %d of %d" % (what, at, len(payload)))
    return struct.unpack_from("<I", payload, at)[0]


def _native_u32s(data) -> array.array:
    words = array.array("I")
    words.frombytes(data)
    if sys.byteorder != "little":
        words.byteswap()
    return words


def decode_run(payload: bytes) -> Tuple[List[str], int, memoryview]:
    """(spellings, tuple count, the raw 40-byte tuple records); raises
    ValueError naming what is malformed."""
    view = memoryview(payload)
    num_variants = _u32(view, 0, "variant count")
    at = 4
    if (len(view) - at) // 2 < num_variants:
        raise ValueError("truncated: %d spellings need at least %d bytes"
                         % (num_variants, 2 * num_variants))
    spellings = []
    for _ in range(num_variants):
        s, at = _string(view, at, "spelling")
        spellings.append(s)
    n = _u32(view, at, "tuple count")
    at += 4
    if not 1 <= n <= MAX_TUPLES_PER_BATCH:
        raise ValueError("tuple count %d outside 1..%d" % (n, MAX_TUPLES_PER_BATCH))
    left = len(view) - at
    if left < n * TUPLE_SIZE:
        raise ValueError("truncated: %d tuples of 40 bytes need %d bytes, %d left"
                         % (n, n * TUPLE_SIZE, left))
    if left > n * TUPLE_SIZE:
        raise ValueError("%d unexpected bytes at the end" % (left - n * TUPLE_SIZE))
    records = view[at:]
    biggest = max(_native_u32s(records)[::TUPLE_SIZE // 4])
    if biggest >= num_variants:
        raise ValueError("variant index %d out of range (%d variants)"
                         % (biggest, num_variants))
    return spellings, n, records


def encode_run(spellings: Sequence[str], tuples: Sequence[Tuple[int, Sequence[int]]]) -> bytes:
    """RUN's payload (the client side, for tests): tuples are
    (variant index, (a, b, c, d))."""
    parts = [struct.pack("<I", len(spellings))]
    for s in spellings:
        b = s.encode()
        parts.append(struct.pack("<H", len(b)) + b)
    parts.append(struct.pack("<I", len(tuples)))
    pack = struct.Struct(_TUPLE_FMT).pack
    parts.extend(pack(i, *ops) for i, ops in tuples)
    return b"".join(parts)


def decode_results(payload: bytes, flags: bool = False):
    """(messages, [(kind, code, message index, bits)]) of a RESULTS payload
    (the client side, for tests); with ``flags``, [(kind, code, flags,
    message index, bits)] (flags bit 0: the carry). Raises ValueError."""
    view = memoryview(payload)
    n = _u32(view, 0, "result count")
    m = _u32(view, 4, "message count")
    at = 8
    messages = []
    for _ in range(m):
        s, at = _string(view, at, "message")
        messages.append(s)
    if len(view) - at != n * RESULT_SIZE:
        raise ValueError("%d results need %d bytes, %d left"
                         % (n, n * RESULT_SIZE, len(view) - at))
    records = struct.iter_unpack("<BBHIQ", view[at:])
    if flags:
        return messages, list(records)
    results = [(kind, code, msg, bits) for kind, code, _, msg, bits in records]
    return messages, results


def _clip(reason: str) -> bytes:
    b = reason.encode("utf-8", "replace")
    if len(b) <= MAX_MESSAGE_SIZE:
        return b
    return b[:MAX_MESSAGE_SIZE].decode("utf-8", "ignore").encode()


class _Messages:
    """Decline messages, each stored once."""

    def __init__(self):
        self.index = {}
        self.encoded = []

    def add(self, reason: str) -> int:
        i = self.index.get(reason)
        if i is None:
            i = self.index[reason] = len(self.encoded)
            b = _clip(reason)
            self.encoded.append(struct.pack("<H", len(b)) + b)
        return i


def _decline_head(code, reason, messages: _Messages) -> int:
    if not (type(code) is int and 1 <= code <= 4):
        reason = "(invalid decline code %r) %s" % (code, reason)
        code = OTHER
    return 1 | code << 8 | messages.add(str(reason)) << 32


def evaluate_run(spellings: Sequence[str], n: int, records,
                 evaluate: Callable) -> bytes:
    """RESULTS' payload for a decoded RUN: each spelling parsed once, then
    evaluate per tuple. A spelling that does not parse declines its tuples
    (UNSUPPORTED); an exception declines its tuple (OTHER)."""
    variants = []
    parse_errors = []
    for s in spellings:
        try:
            variants.append(parse_variant(s))
            parse_errors.append(None)
        except ValueError as e:
            variants.append(None)
            parse_errors.append("cannot parse spelling %r: %s" % (s, e))
    messages = _Messages()
    out = array.array("Q")
    out.frombytes(bytes(RESULT_SIZE * n))
    for i, (index, a, b, c, d) in enumerate(struct.iter_unpack(_TUPLE_FMT, records)):
        v = variants[index]
        if v is None:
            out[2 * i] = _decline_head(UNSUPPORTED, parse_errors[index], messages)
            continue
        try:
            r = evaluate(v, (a, b, c, d))
        except Exception as e:  # pylint: disable=broad-except
            r = Decline(OTHER, "evaluate raised %s: %s" % (type(e).__name__, e))
        if type(r) is Carried and len(r) == 2 and type(r[0]) is int and 0 <= r[0] <= MASK64:
            out[2 * i] = RESULT_FLAG_CARRY << 16  # a value: kind 0
            out[2 * i + 1] = r[0]
        elif type(r) is int and 0 <= r <= MASK64:
            out[2 * i + 1] = r
        elif isinstance(r, Decline):
            out[2 * i] = _decline_head(r.code, r.reason, messages)
        else:
            out[2 * i] = _decline_head(
                OTHER, "evaluate returned %r, not value(bits) with 0 <= bits < 2^64"
                % (r,), messages)
    if sys.byteorder != "little":
        out.byteswap()
    return b"".join([struct.pack("<II", n, len(messages.encoded))] +
                    messages.encoded + [out.tobytes()])


# ---------------------------------------------------------------------------
# Serving on streams
# ---------------------------------------------------------------------------

def _read_exact(stream, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = stream.read(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(stream) -> Optional[Tuple[int, bytes]]:
    """(type, payload), or None at end of input at a frame boundary; raises
    ProtocolError for a bad or truncated frame."""
    header = _read_exact(stream, FRAME_HEADER_SIZE)
    if not header:
        return None
    if len(header) < FRAME_HEADER_SIZE:
        raise ProtocolError("truncated frame header: input ended after %d of 16 bytes"
                            % len(header))
    message_type, size = decode_frame_header(header)
    payload = _read_exact(stream, size)
    if len(payload) != size:
        raise ProtocolError("truncated frame: %s payload of %d bytes ended after %d"
                            % (MESSAGE_NAMES[message_type], size, len(payload)))
    return message_type, payload


def _check_info(info: WorkerInfo) -> Optional[str]:
    if not info.name or not info.version:
        return "WorkerInfo needs a name and a version (HELLO_REPLY requires both)"
    for s in [info.name, info.version, info.toolchain, info.driver, info.device] + list(info.supports):
        if "\n" in s or "\r" in s:
            return "WorkerInfo field with a line break: %r" % s
    return None


def _write(stream, message_type: int, payload: bytes) -> bool:
    try:
        stream.write(encode_frame(message_type, payload))
        stream.flush()
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False  # the client went away


def _protected_stdout():
    """The real stdout for frames only; fd 1 and sys.stdout now go to stderr,
    so a stray print() cannot corrupt the stream. Flushed after the move:
    what was printed before it goes to stderr too. (os.dup's descriptor is
    not inherited by the commands the worker runs.)"""
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout.flush()
    sys.stdout = sys.stderr
    return frames


def _serve_frames(info, evaluate, stdin, stdout, on_hello, complain) -> int:
    first = read_frame(stdin)
    if first is None or first[0] == BYE:
        return EXIT_OK
    if first[0] != HELLO:
        raise ProtocolError("expected HELLO, got %s" % MESSAGE_NAMES[first[0]])
    if on_hello is not None:
        try:
            on_hello(decode_key_values(first[1]))
        except Exception as e:  # pylint: disable=broad-except
            _write(stdout, ERROR, str(e).encode())
            return complain(EXIT_CANNOT_START, "cannot start: %s" % e)
    if not _write(stdout, HELLO_REPLY, encode_hello_reply(info)):
        return EXIT_OK
    while True:
        frame = read_frame(stdin)
        if frame is None or frame[0] == BYE:
            return EXIT_OK
        if frame[0] != RUN:
            raise ProtocolError("expected RUN or BYE, got %s" % MESSAGE_NAMES[frame[0]])
        try:
            spellings, n, records = decode_run(frame[1])
        except ValueError as e:
            reply = (ERROR, ("malformed RUN: %s" % e).encode())
        else:
            reply = (RESULTS, evaluate_run(spellings, n, records, evaluate))
        if not _write(stdout, *reply):
            return EXIT_OK


def serve(info: WorkerInfo, evaluate: Callable, stdin=None, stdout=None,
          stderr=None, on_hello: Optional[Callable] = None) -> int:
    """Serves the protocol until BYE or end of input (returns 0), or a
    protocol error on the input (a stderr line, returns 4). A malformed RUN
    is answered with ERROR and serving goes on. Streams default to the
    process's stdin/stdout/stderr (binary); ``on_hello`` gets HELLO's
    (key, value) options. Use as ``sys.exit(serve(info, evaluate))``."""
    stderr = stderr if stderr is not None else sys.stderr

    def complain(status: int, message: str) -> int:
        stderr.write("%s: %s\n" % (info.name or "worker", message))
        stderr.flush()
        return status

    bad = _check_info(info)
    if bad:
        return complain(EXIT_BAD_SETUP, bad)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else _protected_stdout()
    try:
        return _serve_frames(info, evaluate, stdin, stdout, on_hello, complain)
    except ProtocolError as e:
        return complain(EXIT_PROTOCOL_ERROR, "protocol error: %s" % e)
