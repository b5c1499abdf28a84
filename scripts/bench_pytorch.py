#!/usr/bin/env python3
"""Times PyTorch training steps (forward, backward, AdamW) and inference of
the same ViTs `vit-train bench` times, for a like-for-like comparison.

    /usr/bin/python3 scripts/bench_pytorch.py --threads 2
    /usr/bin/python3 scripts/bench_pytorch.py --model vit_base_patch16_224 --batch 4 --steps 5

Uses Debian's python3-torch. The model is make_golden.py's timm-layout ViT.
OPENBLAS_CORETYPE (and the OpenMP/BLAS thread count) are taken from the
environment: run vit-train under the same setting.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import ViT  # noqa: E402

MODELS = {
    "vit_cifar_patch4_32": dict(img=32, patch=4, chans=3, dim=192, depth=6, heads=3, mlp=768, classes=10),
    "vit_fmnist_patch4_28": dict(img=28, patch=4, chans=1, dim=64, depth=4, heads=4, mlp=128, classes=10),
    "vit_base_patch16_224": dict(img=224, patch=16, chans=3, dim=768, depth=12, heads=12, mlp=3072, classes=1000),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="vit_cifar_patch4_32", choices=sorted(MODELS))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = MODELS[args.model]
    model = ViT(qkv_bias=True, distilled=False, **cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    x = torch.randn(args.batch, cfg["chans"], cfg["img"], cfg["img"])
    y = torch.randint(0, cfg["classes"], (args.batch,))

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    model.train()
    for _ in range(2):
        train_step()
    t = time.perf_counter()
    for _ in range(args.steps):
        train_step()
    train_s = (time.perf_counter() - t) / args.steps

    model.eval()
    with torch.no_grad():
        model(x)
        t = time.perf_counter()
        for _ in range(args.steps):
            model(x)
        infer_s = (time.perf_counter() - t) / args.steps
    print(json.dumps({
        "model": args.model, "batch": args.batch, "threads": torch.get_num_threads(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "train_ms_per_step": 1e3 * train_s, "train_images_per_s": args.batch / train_s,
        "infer_ms_per_batch": 1e3 * infer_s, "infer_images_per_s": args.batch / infer_s,
    }))


if __name__ == "__main__":
    main()
