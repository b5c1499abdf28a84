#!/usr/bin/env bash
# Tests package comm across processes under Open MPI's mpirun:
#   - the TestMPI tests of comm (built with -tags mpi) with 1, 2 and 3 ranks;
#   - mpiprobe: a job that sums its ranks; a rank's Abort ending the whole
#     job quickly with its exit code, from an idle MPI thread and from one
#     blocked in a collective; a binary built without MPI refusing to run as
#     one of several processes.
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

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
