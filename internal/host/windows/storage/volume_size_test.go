package storage

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// resizeFake has volA on disk 3, partition 2, of 1000 MiB, growable to
// maxMiB.
func resizeFake(t *testing.T, curMiB, maxMiB uint64) *fakeSystem {
	f := newFake(t)
	f.addVolume(volA, 3, 2)
	f.wmiQuery = func(q string) ([]wmi.Props, error) {
		return []wmi.Props{{"Size": itoa64(curMiB << 20)}}, nil
	}
	f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
		if method == "GetSupportedSize" {
			return wmi.Props{"ReturnValue": int64(0), "SizeMin": itoa64(100 << 20), "SizeMax": itoa64(maxMiB << 20)}, nil
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	return f
}

func itoa64(n uint64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

func TestVolumeSizes(t *testing.T) {
	f := resizeFake(t, 1000, 3000)
	cur, maximum, err := f.backend().Volume().VolumeSizes(ctx, volA)
	if err != nil || cur != 1000<<20 || maximum != 3000<<20 {
		t.Fatalf("VolumeSizes = %d, %d, %v", cur, maximum, err)
	}
	f.expect(
		"open "+volumeDevice(volA)+" query",
		"ioctl "+volumeDevice(volA)+" IOCTL_STORAGE_GET_DEVICE_NUMBER out=12",
		"close "+volumeDevice(volA),
		"wmi query SELECT Size FROM MSFT_Partition WHERE DiskNumber = 3 AND PartitionNumber = 2",
		"wmi call SELECT * FROM MSFT_Partition WHERE DiskNumber = 3 AND PartitionNumber = 2 .GetSupportedSize()",
	)
}

func TestVolumeSizesFailures(t *testing.T) {
	t.Run("defragsvc disabled", func(t *testing.T) {
		f := resizeFake(t, 1000, 3000)
		f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
			return wmi.Props{"ReturnValue": int64(4)}, &wmi.MethodError{Class: "MSFT_Partition", Method: method, Code: wmi.Failed}
		}
		_, _, err := f.backend().Volume().VolumeSizes(ctx, volA)
		if err == nil || !strings.Contains(err.Error(), "defragsvc") {
			t.Errorf("VolumeSizes = %v", err)
		}
	})
	t.Run("resize not supported", func(t *testing.T) {
		f := resizeFake(t, 1000, 3000)
		f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
			return wmi.Props{"ReturnValue": int64(1)}, &wmi.MethodError{Class: "MSFT_Partition", Method: method, Code: wmi.NotSupported}
		}
		if _, _, err := f.backend().Volume().VolumeSizes(ctx, volA); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("VolumeSizes = %v", err)
		}
	})
	t.Run("not a partition of a basic disk", func(t *testing.T) {
		f := newFake(t)
		f.on(volumeDevice(volX), ioctlStorageGetDeviceNumber, fails(errInvalidFunction))
		if _, _, err := f.backend().Volume().VolumeSizes(ctx, volX); !errors.Is(err, errdefs.ErrFailedPrecondition) || f.called("wmi") {
			t.Errorf("VolumeSizes = %v; calls %v", err, f.calls)
		}
	})
	t.Run("partition unknown to the provider even after a refresh", func(t *testing.T) {
		f := newFake(t)
		f.addVolume(volA, 3, 2)
		if _, _, err := f.backend().Volume().VolumeSizes(ctx, volA); !errors.Is(err, errdefs.ErrNotFound) || f.count("wmi query") != 2 {
			t.Errorf("VolumeSizes = %v; calls %v", err, f.calls)
		}
	})
}

func TestResizeVolume(t *testing.T) {
	f := resizeFake(t, 1000, 3000)
	if err := f.backend().Volume().ResizeVolume(ctx, volA, 3000<<20); err != nil {
		t.Fatal(err)
	}
	f.expect(
		"open "+volumeDevice(volA)+" query",
		"ioctl "+volumeDevice(volA)+" IOCTL_STORAGE_GET_DEVICE_NUMBER out=12",
		"close "+volumeDevice(volA),
		"wmi call SELECT * FROM MSFT_Partition WHERE DiskNumber = 3 AND PartitionNumber = 2 .Resize(Size=3145728000)",
		"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Refresh()",
	)
}

func TestResizeVolumeSizeNotSupported(t *testing.T) {
	sizeNotSupported := func(f *fakeSystem) {
		prev := f.wmiCall
		f.wmiCall = func(q, method string, in []wmi.Param) (wmi.Props, error) {
			if method == "Resize" {
				return wmi.Props{"ReturnValue": int64(4097)}, &wmi.MethodError{Class: "MSFT_Partition", Method: method, Code: wmi.SizeNotSupported}
			}
			return prev(q, method, in)
		}
	}
	// Already within 100 MiB of the target: upstream's no-op rule.
	f := resizeFake(t, 2950, 3000)
	sizeNotSupported(f)
	if err := f.backend().Volume().ResizeVolume(ctx, volA, 3000<<20); err != nil {
		t.Errorf("ResizeVolume near the target = %v", err)
	}
	// Far from it: out of range.
	f = resizeFake(t, 1000, 3000)
	sizeNotSupported(f)
	if err := f.backend().Volume().ResizeVolume(ctx, volA, 3000<<20); !errors.Is(err, errdefs.ErrOutOfRange) {
		t.Errorf("ResizeVolume far from the target = %v", err)
	}
	if f.called(".Refresh()") {
		t.Error("the disk was refreshed after a failed resize")
	}
}

func TestResizeVolumeRefreshFailureIgnored(t *testing.T) {
	f := resizeFake(t, 1000, 3000)
	f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
		if method == "Refresh" {
			return wmi.Props{"ReturnValue": int64(2)}, &wmi.MethodError{Class: "MSFT_Disk", Method: method, Code: wmi.UnspecifiedError}
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	if err := f.backend().Volume().ResizeVolume(ctx, volA, 3000<<20); err != nil {
		t.Errorf("ResizeVolume = %v", err)
	}
}

func TestVolumeStats(t *testing.T) {
	f := newFake(t)
	f.device(volumeDevice(volA))
	f.space[volA] = [2]uint64{10 << 30, 4 << 30}
	total, used, err := f.backend().Volume().VolumeStats(ctx, volA)
	if err != nil || total != 10<<30 || used != 6<<30 {
		t.Errorf("VolumeStats = %d, %d, %v", total, used, err)
	}
	f.expect("open "+volumeDevice(volA)+" query", "close "+volumeDevice(volA), "diskFreeSpace "+volA)

	f = newFake(t)
	f.device(volumeDevice(volA))
	f.spaceErr = syscall.Errno(errUnrecognizedVolume)
	if _, _, err := f.backend().Volume().VolumeStats(ctx, volA); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("VolumeStats(RAW) = %v", err)
	}
	if _, _, err := f.backend().Volume().VolumeStats(ctx, volB); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeStats(missing) = %v", err)
	}
}
