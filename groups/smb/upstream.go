package smb

import "context"

// Upstream's v2 library (KEP-3636; kubernetes-csi/csi-proxy branch
// library-development at e776c65, pkg/smb/smb.go and pkg/smb/types.go)
// spells the group's names with "SMB" where the v1 wire contract, and so
// this package, has "Smb". The names below are those, for drivers that
// move from pkg/smb by changing the import: the types are the same types,
// and SMB adds the two methods under upstream's spelling.

// NewSMBGlobalMappingRequest is upstream v2's name of
// NewSmbGlobalMappingRequest.
type NewSMBGlobalMappingRequest = NewSmbGlobalMappingRequest

// NewSMBGlobalMappingResponse is upstream v2's name of
// NewSmbGlobalMappingResponse.
type NewSMBGlobalMappingResponse = NewSmbGlobalMappingResponse

// RemoveSMBGlobalMappingRequest is upstream v2's name of
// RemoveSmbGlobalMappingRequest.
type RemoveSMBGlobalMappingRequest = RemoveSmbGlobalMappingRequest

// RemoveSMBGlobalMappingResponse is upstream v2's name of
// RemoveSmbGlobalMappingResponse.
type RemoveSMBGlobalMappingResponse = RemoveSmbGlobalMappingResponse

// SMB is an Interface (from inprocess.Node.SMB or client.Client.SMB) that
// also answers to upstream v2's method names, as upstream's *smb.SMB
// does: &smb.SMB{Interface: node.SMB()}.
type SMB struct {
	Interface
}

// NewSMBGlobalMapping is NewSmbGlobalMapping under upstream v2's name.
func (s SMB) NewSMBGlobalMapping(ctx context.Context, r *NewSMBGlobalMappingRequest) (*NewSMBGlobalMappingResponse, error) {
	return s.NewSmbGlobalMapping(ctx, r)
}

// RemoveSMBGlobalMapping is RemoveSmbGlobalMapping under upstream v2's
// name.
func (s SMB) RemoveSMBGlobalMapping(ctx context.Context, r *RemoveSMBGlobalMappingRequest) (*RemoveSMBGlobalMappingResponse, error) {
	return s.RemoveSmbGlobalMapping(ctx, r)
}
