// Package fieldname maps the Go field names of the group models
// (groups/<group>) to the snake_case names the wire API gives the same
// fields, so the rules that go by a field's wire name (which fields hold
// host paths, which hold secrets) apply to model requests exactly as they
// apply to wire messages: VolumeID → volume_id, TargetPath → target_path,
// IQN → iqn, MutualChapSecret → mutual_chap_secret.
package fieldname

import (
	"strings"
	"unicode"
)

// Snake returns the snake_case form of a Go identifier. A word starts at an
// upper-case letter that follows a lower-case letter or digit, or that
// follows another upper-case letter and precedes a lower-case one (the
// last letter of an initialism: "IDPath" → "id_path").
func Snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
