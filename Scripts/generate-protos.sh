#!/usr/bin/env bash
# Regenerates Sources/FleetEngineAPI from the .proto files in Protos/ (the wire contract of maps.fleetengine.v1).
#
# The generated Swift is committed, so a build never compiles protoc or its plugins; run this after changing a
# .proto file. It needs `protoc` (Debian: apt-get install protobuf-compiler; it brings the well-known types in
# /usr/include) and builds the two Swift plugins once, in .build-protoc/ (about two minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC=${PROTOC:-protoc}
INCLUDE=${PROTOBUF_INCLUDE:-/usr/include}
command -v "$PROTOC" >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
[ -f "$INCLUDE/google/protobuf/empty.proto" ] || { echo "no well-known types in $INCLUDE" >&2; exit 1; }

# PROTOC_PLUGINS_BIN: a folder that already holds protoc-gen-swift and protoc-gen-grpc-swift-2 (CI builds them
# from this package's own dependencies: `swift build --product protoc-gen-swift`, then `--show-bin-path`).
plugins=.build-protoc
if [ -n "${PROTOC_PLUGINS_BIN:-}" ]; then
    bin="$PROTOC_PLUGINS_BIN"
elif [ ! -x "$plugins/.build/release/protoc-gen-swift" ] || [ ! -x "$plugins/.build/release/protoc-gen-grpc-swift-2" ]; then
    mkdir -p "$plugins/Dummy"
    : > "$plugins/Dummy/Dummy.swift"
    cat > "$plugins/Package.swift" <<'SWIFT'
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "ProtocPlugins",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
    ],
    targets: [.target(name: "Dummy", path: "Dummy")]
)
SWIFT
    (cd "$plugins" && swift build -c release --product protoc-gen-swift && swift build -c release --product protoc-gen-grpc-swift-2)
fi
bin="${bin:-$PWD/$plugins/.build/release}"

out=Sources/FleetEngineAPI
rm -f "$out"/*.pb.swift "$out"/*.grpc.swift
protos=$(cd Protos && find . -name '*.proto' | sed 's|^\./||' | sort)
(
    cd Protos
    "$PROTOC" -I . -I "$INCLUDE" \
        --plugin=protoc-gen-swift="$bin/protoc-gen-swift" \
        --plugin=protoc-gen-grpc-swift="$bin/protoc-gen-grpc-swift-2" \
        --swift_opt=Visibility=Public --swift_opt=FileNaming=PathToUnderscores --swift_out="../$out" \
        --grpc-swift_opt=Visibility=Public,Client=true,Server=true,FileNaming=PathToUnderscores \
        --grpc-swift_out="../$out" \
        $protos
)
# Files without a service get an empty gRPC file: drop them.
grep -l "This file contained no services" "$out"/*.grpc.swift | xargs rm -f
echo "Generated $(ls "$out"/*.swift | wc -l) files in $out from: $protos"
