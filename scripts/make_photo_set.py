#!/usr/bin/python3
"""Makes the benchmark set of real photographs from Debian's python3-skimage.

    /usr/bin/python3 scripts/make_photo_set.py [--out datasets/photos]

The photographs are the ones python3-skimage ships in skimage/data
(astronaut, chelsea, coffee, motorcycle_left and _right, rocket, retina,
hubble_deep_field, grass, gravel, brick, color, ihc, logo); nothing is
downloaded. Each image of the set is a random crop of one of them (40-100%
of its width, height 0.6-0.9 of the crop's width), rescaled to 500 px wide
(PIL's bicubic) and saved as a JPEG of quality 90, 4:2:0, in a folder named
after its photograph:

    OUT/train/<photo>/NNN.jpg   64 images (--train)
    OUT/val/<photo>/NNN.jpg     16 images (--val)

an ImageNet-style tree that data.dataset=imagefolder and `vit-train
prepare` read. The crops are seeded (--seed): the same package version
gives the same files. The data package's benchmarks read OUT/train when
VIT_TRAIN_PHOTOS names OUT, or when OUT is datasets/photos at the
repository's root.

Without the package (or PIL), the script installs python3-skimage with
apt-get when it runs as root, and otherwise says how to.
"""

import argparse
import importlib.util
import os
import random
import subprocess
import sys

PHOTOS = [
    "astronaut.png", "chelsea.png", "coffee.png", "motorcycle_left.png",
    "motorcycle_right.png", "rocket.jpg", "retina.jpg", "hubble_deep_field.jpg",
    "grass.png", "gravel.png", "brick.png", "color.png", "ihc.png", "logo.png",
]
PACKAGES = ["python3-skimage", "python3-pil"]


def data_folder():
    """Returns skimage/data of the installed package, or None."""
    spec = importlib.util.find_spec("skimage")
    if spec is None or not spec.submodule_search_locations:
        return None
    d = os.path.join(list(spec.submodule_search_locations)[0], "data")
    if not all(os.path.exists(os.path.join(d, p)) for p in PHOTOS):
        return None
    return d


def ensure_package():
    """Returns skimage/data, installing the Debian package if it can."""
    d = data_folder()
    if d is not None and importlib.util.find_spec("PIL") is not None:
        return d
    if os.geteuid() != 0:
        sys.exit("make_photo_set.py: needs Debian's %s: sudo apt-get install %s" % (" and ".join(PACKAGES), " ".join(PACKAGES)))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + PACKAGES, check=True, env=env)
    importlib.invalidate_caches()
    d = data_folder()
    if d is None:
        sys.exit("make_photo_set.py: %s installed, but skimage/data lacks some of %s" % (PACKAGES[0], ", ".join(PHOTOS)))
    return d


def crop_box(rng, w, h):
    """Draws a crop (left, top, right, bottom) of a w x h photograph."""
    aspect = rng.uniform(0.6, 0.9)
    cw = rng.uniform(0.4, 1.0) * w
    ch = cw * aspect
    if ch > h:
        ch = h
        cw = min(w, ch / aspect)
    left = rng.uniform(0, w - cw)
    top = rng.uniform(0, h - ch)
    return (round(left), round(top), round(left + cw), round(top + ch))


def write_split(photos, out, n, rng, width, quality):
    """Writes n crops into out/<photo>/NNN.jpg; returns their sizes in bytes."""
    from PIL import Image

    sizes = []
    for i in range(n):
        name = PHOTOS[i % len(PHOTOS)]
        src = photos[name]
        box = crop_box(rng, *src.size)
        crop = src.crop(box)
        height = max(1, round(width * crop.height / crop.width))
        img = crop.resize((width, height), Image.BICUBIC)
        folder = os.path.join(out, os.path.splitext(name)[0])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "%03d.jpg" % i)
        img.save(path, "JPEG", quality=quality, subsampling="4:2:0")
        sizes.append(os.path.getsize(path))
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="datasets/photos", help="folder for train/ and val/ (default datasets/photos)")
    ap.add_argument("--train", type=int, default=64, help="training images (default 64)")
    ap.add_argument("--val", type=int, default=16, help="validation images (default 16)")
    ap.add_argument("--seed", type=int, default=0, help="seeds the crops (default 0)")
    ap.add_argument("--width", type=int, default=500, help="width of every image in pixels (default 500)")
    ap.add_argument("--quality", type=int, default=90, help="JPEG quality (default 90)")
    args = ap.parse_args()
    folder = ensure_package()
    from PIL import Image

    photos = {}
    for name in PHOTOS:
        with Image.open(os.path.join(folder, name)) as m:
            photos[name] = m.convert("RGB")
    rng = random.Random(args.seed)
    for split, n in (("train", args.train), ("val", args.val)):
        out = os.path.join(args.out, split)
        if os.path.exists(out):
            sys.exit("make_photo_set.py: %s exists; remove it first" % out)
        sizes = write_split(photos, out, n, rng, args.width, args.quality)
        print("%s: %d JPEGs, %d px wide, quality %d, mean %.1f KB" % (out, n, args.width, args.quality, sum(sizes) / len(sizes) / 1000))


if __name__ == "__main__":
    main()
