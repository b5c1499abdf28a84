#!/usr/bin/env bash
# Runs every fuzz target in the repository, one at a time, for DURATION each
# (a go test -fuzztime value: 60s, 5m, 100000x) and prints each target's
# executions, executions per second, new interesting inputs and longest
# minimisation. Exits non-zero if any target finds a failing input (written
# under the package's testdata/fuzz/<Target>/, as go test does) or fails to
# build or run. A run that ends in Go's "context deadline exceeded" stop
# race (go.dev/issue/75804, fixed in Go 1.27) without a failing input, and
# whose corpus then replays cleanly, counts as passed.
#
#   scripts/fuzz.sh 5m                      # every target, 5 minutes each
#   FUZZ_ONLY=FromTimm scripts/fuzz.sh 60s   # targets whose name matches
#
# Environment:
#   FUZZ_ONLY      extended regular expression on "package/Target"; default all
#   FUZZ_PARALLEL  fuzzing workers per target (go test -parallel); default 1
#   FUZZ_LOGS      folder for each target's full output; default a temporary one
#
# Targets are found by grepping the *_test.go files for "func Fuzz...(" at
# the start of a line.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 DURATION   (e.g. 60s, 5m, 100000x)" >&2
	exit 2
fi
duration=$1
parallel=${FUZZ_PARALLEL:-1}
only=${FUZZ_ONLY:-}
cd "$(dirname "$0")/.."
logs=${FUZZ_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/vit-train-fuzz.XXXXXX")}
mkdir -p "$logs"

# "pkg Target" lines, sorted, from every test file outside testdata.
mapfile -t targets < <(
	grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . |
		grep -v '/testdata/' |
		sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|; s|^\./[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|. \1|' |
		sort -u
)
if [[ -n $only ]]; then
	mapfile -t targets < <(printf '%s\n' "${targets[@]}" | awk -v re="$only" '{ if (($1 "/" $2) ~ re) print }')
fi
if [[ ${#targets[@]} -eq 0 || -z ${targets[0]} ]]; then
	echo "no fuzz targets found${only:+ matching $only}" >&2
	exit 2
fi

echo "fuzzing ${#targets[@]} targets for $duration each, $parallel worker(s); logs in $logs"
failed=()
summary=()
for t in "${targets[@]}"; do
	pkg=${t% *}
	name=${t#* }
	log="$logs/${pkg//\//_}.$name.log"
	echo "== $pkg $name"
	corpus="$pkg/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null || true)
	status=ok
	# fuzzdebug=1 makes go test log each minimisation and how long it took.
	if ! GODEBUG=fuzzdebug=1 go test -run '^$' -fuzz "^$name\$" -fuzztime "$duration" -parallel "$parallel" "./$pkg" >"$log" 2>&1; then
		status=FAIL
		new=$(comm -13 <(printf '%s\n' "$before" | sort) <(ls "$corpus" 2>/dev/null | sort) || true)
		# Go before 1.27 can end a -fuzztime run with a bare "context
		# deadline exceeded" when a worker is slow to stop (go.dev/issue/75804):
		# no failing input is written. Replay the corpus to be sure.
		if [[ -z $new ]] && grep -q 'context deadline exceeded' "$log" && ! grep -qE 'panic:|Failing input written' "$log" &&
			go test -run "^$name\$" "./$pkg" >>"$log" 2>&1; then
			status="ok (stop race go#75804)"
		else
			failed+=("$pkg $name")
		fi
	fi
	# The last progress line: "fuzz: elapsed: 61s, execs: 123456 (2023/sec), new interesting: 5 (total: 12)".
	line=$(grep -E '^fuzz: elapsed: .*execs: [0-9]+' "$log" | tail -1 || true)
	# go prints the elapsed time as a duration: 59s, 1m0s, 1h2m3s.
	elapsed=$(sed -nE 's/^fuzz: elapsed: ([0-9hms]+),.*/\1/p' <<<"$line" |
		awk '{ t = 0; s = $0
			if (match(s, /[0-9]+h/)) t += substr(s, RSTART, RLENGTH - 1) * 3600
			if (match(s, /[0-9]+m/)) t += substr(s, RSTART, RLENGTH - 1) * 60
			if (match(s, /[0-9]+s/)) t += substr(s, RSTART, RLENGTH - 1)
			if (s != "") print t }')
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$line")
	interesting=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$line")
	longest=$({ grep -oE 'minimizing took: [0-9.]+(ns|µs|us|ms|s|m[0-9.]+s)' "$log" || true; } |
		awk '{ v = $3; s = 0
			if (v ~ /m[0-9.]+s$/) { split(v, p, "m"); s = p[1] * 60 + p[2] + 0 }
			else if (v ~ /ns$/) s = v / 1e9
			else if (v ~ /(µs|us)$/) s = v / 1e6
			else if (v ~ /ms$/) s = v / 1e3
			else s = v + 0
			if (s > m) m = s } END { printf "%.2fs", m + 0 }')
	rate=-
	if [[ -n $execs && -n $elapsed && $elapsed -gt 0 ]]; then
		rate=$((execs / elapsed))
	fi
	row=$(printf '%-28s %-26s %6ss %12s execs %8s/s %5s new  longest minimisation %7s  %s' \
		"$pkg" "$name" "${elapsed:-?}" "${execs:-?}" "$rate" "${interesting:-?}" "$longest" "$status")
	echo "$row"
	summary+=("$row")
	if [[ $status == FAIL ]]; then
		{ grep -E -- '--- FAIL|panic:|Failing input written to|^\s+go test -run|error|cannot|undefined' "$log" || tail -5 "$log"; } | head -20 | sed 's/^/    /'
	fi
done

echo
echo "summary ($duration per target):"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo
	echo "${#failed[@]} target(s) failed: ${failed[*]}" >&2
	exit 1
fi
