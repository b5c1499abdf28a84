#!/usr/bin/env bash
# Tests package comm across processes under Open MPI's mpirun:
#   - the TestMPI tests of comm (built with -tags mpi) with 1, 2 and 3 ranks;
#   - mpiprobe: a job that sums its ranks; a rank's Abort ending the whole
#     job quickly with its exit code, from an idle MPI thread and from one
#     blocked in a collective; a binary built without MPI refusing to run as
#     one of several processes;
#   - vit-train train (built with -tags mpi): 2 ranks with data.batch_size 8
#     take the steps (losses within 1e-5 relative) and end with the weights
#     (within 1e-5) and top-1 of 1 rank with 16, for a ViT and for DeiT
#     distillation from a ResNet, and on a set written by vit-train
#     prepare; a rank killed with SIGKILL mid-run ends the job within seconds with
#     a non-zero status, leaving a last.safetensors that loads; a rank that
#     cannot read its data aborts the job with a message naming the rank;
#     Ctrl-C on mpirun (SIGINT) saves a checkpoint that resumes to the
#     bit-identical end of an uninterrupted run.
# Needs openmpi-bin and libopenmpi-dev. Exits non-zero if any check fails.
#   scripts/test_mpi.sh [extra go test flags for the comm tests, e.g. -test.v]
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v mpirun >/dev/null || ! pkg-config --exists ompi-c; then
  echo "test_mpi: Open MPI not found (apt-get install openmpi-bin libopenmpi-dev)" >&2
  exit 1
fi
# Shared-memory transfers without cross-process memory attach, which
# containers often forbid.
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }

echo "== build"
go vet -tags mpi ./comm/... || exit 1
go test -c -tags mpi -o "$tmp/comm.test" ./comm/ || exit 1
go build -tags mpi -o "$tmp/mpiprobe" ./comm/internal/mpiprobe || exit 1
go build -o "$tmp/mpiprobe-nompi" ./comm/internal/mpiprobe || exit 1
go build -tags mpi -o "$tmp/vt-mpi" ./cmd/vit-train || exit 1
go test -c -o "$tmp/cmd.test" ./cmd/vit-train || exit 1

echo "== comm tests under mpirun"
for np in 1 2 3; do
  out="$tmp/test.$np"
  timeout 300 "${mpirun[@]}" -np "$np" "$tmp/comm.test" -test.run '^TestMPI' -test.count=1 "$@" >"$out" 2>&1
  rc=$?
  npass=$(grep -c '^PASS$' "$out")
  if [ "$rc" = 0 ] && [ "$npass" = "$np" ]; then
    ok "comm tests, $np ranks"
  else
    cat "$out"
    fail "comm tests, $np ranks (exit $rc, $npass of $np ranks passed)"
  fi
done

echo "== mpiprobe"
out="$tmp/hello"
if timeout 60 "${mpirun[@]}" -np 3 "$tmp/mpiprobe" >"$out" 2>&1 &&
  [ "$(grep -c 'of 3: sum of ranks 3 (mpi build: true)' "$out")" = 3 ]; then
  ok "3 ranks sum their ranks"
else
  cat "$out"
  fail "3 ranks sum their ranks"
fi

# abort_check NAME FLAG: the last of 2 ranks aborts with code 7; the job
# must end within 20 s with status 7.
abort_check() {
  local out="$tmp/abort$2" start end rc
  start=$(date +%s)
  timeout 60 "${mpirun[@]}" -np 2 "$tmp/mpiprobe" "$2" >"$out" 2>&1
  rc=$?
  end=$(date +%s)
  if [ "$rc" = 7 ] && [ $((end - start)) -le 20 ] && grep -q "rank 1 aborts the job: mpiprobe $2" "$out"; then
    ok "$1 ends the job with status 7 in $((end - start)) s"
  else
    cat "$out"
    fail "$1: exit $rc after $((end - start)) s (want 7 within 20 s)"
  fi
}
abort_check "Abort from an idle MPI thread" -abort
abort_check "Abort while the MPI thread is blocked" -abort-busy

out="$tmp/nompi"
timeout 60 "${mpirun[@]}" -np 2 "$tmp/mpiprobe-nompi" >"$out" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q 'built without MPI support; rebuild with -tags mpi' "$out"; then
  ok "a build without MPI refuses to run as 2 processes (exit $rc)"
else
  cat "$out"
  fail "a build without MPI under mpirun -np 2: exit $rc"
fi

echo "== vit-train train under mpirun"
# A short run: 320 training images, 20 optimiser steps of 16 images.
tiny=(--set data.train_subset=320 --set data.eval_subset=48 --set data.eval_batch_size=48 --set epochs=1 --set log_every=1
  --set progress=false --set model.drop_path_rate=0 --set aug.mixup=0 --set aug.cutmix=0
  --set optim.name=sgd --set optim.lr=0.05)
