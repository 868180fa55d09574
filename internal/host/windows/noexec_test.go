//go:build !windows

package windows

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoChildProcess holds the Windows backend to its rule: nothing in the
// Windows build of the daemon can start a process. It checks the build
// graph (os/exec must not be linked into csi-node-proxy.exe or any
// internal/host/windows package) and the source (no direct process-creation call).
// It runs on Linux, where the go tool is, for the GOOS=windows build.
func TestNoChildProcess(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	// The daemon is in the cmd module (../../../cmd), which resolves this
	// module's packages through its replace, so one listing from there
	// covers the daemon and every internal/host/windows package.
	cmd := exec.Command("go", "list", "-deps", "./csi-node-proxy", "github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/...")
	cmd.Dir = filepath.Join("..", "..", "..", "cmd")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list returned only %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range deps {
		if d == "os/exec" {
			t.Errorf("the Windows build links os/exec: find who imports it with GOOS=windows go -C cmd list -deps -f '{{.ImportPath}} {{.Imports}}' ./csi-node-proxy")
		}
	}

	forbidden := regexp.MustCompile(`\b(StartProcess|CreateProcess\w*|ShellExecute\w*|WinExec|ForkExec)\s*\(`)
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := forbidden.Find(src); m != nil {
			t.Errorf("%s calls %s: the Windows backend must not start processes", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
