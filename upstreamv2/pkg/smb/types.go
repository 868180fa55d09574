package smb

// The request, response and value types of upstream v2's pkg/smb
// (kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/smb/types.go), as aliases of this repository's group model
// (groups/smb), which carries upstream's names: a value built here is the
// group's own, so it goes through library mode unconverted.

import model "github.com/csi-node-proxy/csi-node-proxy/groups/smb"

// NewSMBGlobalMappingRequest is upstream v2's smb.NewSMBGlobalMappingRequest: model.NewSMBGlobalMappingRequest.
type NewSMBGlobalMappingRequest = model.NewSMBGlobalMappingRequest

// NewSMBGlobalMappingResponse is upstream v2's smb.NewSMBGlobalMappingResponse: model.NewSMBGlobalMappingResponse.
type NewSMBGlobalMappingResponse = model.NewSMBGlobalMappingResponse

// RemoveSMBGlobalMappingRequest is upstream v2's smb.RemoveSMBGlobalMappingRequest: model.RemoveSMBGlobalMappingRequest.
type RemoveSMBGlobalMappingRequest = model.RemoveSMBGlobalMappingRequest

// RemoveSMBGlobalMappingResponse is upstream v2's smb.RemoveSMBGlobalMappingResponse: model.RemoveSMBGlobalMappingResponse.
type RemoveSMBGlobalMappingResponse = model.RemoveSMBGlobalMappingResponse
