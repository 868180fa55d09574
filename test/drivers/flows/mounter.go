package flows

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// The drivers' flows through the shared mounter (client/mounter): the same
// volumes, kubelet steps, order and checks as the drivers' own code, with
// each driver's node operations done by the mounter's methods, as a driver
// that adopts the mounter (docs/driver-migration.md, "Adopt the mounter")
// does them. A step the mounter has no method for stays a raw call and
// says so where it is made.
//
// Package flows does not import client/mounter itself: that links
// k8s.io/mount-utils and its dependencies into every runner, upstreamwire's
// module included, which must link nothing but upstream's stubs and the
// model groups. A runner hands in NewMounter: viamounter.New, a thin
// wrapper of mounter.New.

// Mounter is client/mounter's *Mounter as the flows call it. Its methods
// are the mounter's, but for UnmountDevice (the options struct becomes
// offline) and VolumeStats (the flows' Stats): those two types are the
// mounter package's.
type Mounter interface {
	IsLikelyNotMountPoint(file string) (bool, error)
	Mount(source, target, fstype string, options []string) error
	MountSensitive(source, target, fstype string, options, sensitiveOptions []string) error
	Unmount(target string) error
	Rescan(ctx context.Context) error
	FindDiskByLUN(ctx context.Context, lun string) (uint32, error)
	FindDiskByPage83(ctx context.Context, id string) (uint32, error)
	FindDiskBySerial(ctx context.Context, serial string) (uint32, error)
	FormatAndMount(ctx context.Context, diskNumber uint32, target string) (string, error)
	UnmountDevice(ctx context.Context, target string, offline bool) error
	DiskNumberFromMount(ctx context.Context, path string) (uint32, error)
	VolumeStats(ctx context.Context, path string) (Stats, error)
	DiskSize(ctx context.Context, diskNumber uint32) (int64, error)
	ResizeToFill(ctx context.Context, path string) (int64, error)
	SMBUnmount(ctx context.Context, target string) error
}

// MounterOptions are the mounter.Options a flow needs.
type MounterOptions struct {
	// SMBStateDir is mounter.Options.SMBStateDir: the environment's SMB
	// flows share one, as a driver's restarts share its plugin directory.
	SMBStateDir string
	// LogError receives what the mounter logs at error level: failures
	// it does not return (a flush before removing a link). A flow fails
	// on any, as a driver would never see them.
	LogError func(err error, msg string, keysAndValues ...any)
}

// NewMounter returns a mounter over node with o.
type NewMounter func(node groups.Node, o MounterOptions) Mounter

// MounterPlan is a Plan whose flows run through the shared mounter.
type MounterPlan struct{ pl *Plan }

// NewMounterPlan returns the mounter plan for the given environments (at
// most 9). Its fixture's disks and shares are not the Plan's of the same
// environments (disk numbers from 1000, servers \\smbm-...), so one host
// may hold both plans' worlds.
func NewMounterPlan(envs ...Env) *MounterPlan {
	pl := NewPlan(envs...)
	pl.viaMounter = true
	return &MounterPlan{pl: pl}
}

// Fixture returns the world the plan's flows expect (see Plan.Fixture).
func (mp *MounterPlan) Fixture() Fixture { return mp.pl.Fixture() }

// MounterNotApplicable says which flows have no mounter call to run
// through; every runner of a MounterPlan skips them.
func MounterNotApplicable(id FlowID) string {
	if id.Name == "NodeGetInfo/bios-serial" {
		return "vsphere's NodeGetInfo reads the BIOS serial (system group), for which the mounter has no method: a driver keeps that raw call, which Plan's runners replay"
	}
	return ""
}

// Run runs every flow of the plan through mounters newMounter makes over
// node (each flow's own, over a tracer of node), as subtests named as
// Plan.Run names them. na (nil: all apply) adds the host's own reasons to
// MounterNotApplicable. The host behind node must hold
// mp.Fixture().Only(the same combined reasons).
func (mp *MounterPlan) Run(t *testing.T, node groups.Node, newMounter NewMounter, na NotApplicable) {
	mp.pl.newMounter = newMounter
	mp.pl.run(t, ProxyOf(node), node, mp.NotApplicable(na), "through the mounter on this host")
}

// NotApplicable combines MounterNotApplicable with the host's na (nil for
// none): what Run skips.
func (mp *MounterPlan) NotApplicable(na NotApplicable) NotApplicable {
	return func(id FlowID) string {
		if why := MounterNotApplicable(id); why != "" {
			return why
		}
		if na != nil {
			return na(id)
		}
		return ""
	}
}

// errLog collects what a flow's mounter logs at error level.
type errLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errLog) record(err error, msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, fmt.Sprintf("%s: %v %v", msg, err, kv))
}

