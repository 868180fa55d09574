#!/usr/bin/env bash
# Regenerates every .pb.go and _grpc.pb.go under api/ from the .proto files.
# protoc comes from Debian's protobuf-compiler; the two Go plugins are pinned by
# the tool directives in cmd/go.mod (the tools' module, so that the root module
# a driver requires does not carry them), so the output is the same on every machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -C cmd -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -C cmd -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
want="libprotoc 3.21.12"
have="$(protoc --version)"
if [ "$have" != "$want" ]; then
  echo "generate: need protoc '$want' (Debian bookworm protobuf-compiler), found '$have'" >&2
  exit 1
fi
find api -name '*.proto' | LC_ALL=C sort | while read -r proto; do
  protoc -I api \
    --plugin=protoc-gen-go="$bin/protoc-gen-go" \
    --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
    --go_out=api --go_opt=paths=source_relative \
    --go-grpc_out=api --go-grpc_opt=paths=source_relative \
    "$proto"
done
