#!/usr/bin/python3
"""Golden data for interop: PyTorch references for vit-train's import,
export and position-embedding resampling.

    /usr/bin/python3 scripts/make_golden.py [--out interop/testdata/golden]
    /usr/bin/python3 scripts/make_golden.py check-export FILE --config plain|dist

The first form writes, for two tiny models in timm's VisionTransformer layout
(a ViT with qkv bias and a DeiT distilled model without), their seeded weights
as safetensors (F32, plus F16 or BF16 copies), the ViT's weights as a Google
vit_jax .npz (the inverse of timm's _load_weights), a few input
images with their logits computed in float64, position embeddings resampled
with F.interpolate(antialias=True) as timm's resample_abs_pos_embed does,
arrays saved by NumPy (np.save, np.savez, Fortran order, format 2.0) for the
.npy/.npz reader, and the smallest ViT as fuzzing seeds (tiny.*).

check-export loads a file written by `vit-train export` into the same torch
model with load_state_dict(strict=True) and checks its logits against the
stored ones.

timm and the safetensors package are not needed: the model below is a minimal
copy of timm's ViT (PatchEmbed conv, cls/dist tokens, pos_embed, pre-LN blocks
with fused qkv, exact GELU, LayerNorm eps 1e-6) and safetensors files are
written and read with struct and json.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {
    # name: img, patch, chans, dim, depth, heads, mlp, classes, qkv_bias, distilled
    "plain": dict(img=16, patch=4, chans=3, dim=24, depth=2, heads=3, mlp=48, classes=5, qkv_bias=True, distilled=False),
    "dist": dict(img=12, patch=4, chans=3, dim=16, depth=2, heads=2, mlp=40, classes=4, qkv_bias=False, distilled=True),
}
FILE_STEM = {"plain": "vit_plain", "dist": "deit_dist"}
# The smallest ViT, as fuzzing seeds for the importers.
TINY = dict(img=4, patch=2, chans=1, dim=4, depth=1, heads=2, mlp=4, classes=2, qkv_bias=True, distilled=False)
BATCH = 3


class Attention(nn.Module):
    def __init__(self, dim, heads, qkv_bias):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp, qkv_bias):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads, qkv_bias)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, mlp)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, patch, chans, dim):
        super().__init__()
        self.proj = nn.Conv2d(chans, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # (B, N, D)


class ViT(nn.Module):
    """timm's VisionTransformer (class token) or DeiT's distilled variant."""

    def __init__(self, img, patch, chans, dim, depth, heads, mlp, classes, qkv_bias, distilled):
        super().__init__()
        self.distilled = distilled
        prefix = 2 if distilled else 1
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        if distilled:
            self.dist_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, prefix + (img // patch) ** 2, dim))
        self.patch_embed = PatchEmbed(patch, chans, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp, qkv_bias) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)
        if distilled:
            self.head_dist = nn.Linear(dim, classes)

    def heads(self, x):
        x = self.patch_embed(x)
        tokens = [self.cls_token.expand(x.shape[0], -1, -1)]
        if self.distilled:
            tokens.append(self.dist_token.expand(x.shape[0], -1, -1))
        x = torch.cat(tokens + [x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        cls = self.head(x[:, 0])
        return cls, (self.head_dist(x[:, 1]) if self.distilled else None)

    def forward(self, x):
        cls, dist = self.heads(x)
        return cls if dist is None else (cls + dist) / 2  # DeiT at eval


def randomize(model, gen):
    """Non-trivial values everywhere, LayerNorm scales included."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=gen))
            elif p.dim() >= 2 and "token" not in name and "pos_embed" not in name:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=gen) / fan_in ** 0.5)
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))


# ---- safetensors, written and read with struct and json ----

def st_write(path, tensors, metadata=None):
    """tensors: name -> (dtype string, shape, bytes)."""
    header, offset, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        dtype, shape, blob = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def st_read(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    np_types = {"F32": np.float32, "F64": np.float64, "F16": np.float16}
    out = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        arr = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.dtype(np_types[info["dtype"]]).newbyteorder("<"))
        out[name] = torch.from_numpy(arr.astype(np.float32).reshape(info["shape"]))
    return out, meta