// check fails the flow if the mounter logged an error it did not return.
func (l *errLog) check(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) > 0 {
		t.Errorf("the mounter logged failures it did not return, which a driver never sees: %s", strings.Join(l.errs, "; "))
	}
}

// mounterCore is what the block and the SMB drivers over the mounter
// share: the mounter, what it logs, and NodePublish and NodeUnpublish,
// which are the same mounter calls for every driver (a block volume's
// staging mount and an SMB mapping are both published by linking to the
// staging path).
type mounterCore struct {
	m   Mounter
	log *errLog
}

// newMounterCore makes a mounter over a tracer of node with o, its errors
// logged to the core's errLog.
func newMounterCore(tr *tracer, node groups.Node, o MounterOptions, mk NewMounter) mounterCore {
	log := &errLog{}
	o.LogError = log.record
	return mounterCore{m: mk(tr.node(node), o), log: log}
}

// mounted is IsLikelyNotMountPoint as mount-utils' callers read it: a
// missing path is not mounted.
func (d *mounterCore) mounted(path string) (bool, error) {
	notMnt, err := d.m.IsLikelyNotMountPoint(path)
	switch {
	case err == nil:
		return !notMnt, nil
	case os.IsNotExist(err):
		return false, nil
	}
	return false, fail("mounter.IsLikelyNotMountPoint", err)
}

// NodePublish is every driver's: nothing if the publish path is mounted
// already, else Mount (the link; a second mount on Linux).
func (d *mounterCore) NodePublish(_ context.Context, v *Vol) error {
	mounted, err := d.mounted(v.Publish)
	if err != nil {
		return err
	}
	if mounted {
		return nil
	}
	if err := d.m.Mount(v.Staging, v.Publish, "", nil); err != nil {
		return fail("mounter.Mount", err)
	}
	return nil
}

// NodeUnpublish is Unmount of the publish path (flush, then the link or
// second mount only).
func (d *mounterCore) NodeUnpublish(_ context.Context, v *Vol) error {
	if err := d.m.Unmount(v.Publish); err != nil {
		return fail("mounter.Unmount", err)
	}
	return nil
}

// mounterBlock is a block driver's node code with its csi-proxy mounter
// replaced by the shared one: each CSI method keeps the driver's own
// decisions (which ID finds the disk, whether NodeUnstage takes the disk
// offline, aws-ebs's resize rule, vSphere's 1 MiB threshold) and does
// every node operation with a mounter method. Paths are the kubelet's,
// unchanged: the mounter leaves path rules to the proxy, so the drivers'
// own normalisation (Env.normalize) is not needed and not done.
type mounterBlock struct {
	base
	mounterCore
	name string
}

func newMounterBlock(tr *tracer, node groups.Node, b base, name string, mk NewMounter) *mounterBlock {
	return &mounterBlock{base: b, mounterCore: newMounterCore(tr, node, MounterOptions{}, mk), name: name}
}

// Name is the driver's name in test names.
func (d *mounterBlock) Name() string { return d.name }

// TakesDiskOffline is the driver's: azuredisk leaves the disk online.
func (d *mounterBlock) TakesDiskOffline() bool { return d.name != "azuredisk" }

// KnownStageFailure is "": azuredisk's defect (ResizeVolume given the
// disk number) is in its own mounter, which ResizeToFill replaces.
func (d *mounterBlock) KnownStageFailure() string { return "" }

// LeftBehindUnstageFails is false: UnmountDevice reads "nothing mounted"
// as done and removes the directory, where gcp-pd's and vSphere's own
// Unmount fail on any GetVolumeIDFromTargetPath error.
func (d *mounterBlock) LeftBehindUnstageFails() bool { return false }

// CleansLeftBehind tells the left-behind flow to check that NodeUnstage
// removed the staging directory (UnmountDevice does; the drivers' own
// code leaves it or fails).
func (d *mounterBlock) CleansLeftBehind() bool { return true }

// findDisk finds the volume's disk by the driver's identifier.
func (d *mounterBlock) findDisk(ctx context.Context, v *Vol) (uint32, error) {
	var (
		n   uint32
		err error
	)
	switch d.name {
	case "azuredisk":
		// scsiHostRescan first, its failure only logged by the driver.
		_ = d.m.Rescan(ctx)
		n, err = d.m.FindDiskByLUN(ctx, v.LUN)
	case "aws-ebs":
		n, err = d.m.FindDiskBySerial(ctx, strings.ReplaceAll(v.VolumeID, "-", ""))
	case "gcp-pd":
		n, err = d.m.FindDiskByPage83(ctx, v.DeviceName)
	case "vsphere":
		n, err = d.m.FindDiskByPage83(ctx, v.DiskUUID)
	}
	if err != nil {
		return 0, fail("mounter.FindDisk", err)
	}
	if n != v.Disk {
		return 0, fail("mounter.FindDisk", fmt.Errorf("picked disk %d, the volume is disk %d", n, v.Disk))
	}
	return n, nil
}

