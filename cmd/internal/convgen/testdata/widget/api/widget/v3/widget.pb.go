// Package widgetv3 imitates protoc-gen-go output for the generator's golden
// test: an older version whose RPC, messages and some fields have other
// names and types than the model's.
package widgetv3

// Kind is an enum.
type Kind int32

// Kind values.
const (
	Kind_SMALL Kind = 0
	Kind_LARGE Kind = 1
)

// Scope is an enum the model has no use for.
type Scope int32

// Scope values.
const (
	Scope_ANY Scope = 0
)

// FetchRequest is the request of Fetch, the model's Get.
type FetchRequest struct {
	state  struct{}
	Id     string `protobuf:"bytes,1,opt,name=id,proto3"`
	Number string `protobuf:"bytes,2,opt,name=number,proto3"`
	Kind   Kind   `protobuf:"varint,3,opt,name=kind,proto3,enum=v3.Kind"`
	Scope  Scope  `protobuf:"varint,4,opt,name=scope,proto3,enum=v3.Scope"`
}

// FetchResponse is its response.
type FetchResponse struct {
	state    struct{}
	Error    string           `protobuf:"bytes,1,opt,name=error,proto3"`
	Widget   *Widget          `protobuf:"bytes,2,opt,name=widget,proto3"`
	ByNumber map[string]*Part `protobuf:"bytes,3,rep,name=by_number,proto3"`
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
