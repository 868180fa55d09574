package storage

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestVolumeAt(t *testing.T) {
	f := newFake(t)
	f.mountedFolder(stage, volA)
	f.dir(kubelet)
	f.symlink(publish, stage)
	f.mounts[`C:\`] = volC
	v := f.backend().Volume()

	id, err := v.VolumeAt(ctx, stage)
	if err != nil || id != volA {
		t.Fatalf("VolumeAt(mount point) = %q, %v", id, err)
	}
	f.expect(
		"attributes "+stage,
		"reparseTag "+stage,
		"open "+stage+" reparse",
		"ioctl "+stage+" FSCTL_GET_REPARSE_POINT out=16384",
		"close "+stage,
		"volumeNameForMountPoint "+stage+`\`,
	)
	if id, err := v.VolumeAt(ctx, publish); err != nil || id != volA {
		t.Errorf("VolumeAt(publish link) = %q, %v", id, err)
	}
	if id, err := v.VolumeAt(ctx, `C:\`); err != nil || id != volC {
		t.Errorf("VolumeAt(C:\\) = %q, %v", id, err)
	}
	_, err = v.VolumeAt(ctx, kubelet)
	if !errors.Is(err, errdefs.ErrNotFound) || !strings.Contains(err.Error(), "not a mounted folder") {
		t.Errorf("VolumeAt(plain dir) = %v", err)
	}
	_, err = v.VolumeAt(ctx, kubelet+`\missing`)
	if !errors.Is(err, errdefs.ErrNotFound) || !strings.HasSuffix(err.Error(), "because it does not exist: not found") {
		t.Errorf("VolumeAt(missing) = %v (aws-ebs matches \"because it does not exist\")", err)
	}
}

func TestVolumeAtLinks(t *testing.T) {
	f := newFake(t)
	f.mountedFolder(stage, volA)
	f.junction(kubelet+`\junction`, stage)
	f.symlink(kubelet+`\smb`, `UNC\server\share`)
	f.symlink(kubelet+`\vol`, strings.TrimPrefix(volB, `\\?\`))
	f.symlink(kubelet+`\loop1`, kubelet+`\loop2`)
	f.symlink(kubelet+`\loop2`, kubelet+`\loop1`)
	// A mounted folder whose volume is gone: the reparse data still names it.
	f.mountedFolder(kubelet+`\dangling`, volB)
	f.mountErr[kubelet+`\dangling\`] = syscall.Errno(errFileNotFound)
	v := f.backend().Volume()

	if id, err := v.VolumeAt(ctx, kubelet+`\junction`); err != nil || id != volA {
		t.Errorf("VolumeAt(junction) = %q, %v", id, err)
	}
	if _, err := v.VolumeAt(ctx, kubelet+`\smb`); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeAt(SMB link) = %v", err)
	}
	if id, err := v.VolumeAt(ctx, kubelet+`\vol`); err != nil || id != volB {
		t.Errorf("VolumeAt(link to a volume) = %q, %v", id, err)
	}
	if _, err := v.VolumeAt(ctx, kubelet+`\loop1`); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("VolumeAt(loop) = %v", err)
	}
	if id, err := v.VolumeAt(ctx, kubelet+`\dangling`); err != nil || id != volB {
		t.Errorf("VolumeAt(dangling) = %q, %v", id, err)
	}
}

func TestVolumeAtIgnoresOtherReparseTags(t *testing.T) {
	// A deduplicated or cloud-file directory carries a reparse tag but is
	// not a mount: upstream's bitwise tag test could mistake symlinks for
	// mount points; equality cannot.
	f := newFake(t)
	f.files[stage] = &fakeFile{attrs: fileAttributeDirectory | fileAttributeReparsePoint, tag: 0x80000013}
	if _, err := f.backend().Volume().VolumeAt(ctx, stage); !errors.Is(err, errdefs.ErrNotFound) || f.called("reparse") && f.called("FSCTL") {
		t.Errorf("VolumeAt = %v; calls %v", err, f.calls)
	}
}

func TestClosestVolume(t *testing.T) {
	f := newFake(t)
	f.mounts[`C:\`] = volC
	f.dir(kubelet)
	f.mountedFolder(stage, volA)
	f.dir(stage + `\data`)
	f.dir(stage + `\data\deep`)
	f.symlink(publish, stage)
	f.dir(`C:\var`)
	f.dir(`C:\var\lib`)
	f.symlink(kubelet+`\smb`, `UNC\server\share`)
	f.symlink(kubelet+`\vol`, strings.TrimPrefix(volB, `\\?\`)+`dir`)
	v := f.backend().Volume()
	for path, want := range map[string]string{
		stage + `\data\deep`: volA,
		stage:                volA,
		publish:              volA,
		kubelet:              volC,
		`C:\`:                volC,
		kubelet + `\vol`:     volB,
	} {
		if got, err := v.ClosestVolume(ctx, path); err != nil || got != want {
			t.Errorf("ClosestVolume(%s) = %q, %v; want %s", path, got, err, want)
		}
	}
	if _, err := v.ClosestVolume(ctx, kubelet+`\smb`); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("ClosestVolume(SMB) = %v", err)
	}
	if _, err := v.ClosestVolume(ctx, kubelet+`\missing`); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("ClosestVolume(missing) = %v", err)
	}
}

func TestClosestVolumeStepLimit(t *testing.T) {
	f := newFake(t)
	f.symlink(kubelet+`\a`, kubelet+`\b`)
	f.symlink(kubelet+`\b`, kubelet+`\a`)
	_, err := f.backend().Volume().ClosestVolume(ctx, kubelet+`\a`)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "256 steps") {
		t.Errorf("ClosestVolume(loop) = %v", err)
	}
}

// TestThroughService runs the driver-facing rules of the volume Service
