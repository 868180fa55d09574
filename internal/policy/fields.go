package policy

import (
	"reflect"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/fieldname"
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

// ModelPaths returns the non-empty host paths of a request given as a
// group model struct (or a pointer to one), as PathFields does for a wire
// message: a string field, or a list of strings, is a path when
// IsPathField accepts the snake_case form of its Go name (TargetPath →
// target_path; RemotePath → remote_path is not), in nested structs,
// pointers, lists and map values too, in field order. The models use the
// wire's field names, so one rule confines both.
func ModelPaths(model any) []PathField {
	var out []PathField
	collectModelPaths(reflect.ValueOf(model), &out, 0)
	return out
}

// maxModelDepth bounds the walk; the models nest two levels deep.
const maxModelDepth = 16

func collectModelPaths(v reflect.Value, out *[]PathField, depth int) {
	if depth > maxModelDepth {
		return
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fv := v.Field(i)
			name := fieldname.Snake(f.Name)
			switch {
			case fv.Kind() == reflect.String && IsPathField(name):
				if s := fv.String(); s != "" {
					*out = append(*out, PathField{Name: name, Value: s})
				}
			case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String && IsPathField(name):
				for j := range fv.Len() {
					if s := fv.Index(j).String(); s != "" {
						*out = append(*out, PathField{Name: name, Value: s})
					}
				}
			default:
				collectModelPaths(fv, out, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for j := range v.Len() {
			collectModelPaths(v.Index(j), out, depth+1)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			collectModelPaths(iter.Value(), out, depth+1)
		}
	}
}
