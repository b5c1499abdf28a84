#!/usr/bin/python3
"""Times vit-train and PyTorch side by side: the same ViTs, the same batch,
the same threads and the same OPENBLAS_CORETYPE, interleaved in one run so
that both see the same machine.

    go build -o /tmp/vit-train ./cmd/vit-train
    /usr/bin/python3 scripts/compare_pytorch.py --vit-train /tmp/vit-train
    /usr/bin/python3 scripts/compare_pytorch.py --vit-train /tmp/vit-train \\
        --models vit_cifar_patch4_32:64 --rounds 5 --coretype SkylakeX

Each round runs `vit-train bench --json` and then one PyTorch process for
every model. PyTorch is Debian's python3-torch with Debian's OpenMP OpenBLAS
(libopenblas0-openmp, selected through LD_LIBRARY_PATH), the configuration
in which it is fastest on CPU; the script prints the BLAS library each torch
process actually loaded and the threads it used, and refuses to compare
against any other BLAS unless --allow-other-blas is given.

Reported per side: the median over rounds of each round's median step, the
best single step, and the ratio vit-train / PyTorch of the medians (above 1
means vit-train is faster). Training is a full step (forward, backward,
AdamW); inference is a forward pass in evaluation mode without gradients.
Beside each ratio, in brackets, is a 95% t interval over the rounds: each
round gives a pair (its median step on each side, measured one after the
other), and the interval is that of the geometric mean of the rounds'
ratios, exp(m ± t(0.975, rounds − 1)·s/√rounds) with m and s the mean and
standard deviation of their logarithms. It needs two rounds or more; with
the default three its t is 4.30, so it is wide unless the rounds agree.

--mixed adds two sides to every round: vit-train with model.precision=mixed
(its products in the processor's fastest low-precision format) and PyTorch
under bfloat16 autocast (torch.autocast("cpu", dtype=torch.bfloat16)). The
mixed table gives vit-train mixed against its own float32 and against the
faster of PyTorch's two configurations, each measured in the same round.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

OPENMP_OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

MODELS = {
    "vit_cifar_patch4_32": dict(img=32, patch=4, chans=3, dim=192, depth=6, heads=3, mlp=768, classes=10),
    "vit_fmnist_patch4_28": dict(img=28, patch=4, chans=1, dim=64, depth=4, heads=4, mlp=128, classes=10),
    "vit_base_patch16_224": dict(img=224, patch=16, chans=3, dim=768, depth=12, heads=12, mlp=3072, classes=1000),
}
# ViT-B/16 at batch 32 shows training with the products dominant; at batch 4
# the optimiser's fixed cost per step hides them.
DEFAULT_MODELS = "vit_fmnist_patch4_28:128,vit_cifar_patch4_32:64,vit_base_patch16_224:4,vit_base_patch16_224:32"


def torch_worker(args):
    """Runs in a child process whose environment already selects the BLAS."""
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from make_golden import ViT

    import contextlib

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if args.autocast else contextlib.nullcontext
    cfg = MODELS[args.model]
    model = ViT(qkv_bias=True, distilled=False, **cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    x = torch.randn(args.batch, cfg["chans"], cfg["img"], cfg["img"])
    y = torch.randint(0, cfg["classes"], (args.batch,))

    def train_step():
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    def infer():
        with autocast():
            model(x)

    def timed(fn):
        ms = []
        for _ in range(args.steps):
            t = time.perf_counter()
            fn()
            ms.append(1e3 * (time.perf_counter() - t))
        return ms

    model.train()
    for _ in range(2):
        train_step()
    train_ms = timed(train_step)
    model.eval()
    with torch.no_grad():
        infer()
        infer_ms = timed(infer)
    print(json.dumps({
        "threads": torch.get_num_threads(),
        "blas": loaded_blas(),
        "train_step_ms": train_ms,
        "infer_batch_ms": infer_ms,
    }))


def loaded_blas():
    """The BLAS shared objects mapped into this process."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in os.path.basename(path) and path.startswith("/"):
                libs.add(os.path.realpath(path))
    return sorted(libs)