// NodeStage finds the disk, returns if the staging path is mounted
// already (aws-ebs: mounted from this disk), else stages it with
// FormatAndMount and grows it as the driver does (azuredisk, gcp-pd
// always; aws-ebs when its rule says so; vSphere not).
func (d *mounterBlock) NodeStage(ctx context.Context, v *Vol) error {
	if d.name == "vsphere" {
		// VerifyTargetDir: the kubelet must have made the staging dir.
		if _, err := d.m.IsLikelyNotMountPoint(v.Staging); os.IsNotExist(err) {
			return fail("VerifyTargetDir", fmt.Errorf("target: %s not pre-created", v.Staging))
		}
	}
	n, err := d.findDisk(ctx, v)
	if err != nil {
		return err
	}
	if d.name == "aws-ebs" {
		// GetDeviceNameFromMount: "not mounted" is errdefs.ErrNotFound
		// now, not one of the texts the driver matches.
		got, err := d.m.DiskNumberFromMount(ctx, v.Staging)
		switch {
		case err == nil && got == n:
			return nil
		case err != nil && !errors.Is(err, errdefs.ErrNotFound):
			return fail("mounter.DiskNumberFromMount", err)
		}
	} else {
		mounted, err := d.mounted(v.Staging)
		if err != nil {
			return err
		}
		if mounted {
			return nil
		}
	}
	if _, err := d.m.FormatAndMount(ctx, n, v.Staging); err != nil {
		return fail("mounter.FormatAndMount", err)
	}
	switch d.name {
	case "azuredisk", "gcp-pd":
		if _, err := d.m.ResizeToFill(ctx, v.Staging); err != nil {
			return fail("mounter.ResizeToFill", err)
		}
	case "aws-ebs":
		// NeedResize, the driver's comparison as written: the disk at
		// most one 4 KiB block bigger than the file system.
		size, err := d.m.DiskSize(ctx, n)
		if err != nil {
			return fail("mounter.DiskSize", err)
		}
		st, err := d.m.VolumeStats(ctx, v.Staging)
		if err != nil {
			return fail("mounter.VolumeStats", err)
		}
		if size <= 4096+st.Total {
			if _, err := d.m.ResizeToFill(ctx, v.Staging); err != nil {
				return fail("mounter.ResizeToFill", err)
			}
		}
	}
	return nil
}

// NodeGetVolumeStats is VolumeStats on the publish path, after the
// existence check gcp-pd (os.Lstat) and aws-ebs (PathExists) make; aws-ebs
// gets the numbers from the proxy now, not from GetDiskFreeSpaceEx.
func (d *mounterBlock) NodeGetVolumeStats(ctx context.Context, v *Vol) (Stats, error) {
	switch d.name {
	case "gcp-pd":
		if exists, _, err := d.loc.Lstat(ctx, v.Publish); err != nil || !exists {
			return Stats{}, fail("local Lstat", fmt.Errorf("path %s does not exist (%w)", v.Publish, err))
		}
	case "aws-ebs":
		if _, err := d.m.IsLikelyNotMountPoint(v.Publish); os.IsNotExist(err) {
			return Stats{}, fail("mounter.IsLikelyNotMountPoint", err)
		}
	}
	st, err := d.m.VolumeStats(ctx, v.Publish)
	if err != nil {
		return Stats{}, fail("mounter.VolumeStats", err)
	}
	return st, nil
}