def encode(t, dtype):
    t = t.detach().contiguous()
    if dtype == "F32":
        return ("F32", t.shape, t.float().numpy().astype("<f4").tobytes())
    if dtype == "F16":
        return ("F16", t.shape, t.half().numpy().astype("<f2").tobytes())
    if dtype == "BF16":
        return ("BF16", t.shape, t.bfloat16().view(torch.int16).numpy().astype("<i2").tobytes())
    raise ValueError(dtype)


def save_state(path, state, dtype):
    st_write(path, {k: encode(v, dtype) for k, v in state.items()}, {"format": "pt"})


# ---- Google big_vision / vit_jax layout: the inverse of timm's _load_weights ----

def to_jax(state, cfg):
    d, h = cfg["dim"], cfg["heads"]
    dh = d // h
    n = lambda t: t.detach().numpy().astype(np.float32)
    w = {
        "embedding/kernel": n(state["patch_embed.proj.weight"].permute(2, 3, 1, 0)),  # (D,C,P,P) -> HWIO
        "embedding/bias": n(state["patch_embed.proj.bias"]),
        "cls": n(state["cls_token"]),
        "Transformer/posembed_input/pos_embedding": n(state["pos_embed"]),
        "Transformer/encoder_norm/scale": n(state["norm.weight"]),
        "Transformer/encoder_norm/bias": n(state["norm.bias"]),
        "head/kernel": n(state["head.weight"].T),
        "head/bias": n(state["head.bias"]),
    }
    for i in range(cfg["depth"]):
        b, s = f"Transformer/encoderblock_{i}/", f"blocks.{i}."
        mha = b + "MultiHeadDotProductAttention_1/"
        w[b + "LayerNorm_0/scale"] = n(state[s + "norm1.weight"])
        w[b + "LayerNorm_0/bias"] = n(state[s + "norm1.bias"])
        qkv_w, qkv_b = state[s + "attn.qkv.weight"], state[s + "attn.qkv.bias"]
        for j, name in enumerate(("query", "key", "value")):
            w[mha + name + "/kernel"] = n(qkv_w[j * d:(j + 1) * d].T.reshape(d, h, dh))
            w[mha + name + "/bias"] = n(qkv_b[j * d:(j + 1) * d].reshape(h, dh))
        w[mha + "out/kernel"] = n(state[s + "attn.proj.weight"].reshape(d, h, dh).permute(1, 2, 0))
        w[mha + "out/bias"] = n(state[s + "attn.proj.bias"])
        w[b + "LayerNorm_2/scale"] = n(state[s + "norm2.weight"])
        w[b + "LayerNorm_2/bias"] = n(state[s + "norm2.bias"])
        for r, fc in enumerate(("fc1", "fc2")):
            w[b + f"MlpBlock_3/Dense_{r}/kernel"] = n(state[s + f"mlp.{fc}.weight"].T)
            w[b + f"MlpBlock_3/Dense_{r}/bias"] = n(state[s + f"mlp.{fc}.bias"])
    return w


def build(name):
    return ViT(**CONFIGS[name]).eval()


def logits(name, state, images):
    """float64 reference logits: (mean of heads, class head, dist head or None)."""
    m64 = build(name)
    m64.load_state_dict(state, strict=True)
    m64.double()
    with torch.no_grad():
        cls, dist = m64.heads(images.double())
        out = cls if dist is None else (cls + dist) / 2
    return out, cls, dist


def write_models(out):
    for seed, name in enumerate(CONFIGS):
        cfg = CONFIGS[name]
        gen = torch.Generator().manual_seed(1000 + seed)
        model = build(name)
        randomize(model, gen)
        state = model.state_dict()
        stem = os.path.join(out, FILE_STEM[name])
        save_state(stem + ".safetensors", state, "F32")
        save_state(stem + ("_f16" if name == "plain" else "_bf16") + ".safetensors", state, "F16" if name == "plain" else "BF16")
        if name == "plain":
            np.savez_compressed(stem + ".npz", **to_jax(state, cfg))
        images = torch.randn((BATCH, cfg["chans"], cfg["img"], cfg["img"]), generator=gen)
        pred, cls, dist = logits(name, state, images)
        io = {"images": encode(images, "F32"), "logits": encode(pred, "F32"), "logits_cls": encode(cls, "F32")}
        if dist is not None:
            io["logits_dist"] = encode(dist, "F32")
        st_write(stem + "_io.safetensors", io, {"config": json.dumps(cfg, sort_keys=True)})
        # float32 torch agrees with the float64 reference to ~1e-6.
        with torch.no_grad():
            err = (model(images) - pred.float()).abs().max().item()
        print(f"{name}: {sum(p.numel() for p in state.values())} params, float32 vs float64 logits {err:.2e}")