def run_json(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def side_env(threads, coretype, torch_side):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["GOMAXPROCS"] = str(threads)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    if torch_side:
        env["LD_LIBRARY_PATH"] = OPENMP_OPENBLAS + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def processor_text(p):
    """vit-train bench's processor record as "name (family F model M)"."""
    if not p:
        return ""
    return f"{p['name']} (family {p['family']} model {p['model']})"


def t_quantile(p, df):
    """The p-quantile, 0.5 < p < 1, of Student's t distribution with df > 0
    degrees of freedom: bisection on its distribution function."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2 * hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def t_cdf(t, df):
    """Student's t distribution function at t ≥ 0: 1 − I_x(df/2, 1/2)/2 with
    x = df/(df + t²)."""
    return 1 - reg_inc_beta(df / (df + t * t), df / 2, 0.5) / 2


def reg_inc_beta(x, a, b):
    """The regularized incomplete beta function I_x(a, b), by its continued
    fraction (modified Lentz), taken on the side where it converges fast."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b))
    if x < (a + 1) / (a + b + 2):
        return front * beta_fraction(x, a, b) / a
    return 1 - front * beta_fraction(1 - x, b, a) / b


def beta_fraction(x, a, b):
    """The continued fraction of I_x(a, b), by the modified Lentz method, two
    terms (an even and an odd) a step until a step changes it by less than
    1e-16."""
    tiny = 1e-300
    clamp = lambda v: v if abs(v) > tiny else tiny
    c, d = 1.0, 1 / clamp(1 - (a + b) * x / (a + 1))
    h = d
    for m in range(1, 1000):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 / clamp(1 + aa * d)
            c = clamp(1 + aa / c)
            h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return h


def paired_ratio(ms, ref_ms):
    """The rounds' speed ratios ref_ms[r] / ms[r] (each round's median step on
    the two sides): their geometric mean and its 95% t interval, (mean, low,
    high), the bounds None for a single round."""
    logs = [math.log(r / m) for m, r in zip(ms, ref_ms)]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), None, None
    half = t_quantile(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def summarise(rounds, key, batch):
    """One side's steps of one kind over the rounds: each round's median
    step in round order (round_ms, which paired_ratio pairs with the other
    side's), their median, the best single step, and both as images/s."""
    medians = [statistics.median(r[key]) for r in rounds]
    best = min(min(r[key]) for r in rounds)
    med = statistics.median(medians)
    return {"round_ms": medians, "median_ms": med, "best_ms": best,
            "median_img_s": batch * 1e3 / med, "best_img_s": batch * 1e3 / best}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vit-train", required=False, help="path to a built vit-train binary")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="comma-separated model:batch pairs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="timed steps per round (0: 10, or 3 for vit_base)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--coretype", default=os.environ.get("OPENBLAS_CORETYPE", ""),
                    help="OPENBLAS_CORETYPE for both sides (default: the environment's)")
    ap.add_argument("--allow-other-blas", action="store_true",
                    help="compare even if torch did not load the OpenMP OpenBLAS")
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                    help="the Python with Debian's python3-torch (default: /usr/bin/python3)")
    ap.add_argument("--mixed", action="store_true",
                    help="also time vit-train with model.precision=mixed and PyTorch under bfloat16 autocast")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--autocast", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_worker:
        return torch_worker(args)
    if not args.vit_train:
        ap.error("--vit-train is required")
    if not os.path.isdir(OPENMP_OPENBLAS) and not args.allow_other_blas:
        sys.exit(f"{OPENMP_OPENBLAS} is missing: apt-get install libopenblas0-openmp")

    pairs = []
    for item in args.models.split(","):
        name, _, batch = item.partition(":")
        if name not in MODELS or not batch.isdigit():
            sys.exit(f"--models: {item!r} is not model:batch with a model from {sorted(MODELS)}")
        pairs.append((name, int(batch)))

    sides = [("go", []), ("torch", [])]
    if args.mixed:
        sides += [("go_mixed", ["--set", "model.precision=mixed"]), ("torch_bf16", ["--autocast"])]
    results = {}
    for rnd in range(args.rounds):
        for name, batch in pairs:
            steps = args.steps or (3 if name == "vit_base_patch16_224" else 10)
            r = results.setdefault((name, batch), {"batch": batch, **{side: [] for side, _ in sides}})
            for side, extra in sides:
                if side.startswith("go"):
                    out = run_json([args.vit_train, "bench", "--json", "--model", name, "--batch", str(batch),
                                    "--steps", str(steps)] + extra, side_env(args.threads, args.coretype, False))
                else:
                    out = run_json([args.python, os.path.abspath(__file__), "--torch-worker", "--model", name,
                                    "--batch", str(batch), "--steps", str(steps), "--threads", str(args.threads)] + extra,
                                   side_env(args.threads, args.coretype, True))
                    if not any("openblas-openmp" in lib for lib in out["blas"]) and not args.allow_other_blas:
                        sys.exit(f"torch loaded {out['blas']}, not the OpenMP OpenBLAS under {OPENMP_OPENBLAS}")
                r[side].append(out)
                print(f"round {rnd + 1}/{args.rounds} {name} {side}: threads {out['threads']}, {out['blas']}: "
                      f"train {statistics.median(out['train_step_ms']):.1f} ms, infer {statistics.median(out['infer_batch_ms']):.1f} ms",
                      file=sys.stderr, flush=True)

    summary = []
    for (name, _), r in results.items():
        row = {"model": name, "batch": r["batch"], "coretype": args.coretype or "(unset)", "threads": args.threads,
               "vit_train_blas": r["go"][0]["blas"], "processor": processor_text(r["go"][0].get("processor"))}
        for kind, key in (("train", "train_step_ms"), ("infer", "infer_batch_ms")):
            k = {side: summarise(r[side], key, r["batch"]) for side, _ in sides}
            k["ratio"] = k["go"]["median_img_s"] / k["torch"]["median_img_s"]
            k["ratio_rounds"] = paired_ratio(k["go"]["round_ms"], k["torch"]["round_ms"])
            if args.mixed:
                best = max(("torch", "torch_bf16"), key=lambda side: k[side]["median_img_s"])
                k["best_torch"] = best
                k["mixed_vs_fp32"] = k["go_mixed"]["median_img_s"] / k["go"]["median_img_s"]
                k["mixed_vs_fp32_rounds"] = paired_ratio(k["go_mixed"]["round_ms"], k["go"]["round_ms"])
                k["mixed_vs_best_torch"] = k["go_mixed"]["median_img_s"] / k[best]["median_img_s"]
                k["mixed_vs_best_torch_rounds"] = paired_ratio(k["go_mixed"]["round_ms"], k[best]["round_ms"])
            row[kind] = k
        row["train_gflop_per_s"] = statistics.median(x["train_gflop_per_s"] for x in r["go"])
        row["peak_rss_bytes"] = max(x["peak_rss_bytes"] for x in r["go"])
        summary.append(row)
    if args.json:
        print(json.dumps(summary, indent=1))
        return
    cell = lambda s: f"{s['median_img_s']:.4g} ({s['best_img_s']:.4g})"
    print(f"processor: {summary[0]['processor'] or 'see /proc/cpuinfo'}; OPENBLAS_CORETYPE={args.coretype or '(unset)'}, "
          f"{args.threads} threads, {args.rounds} rounds, img/s from medians (best step in brackets); ratio = vit-train / PyTorch "
          f"of the medians [95% t interval of the rounds' geometric mean ratio]")
    print("| model, batch | vit-train train | PyTorch train | ratio | vit-train infer | PyTorch infer | ratio |")
    print("|---|---|---|---|---|---|---|")
    for row in summary:
        cells = []
        for kind in ("train", "infer"):
            k = row[kind]
            cells += [cell(k["go"]), cell(k["torch"]), ratio_cell(k["ratio"], k["ratio_rounds"])]
        print(f"| {row['model']}, {row['batch']} | " + " | ".join(cells) + " |")
    if not args.mixed:
        return
    print()
    print("mixed precision: vit-train model.precision=mixed against its float32 and against the faster of "
          "PyTorch float32 and PyTorch bfloat16 autocast")
    print("| model, batch | | vit-train mixed | PyTorch bf16 autocast | × vit-train fp32 | × best PyTorch |")
    print("|---|---|---|---|---|---|")
    for row in summary:
        for kind in ("train", "infer"):
            k = row[kind]
            print(f"| {row['model']}, {row['batch']} | {kind} | {cell(k['go_mixed'])} | {cell(k['torch_bf16'])} | "
                  f"{ratio_cell(k['mixed_vs_fp32'], k['mixed_vs_fp32_rounds'])} | "
                  f"{ratio_cell(k['mixed_vs_best_torch'], k['mixed_vs_best_torch_rounds'])} |")


def ratio_cell(ratio, rounds):
    """A ratio of medians with the rounds' interval (paired_ratio) in brackets."""
    _, low, high = rounds
    if low is None:
        return f"{ratio:.2f}"
    return f"{ratio:.2f} [{low:.2f}, {high:.2f}]"

if __name__ == "__main__":
    main()
