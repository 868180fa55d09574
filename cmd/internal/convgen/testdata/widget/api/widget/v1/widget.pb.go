// Package widgetv1 imitates protoc-gen-go output for the generator's golden
// test: exported fields with protobuf tags next to unexported state.
package widgetv1

// Kind is an enum.
type Kind int32

// Kind values.
const (
	Kind_SMALL Kind = 0
	Kind_LARGE Kind = 1
)

// GetRequest is a request.
type GetRequest struct {
	state  struct{}
	Id     string            `protobuf:"bytes,1,opt,name=id,proto3"`
	Kind   Kind              `protobuf:"varint,2,opt,name=kind,proto3,enum=v1.Kind"`
	Labels map[string]string `protobuf:"bytes,3,rep,name=labels,proto3"`
}

// GetResponse is a response.
type GetResponse struct {
	state    struct{}
	Widget   *Widget          `protobuf:"bytes,1,opt,name=widget,proto3"`
	Parts    []*Part          `protobuf:"bytes,2,rep,name=parts,proto3"`
	ByNumber map[uint32]*Part `protobuf:"bytes,3,rep,name=by_number,proto3"`
	PartIds  []string         `protobuf:"bytes,4,rep,name=part_ids,proto3"`
}

// Widget is a nested message.
type Widget struct {
	state   struct{}
	Name    string `protobuf:"bytes,1,opt,name=name,proto3"`
	SizeMib int64  `protobuf:"varint,2,opt,name=size_mib,proto3"`
}

// Part is a nested message.
type Part struct {
	state struct{}
	Lunid string `protobuf:"bytes,1,opt,name=LUNID,proto3"`
}
