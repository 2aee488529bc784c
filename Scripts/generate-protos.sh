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

# Written to a temporary folder first; then only the files whose text changed replace their committed copies, and
# files no longer generated are removed. An unchanged file keeps its modification time, so a build that follows does
# not recompile FleetEngineAPI (CI regenerates to prove the committed code current, then builds again).
target=Sources/FleetEngineAPI
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
protos=$(cd Protos && find . -name '*.proto' | sed 's|^\./||' | sort)
(
    cd Protos
    "$PROTOC" -I . -I "$INCLUDE" \
        --plugin=protoc-gen-swift="$bin/protoc-gen-swift" \
        --plugin=protoc-gen-grpc-swift="$bin/protoc-gen-grpc-swift-2" \
        --swift_opt=Visibility=Public --swift_opt=FileNaming=PathToUnderscores --swift_out="$out" \
        --grpc-swift_opt=Visibility=Public,Client=true,Server=true,FileNaming=PathToUnderscores \
        --grpc-swift_out="$out" \
        $protos
)
# Every file's descriptor (with the well-known types it imports), for gRPC server reflection: base64 in Swift, in
# lines of 100 characters.
set="$(mktemp)"
(cd Protos && "$PROTOC" -I . -I "$INCLUDE" --include_imports --descriptor_set_out="$set" $protos)
{
    echo "// DO NOT EDIT. Written by Scripts/generate-protos.sh from Protos/: a google.protobuf.FileDescriptorSet of every"
    echo "// file and the files it imports, base64-encoded, for gRPC server reflection."
    echo
    echo "/// The descriptors of every .proto file this package serves, and of the files they import."
    echo "public enum ProtoFileDescriptors {"
    echo "    /// A serialized \`google.protobuf.FileDescriptorSet\`, base64 in lines (decode ignoring newlines)."
    echo '    public static let base64FileDescriptorSet = """'
    base64 -w 100 "$set" | sed 's/^/        /'
    echo '        """'
    echo "}"
} > "$out/ProtoFileDescriptors.swift"
rm -f "$set"
# Each service's transport-neutral Implementation protocol and the visitor both transports serve an implementation
# through, and each updatable resource's field writer for update masks: from the descriptors of Protos/ alone.
set="$(mktemp)"
(cd Protos && "$PROTOC" -I . -I "$INCLUDE" --descriptor_set_out="$set" $protos)
python3 Scripts/generate-contract.py "$set" "$out"
rm -f "$set"
# Files without a service get an empty gRPC file: drop them.
grep -l "This file contained no services" "$out"/*.grpc.swift | xargs rm -f
for file in "$target"/*.pb.swift "$target"/*.grpc.swift "$target"/ProtoFileDescriptors.swift "$target"/UnaryMethods.swift "$target"/UpdateMasks.swift; do
    if [ -e "$file" ] && [ ! -e "$out/$(basename "$file")" ]; then rm "$file"; fi
done
changed=0
for file in "$out"/*.swift; do
    if ! cmp -s "$file" "$target/$(basename "$file")"; then
        cp "$file" "$target/$(basename "$file")"
        changed=$((changed + 1))
    fi
done
echo "Generated $(ls "$out"/*.swift | wc -l) files for $target ($changed changed) from: $protos"
