// Package gadgetv2 imitates protoc-gen-go output for the generator's test of
// malformed directives and overrides.
package gadgetv2

// GetRequest is a request.
type GetRequest struct {
	state struct{}
	Id    string `protobuf:"bytes,1,opt,name=id,proto3"`
}

// GetResponse is a response.
type GetResponse struct {
	state struct{}
}

// OldRequest is the request of an RPC renamed to a method the model lacks.
type OldRequest struct {
	state struct{}
}

// OldResponse is its response.
type OldResponse struct {
	state struct{}
}

// HandRequest is the request of an RPC both renamed and hand-written.
type HandRequest struct {
	state struct{}
}

// HandResponse is its response.
type HandResponse struct {
	state struct{}
}
