package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// StepError is a driver's CSI call failing: Step names the csi-proxy call
// (or the driver's own check) that failed, Err is what the driver got.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }

func (e *StepError) Unwrap() error { return e.Err }

// fail wraps err as the failure of step.
func fail(step string, err error) error { return &StepError{Step: step, Err: err} }

// failedStep returns the step a driver error names, or "".
func failedStep(err error) string {
	var se *StepError
	if errors.As(err, &se) {
		return se.Step
	}
	return ""
}

// Vol is one volume as the CSI calls for it carry it: the identifiers the
// controller put in the publish context, and the kubelet's paths.
type Vol struct {
	// VolumeID is the CSI volume handle.
	VolumeID string
	// LUN is the publish context's LUN (azuredisk).
	LUN string
	// DeviceName is the GCE device name (gcp-pd), found as the last word
	// of page 0x83.
	DeviceName string
	// DiskUUID is vSphere's FCD disk UUID, equal to page 0x83.
	DiskUUID string
	// Staging and Publish are the kubelet's staging and pod volume paths,
	// spelled as the kubelet passes them.
	Staging, Publish string
	// Disk is the disk number the driver must pick; DiskSize its size.
	Disk     uint32
	DiskSize int64
	// SMB volumes: the source (//server/share), subdirectory and the
	// secret's user name, domain and password.
	Source, SubDir, Username, Domain, Password string
}

// Stats is what NodeGetVolumeStats answers, in bytes.
type Stats struct {
	Total, Used, Available int64
	// OnlyExistence is true when the driver reads the numbers itself
	// (aws-ebs: GetDiskFreeSpaceEx on the node) and only its PathExists
	// went through csi-proxy.
	OnlyExistence bool
}

// blockDriver is a block-disk driver's Windows node code over csi-proxy,
// re-written by us from its source: each method makes the csi-proxy calls
// the driver's CSI method makes, in its order, applies the driver's own
// rules to the answers, and fails where the driver fails.
type blockDriver interface {
	// Name is the driver's short name in test names.
	Name() string
	NodeStage(ctx context.Context, v *Vol) error
	NodePublish(ctx context.Context, v *Vol) error
	NodeGetVolumeStats(ctx context.Context, v *Vol) (Stats, error)
	// NodeExpand returns the capacity the driver reports.
	NodeExpand(ctx context.Context, v *Vol, requiredBytes int64) (int64, error)
	NodeUnpublish(ctx context.Context, v *Vol) error
	NodeUnstage(ctx context.Context, v *Vol) error
	// TakesDiskOffline tells whether NodeUnstage takes the disk offline.
	TakesDiskOffline() bool
	// KnownStageFailure names the step that fails a first NodeStage on
	// upstream csi-proxy too (a driver defect; kubelet's retry gets past
	// it), or "".
	KnownStageFailure() string
	// LeftBehindUnstageFails tells whether the driver's NodeUnstage fails
	// on a staging directory left behind unmounted whatever csi-proxy
	// answers (any error of GetVolumeIDFromTargetPath fails it).
	LeftBehindUnstageFails() bool
}

// base is what every driver model holds.
type base struct {
	p   Proxy
	env Env
	loc Local
}

// diskNum parses a disk number the way the drivers do (strconv.Atoi).
func diskNum(s string) (uint32, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("parse %s failed with error: %w", s, err)
	}
	return uint32(n), nil
}

// roundUpGiB is volumehelper.RoundUpGiB / resource rounding: bytes to GiB,
// rounding up.
func roundUpGiB(b int64) int64 {
	const gib = 1 << 30
	return (b + gib - 1) / gib
}
