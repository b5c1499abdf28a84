"""Writes PIL reference outputs for augment's PIL-compatible operations.

Run with a Python that has Pillow and NumPy (Debian: python3-pil, python3-numpy):

    /usr/bin/python3 augment/testdata/pil/gen.py

Output: pil.json next to this script. Each case holds the operation, its
arguments and the RGB output as uint8 rows (HWC); the input is the shared
24x20 image "input".
"""
import json
import math
import os

import numpy as np
import PIL
from PIL import Image, ImageEnhance, ImageOps

rng = np.random.default_rng(7)
H, W = 24, 20
# smooth structure plus noise, so that filters and histograms see real work
yy, xx = np.mgrid[0:H, 0:W]
base = np.stack([
    120 + 80 * np.sin(xx / 3.0),
    90 + 60 * np.cos(yy / 4.0),
    60 + 4 * (xx + yy),
], axis=-1)
arr = np.clip(base + rng.normal(0, 20, size=(H, W, 3)), 0, 255).astype(np.uint8)
img = Image.fromarray(arr, "RGB")
FILL = (124, 116, 104)

cases = []


def add(name, out, **args):
    cases.append({"name": name, "args": args, "h": out.size[1], "w": out.size[0],
                  "pix": np.asarray(out.convert("RGB")).reshape(-1).tolist()})


for interp, f in (("bilinear", Image.BILINEAR), ("bicubic", Image.BICUBIC)):
    add("resize", img.resize((7, 9), f), interp=interp)
    add("resize", img.resize((37, 41), f), interp=interp)
    add("resize", img.resize((13, 30), f), interp=interp)
    # torchvision resized_crop: crop, then resize
    add("resized_crop", img.crop((3, 4, 3 + 14, 4 + 15)).resize((11, 13), f), interp=interp, top=4, left=3, ch=15, cw=14)
    add("resized_crop", img.crop((1, 2, 1 + 9, 2 + 8)).resize((25, 22), f), interp=interp, top=2, left=1, ch=8, cw=9)
    add("rotate", img.rotate(30, resample=f, fillcolor=FILL), interp=interp, deg=30)
    add("rotate", img.rotate(-17.5, resample=f, fillcolor=FILL), interp=interp, deg=-17.5)
    for m in ((1, 0.27, 0, 0, 1, 0), (1, 0, 0, -0.2, 1, 0), (1, 0, 5.4, 0, 1, 0), (1, 0, 0, 0, 1, -7.2)):
        add("affine", img.transform(img.size, Image.AFFINE, m, resample=f, fillcolor=FILL), interp=interp, m=list(m))

add("autocontrast", ImageOps.autocontrast(img))
add("equalize", ImageOps.equalize(img))
add("invert", ImageOps.invert(img))
for bits in (1, 3, 6):
    add("posterize", ImageOps.posterize(img, bits), bits=bits)
for t in (26, 128, 230):
    add("solarize", ImageOps.solarize(img, t), thresh=t)
for name, cls in (("color", ImageEnhance.Color), ("contrast", ImageEnhance.Contrast),
                  ("brightness", ImageEnhance.Brightness), ("sharpness", ImageEnhance.Sharpness)):
    for factor in (0.19, 0.55, 1.72):
        add(name, cls(img).enhance(factor), factor=factor)

out = {"pillow": PIL.__version__, "h": H, "w": W, "input": arr.reshape(-1).tolist(), "cases": cases}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pil.json"), "w") as f:
    json.dump(out, f, separators=(",", ":"))
