// Command image writes csi-node-proxy's container images as OCI image
// layouts, without a container engine: the Windows HostProcess image
// (windows/amd64) and the Linux images (linux/amd64, linux/arm64) with an
// index over them, from the binaries make release built. Every timestamp is
// SOURCE_DATE_EPOCH and every tar entry is sorted with fixed owner and mode,
// so the same binaries give the same digests. docs/images.md says how to push
// and use them; -push sends the index to a registry.
//
// It is a module of its own (hack/image/go.mod) so that the daemon's module,
// which drivers and operators build, does not require go-containerregistry
// and what it pulls in.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its arguments and output passed in, for the tests.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var platforms, epoch, push string
	fs.StringVar(&o.Dist, "dist", "dist", "make release's output directory (<os>-<arch>/csi-node-proxy[.exe], csi-node-proxyctl[.exe])")
	fs.StringVar(&o.Out, "out", "dist/images", "directory for the OCI image layouts windows/, linux/ and all/")
	fs.StringVar(&o.License, "license", "LICENSE", "license file put in every image")
	fs.StringVar(&platforms, "platforms", "linux/amd64 linux/arm64 windows/amd64", "os/arch list, space or comma separated")
	fs.StringVar(&o.Version, "version", "", "version for the org.opencontainers.image.version label (required)")
	fs.StringVar(&o.Revision, "revision", "", "commit for the org.opencontainers.image.revision label (required)")
	fs.StringVar(&epoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "every timestamp in the images, Unix seconds (default $SOURCE_DATE_EPOCH; required)")
	fs.StringVar(&o.LinuxBase, "linux-base", "", "OCI image layout with linux/amd64 and linux/arm64 images to put the binaries on (default: none, the binaries alone)")
	fs.StringVar(&o.LinuxRootFS, "linux-rootfs", "", "directory whose tree becomes the linux/amd64 image's tool layer (hack/image/debian/rootfs.sh OUT makes OUT/rootfs; default: none)")
	fs.StringVar(&o.WindowsBase, "windows-base", "", "OCI image layout with a windows/amd64 image to put the binaries on (default: none)")
	fs.StringVar(&push, "push", "", "after building, push the index of every image built to `REPOSITORY`:VERSION (e.g. ghcr.io/me/csi-node-proxy), with the Docker config's credentials")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "image: unexpected arguments %q\n", fs.Args())
		return 2
	}
	for _, s := range strings.FieldsFunc(platforms, func(r rune) bool { return r == ' ' || r == ',' }) {
		p, err := ParsePlatform(s)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "image: %v\n", err)
			return 2
		}
		o.Platforms = append(o.Platforms, p)
	}
	if o.Version == "" || o.Revision == "" || epoch == "" {
		_, _ = fmt.Fprintln(stderr, "image: -version, -revision and -source-date-epoch (or SOURCE_DATE_EPOCH) are required")
		return 2
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || secs < 0 {
		_, _ = fmt.Fprintf(stderr, "image: -source-date-epoch %q: want Unix seconds\n", epoch)
		return 2
	}
	o.Created = time.Unix(secs, 0).UTC()
	res, err := Build(o)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "image: %v\n", err)
		return 1
	}
	for _, p := range o.Platforms {
		_, _ = fmt.Fprintf(stdout, "  %-16s %s\n", p, res.Images[p.String()])
	}
	if res.Windows != (Result{}).Windows {
		_, _ = fmt.Fprintf(stdout, "%s/%s (windows/amd64 image) %s\n", o.Out, WindowsLayout, res.Windows)
	}
	if res.Linux != (Result{}).Linux {
		_, _ = fmt.Fprintf(stdout, "%s/%s (Linux index) %s\n", o.Out, LinuxLayout, res.Linux)
	}
	_, _ = fmt.Fprintf(stdout, "%s/%s (index of all) %s\n", o.Out, AllLayout, res.All)
	if push != "" {
		start := time.Now()
		ref, err := Push(o.Out, push, o.Version)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "image: %v\n", err)
			return 1
		}
		_, _ = fmt.Fprintf(stdout, "pushed %s:%s (%s) in %s\n", push, o.Version, ref, time.Since(start).Round(time.Millisecond))
	}
	return 0
}
