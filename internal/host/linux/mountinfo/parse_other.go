//go:build !linux

package mountinfo

import (
	"errors"
	"io"
)

// Parse is Linux's: moby's reader of mount tables is built for Linux only,
// and only the Linux backend reads one. Elsewhere this package compiles
// (packages that import it for Linux are vetted on every OS) and Parse
// says why it cannot.
func Parse(io.Reader) ([]Mount, error) {
	return nil, errors.New("mountinfo: mount tables are read on Linux only")
}
