package disk

import (
	"context"
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/keylock"
)

// Service is the disk group on top of a Host: the one implementation of
// Interface that every transport uses.
type Service struct {
	host  Host
	locks keylock.Locks
	// clearReadOnlyOnOnline makes SetDiskState(online) clear the disk's
	// read-only attribute too (ServiceOptions).
	clearReadOnlyOnOnline bool
}

var _ Interface = (*Service)(nil)

// ServiceOptions tune a Service. The zero value is upstream csi-proxy's
// pipe behaviour.
type ServiceOptions struct {
	// ClearReadOnlyOnOnline makes SetDiskState with IsOnline=true clear
	// the disk's read-only attribute after bringing it online, within the
	// same (gated, audited) call. It is for pipe-mode drivers, which cannot
	// call SetDiskReadOnly (no wire version has it): a disk re-attached to a
	// VM can come back online read-only and the first write of the pod
	// fails (kubernetes-csi/csi-proxy#437, vsphere-csi-driver#1631).
	// Upstream's pipes did this unconditionally for a while
	// (kubernetes-csi/csi-proxy commit cf0b044, "Set-Disk -IsReadOnly
	// $false" after Set-Disk -IsOffline); here it is opt-in, because it
	// also clears a read-only attribute an administrator set on purpose.
	ClearReadOnlyOnOnline bool
}

// NewService returns the disk group served by host.
func NewService(host Host) *Service { return &Service{host: host} }

// NewServiceWith returns the disk group served by host, tuned by opts.
func NewServiceWith(host Host, opts ServiceOptions) *Service {
	return &Service{host: host, clearReadOnlyOnOnline: opts.ClearReadOnlyOnOnline}
}

func (s *Service) lockDisk(ctx context.Context, n uint32) (func(), error) {
	return s.locks.Lock(ctx, fmt.Sprintf("disk/%d", n))
}

// pointers returns m's values each behind a pointer to its own copy, as
// the responses hold them: entries must not share one struct with each
// other, nor with the host's map, so a caller that changes one entry
// changes nothing else. The map is never nil, even for a nil m.
func pointers[K comparable, V any](m map[K]V) map[K]*V {
	out := make(map[K]*V, len(m))
	for k, v := range m {
		out[k] = &v // v is this iteration's copy (Go 1.22 loop variables)
	}
	return out
}

// ListDiskLocations implements Interface.
func (s *Service) ListDiskLocations(ctx context.Context, _ *ListDiskLocationsRequest) (*ListDiskLocationsResponse, error) {
	locs, err := s.host.ListDiskLocations(ctx)
	if err != nil {
		return nil, fmt.Errorf("list disk locations: %w", err)
	}
	return &ListDiskLocationsResponse{DiskLocations: pointers(locs)}, nil
}

// PartitionDisk implements Interface.
func (s *Service) PartitionDisk(ctx context.Context, req *PartitionDiskRequest) (*PartitionDiskResponse, error) {
	unlock, err := s.lockDisk(ctx, req.DiskNumber)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.PartitionDisk(ctx, req.DiskNumber); err != nil {
		return nil, fmt.Errorf("partition disk %d: %w", req.DiskNumber, err)
	}
	return &PartitionDiskResponse{}, nil
}

// Rescan implements Interface.
func (s *Service) Rescan(ctx context.Context, _ *RescanRequest) (*RescanResponse, error) {
	if err := s.host.Rescan(ctx); err != nil {
		return nil, fmt.Errorf("rescan disks: %w", err)
	}
	return &RescanResponse{}, nil
}

// ListDiskIDs implements Interface.
func (s *Service) ListDiskIDs(ctx context.Context, _ *ListDiskIDsRequest) (*ListDiskIDsResponse, error) {
	ids, err := s.host.ListDiskIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list disk IDs: %w", err)
	}
	return &ListDiskIDsResponse{DiskIDs: pointers(ids)}, nil
}

// GetDiskStats implements Interface.
func (s *Service) GetDiskStats(ctx context.Context, req *GetDiskStatsRequest) (*GetDiskStatsResponse, error) {
	size, err := s.host.DiskSize(ctx, req.DiskNumber)
	if err != nil {
		return nil, fmt.Errorf("size of disk %d: %w", req.DiskNumber, err)
	}
	return &GetDiskStatsResponse{TotalBytes: size}, nil
}

// SetDiskState implements Interface.
func (s *Service) SetDiskState(ctx context.Context, req *SetDiskStateRequest) (*SetDiskStateResponse, error) {
	unlock, err := s.lockDisk(ctx, req.DiskNumber)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.SetDiskOnline(ctx, req.DiskNumber, req.IsOnline); err != nil {
		return nil, fmt.Errorf("set disk %d %s: %w", req.DiskNumber, onlineWord(req.IsOnline), err)
	}
	if req.IsOnline && s.clearReadOnlyOnOnline {
		if err := s.host.SetDiskReadOnly(ctx, req.DiskNumber, false); err != nil {
			return nil, fmt.Errorf("set disk %d online: clear its read-only attribute (the daemon's clear-read-only-on-online opt-in): %w", req.DiskNumber, err)
		}
	}
	return &SetDiskStateResponse{}, nil
}

// GetDiskState implements Interface.
func (s *Service) GetDiskState(ctx context.Context, req *GetDiskStateRequest) (*GetDiskStateResponse, error) {
	online, err := s.host.IsDiskOnline(ctx, req.DiskNumber)
	if err != nil {
		return nil, fmt.Errorf("state of disk %d: %w", req.DiskNumber, err)
	}
	return &GetDiskStateResponse{IsOnline: online}, nil
}

// SetDiskReadOnly implements Interface.
func (s *Service) SetDiskReadOnly(ctx context.Context, req *SetDiskReadOnlyRequest) (*SetDiskReadOnlyResponse, error) {
	unlock, err := s.lockDisk(ctx, req.DiskNumber)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.SetDiskReadOnly(ctx, req.DiskNumber, req.IsReadOnly); err != nil {
		return nil, fmt.Errorf("set disk %d %s: %w", req.DiskNumber, readOnlyWord(req.IsReadOnly), err)
	}
	return &SetDiskReadOnlyResponse{}, nil
}

// GetDiskReadOnly implements Interface.
func (s *Service) GetDiskReadOnly(ctx context.Context, req *GetDiskReadOnlyRequest) (*GetDiskReadOnlyResponse, error) {
	readOnly, err := s.host.IsDiskReadOnly(ctx, req.DiskNumber)
	if err != nil {
		return nil, fmt.Errorf("read-only attribute of disk %d: %w", req.DiskNumber, err)
	}
	return &GetDiskReadOnlyResponse{IsReadOnly: readOnly}, nil
}

func readOnlyWord(readOnly bool) string {
	if readOnly {
		return "read-only"
	}
	return "read-write"
}

func onlineWord(online bool) string {
	if online {
		return "online"
	}
	return "offline"
}