RESAMPLE_CASES = [
    # d, prefix, old (h, w), new (h, w)
    (4, 1, (3, 3), (5, 5)),
    (4, 2, (3, 3), (5, 5)),
    (4, 1, (6, 6), (4, 4)),
    (4, 2, (6, 6), (4, 4)),
    (3, 1, (7, 5), (3, 8)),
]


def write_resample(out):
    gen = torch.Generator().manual_seed(7)
    tensors, cases = {}, []
    for i, (d, prefix, old, new) in enumerate(RESAMPLE_CASES):
        pos = torch.randn((1, prefix + old[0] * old[1], d), generator=gen)
        key = f"case{i}"
        tensors[key + ".input"] = encode(pos[0], "F32")
        for mode in ("bicubic", "bilinear"):
            # timm's resample_abs_pos_embed, for a grid of any aspect.
            grid = pos[:, prefix:].reshape(1, old[0], old[1], d).permute(0, 3, 1, 2)
            grid = F.interpolate(grid, size=new, mode=mode, antialias=True, align_corners=False)
            grid = grid.permute(0, 2, 3, 1).reshape(1, new[0] * new[1], d)
            res = torch.cat([pos[:, :prefix], grid], dim=1)
            tensors[f"{key}.{mode}"] = encode(res[0], "F32")
        cases.append({"name": key, "d": d, "prefix": prefix, "old": list(old), "new": list(new)})
    st_write(os.path.join(out, "resample.safetensors"), tensors, {"cases": json.dumps(cases)})
    print(f"resample: {len(cases)} cases")


def write_npy_samples(out):
    """Arrays as NumPy writes them, for the .npy/.npz reader: values i/4 - 1."""
    v = lambda n, dt: (np.arange(n) / 4 - 1).astype(dt)
    arrays = {
        "f4_2x3": v(6, "<f4").reshape(2, 3),
        "Transformer/f8_4": v(4, "<f8"),
        "f2_scalar": np.array(0.75, dtype="<f2"),
        "f4_0x3": np.zeros((0, 3), dtype="<f4"),
        "f4_2x3x4_fortran": np.asfortranarray(v(24, "<f4").reshape(2, 3, 4)),
    }
    np.savez(os.path.join(out, "arrays.npz"), **arrays)
    np.save(os.path.join(out, "f4_2x3.npy"), arrays["f4_2x3"])
    with open(os.path.join(out, "f8_4_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, arrays["Transformer/f8_4"], version=(2, 0))
    print(f"npy samples: {sorted(arrays)}")


def write_tiny(out):
    model = ViT(**TINY)
    randomize(model, torch.Generator().manual_seed(3))
    state = model.state_dict()
    save_state(os.path.join(out, "tiny.safetensors"), state, "F32")
    np.savez(os.path.join(out, "tiny.npz"), **to_jax(state, TINY))
    print(f"tiny: {sum(p.numel() for p in state.values())} params")


def check_export(path, name, golden):
    state, meta = st_read(path)
    if meta.get("format") != "pt":
        sys.exit(f"{path}: metadata {meta}, want format=pt")
    model = build(name)
    model.load_state_dict(state, strict=True)  # raises on missing/unexpected keys or shapes
    io, _ = st_read(os.path.join(golden, FILE_STEM[name] + "_io.safetensors"))
    with torch.no_grad():
        got = model(io["images"])
    err = (got - io["logits"]).abs().max().item()
    print(f"{path}: load_state_dict(strict=True) ok, max |logit diff| {err:.2e}")
    if err > 1e-4:
        sys.exit("logits differ")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    golden = os.path.join(here, "..", "model", "interop", "testdata", "golden")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs="?", default="generate", choices=["generate", "check-export"])
    p.add_argument("file", nargs="?", help="check-export: the exported safetensors file")
    p.add_argument("--config", choices=sorted(CONFIGS), default="plain")
    p.add_argument("--out", default=golden, help="golden data folder")
    a = p.parse_args()
    if a.command == "check-export":
        if not a.file:
            p.error("check-export needs FILE")
        check_export(a.file, a.config, a.out)
        return
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    write_models(a.out)
    write_resample(a.out)
    write_npy_samples(a.out)
    write_tiny(a.out)


if __name__ == "__main__":
    main()
