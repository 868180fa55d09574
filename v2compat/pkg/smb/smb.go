// Package smb forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/smb: it is
// upstream v2's pkg/smb when this module stands in for
// github.com/kubernetes-csi/csi-proxy/v2 by a replace line. It imports no
// package of this module, only the root module's, so the same file
// compiles under either module path (see the module's doc.go).
package smb

import (
	implfs "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/filesystem"
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/smb"
	implapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/smb/hostapi"
)

// Interface is impl.Interface.
type Interface = impl.Interface

// SMB is impl.SMB.
type SMB = impl.SMB

// NewSMBGlobalMappingRequest is impl.NewSMBGlobalMappingRequest.
type NewSMBGlobalMappingRequest = impl.NewSMBGlobalMappingRequest

// NewSMBGlobalMappingResponse is impl.NewSMBGlobalMappingResponse.
type NewSMBGlobalMappingResponse = impl.NewSMBGlobalMappingResponse

// RemoveSMBGlobalMappingRequest is impl.RemoveSMBGlobalMappingRequest.
type RemoveSMBGlobalMappingRequest = impl.RemoveSMBGlobalMappingRequest

// RemoveSMBGlobalMappingResponse is impl.RemoveSMBGlobalMappingResponse.
type RemoveSMBGlobalMappingResponse = impl.RemoveSMBGlobalMappingResponse

// New is impl.New.
func New(hostAPI implapi.HostAPI, fsClient implfs.Interface) (*SMB, error) {
	return impl.New(hostAPI, fsClient)
}
