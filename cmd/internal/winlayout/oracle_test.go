package winlayout

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLayoutOracle compares every figure of the table: the Go value in
// the windows/amd64 build against the C compiler's for the SDK
// declaration. A figure the code no longer has fails like a mismatch.
func TestLayoutOracle(t *testing.T) {
	if os.Getenv("CSI_NODE_PROXY_LAYOUT_ORACLE") == "" {
		t.Skip("the layout oracle runs in make layout-oracle (CSI_NODE_PROXY_LAYOUT_ORACLE=1, or =wine to cross-check the values by running the program under Wine; needs " + mingwCC + ")")
	}
	if _, err := exec.LookPath(mingwCC); err != nil {
		t.Fatalf("%s is not installed (Debian: apt-get install gcc-mingw-w64-x86-64): %v", mingwCC, err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cvals, err := compileFigures(dir, figures)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CSI_NODE_PROXY_LAYOUT_ORACLE") == "wine" {
		wvals, err := figuresUnderWine(dir, figures)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range figures {
			if wvals[i] != cvals[i] {
				t.Errorf("%s: the assembly says %s, the program under Wine printed %q", f.C, cvals[i], wvals[i])
			}
		}
		t.Logf("%d figures printed under Wine agree with the assembly", len(figures))
	}
	tree, err := loadGoTree(root)
	if err != nil {
		t.Fatalf("loading the Go code for windows/amd64: %v", err)
	}
	mismatches := 0
	for i, f := range figures {
		got, err := tree.figure(f.Go)
		if err != nil {
			t.Errorf("%s: the Go figure is gone: %v", f.Go, err)
			mismatches++
			continue
		}
		want := cvals[i]
		if strings.HasPrefix(f.Go, "callargs ") {
			want, _, _ = strings.Cut(want, ":") // a LazyProc.Call passes uintptrs: the count is what can be wrong
		}
		if got != want {
			t.Errorf("%s = %s, but %s = %s (%s)", f.Go, got, f.C, want, f.Src)
			mismatches++
		}
	}
	t.Logf("%d figures compared with %s, %d mismatches", len(figures), mingwCC, mismatches)
}
