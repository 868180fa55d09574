// Package platformcheck type-checks Go packages for a platform from their
// source, without compiling them: make test compiles everything for
// linux/amd64 and windows/amd64 only, and this is how it still learns that
// the code builds for every other platform the release ships (linux/arm64),
// where struct field types, constants and build-tagged files differ.
//
// Compiling the daemon and its dependencies for one more platform cost a
// cold make test about 120 CPU seconds (its standard library and every
// dependency once more); type-checking the same import graph from source
// costs about 10 (issue 26). What a type check cannot see, the compiler's
// back end (assembly, linkname), is the same code on every platform here:
// the release build (make release) compiles each platform in full.
package platformcheck

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Result is what TypeCheck found for one platform.
type Result struct {
	// Packages is how many packages were type-checked, dependencies and
	// the standard library included.
	Packages int
	// Loaded names every package type-checked, by import path.
	Loaded map[string]bool
	// Errors are the load and type errors, each with its position.
	Errors []string
}

// TypeCheck type-checks the packages the patterns name, and every package
// they import, for platform ("os/arch") from source, as go build would with
// CGO_ENABLED=0 (the release builds are static). dir is where go list runs
// (a module's directory); env is added to the process's environment.
func TypeCheck(dir, platform string, env []string, patterns ...string) (Result, error) {
	goos, goarch, ok := strings.Cut(platform, "/")
	if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
		return Result{}, fmt.Errorf("platform %q: want os/arch", platform)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir: dir,
		Env: append(append(os.Environ(), env...), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
	}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", platform, err)
	}
	r := Result{Loaded: map[string]bool{}}
	packages.Visit(roots, nil, func(p *packages.Package) {
		r.Packages++
		r.Loaded[p.PkgPath] = true
		for _, e := range p.Errors {
			r.Errors = append(r.Errors, e.Error())
		}
	})
	return r, nil
}

// releaseTargets matches hack/release.sh's default platform list:
// targets_list=${RELEASE_TARGETS:-linux/amd64 linux/arm64 windows/amd64}.
var releaseTargets = regexp.MustCompile(`(?m)^targets_list=\$\{RELEASE_TARGETS:-([^}]*)\}`)

// ReleasePlatforms reads the platforms make release builds by default from
// the release script's text, so that a platform added there is checked
// without a second list to keep in step.
func ReleasePlatforms(script []byte) ([]string, error) {
	m := releaseTargets.FindSubmatch(script)
	if m == nil {
		return nil, errors.New("no targets_list=${RELEASE_TARGETS:-...} line in the release script")
	}
	platforms := strings.Fields(strings.ReplaceAll(string(m[1]), ",", " "))
	if len(platforms) == 0 {
		return nil, errors.New("the release script's default platform list is empty")
	}
	return platforms, nil
}
