#!/bin/bash
# Trains the arms of the --max-side study: one small ViT per stored size N
# and seed, on the photo set prepared at that N, then scores its last
# checkpoint once on the untouched val folder (test.shard).
#
#   scripts/experiments/maxside/run.sh PHOTOS WORK [VIT_TRAIN]
#
# PHOTOS is a tree that scripts/make_photo_set.py wrote; WORK gets the
# prepared sets (WORK/shards/nN) and the runs (WORK/runs/nN-sSEED). Each run
# trains at 64 px (vit_fmnist_patch4_28's width and depth, patch 8, 8×8
# tokens), RandomResizedCrop and flip, 25 epochs, batch 64, with 10% of the
# training images held out for validation (nothing is chosen on them or on
# the test split: the settings were fixed before the runs). The seeds (1-5)
# are fixed here, and every arm runs every seed, so that differences pair by
# seed. Finished runs are skipped. Everything runs on one core (taskset -c
# 0, GOMAXPROCS=1). The table: go run ./scripts/experiments/maxside WORK/runs
set -euo pipefail
photos=${1:?photos tree}
work=${2:?work folder}
vt=${3:-vit-train}
export GOMAXPROCS=1
sides="0 256 128 74" # full size, 4×, 2× and about 1.15× the 64 px input
for n in $sides; do
  if [ ! -f "$work/shards/n$n/test.shard" ]; then
    taskset -c 0 "$vt" prepare --root "$photos" --out "$work/shards/n$n" --max-side "$n" --workers 1
  fi
done
mkdir -p "$work/runs"
for seed in 1 2 3 4 5; do
  for n in $sides; do
    d=$work/runs/n$n-s$seed
    if [ -f "$d/eval_test/eval.json" ]; then continue; fi
    rm -rf "$d"
    taskset -c 0 "$vt" train --model vit_fmnist_patch4_28 --out "$d" \
      --set data.dataset=prepared --set data.root="$work/shards/n$n" \
      --set model.img_size=64 --set model.patch_size=8 --set aug.train=rrc-flip \
      --set epochs=25 --set data.batch_size=64 --set data.val_split=0.1 \
      --set data.workers=1 --set seed="$seed" > "$d.log" 2>&1
    taskset -c 0 "$vt" eval --checkpoint "$d/last.safetensors" --set data.val_split=0 --out "$d/eval_test" >> "$d.log" 2>&1
    echo "n=$n seed=$seed: $(grep -m1 top1 "$d/eval_test/eval.json")"
  done
done
