package blocktopo

import (
	"context"
	"errors"
	"io"
)

// Layout is what a disk holds, as ReadLayout read it from the device.
type Layout struct {
	// Table is the disk's GPT; nil when it has none.
	Table *GPT
	// Err is why the layout could not be read (a damaged GPT, an I/O
	// error, a disk that did not answer); a disk without a GPT is not an
	// error.
	Err error
	// Content is what the whole disk holds when it has no GPT.
	Content FSInfo
	// MBR classifies sector 0 of a disk without a GPT.
	MBR MBRKind
}

// ReadLayout reads the GPT of a disk of size bytes with logical blocks of
// logicalBlock bytes from r, or, when it has none, what the whole disk
// holds (Probe) and what its sector 0 is. It only reads.
func ReadLayout(r io.ReaderAt, logicalBlock, size int64) Layout {
	var l Layout
	if size == 0 {
		return l
	}
	t, err := ReadGPT(r, logicalBlock, size)
	switch {
	case err == nil:
		l.Table = t
		return l
	case !errors.Is(err, ErrNoGPT):
		l.Err = err
		return l
	}
	if l.Content, err = Probe(r, size); err != nil {
		l.Err = err
		return l
	}
	sector0 := make([]byte, 512)
	if _, err := r.ReadAt(sector0, 0); err == nil {
		l.MBR = ClassifyMBR(sector0)
	}
	return l
}

// Device is a disk open for reading.
type Device interface {
	io.ReaderAt
	io.Closer
}

// DeviceReader reads what disks hold for Read.
type DeviceReader interface {
	// ReadLayouts returns the layouts of disks, keyed by kernel name. A
	// disk it did not read is left out (Read then gives it no layout);
	// an error fails the whole Read.
	ReadLayouts(ctx context.Context, disks []*Disk) (map[string]Layout, error)
}

// DeviceOpener is the plain DeviceReader: it opens each disk's device
// node in turn with itself and reads it with ReadLayout. A disk that does
// not answer holds it up as long as its reads block; the backend bounds
// that wait with a DeviceReader of its own.
type DeviceOpener func(path string) (Device, error)

// ReadLayouts implements DeviceReader.
func (open DeviceOpener) ReadLayouts(ctx context.Context, disks []*Disk) (map[string]Layout, error) {
	out := map[string]Layout{}
	for _, d := range disks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[d.Name] = open.ReadLayout(d)
	}
	return out, nil
}

// ReadLayout opens disk d and reads its layout (see ReadLayout); failing
// to open it is the layout's Err.
func (open DeviceOpener) ReadLayout(d *Disk) Layout {
	if d.Size == 0 {
		return Layout{}
	}
	f, err := open(d.Path)
	if err != nil {
		return Layout{Err: err}
	}
	defer f.Close() //nolint:errcheck // read-only: a close error changes nothing
	return ReadLayout(f, d.LogicalBlock, d.Size)
}
