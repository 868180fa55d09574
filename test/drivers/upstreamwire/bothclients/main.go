// Command bothclients is a driver binary in miniature that links
// upstream csi-proxy's v1 API packages next to csi-node-proxy's client,
// as aws-ebs-csi-driver links upstream's v1 client beside its v2 library
// (pkg/mounter/mount_windows_proxyV1.go and mount_windows_proxyV2.go @
// 429e202e). Both register protobuf messages under the same full names
// (v1.GetDiskStateResponse, ...), and protobuf-go's default policy panics
// at start-up on the conflict. TestProtobufRegistrationConflict builds and
// runs it to prove the panic and the documented ways through it. Past
// start-up it round-trips one of upstream's messages through the wire
// format and dials nothing.
package main

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	diskapi "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"

	"github.com/csi-node-proxy/csi-node-proxy/client"
)

func main() {
	in := &diskapi.GetDiskStateResponse{IsOnline: true}
	b, err := proto.Marshal(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out diskapi.GetDiskStateResponse
	if err := proto.Unmarshal(b, &out); err != nil || !out.IsOnline {
		fmt.Fprintln(os.Stderr, "round trip:", err, out.IsOnline)
		os.Exit(1)
	}
	fmt.Printf("started: upstream's %s and our client (%s) in one binary\n", in.ProtoReflect().Descriptor().FullName(), client.Endpoint("disk", "v1"))
}
