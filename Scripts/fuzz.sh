#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS seconds from its committed seed corpus:
#
#   Scripts/fuzz.sh TARGET SECONDS [SCRATCH]
#   Scripts/fuzz.sh --build-all [SCRATCH]     builds every target, then prints the folder that holds them
#
# TARGET is one of json, jws, verifier, proto-json, filter, field-mask, query, log-filter (Fuzz/fuzz-TARGET). The
# targets belong to the fuzz package, .build-fuzz/package: Package.swift followed by Fuzz/Package.fuzz.swift, which
# adds them and instruments the modules under test for coverage, beside links to Sources and Fuzz. The target is
# built in the build folder SCRATCH (default .build-fuzz; CI passes .build, whose dependencies are already built),
# unless FUZZ_BIN_DIR names the folder that holds it built already. New inputs go to a working copy of Fuzz/corpus/TARGET under .fuzz/, a
# crash to ci-artifacts/fuzz/. The exit status is libFuzzer's: 0 when nothing was found; a crash is a bug — make its
# input a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(json jws verifier proto-json filter field-mask query log-filter)
package=.build-fuzz/package

# Writes the fuzz package; its manifest only when it changed, so SwiftPM reuses the plan it made from it.
prepare_package() {
    mkdir -p "$package"
    cat Package.swift Fuzz/Package.fuzz.swift > "$package/Package.swift.new"
    if cmp -s "$package/Package.swift.new" "$package/Package.swift"; then
        rm "$package/Package.swift.new"
    else
        mv "$package/Package.swift.new" "$package/Package.swift"
    fi
    ln -sfn "$PWD/Sources" "$package/Sources"
    ln -sfn "$PWD/Fuzz" "$package/Fuzz"
    if [ -f Package.resolved ]; then cp Package.resolved "$package/Package.resolved"; fi
}

fuzz_build() {
    local scratch="$1"
    shift
    swift build --package-path "$package" --scratch-path "$(realpath -m "$scratch")" "$@"
}

if [ "${1:-}" = "--build-all" ]; then
    scratch="${2:-.build-fuzz}"
    prepare_package
    # One after another: SwiftPM builds one product at a time per build folder.
    for target in "${targets[@]}"; do fuzz_build "$scratch" --product "fuzz-$target" >/dev/null; done
    fuzz_build "$scratch" --show-bin-path
    exit 0
fi

target="${1:?usage: Scripts/fuzz.sh TARGET SECONDS [SCRATCH] | --build-all [SCRATCH]}"
seconds="${2:?usage: Scripts/fuzz.sh TARGET SECONDS [SCRATCH]}"
scratch="${3:-.build-fuzz}"
[ -d "Fuzz/fuzz-$target" ] || { echo "fuzz.sh: no target $target (see Fuzz/)" >&2; exit 2; }

if [ -n "${FUZZ_BIN_DIR:-}" ]; then
    # Built already (CI builds every target first, one after another: SwiftPM builds one at a time per folder).
    binary="$FUZZ_BIN_DIR/fuzz-$target"
else
    prepare_package
    fuzz_build "$scratch" --product "fuzz-$target" >/dev/null
    binary="$(fuzz_build "$scratch" --show-bin-path)/fuzz-$target"
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
