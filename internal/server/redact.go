package server

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
)

// Redacted replaces the value of every non-empty secret string or bytes
// field in Redact's output: the audit log's word for a redacted secret,
// which it also writes for library mode's model requests.
const Redacted = audit.Redacted

// isSecret tells whether a field holds a secret, by its name: the rule
// audit.IsSecretField states for model requests too ("password" or
// "secret" in the name, in any case). Deciding by the field's name rather
// than by a list of messages covers SMB's password, iSCSI's chap_secret
// and MutualChapSecret, and any field a future version adds under such a
// name.
func isSecret(fd protoreflect.FieldDescriptor) bool {
	return audit.IsSecretField(string(fd.Name()))
}

// Redact returns a copy of m that is safe to log: every secret field (one
// whose name contains "password" or "secret", in any case) that is set is
// replaced, through nested messages, lists and map values. Secret strings
// and bytes become Redacted, so a log still shows that a secret was sent;
// secret fields of other kinds (a numeric PIN) are cleared. m itself is not
// changed. A nil or invalid message is returned as is.
func Redact(m proto.Message) proto.Message {
	if m == nil || !m.ProtoReflect().IsValid() {
		return m
	}
	c := proto.Clone(m)
	redact(c.ProtoReflect())
	return c
}

// redact scrubs m in place. Mutating the field being visited is allowed
// during Range.
func redact(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		secret := isSecret(fd)
		switch {
		case fd.IsMap():
			valFD := fd.MapValue()
			mp := m.Mutable(fd).Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				switch {
				case isMessage(valFD):
					redact(mv.Message())
				case secret:
					if nv, keep := scrub(valFD, mv); keep {
						mp.Set(k, nv)
					} else {
						mp.Clear(k)
					}
				}
				return true
			})
		case fd.IsList():
			l := m.Mutable(fd).List()
			if isMessage(fd) {
				for i := range l.Len() {
					redact(l.Get(i).Message())
				}
			} else if secret {
				if fd.Kind() != protoreflect.StringKind && fd.Kind() != protoreflect.BytesKind {
					m.Clear(fd)
					return true
				}
				for i := range l.Len() {
					if nv, keep := scrub(fd, l.Get(i)); keep {
						l.Set(i, nv)
					}
				}
			}
		case isMessage(fd):
			redact(m.Mutable(fd).Message())
		case secret:
			if nv, keep := scrub(fd, v); keep {
				m.Set(fd, nv)
			} else {
				m.Clear(fd)
			}
		}
		return true
	})
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind
}

// scrub returns the replacement of one secret scalar value, or keep=false
// when the value should be cleared instead.
func scrub(fd protoreflect.FieldDescriptor, v protoreflect.Value) (nv protoreflect.Value, keep bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if v.String() == "" {
			return v, true
		}
		return protoreflect.ValueOfString(Redacted), true
	case protoreflect.BytesKind:
		if len(v.Bytes()) == 0 {
			return v, true
		}
		return protoreflect.ValueOfBytes([]byte(Redacted)), true
	}
	return protoreflect.Value{}, false
}
