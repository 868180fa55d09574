// Package smbmappings is csi-node-proxy's own group, with no upstream
// counterpart: the hygiene of the node's SMB global mappings, which
// upstream's smb group creates and removes one at a time but can neither
// list nor repair.
//
// What it answers (docs/compatibility.md, "SMB mapping hygiene"):
// mappings left Disconnected or Unavailable after a reboot or a server
// restart (kubernetes-csi/csi-driver-smb#1219, kubernetes-sigs/
// azurefile-csi-driver#3416), mappings leaked by unstage paths that failed
// (csi-driver-smb#1035, #1039, azurefile#2974, #1925) until a node fails
// near ~700 of them (Azure/AKS#5612), and error 1219 that a leaked mapping
// under another user name causes for every later volume on the server.
//
// A mapping is "referenced" when a link under the node's working
// directories (the kubelet's, or the configured path roots) leads into its
// share: that is how the kubelet and the drivers use a mapping. List
// reports every mapping with its status, the links into it and its age;
// Reconcile re-creates one share's mapping when links still use it and it
// is not OK (or gone); Collect removes the mappings nothing references.
//
// Passwords are secrets: nothing in this package logs or formats them into
// errors.
package smbmappings

import "context"

// Interface is the SMB mappings group as drivers and operators call it,
// in-process (inprocess.Node.SMBMappings) or through the daemon's own
// endpoint (client.Client.SMBMappings, csi-node-proxyctl smb ls|gc).
// Errors wrap errdefs sentinels.
type Interface interface {
	// ListSmbGlobalMappings reports the node's SMB global mappings with
	// their status, the links under the working directories that lead
	// into each, and their age, plus the shares that links lead into but
	// no mapping serves. It changes nothing.
	//convgen:read
	ListSmbGlobalMappings(context.Context, *ListSmbGlobalMappingsRequest) (*ListSmbGlobalMappingsResponse, error)
	// ReconcileSmbGlobalMapping re-creates the mapping of RemotePath's
	// share with the request's credentials when links under the working
	// directories still lead into it and it is not OK or is gone; a
	// healthy or unreferenced mapping is left alone.
	//convgen:mutates
	ReconcileSmbGlobalMapping(context.Context, *ReconcileSmbGlobalMappingRequest) (*ReconcileSmbGlobalMappingResponse, error)
	// CollectSmbGlobalMappings removes every SMB global mapping that no
	// link under the working directories leads into and that is older
	// than the grace period; with DryRun it only reports them.
	//convgen:mutates
	CollectSmbGlobalMappings(context.Context, *CollectSmbGlobalMappingsRequest) (*CollectSmbGlobalMappingsResponse, error)
}

// The statuses of a mapping, as MSFT_SmbGlobalMapping.Status names them,
// plus StatusMissing for a share that links lead into but no mapping
// serves. Only OK is healthy. They are plain strings on the wire and in
// the model, so that a status a newer Windows adds passes through.
const (
	StatusOK           = "OK"
	StatusPaused       = "Paused"
	StatusDisconnected = "Disconnected"
	StatusNetworkError = "NetworkError"
	StatusConnecting   = "Connecting"
	StatusReconnecting = "Reconnecting"
	StatusUnavailable  = "Unavailable"
	// StatusUnknown is a Status value the host reported that none of the
	// above names.
	StatusUnknown = "Unknown"
	// StatusMissing is not a Windows status: links lead into the share,
	// but the node has no mapping of it (a non-persistent mapping after
	// a reboot, or one removed by hand).
	StatusMissing = "Missing"
)

// SmbGlobalMapping is one share as List reports it.
type SmbGlobalMapping struct {
	// RemotePath is the share root, \\server\share, lower-cased.
	RemotePath string
	// Status is the mapping's state, StatusMissing when only links exist.
	Status string
	// Links are the links under the working directories that lead into
	// the share (to its root or below it), sorted.
	Links []string
	// AgeSeconds is how long the mapping has existed when the host
	// records it (the simulated host does), otherwise how long ago this
	// node's groups first saw it (Windows does not record when a global
	// mapping was made); 0 for StatusMissing.
	AgeSeconds int64
	// AgeIsFirstSeen says AgeSeconds counts from when this process first
	// saw the mapping, not from its creation.
	AgeIsFirstSeen bool
}

// ListSmbGlobalMappingsRequest is empty.
type ListSmbGlobalMappingsRequest struct{}

// ListSmbGlobalMappingsResponse lists every share with a mapping or a
// link, sorted by RemotePath.
type ListSmbGlobalMappingsResponse struct {
	Mappings []*SmbGlobalMapping
}

// ReconcileSmbGlobalMappingRequest names the share to repair and the
// credentials to map it with. Windows does not give a mapping's
// credentials back, so the caller (a driver, from the volume's secret)
// supplies them, as it does to NewSmbGlobalMapping.
type ReconcileSmbGlobalMappingRequest struct {
	// RemotePath is \\server\share or a path below it.
	RemotePath string `guard:"-"`
	// Username is empty to map with the node's own identity.
	Username string `guard:"-"`
	// Password is a secret.
	Password string `guard:"secret"`
}

// The actions Reconcile reports.
const (
	// ActionHealthy: the mapping is OK; nothing was done.
	ActionHealthy = "Healthy"
	// ActionUnreferenced: no link leads into the share; nothing was done
	// (Collect removes such mappings).
	ActionUnreferenced = "Unreferenced"
	// ActionRecreated: a mapping that was not OK was removed and made
	// again.
	ActionRecreated = "Recreated"
	// ActionCreated: links led into the share and no mapping served it;
	// one was made.
	ActionCreated = "Created"
)

// ReconcileSmbGlobalMappingResponse says what was done.
type ReconcileSmbGlobalMappingResponse struct {
	// RemotePath is the share root, lower-cased.
	RemotePath string
	// Action is one of the Action constants.
	Action string
	// PreviousStatus is the status found, StatusMissing for none.
	PreviousStatus string
	// Links are the links that lead into the share.
	Links []string
}

// CollectSmbGlobalMappingsRequest says how careful Collect is.
type CollectSmbGlobalMappingsRequest struct {
	// DryRun reports what would be removed and removes nothing.
	DryRun bool `guard:"-"`
	// GraceSeconds keeps mappings younger than this (by AgeSeconds), so
	// that a mapping whose link a driver is about to create is not taken
	// away; 0 is DefaultGraceSeconds, and at most MaxGraceSeconds.
	GraceSeconds int64 `guard:"-"`
}

// DefaultGraceSeconds is Collect's grace period when the request gives
// none: longer than a NodeStageVolume that maps first and links second.
const DefaultGraceSeconds = 600

// MaxGraceSeconds bounds GraceSeconds: a week.
const MaxGraceSeconds = 7 * 24 * 3600

// CollectSmbGlobalMappingsResponse lists what was (or, with DryRun, would
// be) removed and what was kept only for its age.
type CollectSmbGlobalMappingsResponse struct {
	// Removed are the unreferenced mappings removed (DryRun: to remove).
	Removed []*SmbGlobalMapping
	// KeptYoung are unreferenced mappings kept because they are younger
	// than the grace period.
	KeptYoung []*SmbGlobalMapping
}
