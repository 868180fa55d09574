package policy_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// knownNotPaths are string request fields that mention a path-like word
// but hold no host path; anything else that does must be a path field.
var knownNotPaths = map[string]bool{"remote_path": true}

// TestEveryPathFieldIsConfined walks every request of every API the daemon
// can serve and checks that each string field whose name suggests a host
// path is one PathFields reports, so a field added by a new API version
// cannot slip past the path roots unnoticed.
func TestEveryPathFieldIsConfined(t *testing.T) {
	seen := 0
	for _, api := range adapter.All() {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(api.Service))
		if err != nil {
			t.Fatalf("%s: %v", api.Name(), err)
		}
		ms := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range ms.Len() {
			checkFields(t, api.Name()+"."+string(ms.Get(i).Name()), ms.Get(i).Input(), &seen, 0)
		}
	}
	if seen == 0 {
		t.Error("no path fields found at all")
	}
}

func checkFields(t *testing.T, where string, md protoreflect.MessageDescriptor, seen *int, depth int) {
	if depth > 8 {
		return
	}
	fs := md.Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		name := strings.ToLower(string(fd.Name()))
		switch {
		case fd.Kind() == protoreflect.MessageKind:
			checkFields(t, where+"."+string(fd.Name()), fd.Message(), seen, depth+1)
		case fd.Kind() != protoreflect.StringKind:
		case policy.IsPathField(name):
			*seen++
		case knownNotPaths[name]:
		case strings.Contains(name, "path") || strings.Contains(name, "dir") || strings.Contains(name, "mount"):
			t.Errorf("%s: string field %s looks like a path but is not confined; classify it in policy.IsPathField or knownNotPaths", where, fd.Name())
		}
	}
}
