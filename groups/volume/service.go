package volume

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/keylock"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
)

// MinResizeGain is the smallest growth ResizeVolume acts on. Smaller
// requests are skipped as success: Windows refuses partition changes under
// about 1 MiB ("Size Not Supported"), and drivers call ResizeVolume(0)
// right after formatting, when there is nothing to gain (upstream
// csi-proxy#195).
const MinResizeGain = 100 << 20

// Service is the volume group on top of a Host: the one implementation of
// Interface that every transport uses.
type Service struct {
	host   Host
	paths  *hostpath.Policy
	locks  keylock.Locks
	idRule func(string) error
	// reformat judges a FormatVolume of a formatted volume; nil refuses
	// every one (SetReformatCheck).
	reformat func(ctx context.Context, volumeID string) error
	// formats, when not nil, holds a token per FormatVolume running on
	// the host (SetMaxConcurrentFormats).
	formats chan struct{}
}

// SetMaxConcurrentFormats bounds how many FormatVolume calls run on the
// host at once, n > 0; 0 leaves them unbounded. A call past the bound
// waits, holding its volume's lock, until a format ends or its context is
// done (then it fails Canceled or DeadlineExceeded, having changed
// nothing). Formatting is the slowest thing a node does (minutes on a
// large Windows volume), and several at once on one node slow each other
// down until drivers' retries race them (azuredisk#2690): the drivers'
// own pkg/os throttles them the same way (azuredisk-csi-driver's
// maxConcurrentFormat). Call it before serving.
func (s *Service) SetMaxConcurrentFormats(n int) {
	s.formats = nil
	if n > 0 {
		s.formats = make(chan struct{}, n)
	}
}

// SetReformatCheck installs the judge of FormatVolume calls that find the
// volume already formatted: nil lets the format erase it, an error
// (wrapping errdefs.ErrFailedPrecondition, saying why) refuses it.
// Without one, or given nil, every such call is refused, as drivers
// expect (a second format is a bug that destroys data). hostset installs
// policy.CheckReformat, which follows the allowReformat setting of the
// policy rule that allowed the call; the model cannot import the policy
// itself (the client links this package). Call it before serving.
func (s *Service) SetReformatCheck(check func(ctx context.Context, volumeID string) error) {
	s.reformat = check
}

// checkReformat applies the reformat judge, or refuses.
func (s *Service) checkReformat(ctx context.Context, volumeID string) error {
	if s.reformat == nil {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s is already formatted; refusing to erase it", volumeID)
	}
	return s.reformat(ctx, volumeID)
}

var _ Interface = (*Service)(nil)

// NewService returns the volume group served by host. Mount paths must lie
// inside paths' working directories; volume IDs must have the form the
// paths' style implies (\\?\Volume{GUID}\ on Windows).
func NewService(host Host, paths *hostpath.Policy) *Service {
	s := &Service{host: host, paths: paths, idRule: checkPOSIXVolumeID}
	if paths.Style() == hostpath.Windows {
		s.idRule = checkWindowsVolumeID
	}
	return s
}

// Windows compares volume names without case, so \\?\VOLUME{...}\ is the
// same volume as \\?\Volume{...}\.
var windowsVolumeID = regexp.MustCompile(`(?i)^\\\\\?\\Volume\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}\\$`)

