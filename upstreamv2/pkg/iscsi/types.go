package iscsi

// The request, response and value types of upstream v2's pkg/iscsi
// (kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/iscsi/types.go), as aliases of this repository's group model
// (groups/iscsi), which carries upstream's names: a value built here is the
// group's own, so it goes through library mode unconverted.

import model "github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"

// AddTargetPortalRequest is upstream v2's iscsi.AddTargetPortalRequest: model.AddTargetPortalRequest.
type AddTargetPortalRequest = model.AddTargetPortalRequest

// AddTargetPortalResponse is upstream v2's iscsi.AddTargetPortalResponse: model.AddTargetPortalResponse.
type AddTargetPortalResponse = model.AddTargetPortalResponse

// AuthenticationType is upstream v2's iscsi.AuthenticationType: model.AuthenticationType.
type AuthenticationType = model.AuthenticationType

// ConnectTargetRequest is upstream v2's iscsi.ConnectTargetRequest: model.ConnectTargetRequest.
type ConnectTargetRequest = model.ConnectTargetRequest

// ConnectTargetResponse is upstream v2's iscsi.ConnectTargetResponse: model.ConnectTargetResponse.
type ConnectTargetResponse = model.ConnectTargetResponse

// DisconnectTargetRequest is upstream v2's iscsi.DisconnectTargetRequest: model.DisconnectTargetRequest.
type DisconnectTargetRequest = model.DisconnectTargetRequest

// DisconnectTargetResponse is upstream v2's iscsi.DisconnectTargetResponse: model.DisconnectTargetResponse.
type DisconnectTargetResponse = model.DisconnectTargetResponse

// DiscoverTargetPortalRequest is upstream v2's iscsi.DiscoverTargetPortalRequest: model.DiscoverTargetPortalRequest.
type DiscoverTargetPortalRequest = model.DiscoverTargetPortalRequest

// DiscoverTargetPortalResponse is upstream v2's iscsi.DiscoverTargetPortalResponse: model.DiscoverTargetPortalResponse.
type DiscoverTargetPortalResponse = model.DiscoverTargetPortalResponse

// GetTargetDisksRequest is upstream v2's iscsi.GetTargetDisksRequest: model.GetTargetDisksRequest.
type GetTargetDisksRequest = model.GetTargetDisksRequest

// GetTargetDisksResponse is upstream v2's iscsi.GetTargetDisksResponse: model.GetTargetDisksResponse.
type GetTargetDisksResponse = model.GetTargetDisksResponse

// ListTargetPortalsRequest is upstream v2's iscsi.ListTargetPortalsRequest: model.ListTargetPortalsRequest.
type ListTargetPortalsRequest = model.ListTargetPortalsRequest

// ListTargetPortalsResponse is upstream v2's iscsi.ListTargetPortalsResponse: model.ListTargetPortalsResponse.
type ListTargetPortalsResponse = model.ListTargetPortalsResponse

// RemoveTargetPortalRequest is upstream v2's iscsi.RemoveTargetPortalRequest: model.RemoveTargetPortalRequest.
type RemoveTargetPortalRequest = model.RemoveTargetPortalRequest

// RemoveTargetPortalResponse is upstream v2's iscsi.RemoveTargetPortalResponse: model.RemoveTargetPortalResponse.
type RemoveTargetPortalResponse = model.RemoveTargetPortalResponse

// TargetPortal is upstream v2's iscsi.TargetPortal: model.TargetPortal.
type TargetPortal = model.TargetPortal

// SetMutualChapSecretRequest is upstream v2's iscsi.SetMutualChapSecretRequest: model.SetMutualChapSecretRequest.
type SetMutualChapSecretRequest = model.SetMutualChapSecretRequest

// SetMutualChapSecretResponse is upstream v2's iscsi.SetMutualChapSecretResponse: model.SetMutualChapSecretResponse.
type SetMutualChapSecretResponse = model.SetMutualChapSecretResponse

// Upstream v2's constants, as the group model names them.
const (
	// NONE is upstream v2's iscsi.NONE.
	NONE = model.NONE
	// ONE_WAY_CHAP is upstream v2's iscsi.ONE_WAY_CHAP.
	ONE_WAY_CHAP = model.ONE_WAY_CHAP
	// MUTUAL_CHAP is upstream v2's iscsi.MUTUAL_CHAP.
	MUTUAL_CHAP = model.MUTUAL_CHAP
)
