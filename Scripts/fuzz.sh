#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS seconds from its committed seed corpus:
#
#   Scripts/fuzz.sh TARGET SECONDS [SCRATCH]
#
# TARGET is one of json, jws, verifier, proto-json, filter, field-mask (Fuzz/fuzz-TARGET). The target is built with
# FLEETAUTH_FUZZ=1, which adds the fuzz targets to the package and instruments the modules under test for coverage,
# in the build folder SCRATCH (default .build-fuzz; CI passes .build, whose dependencies are already built), unless
# FUZZ_BIN_DIR names the folder that holds it built already. New inputs go to a working copy of Fuzz/corpus/TARGET
# under .fuzz/, a crash to ci-artifacts/fuzz/. The exit status is libFuzzer's: 0 when nothing was found; a crash is a
# bug — make its input a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:?usage: Scripts/fuzz.sh TARGET SECONDS [SCRATCH]}"
seconds="${2:?usage: Scripts/fuzz.sh TARGET SECONDS [SCRATCH]}"
scratch="${3:-.build-fuzz}"
[ -d "Fuzz/fuzz-$target" ] || { echo "fuzz.sh: no target $target (see Fuzz/)" >&2; exit 2; }

if [ -n "${FUZZ_BIN_DIR:-}" ]; then
    # Built already (CI builds every target first, one after another: SwiftPM builds one at a time per folder).
    binary="$FUZZ_BIN_DIR/fuzz-$target"
else
    FLEETAUTH_FUZZ=1 swift build --scratch-path "$scratch" --product "fuzz-$target" >/dev/null
    binary="$(FLEETAUTH_FUZZ=1 swift build --scratch-path "$scratch" --show-bin-path)/fuzz-$target"
fi

work=".fuzz/$target"
artifacts="ci-artifacts/fuzz/$target"
mkdir -p "$work" "$artifacts"
cp -n "Fuzz/corpus/$target"/* "$work"/ 2>/dev/null || true
echo "fuzz-$target: $seconds s from $(ls "Fuzz/corpus/$target" | wc -l) seeds"
# Inputs up to 16 KiB: past every limit the readers enforce (4 KiB filters, 8 KiB tokens), within a body's reach.
status=0
"$binary" -max_total_time="$seconds" -max_len=16384 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" >"$work.log" 2>&1 || status=$?
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==|SUMMARY|artifact_prefix)' "$work.log" || true
if [ "$status" -ne 0 ]; then
    tail -n 40 "$work.log"
    echo "fuzz-$target found a crash (exit $status): the input is in $artifacts" >&2
fi
exit "$status"
