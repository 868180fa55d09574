package filesystem

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/keylock"
)

// Service is the filesystem group on top of a Host: the one implementation
// of Interface that every transport uses.
type Service struct {
	host  Host
	paths *hostpath.Policy
	locks keylock.Locks
}

var _ Interface = (*Service)(nil)

// NewService returns the filesystem group served by host, confined to
// paths' working directories.
func NewService(host Host, paths *hostpath.Policy) *Service {
	return &Service{host: host, paths: paths}
}

func (s *Service) lockPath(ctx context.Context, p string) (func(), error) {
	return s.locks.Lock(ctx, "path/"+strings.ToLower(p))
}

// PathExists implements Interface.
func (s *Service) PathExists(ctx context.Context, req *PathExistsRequest) (*PathExistsResponse, error) {
	p, err := s.paths.Check("path", req.Path)
	if err != nil {
		return nil, err
	}
	ok, err := s.host.PathExists(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("check %q: %w", p, err)
	}
	return &PathExistsResponse{Exists: ok}, nil
}

// Mkdir implements Interface.
func (s *Service) Mkdir(ctx context.Context, req *MkdirRequest) (*MkdirResponse, error) {
	err := s.onLockedPath(ctx, req.Path, false, func(p string) error {
		if err := s.host.Mkdir(ctx, p); err != nil {
			return fmt.Errorf("mkdir %q: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &MkdirResponse{}, nil
}

// onLockedPath checks the request's path (below: it may not be a working
// directory itself), holds its lock and runs op on the cleaned path: the
// shape every single-path change shares.
func (s *Service) onLockedPath(ctx context.Context, path string, below bool, op func(p string) error) error {
	check := s.paths.Check
	if below {
		check = s.paths.CheckBelow
	}
	p, err := check("path", path)
	if err != nil {
		return err
	}
	unlock, err := s.lockPath(ctx, p)
	if err != nil {
		return err
	}
	defer unlock()
	return op(p)
}

// Rmdir implements Interface.
func (s *Service) Rmdir(ctx context.Context, req *RmdirRequest) (*RmdirResponse, error) {
	// Removing a working directory itself (C:\var\lib\kubelet) is never
	// what a driver means.
	err := s.onLockedPath(ctx, req.Path, true, func(p string) error {
		err := s.host.Rmdir(ctx, p, req.Force)
		// With force, a path that is already gone is the goal reached:
		// upstream's os.RemoveAll succeeds there, and kubelet's retried
		// unpublish and unstage depend on it. Without force it stays an
		// error, as upstream's os.Remove.
		if err == nil || req.Force && errors.Is(err, errdefs.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("rmdir %q: %w", p, err)
	})
	if err != nil {
		return nil, err
	}
	return &RmdirResponse{}, nil
}

// RmdirContents implements Interface.
func (s *Service) RmdirContents(ctx context.Context, req *RmdirContentsRequest) (*RmdirContentsResponse, error) {
	// Removing a working directory itself (C:\var\lib\kubelet) is never
	// what a driver means.
	err := s.onLockedPath(ctx, req.Path, true, func(p string) error {
		if err := s.host.RmdirContents(ctx, p); err != nil {
			return fmt.Errorf("empty %q: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &RmdirContentsResponse{}, nil
}

// CreateSymlink implements Interface.
func (s *Service) CreateSymlink(ctx context.Context, req *CreateSymlinkRequest) (*CreateSymlinkResponse, error) {
	src, err := s.paths.Check("source_path", req.SourcePath)
	if err != nil {
		return nil, err
	}
	// The link replaces nothing: a working directory itself is refused
	// rather than left to the host to find occupied.
	link, err := s.paths.CheckBelow("target_path", req.TargetPath)
	if err != nil {
		return nil, err
	}
	if s.paths.Style().Within(src, link) {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_path %q would contain its own source %q", link, src)
	}
	unlock, err := s.lockPath(ctx, link)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.CreateSymlink(ctx, src, link); err != nil {
		return nil, fmt.Errorf("link %q to %q: %w", link, src, err)
	}
	return &CreateSymlinkResponse{}, nil
}

// IsSymlink implements Interface.
func (s *Service) IsSymlink(ctx context.Context, req *IsSymlinkRequest) (*IsSymlinkResponse, error) {
	p, err := s.paths.Check("path", req.Path)
	if err != nil {
		return nil, err
	}
	ok, err := s.host.IsSymlink(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("check link %q: %w", p, err)
	}
	return &IsSymlinkResponse{IsSymlink: ok}, nil
}
