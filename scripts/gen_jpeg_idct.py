#!/usr/bin/python3
"""Writes formats/jpeg/idct_amd64.s: image/jpeg's integer inverse DCT
(formats/jpeg/idct_generic.go) in AVX2, eight rows or columns at a time,
one int32 lane each, with the same operations in the same order, so that
its samples are the Go version's to the bit.

    /usr/bin/python3 scripts/gen_jpeg_idct.py > formats/jpeg/idct_amd64.s

The 1-D passes are written once below in terms of named values; the
generator gives each value a Y register and reuses the registers of values
no longer needed.
"""

import sys

# The 60-bit fixed-point constants of idct_generic.go, and its c(x, bits).
COS1 = 1130768441178740757
SIN1 = 224923827593068887
COS3 = 958619196450722178
SIN3 = 640528868967736374
SQRT2INV = 815238614083298888
SQRT2INV_COS6 = 311978311033955632
SQRT2INV_SIN6 = 753182269664427492


def c(x, bits):
    return ((x + (1 << (59 - bits))) >> (60 - bits))


def i32(v):
    v &= 0xffffffff
    return v - (1 << 32) if v >= 1 << 31 else v


out = []
consts = {}  # value -> label offset


def const(v):
    v = i32(v)
    if v not in consts:
        consts[v] = 32 * len(consts)
    return "idctconsts<>+%d(SB)" % consts[v]


class Regs:
    def __init__(self):
        self.free = ["Y%d" % i for i in range(16)]
        self.var = {}

    def take(self):
        return self.free.pop(0)

    def bind(self, name, reg):
        self.var[name] = reg

    def release(self, reg):
        if reg not in self.var.values() and reg not in self.free:
            self.free.append(reg)


R = Regs()


def emit(s):
    out.append("\t" + s)


def simultaneous(assigns):
    """assigns: list of (name, op) computed from current values, then bound."""
    results = []
    for name, fn in assigns:
        results.append((name, fn()))
    olds = [R.var[n] for n, _ in assigns]
    for name, reg in results:
        R.var[name] = reg
    for reg in olds:
        R.release(reg)


def add(a, b):
    def f():
        d = R.take()
        emit("VPADDD %s, %s, %s" % (R.var[b], R.var[a], d))
        return d
    return f


def sub(a, b):
    def f():
        d = R.take()
        emit("VPSUBD %s, %s, %s" % (R.var[b], R.var[a], d))
        return d
    return f


def shift(name, n, op):
    r = R.var[name]
    emit("%s $%d, %s, %s" % (op, n, r, r))


def mulc(name, k):
    r = R.var[name]
    emit("VPMULLD %s, %s, %s" % (const(k), r, r))


def butterfly(a, b):
    # a, b = a+b, a-b
    simultaneous([(a, add(a, b)), (b, sub(a, b))])


def dctbox(a, b, kcos, ksin, pre_shift=0):
    """a, b = dctBox(a>>pre, b>>pre, kcos, ksin) in place."""
    if pre_shift:
        shift(a, pre_shift, "VPSRAD")
        shift(b, pre_shift, "VPSRAD")
    ra, rb = R.var[a], R.var[b]
    ksum = R.take()
    emit("VPADDD %s, %s, %s" % (rb, ra, ksum))
    emit("VPMULLD %s, %s, %s" % (const(kcos), ksum, ksum))
    t = R.take()
    emit("VPMULLD %s, %s, %s" % (const(i32(ksin - kcos)), rb, t))
    emit("VPMULLD %s, %s, %s" % (const(i32(kcos + ksin)), ra, ra))
    # y0 = ksum + t (into rb's register after use), y1 = ksum - a*(kcos+ksin)
    emit("VPADDD %s, %s, %s" % (t, ksum, rb))
    emit("VPSUBD %s, %s, %s" % (ra, ksum, ra))
    # now ra holds y1, rb holds y0: rebind
    R.var[a], R.var[b] = rb, ra
    R.free.append(ksum)
    R.free.append(t)


def rows_pass():
    # Values x0..x7 of image/jpeg's idctRows, lane i = row i.
    shift("x0", 17, "VPSLLD")
    shift("x1", 17, "VPSLLD")
    butterfly("x0", "x1")
    dctbox("x2", "x3", c(SQRT2INV_COS6, 18), -c(SQRT2INV_SIN6, 18))
    butterfly("x1", "x2")
    butterfly("x0", "x3")
    shift("x4", 7, "VPSLLD")
    shift("x7", 7, "VPSLLD")
    butterfly("x7", "x4")
    mulc("x6", c(SQRT2INV, 8))
    mulc("x5", c(SQRT2INV, 8))
    butterfly("x7", "x5")
    butterfly("x4", "x6")
    dctbox("x4", "x7", c(COS3, 12), -c(SIN3, 12), 2)
    dctbox("x5", "x6", c(COS1, 12), -c(SIN1, 12), 2)
    butterfly("x0", "x7")
    butterfly("x1", "x6")
    butterfly("x2", "x5")
    butterfly("x3", "x4")


def cols_pass():
    r = R.var["x0"]
    emit("VPADDD %s, %s, %s" % (const(1 << 19), r, r))
    butterfly("x0", "x1")
    shift("x0", 2, "VPSRAD")
    shift("x1", 2, "VPSRAD")
    dctbox("x2", "x3", c(SQRT2INV_COS6, 12), -c(SQRT2INV_SIN6, 12), 13)
    butterfly("x1", "x2")
    butterfly("x0", "x3")
    butterfly("x7", "x4")
    shift("x5", 13, "VPSRAD")
    mulc("x5", c(SQRT2INV, 14))
    shift("x6", 13, "VPSRAD")
    mulc("x6", c(SQRT2INV, 14))
    butterfly("x7", "x5")
    butterfly("x4", "x6")
    dctbox("x4", "x7", c(COS3, 12), -c(SIN3, 12), 14)
    dctbox("x5", "x6", c(COS1, 12), -c(SIN1, 12), 14)
    butterfly("x0", "x7")
    butterfly("x1", "x6")
    butterfly("x2", "x5")
    butterfly("x3", "x4")
    for k in range(8):
        shift("x%d" % k, 18, "VPSRAD")


