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
}

var _ Interface = (*Service)(nil)

// NewService returns the disk group served by host.
func NewService(host Host) *Service { return &Service{host: host} }

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

func onlineWord(online bool) string {
	if online {
		return "online"
	}
	return "offline"
}
