// Package iscsi forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/iscsi: it is
// upstream v2's pkg/iscsi when this module stands in for
// github.com/kubernetes-csi/csi-proxy/v2 by a replace line. It imports no
// package of this module, only the root module's, so the same file
// compiles under either module path (see the module's doc.go).
package iscsi

import (
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/iscsi"
	implapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/iscsi/hostapi"
)

// AddTargetPortalRequest is impl.AddTargetPortalRequest.
type AddTargetPortalRequest = impl.AddTargetPortalRequest

// AddTargetPortalResponse is impl.AddTargetPortalResponse.
type AddTargetPortalResponse = impl.AddTargetPortalResponse

// AuthenticationType is impl.AuthenticationType.
type AuthenticationType = impl.AuthenticationType

// ConnectTargetRequest is impl.ConnectTargetRequest.
type ConnectTargetRequest = impl.ConnectTargetRequest

// ConnectTargetResponse is impl.ConnectTargetResponse.
type ConnectTargetResponse = impl.ConnectTargetResponse

// DisconnectTargetRequest is impl.DisconnectTargetRequest.
type DisconnectTargetRequest = impl.DisconnectTargetRequest

// DisconnectTargetResponse is impl.DisconnectTargetResponse.
type DisconnectTargetResponse = impl.DisconnectTargetResponse

// DiscoverTargetPortalRequest is impl.DiscoverTargetPortalRequest.
type DiscoverTargetPortalRequest = impl.DiscoverTargetPortalRequest

// DiscoverTargetPortalResponse is impl.DiscoverTargetPortalResponse.
type DiscoverTargetPortalResponse = impl.DiscoverTargetPortalResponse

// GetTargetDisksRequest is impl.GetTargetDisksRequest.
type GetTargetDisksRequest = impl.GetTargetDisksRequest

// GetTargetDisksResponse is impl.GetTargetDisksResponse.
type GetTargetDisksResponse = impl.GetTargetDisksResponse

// ListTargetPortalsRequest is impl.ListTargetPortalsRequest.
type ListTargetPortalsRequest = impl.ListTargetPortalsRequest

// ListTargetPortalsResponse is impl.ListTargetPortalsResponse.
type ListTargetPortalsResponse = impl.ListTargetPortalsResponse

// RemoveTargetPortalRequest is impl.RemoveTargetPortalRequest.
type RemoveTargetPortalRequest = impl.RemoveTargetPortalRequest

// RemoveTargetPortalResponse is impl.RemoveTargetPortalResponse.
type RemoveTargetPortalResponse = impl.RemoveTargetPortalResponse

// TargetPortal is impl.TargetPortal.
type TargetPortal = impl.TargetPortal

// SetMutualChapSecretRequest is impl.SetMutualChapSecretRequest.
type SetMutualChapSecretRequest = impl.SetMutualChapSecretRequest

// SetMutualChapSecretResponse is impl.SetMutualChapSecretResponse.
type SetMutualChapSecretResponse = impl.SetMutualChapSecretResponse

// Interface is impl.Interface.
type Interface = impl.Interface

// ISCSI is impl.ISCSI.
type ISCSI = impl.ISCSI

// The constants of impl.
const (
	// NONE is impl.NONE.
	NONE = impl.NONE
	// ONE_WAY_CHAP is impl.ONE_WAY_CHAP.
	ONE_WAY_CHAP = impl.ONE_WAY_CHAP
	// MUTUAL_CHAP is impl.MUTUAL_CHAP.
	MUTUAL_CHAP = impl.MUTUAL_CHAP
)

// New is impl.New.
func New(hostAPI implapi.HostAPI) (*ISCSI, error) { return impl.New(hostAPI) }
