#!/usr/bin/python3
"""Compares the training losses of model.precision=mixed with float32's, step
by step, and with controls that say how far any perturbation of the same size
carries the run:

    go build -o /tmp/vit-train ./cmd/vit-train
    go build -tags openblas -o /tmp/vit-train-openblas ./cmd/vit-train
    /usr/bin/python3 scripts/precision_parity.py --vit-train /tmp/vit-train \\
        --openblas /tmp/vit-train-openblas --seeds 0,1,2 --steps 200

Every arm trains the same config (default configs/fashion_mnist_full.yaml)
with the same seed, logging every step, and is stopped once it has logged
--steps steps:

- fp32: the reference.
- mixed: --set model.precision=mixed (bf16 or fp16 products).
- openblas: float32 through OpenBLAS (--openblas), whose sums run in
  another order: the spread of float32 rounding alone.
- rounded: float32, stopped (SIGTERM) once it has logged a step, its
  weights (not AdamW's moments) rounded once to bfloat16, nearest even, and
  resumed: one perturbation of bfloat16's size, then float32 arithmetic.
  Its log says after which step.

For each arm and seed it prints, against fp32: the first step whose loss
differs, the median and largest per-step |loss - fp32| / fp32, how many steps
are within 1%, and the same difference for the mean loss of each quarter of
the steps. The runs are written under --work and kept.
"""
import argparse
import array
import csv
import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC32C = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def round_weights_to_bf16(path):
    """Rounds every float32 tensor of the checkpoint at path except the
    optimiser's ("optim.*") to bfloat16 (nearest even, kept in float32) and
    rewrites their CRC-32C entries; returns how many values changed and the
    step the checkpoint was taken at."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = bytearray(blob[8 + n :])
    meta = header["__metadata__"]
    sums = json.loads(meta["crc32c"])
    changed = 0
    for name, info in header.items():
        if name == "__metadata__" or name.startswith("optim.") or info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        words = array.array("I", bytes(data[begin:end]))
        for i, w in enumerate(words):
            r = (w + 0x7FFF + ((w >> 16) & 1)) & 0xFFFF0000
            if r != w:
                words[i] = r
                changed += 1
        raw = words.tobytes()
        data[begin:end] = raw
        sums[name] = "%08x" % crc32c(raw)
    meta["crc32c"] = json.dumps(sums, separators=(",", ":"))
    out = json.dumps(header, separators=(",", ":")).encode()
    out += b" " * (-len(out) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(out)) + out + bytes(data))
    os.replace(tmp, path)
    return changed, json.loads(meta["vit_train.state"])["step"]


def logged_steps(out):
    try:
        with open(os.path.join(out, "steps.csv")) as f:
            return sum(1 for _ in f) - 1
    except FileNotFoundError:
        return 0


def run_until(cmd, out, steps, log):
    """Runs cmd and stops it (SIGTERM, which saves a checkpoint) once the run
    in out has logged steps steps; fails if it ends first."""
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    while proc.poll() is None and logged_steps(out) < steps:
        time.sleep(0.2)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
    if logged_steps(out) < steps:
        sys.exit(f"{' '.join(cmd)} ended after {logged_steps(out)} of {steps} steps; see {log.name}")


def train_cmd(binary, args, out, seed, *sets):
    cmd = [binary, "train", "--config", args.config, "--out", out, "--set", "progress=false",
           "--set", f"seed={seed}", "--set", "log_every=1"]
    for s in sets:
        cmd += ["--set", s]
    return cmd


def run_arm(args, arm, seed):
    out = os.path.join(args.work, f"{arm}-s{seed}")
    if logged_steps(out) >= args.steps:
        return out
    shutil.rmtree(out, ignore_errors=True)
    with open(out + ".log", "w") as log:
        if arm == "fp32":
            run_until(train_cmd(args.vit_train, args, out, seed), out, args.steps, log)
        elif arm == "mixed":
            run_until(train_cmd(args.vit_train, args, out, seed, "model.precision=mixed"), out, args.steps, log)
        elif arm == "openblas":
            run_until(train_cmd(args.openblas, args, out, seed), out, args.steps, log)
        elif arm == "rounded":
            run_until(train_cmd(args.vit_train, args, out, seed), out, 1, log)
            changed, step = round_weights_to_bf16(os.path.join(out, "last.safetensors"))
            log.write(f"rounded {changed} weights to bfloat16 after step {step}\n")
            log.flush()
            run_until([args.vit_train, "train", "--out", out, "--resume"], out, args.steps, log)
    return out


def losses(out, steps):
    with open(os.path.join(out, "steps.csv")) as f:
        by_step = {int(r["step"]): float(r["loss"]) for r in csv.DictReader(f)}
    return [by_step[s] for s in range(1, steps + 1)]


def compare(ref, other):
    rel = [abs(o - r) / r for r, o in zip(ref, other)]
    first = next((i + 1 for i, (r, o) in enumerate(zip(ref, other)) if r != o), None)
    q = len(ref) // 4
    quarters = []
    for a in range(0, 4 * q, q):
        mr, mo = statistics.mean(ref[a : a + q]), statistics.mean(other[a : a + q])
        quarters.append(abs(mo - mr) / mr)
    return first, statistics.median(rel), max(rel), sum(r <= 0.01 for r in rel), quarters


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vit-train", required=True, help="vit-train binary, default build")
    p.add_argument("--openblas", help="vit-train built with -tags openblas (the openblas arm)")
    p.add_argument("--config", default=os.path.join(REPO, "configs", "fashion_mnist_full.yaml"))
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--work", default="/tmp/precision_parity")
    args = p.parse_args()
    if args.steps < 4:
        sys.exit(f"--steps {args.steps}: want at least 4")
    os.makedirs(args.work, exist_ok=True)
    arms = ["mixed"] + (["openblas"] if args.openblas else []) + ["rounded"]
    print(f"{args.config}, first {args.steps} steps; each arm against fp32 of the same seed")
    print("| arm | seed | first differing step | median | max | steps within 1% | quarters' mean loss |")
    print("|---|---|---|---|---|---|---|")
    for seed in [int(s) for s in args.seeds.split(",")]:
        ref = losses(run_arm(args, "fp32", seed), args.steps)
        for arm in arms:
            first, med, big, within, quarters = compare(ref, losses(run_arm(args, arm, seed), args.steps))
            qs = ", ".join(f"{100 * x:.2f}%" for x in quarters)
            print(f"| {arm} | {seed} | {first or 'none'} | {100 * med:.2f}% | {100 * big:.1f}% | "
                  f"{within}/{args.steps} | {qs} |", flush=True)


if __name__ == "__main__":
    main()