func checkWindowsVolumeID(id string) error {
	if !windowsVolumeID.MatchString(id) {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, `volume_id %q is not a Windows volume ID of the form \\?\Volume{GUID}\`, id)
	}
	return nil
}

// checkPOSIXVolumeID accepts the IDs a Linux host hands out: at most 256
// bytes of printable text (package printable) made of visible characters
// only, so no space of any kind (U+00A0 too) and no invisible format
// character (U+200B), which would make two IDs look the same in a log,
// and without path separators.
func checkPOSIXVolumeID(id string) error {
	if id == "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "volume_id is empty")
	}
	if len(id) > 256 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "volume_id is %d bytes long, the limit is 256", len(id))
	}
	if err := printable.Check("volume_id", id); err != nil {
		return err
	}
	for _, r := range id {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '/' || r == '\\' {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "volume_id %q contains %q (%U): a volume ID is visible characters without spaces or separators", id, r, r)
		}
	}
	return nil
}

// volumeKey names a volume's lock; Windows volume IDs compare without case.
func volumeKey(id string) string { return "volume/" + strings.ToLower(id) }

func (s *Service) lock(ctx context.Context, keys ...string) (func(), error) {
	var unlocks []func()
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, k := range keys {
		u, err := s.locks.Lock(ctx, k)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

// lockMount is the start of MountVolume and UnmountVolume: it checks the
// volume ID and the target path (below a working directory), then locks
// the volume and the path, in that order always so two calls cannot
// deadlock, and so a retry or a second volume aimed at the same path
// waits for the first call. It returns the checked target and the unlock.
func (s *Service) lockMount(ctx context.Context, volumeID, targetPath string) (string, func(), error) {
	if err := s.idRule(volumeID); err != nil {
		return "", nil, err
	}
	target, err := s.paths.CheckBelow("target_path", targetPath)
	if err != nil {
		return "", nil, err
	}
	unlock, err := s.lock(ctx, volumeKey(volumeID), "path/"+strings.ToLower(target))
	if err != nil {
		return "", nil, err
	}
	return target, unlock, nil
}

// ListVolumesOnDisk implements Interface.
func (s *Service) ListVolumesOnDisk(ctx context.Context, req *ListVolumesOnDiskRequest) (*ListVolumesOnDiskResponse, error) {
	ids, err := s.host.ListVolumesOnDisk(ctx, req.DiskNumber, req.PartitionNumber)
	if err != nil {
		return nil, fmt.Errorf("list volumes on disk %d: %w", req.DiskNumber, err)
	}
	return &ListVolumesOnDiskResponse{VolumeIDs: ids}, nil
}

// MountVolume implements Interface.
func (s *Service) MountVolume(ctx context.Context, req *MountVolumeRequest) (*MountVolumeResponse, error) {
	target, unlock, err := s.lockMount(ctx, req.VolumeID, req.TargetPath)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch cur, err := s.host.VolumeAt(ctx, target); {
	case err == nil && strings.EqualFold(cur, req.VolumeID):
		return &MountVolumeResponse{}, nil // already done: kubelet retries
	case err == nil:
		return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "target_path %q is already the mount point of volume %s", target, cur)
	case !errors.Is(err, errdefs.ErrNotFound):
		return nil, fmt.Errorf("check mount at %q: %w", target, err)
	}
	if err := s.host.MountVolume(ctx, req.VolumeID, target); err != nil {
		return nil, fmt.Errorf("mount volume %s at %q: %w", req.VolumeID, target, err)
	}
	return &MountVolumeResponse{}, nil
}

// UnmountVolume implements Interface.
func (s *Service) UnmountVolume(ctx context.Context, req *UnmountVolumeRequest) (*UnmountVolumeResponse, error) {
	target, unlock, err := s.lockMount(ctx, req.VolumeID, req.TargetPath)
	if err != nil {
		return nil, err
	}
	defer unlock()
	switch cur, err := s.host.VolumeAt(ctx, target); {
	case errors.Is(err, errdefs.ErrNotFound):
		return &UnmountVolumeResponse{}, nil // nothing mounted: already done
	case err != nil:
		return nil, fmt.Errorf("check mount at %q: %w", target, err)
	case !strings.EqualFold(cur, req.VolumeID):
		return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "target_path %q is the mount point of volume %s, not %s", target, cur, req.VolumeID)
	}
	if err := s.host.UnmountVolume(ctx, req.VolumeID, target); err != nil {
		if errors.Is(err, errdefs.ErrNotFound) {
			// VolumeAt found the volume at target, but only through a
			// link (a pod's publish path links to the staging mount
			// point): the volume is still mounted, elsewhere. Neither
			// "nothing mounted" (a driver would then take the disk
			// offline under a live mount) nor a bare NotFound says that.
			return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "target_path %q leads to volume %s but is not its mount point (a link to it?); unmount the mount point itself, or remove the link with Rmdir: %v", target, req.VolumeID, err)
		}
		return nil, fmt.Errorf("unmount volume %s from %q: %w", req.VolumeID, target, err)
	}
	return &UnmountVolumeResponse{}, nil
}

// IsVolumeFormatted implements Interface.
func (s *Service) IsVolumeFormatted(ctx context.Context, req *IsVolumeFormattedRequest) (*IsVolumeFormattedResponse, error) {
	if err := s.idRule(req.VolumeID); err != nil {
		return nil, err
	}
	ok, err := s.host.IsVolumeFormatted(ctx, req.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("check format of volume %s: %w", req.VolumeID, err)
	}
	return &IsVolumeFormattedResponse{Formatted: ok}, nil
}

// FormatVolume implements Interface.
func (s *Service) FormatVolume(ctx context.Context, req *FormatVolumeRequest) (*FormatVolumeResponse, error) {
	if err := s.idRule(req.VolumeID); err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx, volumeKey(req.VolumeID))
	if err != nil {
		return nil, err
	}
	defer unlock()
	formatted, err := s.host.IsVolumeFormatted(ctx, req.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("check format of volume %s: %w", req.VolumeID, err)
	}
	if formatted {
		// Refused unless the Reformat hook allows it (the policy's
		// allowReformat), judged now, under the volume's lock.
		if err := s.checkReformat(ctx, req.VolumeID); err != nil {
			return nil, err
		}
	}
	if s.formats != nil {
		select {
		case s.formats <- struct{}{}:
			defer func() { <-s.formats }()
		case <-ctx.Done():
			return nil, fmt.Errorf("format volume %s: waiting for one of the %d formats allowed at once to end: %w", req.VolumeID, cap(s.formats), ctx.Err())
		}
	}
	if err := s.host.FormatVolume(ctx, req.VolumeID); err != nil {
		return nil, fmt.Errorf("format volume %s: %w", req.VolumeID, err)
	}
	return &FormatVolumeResponse{}, nil
}

// ResizeVolume implements Interface.
func (s *Service) ResizeVolume(ctx context.Context, req *ResizeVolumeRequest) (*ResizeVolumeResponse, error) {
	if err := s.idRule(req.VolumeID); err != nil {
		return nil, err
	}
	if req.SizeBytes < 0 {
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "size_bytes %d is negative", req.SizeBytes)
	}
	unlock, err := s.lock(ctx, volumeKey(req.VolumeID))
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, maximum, err := s.host.VolumeSizes(ctx, req.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("sizes of volume %s: %w", req.VolumeID, err)
	}
	want := req.SizeBytes
	if want == 0 {
		want = maximum
	}
	if want > maximum {
		return nil, errdefs.Errorf(errdefs.ErrOutOfRange, "size_bytes %d is larger than volume %s can grow to (%d bytes)", want, req.VolumeID, maximum)
	}
	if want-cur < MinResizeGain {
		return &ResizeVolumeResponse{}, nil // nothing worth doing, or a shrink
	}
	if err := s.host.ResizeVolume(ctx, req.VolumeID, want); err != nil {
		return nil, fmt.Errorf("resize volume %s to %d bytes: %w", req.VolumeID, want, err)
	}
	return &ResizeVolumeResponse{}, nil
}

// GetVolumeStats implements Interface.
func (s *Service) GetVolumeStats(ctx context.Context, req *GetVolumeStatsRequest) (*GetVolumeStatsResponse, error) {
	if err := s.idRule(req.VolumeID); err != nil {
		return nil, err
	}
	total, used, err := s.host.VolumeStats(ctx, req.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("stats of volume %s: %w", req.VolumeID, err)
	}
	return &GetVolumeStatsResponse{TotalBytes: total, UsedBytes: used}, nil
}

// GetDiskNumberFromVolumeID implements Interface.
func (s *Service) GetDiskNumberFromVolumeID(ctx context.Context, req *GetDiskNumberFromVolumeIDRequest) (*GetDiskNumberFromVolumeIDResponse, error) {
	if err := s.idRule(req.VolumeID); err != nil {
		return nil, err
	}
	n, err := s.host.DiskNumber(ctx, req.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("disk of volume %s: %w", req.VolumeID, err)
	}
	return &GetDiskNumberFromVolumeIDResponse{DiskNumber: n}, nil
}

// GetVolumeIDFromTargetPath implements Interface.
func (s *Service) GetVolumeIDFromTargetPath(ctx context.Context, req *GetVolumeIDFromTargetPathRequest) (*GetVolumeIDFromTargetPathResponse, error) {
	target, err := s.paths.Check("target_path", req.TargetPath)
	if err != nil {
		return nil, err
	}
	id, err := s.host.VolumeAt(ctx, target)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return nil, notMounted(target, err)
	case err != nil:
		return nil, fmt.Errorf("volume mounted at %q: %w", target, err)
	}
	return &GetVolumeIDFromTargetPathResponse{VolumeID: id}, nil
}

// notMounted words the answer "no volume is mounted at target" the same
// way on every backend, keeping the host's detail (why: a plain folder, a
// missing path, a link to a folder). Drivers tell "not mounted" from a
// failure by this text: aws-ebs-csi-driver (@ 429e202e,
// pkg/mounter/mount_windows.go handleGetDeviceNameFromMountError) accepts
// an error only when it contains "because it does not exist", a phrase of
// the PowerShell-era csi-proxy (v1.2.x); its NodeStage asks about the
// empty staging directory kubelet just made, so a plain folder must carry
// the phrase too. The sentence stays true for every case: the path may
// exist, but not as a mount point. The other drivers studied pass the error on
// whatever it says (docs/compatibility.md).
func notMounted(target string, hostErr error) error {
	detail := strings.TrimSuffix(hostErr.Error(), ": "+errdefs.ErrNotFound.Error())
	return errdefs.Errorf(errdefs.ErrNotFound, "no volume ID can be given for target_path %q because it does not exist as a volume mount point (%s)", target, detail)
}

// GetClosestVolumeIDFromTargetPath implements Interface.
func (s *Service) GetClosestVolumeIDFromTargetPath(ctx context.Context, req *GetClosestVolumeIDFromTargetPathRequest) (*GetClosestVolumeIDFromTargetPathResponse, error) {
	target, err := s.paths.Check("target_path", req.TargetPath)
	if err != nil {
		return nil, err
	}
	id, err := s.host.ClosestVolume(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("volume holding %q: %w", target, err)
	}
	return &GetClosestVolumeIDFromTargetPathResponse{VolumeID: id}, nil
}

// WriteVolumeCache implements Interface.
func (s *Service) WriteVolumeCache(ctx context.Context, req *WriteVolumeCacheRequest) (*WriteVolumeCacheResponse, error) {
	if err := s.idRule(req.VolumeID); err != nil {
		return nil, err
	}
	if err := s.host.FlushVolume(ctx, req.VolumeID); err != nil {
		return nil, fmt.Errorf("flush volume %s: %w", req.VolumeID, err)
	}
	return &WriteVolumeCacheResponse{}, nil
}

// CheckVolumeID checks a volume ID as the service for style does: the
// \\?\Volume{GUID}\ form for hostpath.Windows, the POSIX rule otherwise.
// Clients that know the daemon's host style (the CLI checks both) refuse a
// malformed ID before they ask or call anything.
func CheckVolumeID(id string, style hostpath.Style) error {
	if style == hostpath.Windows {
		return checkWindowsVolumeID(id)
	}
	return checkPOSIXVolumeID(id)
}
