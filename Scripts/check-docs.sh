#!/usr/bin/env bash
# Builds every DocC catalog with warnings as errors, from the symbol graphs of the modules in a finished debug
# build: a stale symbol link, a missing article or a documented parameter that no longer exists fails the run.
# Usage: Scripts/check-docs.sh [BIN_PATH]   (default: `swift build --show-bin-path`)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-$(swift build --show-bin-path)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
triple="$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')"
# The C modules' maps: generated ones (not the `-tool` copies made for plugins) and the packages' own.
includes=()
checkouts="$(dirname "$(dirname "$bin")")/checkouts"
for map in "$bin"/*.build/module.modulemap "$bin"/*.build/include/module.modulemap \
    "$checkouts"/*/Sources/*/include/module.modulemap "$checkouts"/*/Sources/*/module.modulemap \
    Sources/*/include/module.modulemap; do
    [ -f "$map" ] || continue
    case "$map" in *-tool.build/*) continue ;; esac
    includes+=(-Xcc "-fmodule-map-file=$map")
done
status=0
for catalog in Sources/*/Docs.docc; do
    module="$(basename "$(dirname "$catalog")")"
    mkdir -p "$work/$module"
    swift symbolgraph-extract -module-name "$module" -I "$bin/Modules" "${includes[@]}" -target "$triple" \
        -minimum-access-level public -skip-inherited-docs -output-dir "$work/$module"
    if docc convert "$catalog" --additional-symbol-graph-dir "$work/$module" --output-path "$work/$module.doccarchive" \
        --warnings-as-errors > "$work/$module.log" 2>&1; then
        echo "$module: documentation builds without warnings"
    else
        cat "$work/$module.log"
        echo "$module: the documentation has warnings (above)"
        status=1
    fi
done
exit $status
