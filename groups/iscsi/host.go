package iscsi

import "context"

// Portal is a validated portal: the port is never 0.
type Portal struct {
	Address string
	Port    uint32
}

// Login is a validated ConnectTarget request.
type Login struct {
	Portal   Portal
	IQN      string
	AuthType AuthenticationType
	Username string
	// Secret is a secret: never log it or put it in an error.
	Secret string
}

// Host is what a host backend provides for the iSCSI group.
type Host interface {
	// AddTargetPortal registers p; an existing registration is success.
	AddTargetPortal(ctx context.Context, p Portal) error
	// DiscoverTargetPortal returns the IQNs p offers.
	DiscoverTargetPortal(ctx context.Context, p Portal) ([]string, error)
	// RemoveTargetPortal unregisters p; an unknown portal is
	// errdefs.ErrNotFound.
	RemoveTargetPortal(ctx context.Context, p Portal) error
	// ListTargetPortals returns the registered portals.
	ListTargetPortals(ctx context.Context) ([]Portal, error)
	// ConnectTarget logs in; an existing session is success. Rejected CHAP
	// credentials are errdefs.ErrPermissionDenied.
	ConnectTarget(ctx context.Context, l Login) error
	// DisconnectTarget logs out; no session is success.
	DisconnectTarget(ctx context.Context, p Portal, iqn string) error
	// TargetDisks returns the disk numbers of a connected target. A target
	// with no session gives an empty list, as upstream answers; a target
	// the backend does not know through p is errdefs.ErrNotFound.
	TargetDisks(ctx context.Context, p Portal, iqn string) ([]uint32, error)
	// SetMutualChapSecret sets the initiator's mutual CHAP secret.
	SetMutualChapSecret(ctx context.Context, secret string) error
}