// NodeExpand grows the volume behind the publish path with ResizeToFill,
// with each driver's own checks around it.
func (d *mounterBlock) NodeExpand(ctx context.Context, v *Vol, required int64) (int64, error) {
	switch d.name {
	case "azuredisk":
		check := func(when string, total int64) error {
			if got, want := roundUpGiB(total), roundUpGiB(required); got < want {
				return fail("validateBlockDeviceSize "+when, fmt.Errorf("current %d GiB < requested %d GiB", got, want))
			}
			return nil
		}
		st, err := d.m.VolumeStats(ctx, v.Publish)
		if err != nil {
			return 0, fail("mounter.VolumeStats", err)
		}
		if err := check("before resize", st.Total); err != nil {
			return 0, err
		}
		size, err := d.m.ResizeToFill(ctx, v.Publish)
		if err != nil {
			return 0, fail("mounter.ResizeToFill", err)
		}
		return size, check("after resize", size)
	case "aws-ebs":
		got, err := d.m.DiskNumberFromMount(ctx, v.Publish)
		if err != nil {
			return 0, fail("mounter.DiskNumberFromMount", err)
		}
		n, err := d.findDisk(ctx, v)
		if err != nil {
			return 0, err
		}
		if got != n {
			return 0, fail("mounter.DiskNumberFromMount", fmt.Errorf("the publish path leads to disk %d, the volume is disk %d", got, n))
		}
		if _, err := d.m.ResizeToFill(ctx, v.Publish); err != nil {
			return 0, fail("mounter.ResizeToFill", err)
		}
		size, err := d.m.DiskSize(ctx, n)
		if err != nil {
			return 0, fail("mounter.DiskSize", err)
		}
		return size, nil
	case "gcp-pd":
		n, err := d.findDisk(ctx, v)
		if err != nil {
			return 0, err
		}
		if _, err := d.m.ResizeToFill(ctx, v.Publish); err != nil {
			return 0, fail("mounter.ResizeToFill", err)
		}
		size, err := d.m.DiskSize(ctx, n)
		if err != nil {
			return 0, fail("mounter.DiskSize", err)
		}
		if size < required {
			return 0, fail("mounter.DiskSize", fmt.Errorf("resize requested for %v but after resize volume was size %v", required, size))
		}
		return required, nil
	}
	// vSphere: rescan when the volume is smaller than asked; resize only
	// when the disk is at least 1 MiB short of the request.
	st, err := d.m.VolumeStats(ctx, v.Publish)
	if err != nil {
		return 0, fail("mounter.VolumeStats", err)
	}
	if st.Total < required {
		if err := d.m.Rescan(ctx); err != nil {
			return 0, fail("mounter.Rescan", err)
		}
	}
	n, err := d.m.DiskNumberFromMount(ctx, v.Publish)
	if err != nil {
		return 0, fail("mounter.DiskNumberFromMount", err)
	}
	size, err := d.m.DiskSize(ctx, n)
	if err != nil {
		return 0, fail("mounter.DiskSize", err)
	}
	if required-size >= 1<<20 {
		// vSphere brings the disk online before resizing; the mounter
		// has no method for that alone (FormatAndMount does it), so
		// the driver keeps this raw call.
		if _, err := d.p.Disk.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true}); err != nil {
			return 0, fail("SetDiskState(online)", err)
		}
		if _, err := d.m.ResizeToFill(ctx, v.Publish); err != nil {
			return 0, fail("mounter.ResizeToFill", err)
		}
	}
	return required, nil
}

// NodeUnstage is UnmountDevice, taking the disk offline as the driver
// does. aws-ebs first asks GetDeviceNameFromMount, whose "not mounted"
// is errdefs.ErrNotFound through the mounter: anything else fails, as
// the driver fails on any text it does not match.
func (d *mounterBlock) NodeUnstage(ctx context.Context, v *Vol) error {
	if d.name == "aws-ebs" {
		if _, err := d.m.DiskNumberFromMount(ctx, v.Staging); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
			return fail("mounter.DiskNumberFromMount", err)
		}
	}
	if err := d.m.UnmountDevice(ctx, v.Staging, d.TakesDiskOffline()); err != nil {
		return fail("mounter.UnmountDevice", err)
	}
	return nil
}

// mounterSMB is csi-driver-smb's node code with its mounter and its
// reference count replaced by the shared mounter's (SMBStateDir).
type mounterSMB struct {
	mounterCore
	tr *tracer
}

func newMounterSMB(tr *tracer, node groups.Node, stateDir string, mk NewMounter) *mounterSMB {
	return &mounterSMB{mounterCore: newMounterCore(tr, node, MounterOptions{SMBStateDir: stateDir}, mk), tr: tr}
}

// NodeStage maps the share at the staging path through MountSensitive,
// as mount-utils' Windows mounter takes SMB credentials: the user name
// in options, the password in the sensitive ones.
func (d *mounterSMB) NodeStage(_ context.Context, v *Vol) error {
	mounted, err := d.mounted(v.Staging)
	if err != nil {
		return err
	}
	if mounted {
		return nil
	}
	source := v.Source
	if v.SubDir != "" {
		source = strings.TrimRight(source, "/") + "/" + v.SubDir
	}
	if err := d.m.MountSensitive(source, v.Staging, "smb", []string{smbUser(v.Username, v.Domain)}, []string{v.Password}); err != nil {
		return fail("mounter.MountSensitive", err)
	}
	return nil
}

// NodeUnstage is SMBUnmount; removed is read from the calls it made.
func (d *mounterSMB) NodeUnstage(ctx context.Context, v *Vol) (bool, error) {
	mark := d.tr.mark()
	if err := d.m.SMBUnmount(ctx, v.Staging); err != nil {
		return false, fail("mounter.SMBUnmount", err)
	}
	removed := false
	for _, c := range d.tr.since(mark) {
		if c == "RemoveSmbGlobalMapping" {
			removed = true
		}
	}
	return removed, nil
}