def transpose(src, dst):
    """Transposes the 8×8 int32 matrix whose rows are the values src[0..7]
    into the values dst[0..7] (dst[k] = column k)."""
    rows = [R.var.pop(n) for n in src]
    t = []
    for k in range(4):
        a, b = rows[2 * k], rows[2 * k + 1]
        lo, hi = R.take(), R.take()
        emit("VPUNPCKLDQ %s, %s, %s" % (b, a, lo))
        emit("VPUNPCKHDQ %s, %s, %s" % (b, a, hi))
        t += [lo, hi]
    for reg in rows:
        R.free.append(reg)
    u = []
    for half in range(2):
        t0, t1, t2, t3 = t[4 * half:4 * half + 4]
        regs = [R.take() for _ in range(4)]
        emit("VPUNPCKLQDQ %s, %s, %s" % (t2, t0, regs[0]))  # column 0 / 4
        emit("VPUNPCKHQDQ %s, %s, %s" % (t2, t0, regs[1]))  # column 1 / 5
        emit("VPUNPCKLQDQ %s, %s, %s" % (t3, t1, regs[2]))  # column 2 / 6
        emit("VPUNPCKHQDQ %s, %s, %s" % (t3, t1, regs[3]))  # column 3 / 7
        u.append(regs)
    for reg in t:
        R.free.append(reg)
    for k in range(4):
        lo, hi = u[0][k], u[1][k]
        d0, d1 = R.take(), R.take()
        emit("VPERM2I128 $0x20, %s, %s, %s" % (hi, lo, d0))
        emit("VPERM2I128 $0x31, %s, %s, %s" % (hi, lo, d1))
        R.var[dst[k]] = d0
        R.var[dst[k + 4]] = d1
    for regs in u:
        for reg in regs:
            R.free.append(reg)


# image/jpeg's order of a row's (or column's) elements among x0..x7.
ORDER = ["x0", "x7", "x2", "x5", "x1", "x6", "x3", "x4"]


def main():
    emit("MOVQ coef+0(FP), SI")
    emit("MOVQ q+8(FP), DX")
    emit("MOVQ dst+16(FP), DI")
    emit("MOVQ stride+24(FP), CX")
    # Dequantise: row r = sign-extended coefficients × quantisation steps.
    for r in range(8):
        reg = R.take()
        emit("VPMOVSXWD %d(SI), %s" % (16 * r, reg))
        emit("VPMULLD %d(DX), %s, %s" % (32 * r, reg, reg))
        R.var["r%d" % r] = reg
    # Rows: lane i of value ORDER[k] is element k of row i.
    transpose(["r%d" % r for r in range(8)], ORDER)
    rows_pass()
    # Columns: lane i of value ORDER[r] is column i of row r's output x_r.
    transpose(["x%d" % k for k in range(8)], ["c%d" % k for k in range(8)])
    for k in range(8):
        R.var[ORDER[k]] = R.var.pop("c%d" % k)
    cols_pass()
    # Output row r is x_r; clamp to [-128, 127], add 128, store 8 bytes.
    bias = R.take()
    emit("VPBROADCASTB %s, %s" % ("idctbias<>(SB)", bias))
    for r in range(0, 8, 2):
        a, b = R.var["x%d" % r], R.var["x%d" % (r + 1)]
        p = R.take()
        emit("VPACKSSDW %s, %s, %s" % (b, a, p))       # [a0-3 b0-3 | a4-7 b4-7]
        emit("VPERMQ $0xd8, %s, %s" % (p, p))           # [a0-7 | b0-7] int16
        x = "X" + p[1:]
        hi = R.take()
        xhi = "X" + hi[1:]
        emit("VEXTRACTI128 $1, %s, %s" % (p, xhi))
        emit("VPACKSSWB %s, %s, %s" % (xhi, x, x))      # [a0-7 b0-7] int8
        emit("VPXOR %s, %s, %s" % ("X" + bias[1:], x, x))
        emit("VMOVQ %s, (DI)" % x)
        emit("ADDQ CX, DI")
        emit("VPEXTRQ $1, %s, (DI)" % x)
        emit("ADDQ CX, DI")
        R.free += [p, hi]
    emit("VZEROUPPER")
    emit("RET")

    w = sys.stdout.write
    w("// Code generated by scripts/gen_jpeg_idct.py; DO NOT EDIT.\n\n")
    w("//go:build amd64 && !purego\n\n")
    w('#include "textflag.h"\n\n')
    w("// Each constant is 8 lanes of one int32.\n")
    for v, off in sorted(consts.items(), key=lambda kv: kv[1]):
        for lane in range(8):
            w("DATA idctconsts<>+%d(SB)/4, $%d\n" % (off + 4 * lane, v))
    w("GLOBL idctconsts<>(SB), RODATA|NOPTR, $%d\n\n" % (32 * len(consts)))
    w("DATA idctbias<>+0(SB)/1, $0x80\n")
    w("GLOBL idctbias<>(SB), RODATA|NOPTR, $1\n\n")
    w("// func idctAVX2(coef *[64]int16, q *[64]int32, dst *byte, stride int)\n")
    w("TEXT ·idctAVX2(SB), NOSPLIT, $0-32\n")
    w("\n".join(out) + "\n")


main()
