package client

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// checkUTF8 refuses a wire request with a string that is not valid UTF-8,
// naming the field (and, for a list or map, which element) but never
// quoting the value: it may be a secret. gRPC would refuse to marshal the
// request with a bare codes.Internal ("string field contains invalid
// UTF-8"), which wraps no sentinel; library mode refuses the same request
// with errdefs.ErrInvalidArgument naming the field, and so does this.
func checkUTF8(method string, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil
	}
	if path := invalidUTF8(pm.ProtoReflect(), ""); path != "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s: %s is not valid UTF-8; it was not sent", shortMethod(method), path)
	}
	return nil
}

// shortMethod turns /v1.Disk/ListDiskIDs into v1.Disk.ListDiskIDs.
func shortMethod(method string) string {
	return strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", ".")
}

// invalidUTF8 returns the path of the first string in m that is not valid
// UTF-8 (fields by their proto names, lists by index, maps by "a key" or
// the value of a key that is valid UTF-8), or "" if there is none.
func invalidUTF8(m protoreflect.Message, prefix string) string {
	var bad string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := prefix + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if bad = invalidValue(fd, l.Get(i), fmt.Sprintf("%s[%d]", name, i)); bad != "" {
					return false
				}
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				key := k.Value()
				if s, ok := key.Interface().(string); ok && !utf8.ValidString(s) {
					bad = name + " (a key)"
					return false
				}
				// The key is shown as a position only when it is not a
				// string: a string key may be as secret as a value.
				where := name + " (the value of a key)"
				if _, ok := key.Interface().(string); !ok {
					where = fmt.Sprintf("%s[%v]", name, key.Interface())
				}
				bad = invalidValue(fd.MapValue(), mv, where)
				return bad == ""
			})
		default:
			bad = invalidValue(fd, v, name)
		}
		return bad == ""
	})
	return bad
}

// invalidValue checks one value of field fd: a string, or a message to
// walk; other kinds cannot be invalid UTF-8.
func invalidValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, path string) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			return path
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return invalidUTF8(v.Message(), path+".")
	}
	return ""
}
