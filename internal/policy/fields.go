package policy

import (
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// PathField is one host path in a request.
type PathField struct {
	// Name is the field's proto name, e.g. target_path.
	Name string
	// Value is the path as sent.
	Value string
}

// notPaths are string fields whose names look like paths but are not host
// paths: remote_path is an SMB share (\\server\share\dir).
var notPaths = map[string]bool{"remote_path": true}

// IsPathField tells whether a string field with this proto name holds a
// host path: its name ends in "path" (path, target_path, source_path,
// local_path; any case) or is mount_point or mount, the names older API
// versions use, and it is not one of the fields known to hold something
// else (remote_path).
func IsPathField(name string) bool {
	n := strings.ToLower(name)
	if notPaths[n] {
		return false
	}
	return strings.HasSuffix(n, "path") || n == "mount_point" || n == "mount"
}

// PathFields returns the non-empty host paths of a request, found by field
// name (IsPathField) in the message and every message nested in it, lists
// included, in field order. The wire names are the contract, so a field a
// future API version adds under such a name is confined too.
func PathFields(m proto.Message) []PathField {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil
	}
	var out []PathField
	collectPaths(m.ProtoReflect(), &out)
	return out
}

func collectPaths(m protoreflect.Message, out *[]PathField) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					collectPaths(mv.Message(), out)
					return true
				})
			}
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				switch {
				case fd.Kind() == protoreflect.MessageKind:
					collectPaths(l.Get(j).Message(), out)
				case fd.Kind() == protoreflect.StringKind && IsPathField(string(fd.Name())) && l.Get(j).String() != "":
					*out = append(*out, PathField{Name: string(fd.Name()), Value: l.Get(j).String()})
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			collectPaths(v.Message(), out)
		case fd.Kind() == protoreflect.StringKind && IsPathField(string(fd.Name())):
			if s := v.String(); s != "" {
				*out = append(*out, PathField{Name: string(fd.Name()), Value: s})
			}
		}
	}
}
