#!/usr/bin/env python3
"""An example ptxdiff worker in Python, built on the kit
(kit/python/ptxdiff_worker.py): the PTX integer families add, sub, min and
max, written from the PTX ISA text (sections 9.7.1.1, 9.7.1.2, 9.7.1.12,
9.7.1.13). Every other family is declined through the `supports` lines, so
ptxdiff never sends it.

    ptxdiff sweep --backend exec:$PWD/examples/python_worker/worker.py --family add
"""

import os
import sys

# The kit lives in kit/python of the ptxdiff tree; a copied
# ptxdiff_worker.py next to this file works too.
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "kit", "python")]

import ptxdiff_worker as kit  # pylint: disable=wrong-import-position

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def per_half(a, b, signed, op):
    """.u16x2 / .s16x2: each 16-bit half is an independent operation."""
    out = 0
    for shift in (0, 16):
        x, y = (a >> shift) & 0xFFFF, (b >> shift) & 0xFFFF
        if signed:
            x, y = kit.sign_extend(x, 16), kit.sign_extend(y, 16)
        out |= (op(x, y) & 0xFFFF) << shift
    return out


def add_sub(v, a, b, sub):
    """Wrapping, except .sat (only on .s32) clamps to MININT..MAXINT. With
    .cc (PTX ISA 9.7.2.1, 9.7.2.3), also the carry out of the unsigned sum,
    or for sub the borrow (a < b)."""
    t = v.modifiers[-1]
    op = (lambda x, y: x - y) if sub else (lambda x, y: x + y)
    if v.has_modifier("cc"):
        w = kit.type_bits(t)
        x, y = kit.low_bits(a, w), kit.low_bits(b, w)
        exact = op(x, y)
        return kit.value(kit.low_bits(exact, w), carry=exact < 0 or exact >> w != 0)
    if t in ("u16x2", "s16x2"):
        return per_half(a, b, False, op)
    if v.has_modifier("sat"):
        exact = op(kit.sign_extend(a, 32), kit.sign_extend(b, 32))
        return max(INT32_MIN, min(INT32_MAX, exact)) & 0xFFFFFFFF
    return kit.low_bits(op(a, b), kit.type_bits(t))


def min_max(v, a, b, is_max):
    """Signed or unsigned by type; .relu clamps a negative result to 0."""
    t = v.modifiers[-1]
    relu = v.has_modifier("relu")

    def pick(x, y):
        r = max(x, y) if is_max else min(x, y)
        return max(r, 0) if relu else r

    signed = kit.is_signed_type(t)
    if t in ("u16x2", "s16x2"):
        return per_half(a, b, signed, pick)
    w = kit.type_bits(t)
    if signed:
        return kit.low_bits(pick(kit.sign_extend(a, w), kit.sign_extend(b, w)), w)
    return pick(kit.low_bits(a, w), kit.low_bits(b, w))


def evaluate(v, operands):
    a, b = operands[0], operands[1]
    if v.opcode == "add":
        return add_sub(v, a, b, False)
    if v.opcode == "sub":
        return add_sub(v, a, b, True)
    if v.opcode in ("min", "max"):
        return kit.value(min_max(v, a, b, v.opcode == "max"))
    # Not reached while the supports lines below are right.
    return kit.decline(kit.UNSUPPORTED, "not implemented: " + v.opcode)


if __name__ == "__main__":
    sys.exit(kit.serve(kit.WorkerInfo(name="python-example", version="1",
                                      device="the CPU (examples/python_worker)",
                                      supports=["add", "sub", "min", "max"],
                                      carry=True),
                       evaluate))
