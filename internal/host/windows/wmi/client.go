package wmi

import "context"

// Namespaces the backends use.
const (
	// StorageNamespace holds the Storage Management API (MSFT_Disk,
	// MSFT_Partition, MSFT_Volume, MSFT_StorageSetting, MSFT_iSCSI*).
	StorageNamespace = `Root\Microsoft\Windows\Storage`
	// SMBNamespace holds MSFT_SmbGlobalMapping.
	SMBNamespace = `Root\Microsoft\Windows\Smb`
	// CIMv2Namespace holds the Win32_* classes.
	CIMv2Namespace = `Root\CimV2`
)

// API is what Client offers, for code that wants to substitute a fake.
type API interface {
	// Query runs q and returns the selected properties of every instance
	// (every property when q selects none), in WMI's enumeration order.
	// No match is an empty slice, not an error.
	Query(ctx context.Context, q *WQL) ([]Props, error)
	// Call runs method on the one instance q matches and returns the
	// method's out-parameters (including ReturnValue). No match is an error
	// wrapping errdefs.ErrNotFound; several matches are refused, since a
	// method call must never fan out by accident. A non-zero ReturnValue is
	// a *MethodError, returned together with the out-parameters.
	Call(ctx context.Context, q *WQL, method string, in ...Param) (Props, error)
	// CallStatic runs a static method of class, like Call.
	CallStatic(ctx context.Context, class, method string, in ...Param) (Props, error)
}

// Client runs WMI operations against one namespace of the local machine.
// Each operation is self-contained: it locks its goroutine to an OS thread,
// initialises COM for that thread, connects, works and releases everything
// before returning, so a Client holds no COM state and is safe for
// concurrent use.
//
// Operations are not cancellable once started: a WMI method such as
// MSFT_Volume.Format runs to completion in the provider whatever the
// caller does, so the context is only checked before starting, and a call
// blocks for as long as the provider takes. A caller that must not wait
// that long (internal/host/windows/storage bounds every call) has to run the call
// on its own goroutine and, when it stops waiting, keep any retry from
// starting a second operation on the same object while the abandoned one
// may still be running.
type Client struct {
	namespace string
}

var _ API = (*Client)(nil)

// NewClient returns a Client for namespace (for example
// StorageNamespace). It does no work; the first operation connects.
func NewClient(namespace string) *Client { return &Client{namespace: namespace} }

// Namespace returns the client's namespace.
func (c *Client) Namespace() string { return c.namespace }
