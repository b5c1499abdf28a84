#!/usr/bin/python3
"""Times PIL on the benchmark photo set, for comparison with BenchmarkPhotos.

    /usr/bin/python3 scripts/pil_photo_bench.py [--photos datasets/photos] [--passes 4]

On one thread, over every JPEG of PHOTOS/train (scripts/make_photo_set.py
writes them), it reports the CPU milliseconds per image of:

  decode    Image.open + convert("RGB") (the JPEG decoded by libjpeg-turbo)
  rrc-flip  decode, then torchvision's RandomResizedCrop(224) (scale
            0.08-1, ratio 3/4-4/3, bicubic, as PIL resizes the crop box),
            a horizontal flip with probability 0.5, ToTensor and Normalize
            (ImageNet's mean and std) with NumPy

Needs Debian's python3-pil and python3-numpy.
"""

import argparse
import glob
import math
import os
import random
import sys
import time

import numpy as np
from PIL import Image

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)


def rrc_box(rng, w, h, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision's RandomResizedCrop.get_params: (left, top, right, bottom)."""
    area = w * h
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(*scale)
        ar = math.exp(rng.uniform(*log_ratio))
        cw = int(round(math.sqrt(target * ar)))
        ch = int(round(math.sqrt(target / ar)))
        if 0 < cw <= w and 0 < ch <= h:
            top = rng.randint(0, h - ch)
            left = rng.randint(0, w - cw)
            return left, top, left + cw, top + ch
    in_ratio = w / h
    if in_ratio < min(ratio):
        cw, ch = w, int(round(w / min(ratio)))
    elif in_ratio > max(ratio):
        ch, cw = h, int(round(h * max(ratio)))
    else:
        cw, ch = w, h
    top, left = (h - ch) // 2, (w - cw) // 2
    return left, top, left + cw, top + ch


def decode(path):
    with Image.open(path) as m:
        return m.convert("RGB")


def rrc_flip(path, rng):
    img = decode(path)
    box = rrc_box(rng, *img.size)
    img = img.resize((224, 224), Image.BICUBIC, box=box)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    x = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255
    return (x - MEAN) / STD


def cpu_ms_per_image(files, passes, fn):
    fn(files[0])  # warm-up: the page cache, PIL's plugins
    start = time.process_time()
    for _ in range(passes):
        for f in files:
            fn(f)
    return (time.process_time() - start) * 1000 / (passes * len(files))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--photos", default="datasets/photos", help="the photo set's folder (default datasets/photos)")
    ap.add_argument("--passes", type=int, default=4, help="passes over the images (default 4)")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.photos, "train", "*", "*.jpg")))
    if not files:
        sys.exit("pil_photo_bench.py: no JPEGs under %s/train; run scripts/make_photo_set.py" % args.photos)
    rng = random.Random(0)
    print("PIL %s, NumPy %s, %d JPEGs, %d passes, one thread" % (Image.__version__, np.__version__, len(files), args.passes))
    print("decode    %.2f cpu-ms/image" % cpu_ms_per_image(files, args.passes, decode))
    print("rrc-flip  %.2f cpu-ms/image" % cpu_ms_per_image(files, args.passes, lambda f: rrc_flip(f, rng)))


if __name__ == "__main__":
    main()
