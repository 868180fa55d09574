package client

import (
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// DefaultEndpointPrefix is upstream's endpoint name prefix, the daemon's
// default --endpoint-prefix.
const DefaultEndpointPrefix = "csi-proxy"

// maxEndpointPrefix is the daemon's bound on --endpoint-prefix.
const maxEndpointPrefix = 40

// endpoint is a group-version's endpoint name under o's prefix.
func (o Options) endpoint(group, version string) string {
	return o.EndpointPrefix + "-" + group + "-" + version
}

// checkEndpointPrefix accepts what the daemon's --endpoint-prefix accepts
// (internal/transport CheckEndpointPrefix, which the client may not
// import): a plain name that keeps the endpoint inside its directory or
// the pipe namespace.
func checkEndpointPrefix(p string) error {
	bad := p == "" || len(p) > maxEndpointPrefix || !isAlnum(rune(p[0]))
	for _, r := range p {
		bad = bad || !isAlnum(r) && !strings.ContainsRune("._-", r)
	}
	if bad {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "Options.EndpointPrefix %q is not 1 to %d ASCII letters, digits, '.', '_' or '-' beginning with a letter or digit", p, maxEndpointPrefix)
	}
	return nil
}

// isAlnum tells whether r is an ASCII letter or digit.
func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
