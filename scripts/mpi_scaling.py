#!/usr/bin/python3
"""Measures data-parallel training over MPI on this machine and projects it
to a cluster.

    go build -tags mpi -o /tmp/vit-train-mpi ./cmd/vit-train
    /usr/bin/python3 scripts/mpi_scaling.py --vit-train /tmp/vit-train-mpi

Each round runs `vit-train bench --json` for every model twice, interleaved:
one process with 2 threads, and `mpirun -np 2` with one thread per process
(each process takes the per-process batch, so the job trains twice as many
images per step). Reported: images/s of both (medians over rounds; the
2-process steps average the gradients during the backward pass, as
training does), and for the 2-process job the step that averages the
gradients after the backward pass with the time of its allreduce, the step
that averages them bucket by bucket during the backward pass with what is
left to wait for after it (this includes waiting for the slower process),
and the bytes each process sends per step.

The projection takes the measured compute time of one step of one machine
(one process, 2 threads, the per-process batch) and adds a ring allreduce
of the gradients without overlap, for N machines on a network of bandwidth
B and per-message latency alpha:

    t_allreduce(N) = 2 (N-1)/N * S / B + 2 (N-1) * alpha,    S = 4 * params bytes

Each process sends (and receives) 2 (N-1)/N * S bytes per step. The job
trains N * batch images in t_compute + t_allreduce(N).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

DEFAULT_MODELS = "vit_cifar_patch4_32:64,vit_base_patch16_224:4"


def bench(binary, model, batch, steps, ranks):
    cmd = [binary, "bench", "--model", model, "--batch", str(batch), "--steps", str(steps), "--json"]
    env = dict(os.environ)
    if ranks > 1:
        env["GOMAXPROCS"] = "1"
        env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        launcher = ["mpirun", "--oversubscribe", "-np", str(ranks), "-x", "GOMAXPROCS"]
        if os.geteuid() == 0:
            launcher.insert(1, "--allow-run-as-root")
        cmd = launcher + cmd
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def ring_seconds(grad_bytes, nodes, gbit, alpha):
    if nodes <= 1:
        return 0.0
    return 2 * (nodes - 1) / nodes * grad_bytes / (gbit * 1e9 / 8) + 2 * (nodes - 1) * alpha


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vit-train", required=True, help="a vit-train binary built with -tags mpi")
    p.add_argument("--models", default=DEFAULT_MODELS, help="model:per-process batch, comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=5, help="timed steps per bench")
    p.add_argument("--alpha-us", type=float, default=10.0, help="per-message latency in microseconds")
    args = p.parse_args()

    models = [(m.split(":")[0], int(m.split(":")[1])) for m in args.models.split(",")]
    runs = {m: {1: [], 2: []} for m, _ in models}
    for r in range(args.rounds):
        for model, batch in models:
            for ranks in (1, 2):
                res = bench(args.vit_train, model, batch, args.steps, ranks)
                runs[model][ranks].append(res)
                print(f"round {r + 1}: {model} batch {batch} × {ranks} process(es): {res['train_images_per_s']:.2f} images/s", file=sys.stderr)

    proc = runs[models[0][0]][1][0]["processor"]
    print(f"processor: {proc['name']} (family {proc['family']} model {proc['model']}); medians of {args.rounds} rounds")
    print()
    print("| model | per-process batch | 1 process × 2 threads, img/s | 2 processes × 1 thread, img/s | ratio | step averaging after the backward pass, ms | of it in the allreduce, ms | step averaging during the backward pass, ms | of it waiting after the backward pass, ms | bytes sent per process and step |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model, batch in models:
        med = lambda key, ranks: statistics.median(r[key] for r in runs[model][ranks])
        one, two = med("train_images_per_s", 1), med("train_images_per_s", 2)
        after, ar = med("no_overlap_ms_per_step", 2), med("allreduce_ms_per_step", 2)
        during, wait = med("train_ms_per_step", 2), med("exposed_allreduce_ms_per_step", 2)
        s = runs[model][2][0]["grad_bytes"]
        print(f"| {model} | {batch} | {one:.2f} | {two:.2f} | {two / one:.2f} | {after:.0f} | {ar:.1f} | {during:.0f} | {wait:.1f} | "
              f"{2 * (2 - 1) / 2 * s / 1e6:.1f} MB |")

    print()
    print(f"Projection: one machine (measured, 1 process × 2 threads) per node, ring allreduce without overlap, latency {args.alpha_us:g} µs per message.")
    print()
    print("| model | per-node batch | compute ms/step | nodes | network | MB sent per node and step | allreduce ms | step ms | images/s | efficiency |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model, batch in models:
        compute = statistics.median(r["train_ms_per_step"] for r in runs[model][1]) / 1e3
        s = runs[model][1][0]["grad_bytes"]
        for nodes in (8, 64, 256):
            for gbit in (25, 100):
                ar = ring_seconds(s, nodes, gbit, args.alpha_us * 1e-6)
                step = compute + ar
                sent = 2 * (nodes - 1) / nodes * s / 1e6
                print(f"| {model} | {batch} | {compute * 1e3:.0f} | {nodes} | {gbit} Gb/s | {sent:.1f} | {ar * 1e3:.1f} | {step * 1e3:.0f} | "
                      f"{nodes * batch / step:.0f} | {100 * compute / step:.0f}% |")


if __name__ == "__main__":
    main()
