#!/usr/bin/env bash
# Runs every Go fuzz target in the module for FUZZTIME each (default 30s), one after another,
# and prints a line per target with its executions. A crash stops the run, and Go writes the
# failing input under the package's testdata/fuzz/<Target>/, where it becomes a seed: commit it
# with the fix. With SAVE_CORPUS=1 the inputs the fuzzer found interesting are copied from the Go
# cache into testdata/fuzz too (at most CORPUS_MAX per target), so the next run starts from them.
# The executions printed are Go's count, which grows only when a worker reports back: a short run
# of a target that finds little new coverage can print far fewer than it ran.
#
# Go 1.26's fuzzing coordinator can end a duration-bounded run with a bare "context deadline
# exceeded" when a starved worker misses the stop (Go issue 75804, fixed in Go 1.27). Such a
# run wrote no failing input. The script then replays the target's whole corpus as a plain test:
# if that passes, the run counts as a clean one and the line says so; anything else fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
FUZZTIME=${FUZZTIME:-30s}
CORPUS_MAX=${CORPUS_MAX:-24}
cache=$(go env GOCACHE)/fuzz
mod=$(go list -m)
summary=()
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  ls "$dir"/*_test.go >/dev/null 2>&1 || continue
  grep -q '^func Fuzz' "$dir"/*_test.go || continue
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //'); do
    echo "== $pkg $target ($FUZZTIME)"
    log=$(mktemp)
    before=$(ls "$dir/testdata/fuzz/$target" 2>/dev/null | sort || true)
    rc=0
    go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" >"$log" 2>&1 || rc=$?
    # Progress lines come every 3 s; keep the last one and everything else.
    grep -v '^fuzz: elapsed' "$log" || true
    grep '^fuzz: elapsed' "$log" | tail -1 || true
    after=$(ls "$dir/testdata/fuzz/$target" 2>/dev/null | sort || true)
    note=""
    if [ "$rc" != 0 ] && [ "$before" = "$after" ] \
      && [ "$(grep -c -- '--- FAIL' "$log")" = 1 ] \
      && grep -A1 -- "--- FAIL: $target " "$log" | tail -1 | grep -qx '[[:space:]]*context deadline exceeded'; then
      echo "   the run ended on Go's coordinator deadline race with no failing input; replaying the corpus"
      if go test "$pkg" -run "^${target}\$" -count=1; then
        rc=0
        note=" (ended on the coordinator's deadline race; corpus replay passed)"
      fi
    fi
    if [ "$rc" != 0 ]; then
      echo "FAIL $pkg $target: see the failing input under ${dir#$PWD/}/testdata/fuzz/$target"
      rm -f "$log"; exit 1
    fi
    # A short run on a loaded machine may end while still gathering baseline coverage, before
    # any progress line: then there is no count to print, which is not a failure.
    execs=$({ grep -o 'execs: [0-9]*' "$log" || true; } | tail -1 | awk '{print $2}')
    summary+=("$target ${pkg#$mod/}: ${execs:-0} execs in $FUZZTIME, no crash$note")
    rm -f "$log"
    if [ "${SAVE_CORPUS:-0}" = 1 ] && [ -d "$cache/$pkg/$target" ]; then
      mkdir -p "$dir/testdata/fuzz/$target"
      ls -t "$cache/$pkg/$target" | head -n "$CORPUS_MAX" | while read -r f; do cp "$cache/$pkg/$target/$f" "$dir/testdata/fuzz/$target/"; done
    fi
  done
done
printf '%s\n' "${summary[@]}"
