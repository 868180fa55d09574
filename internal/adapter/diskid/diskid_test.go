package diskid

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestParse(t *testing.T) {
	for id, want := range map[string]uint32{"0": 0, "7": 7, "007": 7, "4294967295": 1<<32 - 1} {
		got, err := Parse(id)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", id, got, err, want)
		}
	}
	for _, id := range []string{"", " 1", "1 ", "+1", "-1", "0x1", "1.0", "one", "4294967296", "18446744073709551617"} {
		if n, err := Parse(id); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Parse(%q) = %d, %v; want ErrInvalidArgument", id, n, err)
		}
	}
}

func TestFormatKeys(t *testing.T) {
	got := FormatKeys(map[uint32]int{0: 1, 12: 2}, func(v int) int { return v * 10 })
	if len(got) != 2 || got["0"] != 10 || got["12"] != 20 {
		t.Errorf("FormatKeys = %v", got)
	}
	if FormatKeys[int, int](nil, nil) != nil {
		t.Error("FormatKeys(nil) is not nil")
	}
	if Format(4294967295) != "4294967295" {
		t.Error("Format(max uint32)")
	}
}
