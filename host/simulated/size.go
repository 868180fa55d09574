package simulated

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a byte count. In JSON and flags it is a number of bytes or a
// string with a binary suffix: "512KiB", "100MiB", "10GiB", "1TiB" (K, M,
// G and T alone mean the same; decimal KB, MB, GB are refused as
// ambiguous).
type Size int64

var sizeUnits = []struct {
	suffixes []string
	shift    uint
}{
	{[]string{"tib", "t"}, 40},
	{[]string{"gib", "g"}, 30},
	{[]string{"mib", "m"}, 20},
	{[]string{"kib", "k"}, 10},
	{[]string{"b", ""}, 0},
}

// ParseSize parses a size such as "1073741824", "1024MiB" or "1GiB".
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q does not start with a number of bytes", s)
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	for _, u := range sizeUnits {
		for _, suf := range u.suffixes {
			if unit != suf {
				continue
			}
			if n > math.MaxInt64>>u.shift {
				return 0, fmt.Errorf("size %q is too large", s)
			}
			return Size(n << u.shift), nil
		}
	}
	switch unit {
	case "kb", "mb", "gb", "tb":
		return 0, fmt.Errorf("size %q: decimal units are ambiguous; use KiB, MiB, GiB or TiB", s)
	}
	return 0, fmt.Errorf("size %q has an unknown unit %q (want B, KiB, MiB, GiB or TiB)", s, unit)
}

// String renders the size with the largest binary unit that divides it
// exactly: "10GiB", "1536MiB", "123B".
func (s Size) String() string {
	for _, u := range sizeUnits[:4] {
		if s != 0 && s%(1<<u.shift) == 0 {
			return strconv.FormatInt(int64(s>>u.shift), 10) + strings.ToUpper(u.suffixes[0][:1]) + "iB"
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// MarshalJSON writes the size as a string such as "10GiB".
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON accepts a number of bytes or a size string.
func (s *Size) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		v, err := ParseSize(str)
		if err != nil {
			return err
		}
		*s = v
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("size %s is neither a whole number of bytes nor a string such as \"10GiB\"", b)
	}
	*s = Size(n)
	return nil
}
