// Command librarysize is the smallest driver that uses library mode: one
// inprocess call. hack/library-size.sh builds it for linux and windows to
// measure what library mode costs a driver binary (docs/driver-guide.md);
// it is never shipped.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

func main() {
	ctx := context.Background()
	node, err := inprocess.New(ctx, inprocess.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer func() { _ = node.Close() }() // nothing ran that Close could fail
	resp, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: inprocess.DefaultLinuxKubeletPath})
	fmt.Println(resp, err)
}
