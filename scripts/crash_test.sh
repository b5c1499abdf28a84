#!/usr/bin/env bash
# Crash test: kills short training runs with SIGKILL at random moments,
# resuming after each kill, then does the same with SIGINT (every fourth a
# SIGTERM) and optim.accum_steps=2; every run, finished by a last resume,
# must end bit-identical (weights, optimiser state, EMA weights, run state)
# to an uninterrupted run, with each step logged once (in the steps and
# epochs logs and in the TensorBoard event files).
#
#   scripts/crash_test.sh                 # the CI version: 10 SIGKILLs, 10 SIGINT/SIGTERMs (about a minute)
#   scripts/crash_test.sh --kills 100     # the long version
#   scripts/crash_test.sh --prepared      # on a set written by vit-train prepare
#   scripts/crash_test.sh --precision mixed  # with low-precision products (AMX where it runs)
#
# Options: --kills N (SIGKILLs, default 10), --signals N (SIGINT/SIGTERMs,
# default: as many as --kills), --seed S (reproduce a run's random delays;
# each run prints its seed), --tags TAGS (go build tags, e.g. openblas),
# --prepared (train on the embedded subset prepared as JPEGs), --precision
# P (model.precision: fp32, the default, or mixed).
# The test itself is TestCrashResume in cmd/vit-train.
set -euo pipefail
cd "$(dirname "$0")/.."

kills=10
signals=
seed=
tags=
while [ $# -gt 0 ]; do
  case "$1" in
    --kills) kills=$2; shift 2 ;;
    --signals) signals=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --tags) tags=$2; shift 2 ;;
    --prepared) export VIT_CRASH_PREPARED=1; shift ;;
    --precision) export VIT_CRASH_PRECISION=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "crash_test.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$kills${signals:-0}" in
  *[!0-9]*) echo "crash_test.sh: --kills and --signals take a number" >&2; exit 2 ;;
esac
signals=${signals:-$kills}

export VIT_CRASH_KILLS=$kills VIT_CRASH_SIGNALS=$signals
if [ -n "$seed" ]; then export VIT_CRASH_SEED=$seed; fi
# A generous timeout: about 3 s of training per run on a 2-core machine.
timeout=$(( 300 + 20 * (kills + signals) ))s
exec go test ${tags:+-tags "$tags"} -count=1 -timeout "$timeout" -run '^TestCrashResume$' -v ./cmd/vit-train/
