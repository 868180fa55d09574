//go:build !windows

package wmi

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func (c *Client) unavailable() error {
	return errdefs.Errorf(errdefs.ErrUnimplemented, "WMI (%s) is only available on Windows", c.namespace)
}

// Query implements API. Outside Windows it fails with
// errdefs.ErrUnimplemented.
func (c *Client) Query(context.Context, *WQL) ([]Props, error) { return nil, c.unavailable() }

// Call implements API. Outside Windows it fails with
// errdefs.ErrUnimplemented.
func (c *Client) Call(context.Context, *WQL, string, ...Param) (Props, error) {
	return nil, c.unavailable()
}

// CallStatic implements API. Outside Windows it fails with
// errdefs.ErrUnimplemented.
func (c *Client) CallStatic(context.Context, string, string, ...Param) (Props, error) {
	return nil, c.unavailable()
}
