#!/usr/bin/env bash
# An app that wants only the client: a new package in a temporary folder depends on this checkout with `traits: []`
# and on the products FleetAuthClient and FleetAuthCore alone. It must resolve no package but FleetAuth (SwiftPM leaves out every
# package that only the Server and DistributedTracing traits use), build, and run: App/main.swift caches a token
# through CachingTokenProvider and checks that two calls cost one fetch.
#
#   bash Tests/ClientOnly/run.sh [CHECKOUT]      (default: this checkout)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
checkout="$(cd "${1:-$here/../..}" && pwd)"
app="$(mktemp -d "${TMPDIR:-/tmp}/fleetauth-client-only.XXXXXX")"
trap 'rm -rf "$app"' EXIT

mkdir -p "$app/Sources/App"
# SwiftPM names a package it reaches by path after its folder.
sed -e "s|@CHECKOUT@|$checkout|" -e "s|@PACKAGE@|$(basename "$checkout")|" "$here/Package.swift.in" > "$app/Package.swift"
cp "$here/main.swift" "$app/Sources/App/main.swift"
cd "$app"

swift package resolve
# What SwiftPM resolved: FleetAuth, by path, and nothing else (no checkouts, nothing pinned).
if [ -d .build/checkouts ] && [ -n "$(ls -A .build/checkouts)" ]; then
    ls .build/checkouts
    echo "an app that asks for traits: [] and FleetAuthClient fetched the packages above" >&2
    exit 1
fi
if [ -f Package.resolved ] && grep -q '"identity"' Package.resolved; then
    cat Package.resolved
    echo "an app that asks for traits: [] and FleetAuthClient pinned the packages above" >&2
    exit 1
fi
swift package show-dependencies
swift build --product App 2>&1 | tail -n 1
"$(swift build --show-bin-path)/App"
