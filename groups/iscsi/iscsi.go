// Package iscsi is the iSCSI API group: target portals, discovery, sessions
// with or without CHAP, and the disks a target provides.
//
// CHAP secrets are secrets: nothing in this package logs them or formats
// them into errors. See package groups for how the pieces fit together.
package iscsi

import (
	"context"
	"strconv"
)

// Interface is the iSCSI group as drivers call it, in-process or through
// the daemon. Errors wrap errdefs sentinels.
type Interface interface {
	// AddTargetPortal registers a portal; registering it again succeeds.
	//convgen:mutates
	AddTargetPortal(context.Context, *AddTargetPortalRequest) (*AddTargetPortalResponse, error)
	// DiscoverTargetPortal returns the IQNs a portal offers. It only asks
	// the portal and keeps nothing.
	//convgen:read
	DiscoverTargetPortal(context.Context, *DiscoverTargetPortalRequest) (*DiscoverTargetPortalResponse, error)
	// RemoveTargetPortal unregisters a portal.
	//convgen:mutates
	RemoveTargetPortal(context.Context, *RemoveTargetPortalRequest) (*RemoveTargetPortalResponse, error)
	// ListTargetPortals returns the registered portals.
	//convgen:read
	ListTargetPortals(context.Context, *ListTargetPortalsRequest) (*ListTargetPortalsResponse, error)
	// ConnectTarget logs in to a target; an existing session is success.
	//convgen:mutates
	ConnectTarget(context.Context, *ConnectTargetRequest) (*ConnectTargetResponse, error)
	// DisconnectTarget logs out of a target; no session is success.
	//convgen:mutates
	DisconnectTarget(context.Context, *DisconnectTargetRequest) (*DisconnectTargetResponse, error)
	// GetTargetDisks returns the disk numbers (as decimal strings) of a
	// connected target's LUNs; none (an empty list) for a target without
	// a session, as upstream.
	//convgen:read
	GetTargetDisks(context.Context, *GetTargetDisksRequest) (*GetTargetDisksResponse, error)
	// SetMutualChapSecret sets the initiator's mutual CHAP secret.
	//convgen:mutates
	SetMutualChapSecret(context.Context, *SetMutualChapSecretRequest) (*SetMutualChapSecretResponse, error)
}

// TargetPortal is a portal's address and port; port 0 means 3260.
type TargetPortal struct {
	TargetAddress string
	TargetPort    uint32
}

// AuthenticationType selects how ConnectTarget authenticates. The values
// are those of the wire enum.
type AuthenticationType int32

// The authentication types.
const (
	AuthNone       AuthenticationType = 0
	AuthOneWayCHAP AuthenticationType = 1
	AuthMutualCHAP AuthenticationType = 2
)

// String names the authentication type as the wire enum does.
func (a AuthenticationType) String() string {
	switch a {
	case AuthNone:
		return "NONE"
	case AuthOneWayCHAP:
		return "ONE_WAY_CHAP"
	case AuthMutualCHAP:
		return "MUTUAL_CHAP"
	}
	return "AuthenticationType(" + strconv.Itoa(int(a)) + ")"
}

// AddTargetPortalRequest names a portal.
type AddTargetPortalRequest struct {
	TargetPortal *TargetPortal `guard:"-"`
}

// AddTargetPortalResponse is empty.
type AddTargetPortalResponse struct{}

// DiscoverTargetPortalRequest names a portal.
type DiscoverTargetPortalRequest struct {
	TargetPortal *TargetPortal `guard:"-"`
}

// DiscoverTargetPortalResponse lists target IQNs.
type DiscoverTargetPortalResponse struct {
	IQNs []string
}

// RemoveTargetPortalRequest names a portal.
type RemoveTargetPortalRequest struct {
	TargetPortal *TargetPortal `guard:"-"`
}

// RemoveTargetPortalResponse is empty.
type RemoveTargetPortalResponse struct{}

// ListTargetPortalsRequest is empty.
type ListTargetPortalsRequest struct{}

// ListTargetPortalsResponse lists the registered portals.
type ListTargetPortalsResponse struct {
	TargetPortals []*TargetPortal
}

// ConnectTargetRequest names a target and how to log in.
type ConnectTargetRequest struct {
	TargetPortal *TargetPortal      `guard:"-"`
	IQN          string             `guard:"-"`
	AuthType     AuthenticationType `guard:"-"`
	ChapUsername string             `guard:"-"`
	// ChapSecret is a secret.
	ChapSecret string `guard:"secret"`
}

// ConnectTargetResponse is empty.
type ConnectTargetResponse struct{}

// DisconnectTargetRequest names a target.
type DisconnectTargetRequest struct {
	TargetPortal *TargetPortal `guard:"-"`
	IQN          string        `guard:"-"`
}

// DisconnectTargetResponse is empty.
type DisconnectTargetResponse struct{}

// GetTargetDisksRequest names a target.
type GetTargetDisksRequest struct {
	TargetPortal *TargetPortal `guard:"-"`
	IQN          string        `guard:"-"`
}

// GetTargetDisksResponse lists disk numbers as decimal strings.
type GetTargetDisksResponse struct {
	DiskIDs []string
}

// SetMutualChapSecretRequest carries the secret.
type SetMutualChapSecretRequest struct {
	// MutualChapSecret is a secret.
	MutualChapSecret string `guard:"secret"`
}

// SetMutualChapSecretResponse is empty.
type SetMutualChapSecretResponse struct{}