timeout 300 "${mpirun[@]}" -np 2 "$tmp/vt-mpi" train --out "$tmp/np2" "${tiny[@]}" --set data.batch_size=8 >"$tmp/np2.out" 2>&1
rc2=$?
timeout 300 "${mpirun[@]}" -np 1 "$tmp/vt-mpi" train --out "$tmp/np1" "${tiny[@]}" --set data.batch_size=16 >"$tmp/np1.out" 2>&1
rc1=$?
if [ "$rc2" = 0 ] && [ "$rc1" = 0 ] &&
  [ "$(grep -c '^test accuracy' "$tmp/np2.out")" = 1 ] && grep -q 'global batch 16 images' "$tmp/np2.out" &&
  VT_COMPARE="$tmp/np2:$tmp/np1" "$tmp/cmd.test" -test.run '^TestCompareRunFolders$' -test.v >"$tmp/cmp.out" 2>&1; then
  ok "2 ranks × batch 8 equal 1 rank × batch 16 ($(grep -o 'agree within [^ ]* relative' "$tmp/cmp.out"))"
else
  cat "$tmp/np2.out" "$tmp/np1.out" "$tmp/cmp.out" 2>/dev/null
  fail "2 ranks × batch 8 against 1 rank × batch 16 (exit $rc2 and $rc1)"
fi

# ranks_agree NAME TAG PREFACE ARGS…: after PREFACE's output file
# $tmp/PREFACE.out (an empty PREFACE: none), trains with ARGS as 2 ranks ×
# batch 8 and as 1 rank × batch 16 (into $tmp/TAG2 and $tmp/TAG1) and
# compares the two run folders. A failed preface is passed as FAILED.
ranks_agree() {
  local name=$1 tag=$2 preface=$3 rc2=preface rc1=preface
  shift 3
  if [ "$preface" != FAILED ]; then
    timeout 300 "${mpirun[@]}" -np 2 "$tmp/vt-mpi" train --out "$tmp/${tag}2" "${tiny[@]}" "$@" --set data.batch_size=8 >"$tmp/${tag}2.out" 2>&1
    rc2=$?
    timeout 300 "${mpirun[@]}" -np 1 "$tmp/vt-mpi" train --out "$tmp/${tag}1" "${tiny[@]}" "$@" --set data.batch_size=16 >"$tmp/${tag}1.out" 2>&1
    rc1=$?
  fi
  if [ "$rc2" = 0 ] && [ "$rc1" = 0 ] &&
    VT_COMPARE="$tmp/${tag}2:$tmp/${tag}1" "$tmp/cmd.test" -test.run '^TestCompareRunFolders$' -test.v >"$tmp/${tag}-cmp.out" 2>&1; then
    ok "$name: 2 ranks × batch 8 equal 1 rank × batch 16 ($(grep -o 'agree within [^ ]* relative' "$tmp/${tag}-cmp.out"))"
  else
    cat "$tmp/prepare.out" "$tmp/teacher.out" "$tmp/${tag}2.out" "$tmp/${tag}1.out" "$tmp/${tag}-cmp.out" 2>/dev/null | tail -40
    fail "$name, 2 ranks × batch 8 against 1 rank × batch 16 (exit $rc2 and $rc1)"
  fi
}

# The same on the embedded subset prepared by vit-train prepare (JPEG):
# each rank reads its share of a prepared set by index.
preface=ok
timeout 300 "$tmp/vt-mpi" prepare --dataset fashion-mnist-embedded --out "$tmp/prepared" >"$tmp/prepare.out" 2>&1 || preface=FAILED
ranks_agree "a prepared set" prep "$preface" --set data.dataset=prepared --set "data.root=$tmp/prepared"

# DeiT distillation from a ResNet teacher (trained here by one process):
# 2 ranks × batch 8 against 1 rank × batch 16, as above.
preface=ok
timeout 300 "$tmp/vt-mpi" train --out "$tmp/teacher" "${tiny[@]}" --set model.name=resnet20 --set data.batch_size=16 >"$tmp/teacher.out" 2>&1 || preface=FAILED
ranks_agree "DeiT distillation" deit "$preface" --set model.name=deit_fmnist_distilled_patch4_28 --set distill.type=hard --set "distill.teacher=$tmp/teacher/last.safetensors"

# Kill rank 1 with SIGKILL once the first epoch's checkpoint exists: the job
# must end within 30 s with a non-zero status and the checkpoint must load.
out="$tmp/kill.out"
"${mpirun[@]}" -np 2 "$tmp/vt-mpi" train --out "$tmp/kill" --set data.train_subset=192 --set data.eval_subset=48 \
  --set data.eval_batch_size=48 --set data.batch_size=8 --set epochs=200 --set progress=false >"$out" 2>&1 &
