package modules

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// packModule writes the module in dir as mod@version into proxy, in the
// layout of a GOPROXY (<escaped path>/@v/list, .info, .mod, .zip), with
// the files a tag of this working tree would hold.
func packModule(t *testing.T, proxy, dir, mod, version string) {
	t.Helper()
	escaped, err := module.EscapePath(mod)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": goMod} {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zf, err := os.Create(filepath.Join(out, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	// zip.Create leaves out, as the go command does, the files of nested
	// modules (cmd/, test/..., examples/csi-driver...) and of vendor/.
	if err := zip.Create(zf, module.Version{Path: mod, Version: version}, moduleFiles(t, dir)); err != nil {
		t.Fatalf("pack %s@%s: %v", mod, version, err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
}

// moduleFiles lists the files below dir that a commit would hold: git's
// tracked files and the untracked ones it does not ignore (so that a file
// not yet added is checked as it will be tagged, while bin/ and dist/ are
// not packed). Without git (an unpacked archive), every regular file.
func moduleFiles(t *testing.T, dir string) []zip.File {
	t.Helper()
	var rel []string
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	if out, err := cmd.Output(); err == nil {
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 {
				rel = append(rel, string(p))
			}
		}
	} else {
		t.Logf("git ls-files: %v; packing every file below %s", err, dir)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				r, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				rel = append(rel, filepath.ToSlash(r))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var files []zip.File
	for _, r := range rel {
		path := filepath.Join(dir, filepath.FromSlash(r))
		// A tracked file deleted in the working tree is not in the tag
		// either once the deletion is committed.
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(r, ".git/") {
			continue
		}
		files = append(files, diskFile{rel: r, path: path})
	}
	return files
}

// diskFile is a file of the working tree, as zip.Create reads it.
type diskFile struct{ rel, path string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }
