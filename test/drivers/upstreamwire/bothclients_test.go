package upstreamwire

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// conflictLdflag is the link-time way through the registration conflict:
// protobuf-go's conflictPolicy variable, set to "warn" in the binary
// (google.golang.org/protobuf/reflect/protoregistry, registry.go).
const conflictLdflag = "-X google.golang.org/protobuf/reflect/protoregistry.conflictPolicy=warn"

// TestProtobufRegistrationConflict builds bothclients (upstream's v1 API
// packages and our client in one binary) and runs it: by default it
// panics at start-up naming the conflict, as a driver linking both does;
// GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn at run time, or the
// conflictPolicy linker flag at build time, let it start and use
// upstream's messages (docs/driver-migration.md, §2).
func TestProtobufRegistrationConflict(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, args ...string) string {
		t.Helper()
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, args...), "./bothclients")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, out)
		}
		return bin
	}
	run := func(bin string, env ...string) (string, error) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	plain := build("plain")
	out, err := run(plain, "GOLANG_PROTOBUF_REGISTRATION_CONFLICT=")
	if err == nil || !strings.Contains(out, "name conflict over v1.") {
		t.Fatalf("both linked, default policy: %v\n%s\nwant the start-up panic over a v1 name", err, out)
	}
	if out, err := run(plain, "GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn"); err != nil || !strings.Contains(out, "started:") {
		t.Errorf("GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn: %v\n%s", err, out)
	}
	warned := build("warn", "-ldflags="+conflictLdflag)
	if out, err := run(warned, "GOLANG_PROTOBUF_REGISTRATION_CONFLICT="); err != nil || !strings.Contains(out, "started:") {
		t.Errorf("built with %s: %v\n%s", conflictLdflag, err, out)
	}
}