job=$!
for _ in $(seq 600); do
  [ -f "$tmp/kill/last.safetensors" ] && break
  sleep 0.1
done
victim=""
for p in $(pgrep -f "$tmp/vt-mpi train --out $tmp/kill"); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then victim=$p; fi
done
start=$(date +%s)
if [ -n "$victim" ]; then kill -9 "$victim"; fi
for _ in $(seq 300); do
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
end=$(date +%s)
if kill -0 "$job" 2>/dev/null; then
  kill -9 "$job"
  wait "$job"
  rc=hung
else
  wait "$job"
  rc=$?
fi
if [ -n "$victim" ] && [ "$rc" != hung ] && [ "$rc" != 0 ] &&
  VT_CHECKPOINT="$tmp/kill/last.safetensors" "$tmp/cmd.test" -test.run '^TestCheckpointLoads$' -test.v >"$tmp/load.out" 2>&1; then
  ok "a rank killed by SIGKILL ends the job in $((end - start)) s with status $rc; $(grep -o 'last.safetensors: [^,]*' "$tmp/load.out") intact"
else
  cat "$out" "$tmp/load.out" 2>/dev/null
  fail "killing rank 1 (pid '$victim'): exit $rc after $((end - start)) s"
fi

# Ctrl-C on mpirun: Open MPI 4.1's mpirun sends the ranks SIGTERM after
# odls_base_sigkill_timeout seconds and SIGKILL that long again later, so
# with a timeout longer than a step the ranks agree on a step, rank 0 saves
# and all exit. Resumed with 2 ranks, the run must end bit-identical
# (weights and optimiser state) to an uninterrupted 2-rank run.
long=(--set data.train_subset=512 --set data.eval_subset=48 --set data.eval_batch_size=48 --set data.batch_size=16
  --set epochs=60 --set progress=false --set model.drop_path_rate=0.1 --set optim.name=adamw)
out="$tmp/ctrlc.out"
OMPI_MCA_odls_base_sigkill_timeout=5 "${mpirun[@]}" -np 2 "$tmp/vt-mpi" train --out "$tmp/ctrlc" "${long[@]}" >"$out" 2>&1 &
job=$!
for _ in $(seq 600); do
  [ -f "$tmp/ctrlc/last.safetensors" ] && break
  sleep 0.1
done
kill -INT "$job"
wait "$job"
rc=$?
stopped=$(grep -o 'interrupted at epoch [0-9]*, batch [0-9]* (step [0-9]*)' "$out")
timeout 600 "${mpirun[@]}" -np 2 "$tmp/vt-mpi" train --out "$tmp/ctrlc" --resume "${long[@]}" >"$tmp/ctrlc2.out" 2>&1
rc2=$?
timeout 600 "${mpirun[@]}" -np 2 "$tmp/vt-mpi" train --out "$tmp/whole" "${long[@]}" >"$tmp/whole.out" 2>&1
rc3=$?
if [ -n "$stopped" ] && [ "$rc2" = 0 ] && [ "$rc3" = 0 ] &&
  VT_COMPARE="$tmp/ctrlc:$tmp/whole" VT_COMPARE_TOL=0 "$tmp/cmd.test" -test.run '^TestCompareRunFolders$' -test.v >"$tmp/cmp2.out" 2>&1; then
  ok "Ctrl-C on mpirun saved a checkpoint ($stopped, mpirun status $rc); resumed, it ends bit-identical to an uninterrupted run"
else
  cat "$out" "$tmp/ctrlc2.out" "$tmp/cmp2.out" 2>/dev/null | tail -40
  fail "Ctrl-C on mpirun and resume (mpirun status $rc, '$stopped', resume $rc2, whole run $rc3)"
fi

# A rank that cannot read its data fails before training, naming the rank
# and the file: a wrapper points rank 1 to a missing data folder.
cat >"$tmp/wrap.sh" <<WRAP
#!/usr/bin/env bash
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$tmp/vt-mpi" "\$@" --set data.dataset=fashion-mnist --set data.root=$tmp/missing; fi
exec "$tmp/vt-mpi" "\$@"
WRAP
chmod +x "$tmp/wrap.sh"
out="$tmp/nodata.out"
timeout 120 "${mpirun[@]}" -np 2 "$tmp/wrap.sh" train --out "$tmp/nodata" "${tiny[@]}" --set data.batch_size=8 >"$out" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "rank 1 of 2: .*$tmp/missing" "$out" && [ ! -f "$tmp/nodata/last.safetensors" ]; then
  ok "a rank without its data aborts the job (exit $rc): $(grep -o 'rank 1 of 2: .*' "$out" | head -1 | cut -c1-120)"
else
  cat "$out"
  fail "a rank without its data: exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
