package storage

import (
	"slices"
	"strconv"
	"strings"
)

// ---- The system seam ----

func (m *winModel) diskInterfaces() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, d := range m.sortedDisks() {
		out = append(out, d.iface)
	}
	return out, nil
}

// volumes lists the present volumes, newest disk first: FindFirstVolume's
// order is not documented, and the backend must not depend on it.
func (m *winModel) volumes() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	disks := m.sortedDisks()
	slices.Reverse(disks)
	for _, d := range disks {
		for _, p := range d.parts {
			if p.vol != nil && p.vol.present() {
				out = append(out, p.vol.guid)
			}
		}
	}
	return out, nil
}

// diskByDevice finds the disk \\.\PhysicalDriveN or a device interface
// path names.
func (m *winModel) diskByDevice(path string) *modelDisk {
	const prefix = `\\.\PhysicalDrive`
	if hasPrefixFold(path, prefix) {
		n, err := strconv.ParseUint(path[len(prefix):], 10, 32)
		if err != nil {
			return nil
		}
		return m.disks[uint32(n)]
	}
	for _, d := range m.disks {
		if strings.EqualFold(d.iface, path) {
			return d
		}
	}
	return nil
}

func (m *winModel) open(path string, mode openMode) (handle, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &modelHandle{path: path, mode: mode}
	switch {
	case mode == modeReparse:
		pl, err := m.existing(path, false)
		if err != nil {
			return 0, err
		}
		h.file = pl.node
	case m.diskByDevice(path) != nil:
		h.disk = m.diskByDevice(path)
	case hasPrefixFold(path, `\\?\Volume{`) && !strings.HasSuffix(path, `\`):
		// The volume itself (no trailing backslash, which would open its
		// root directory). A volume whose disk is offline has no device.
		v := m.findVolume(path)
		if v == nil || !v.present() {
			return 0, errno(errFileNotFound)
		}
		h.vol = v
	case strings.HasPrefix(path, `\\.\`):
		return 0, errno(errFileNotFound) // no such device
	default:
		pl, err := m.existing(path, true)
		if err != nil {
			return 0, err
		}
		h.file = pl.node
	}
	m.nextHandle++
	m.handles[m.nextHandle] = h
	return m.nextHandle, nil
}

func (m *winModel) close(h handle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.handles[h]; !ok {
		m.t.Errorf("model: CloseHandle(%#x), which is not open", h)
		return errno(errInvalidHandle)
	}
	delete(m.handles, h)
	return nil
}

func (m *winModel) ioctl(h handle, code uint32, in []byte, outLen int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mh, ok := m.handles[h]
	if !ok {
		m.t.Errorf("model: DeviceIoControl on handle %#x, which is not open", h)
		return nil, errno(errInvalidHandle)
	}
	switch {
	case mh.disk != nil:
		return m.diskIoctl(mh, code, in, outLen)
	case mh.vol != nil:
		return m.volumeIoctl(mh, code, outLen)
	}
	if code != fsctlGetReparsePoint {
		return nil, errno(errInvalidFunction)
	}
	if mh.file.tag == 0 {
		return nil, errno(errNotAReparsePoint)
	}
	return fixed(mh.file.reparse)(in, outLen)
}

// diskIoctl answers the IOCTLs a disk handle takes, each built from the
// disk's state with the documented layout.
func (m *winModel) diskIoctl(h *modelHandle, code uint32, in []byte, outLen int) ([]byte, error) {
	d := h.disk
	switch code {
	case ioctlStorageGetDeviceNumber:
		return fixed(deviceNumberBuf(fileDeviceDisk, d.number, 0))(in, outLen)
	case ioctlStorageQueryProperty:
		if len(in) < 8 || le.Uint32(in[4:]) != 0 {
			return nil, errno(errInvalidParameter)
		}
		switch le.Uint32(in) {
		case storageDeviceProperty:
			return truncating(deviceDescriptorBuf(d.busType, "Msft", "Virtual Disk", "1.0", d.serial))(in, outLen)
		case storageDeviceIDProperty:
			if len(d.ids) == 0 {
				return nil, errno(errNotSupported) // no VPD page 0x83
			}
			return truncating(deviceIDDescriptorBuf(d.ids...))(in, outLen)
		}
		return nil, errno(errNotSupported)
	case ioctlSCSIGetAddress:
		if d.scsi == nil {
			return nil, errno(errInvalidFunction)
		}
		return fixed(scsiAddressBuf(d.scsi.PortNumber, d.scsi.PathID, d.scsi.TargetID, d.scsi.Lun))(in, outLen)
	case ioctlDiskGetLengthInfo:
		if h.mode != modeRead && h.mode != modeReadWrite {
			return nil, errno(errAccessDenied) // FILE_READ_ACCESS
		}
		return fixed(lengthInfoBuf(uint64(d.size)))(in, outLen)
	case ioctlDiskGetDriveLayoutEx:
		return fixed(d.layoutBuf())(in, outLen)
	case ioctlDiskGetDiskAttributes:
		var attrs uint64
		if d.offline {
			attrs |= diskAttributeOffline
		}
		if d.readOnly {
			attrs |= diskAttributeReadOnly
		}
		return fixed(diskAttributesBuf(attrs))(in, outLen)
	}
	return nil, errno(errInvalidFunction)
}

// layoutBuf is the disk's DRIVE_LAYOUT_INFORMATION_EX.
func (d *modelDisk) layoutBuf() []byte {
	switch d.style {
	case partitionStyleGPT:
		entries := make([]gptEntry, 0, len(d.parts))
		for _, p := range d.parts {
			entries = append(entries, gptEntry{p.number, p.gptType, uint64(p.offset), uint64(p.size)})
		}
		b := gptLayoutBuf(entries...)
		// gptLayoutBuf describes a 1 GiB disk; UsableLength is this one's.
		put64(b, 32, uint64(d.size-modelGPTHead-modelGPTTail))
		return b
	case partitionStyleMBR:
		entries := make([]mbrEntry, 0, len(d.parts))
		for _, p := range d.parts {
			entries = append(entries, mbrEntry{p.number, p.mbrType, uint64(p.offset), uint64(p.size)})
		}
		return mbrLayoutBuf(entries...)
	}
	return rawLayoutBuf()
}

func (m *winModel) volumeIoctl(h *modelHandle, code uint32, outLen int) ([]byte, error) {
	v := h.vol
	switch code {
	case ioctlStorageGetDeviceNumber:
		return fixed(deviceNumberBuf(fileDeviceDisk, v.disk.number, v.part.number))(nil, outLen)
	case ioctlVolumeGetVolumeDiskExtents:
		b := extentsBuf(v.disk.number)
		put64(b, 8+8, uint64(v.part.offset)) // the real extent over the builder's placeholder
		put64(b, 8+16, uint64(v.part.size))
		return moreData(b)(nil, outLen)
	case ioctlDiskGetLengthInfo:
		if h.mode != modeRead && h.mode != modeReadWrite {
			return nil, errno(errAccessDenied)
		}
		return fixed(lengthInfoBuf(uint64(v.part.size)))(nil, outLen)
	}
	return nil, errno(errInvalidFunction)
}

// flush is FlushFileBuffers: on a volume it needs a handle opened for
// writing (Learn "FlushFileBuffers").
func (m *winModel) flush(h handle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mh, ok := m.handles[h]
	switch {
	case !ok:
		m.t.Errorf("model: FlushFileBuffers on handle %#x, which is not open", h)
		return errno(errInvalidHandle)
	case mh.vol != nil && mh.mode != modeReadWrite:
		return errno(errAccessDenied)
	case mh.vol != nil:
		mh.vol.flushes++
	}
	return nil
}

// mountPointPath checks the trailing backslash the mount point functions
// require (Learn: "The string must end with a trailing backslash").
func mountPointPath(mp string) error {
	if !strings.HasSuffix(mp, `\`) {
		return errno(modelErrInvalidName)
	}
	return nil
}

func (m *winModel) volumeNameForMountPoint(mp string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(mp); err != nil {
		return "", err
	}
	root, elems, err := modelSplit(mp)
	if err != nil {
		return "", err
	}
	if len(elems) == 0 {
		v := m.rootVolume(root)
		if v == nil || !v.present() {
			return "", errno(errFileNotFound)
		}
		return v.guid, nil
	}
	pl, err := m.existing(mp, false)
	if err != nil {
		return "", err
	}
	switch {
	case pl.node.volume != "":
		v := m.findVolume(pl.node.volume)
		if v == nil || !v.present() {
			return "", errno(errFileNotFound) // a dangling mounted folder
		}
		return v.guid, nil
	case pl.node.tag != 0:
		// A link is opened through: a link to a mounted folder or drive
		// root names that volume.
		if t, err := m.lookup(mp, true); err == nil && t.parent == nil {
			return t.vol.guid, nil
		}
	}
	return "", errno(errNotAReparsePoint)
}

// setVolumeMountPoint is SetVolumeMountPointW: the folder must be an
// existing empty directory on a formatted volume; a folder that is
// already a reparse point fails with ERROR_DIR_NOT_EMPTY even when empty
// (fact sheet §2.1).
func (m *winModel) setVolumeMountPoint(mp, vol string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(mp); err != nil {
		return err
	}
	if !strings.HasSuffix(vol, `\`) || !hasPrefixFold(vol, `\\?\Volume{`) {
		return errno(errInvalidParameter)
	}
	pl, err := m.existing(mp, false)
	if err != nil {
		return err
	}
	switch {
	case pl.parent == nil:
		return errno(errInvalidParameter) // drive letters are not modelled
	case !pl.node.dir:
		return errno(errDirectory)
	case pl.node.tag != 0 || len(pl.node.children) > 0:
		return errno(errDirNotEmpty)
	}
	v := m.findVolume(vol)
	if v == nil || !v.present() {
		return errno(errFileNotFound)
	}
	pl.node.mountAt(v.guid)
	return nil
}

// deleteVolumeMountPoint is DeleteVolumeMountPointW: the mounted folder
// becomes an empty directory again. On a directory that is not a mounted
// folder the model answers ERROR_NOT_A_REPARSE_POINT (Learn says it "does
// nothing"; the exact answer is unconfirmed).
func (m *winModel) deleteVolumeMountPoint(mp string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(mp); err != nil {
		return err
	}
	pl, err := m.existing(mp, false)
	if err != nil {
		return err
	}
	switch {
	case pl.parent == nil:
		return errno(errInvalidParameter)
	case pl.node.volume == "":
		return errno(errNotAReparsePoint)
	}
	pl.node.unmount()
	return nil
}

// volumePathNames is GetVolumePathNamesForVolumeNameW: the volume's
// drive letter roots and every folder it is mounted on, found by walking
// the trees from every drive letter and through every mounted folder
// (a volume already on the walk is not entered again), each path ending
// with a backslash, sorted. An unknown volume is ERROR_FILE_NOT_FOUND; a
// volume whose disk is offline has no paths (its mounted folders dangle).
func (m *winModel) volumePathNames(vol string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := m.findVolume(vol)
	if want == nil {
		return nil, errno(errFileNotFound)
	}
	var out []string
	if !want.present() {
		return out, nil
	}
	var walk func(dir string, n *modelNode, seen map[*modelVolume]bool)
	walk = func(dir string, n *modelNode, seen map[*modelVolume]bool) {
		for _, c := range n.children {
			p := dir + c.name
			switch {
			case c.volume != "":
				v := m.findVolume(c.volume)
				if v == nil || !v.present() {
					continue
				}
				if v == want {
					out = append(out, p+`\`)
				}
				if v.root != nil && !seen[v] {
					seen[v] = true
					walk(p+`\`, v.root, seen)
					delete(seen, v)
				}
			case c.dir && c.tag == 0:
				walk(p+`\`, c, seen)
			}
		}
	}
	for letter, v := range m.letters {
		if v == nil || !v.present() {
			continue
		}
		root := string(letter) + `:\`
		if v == want {
			out = append(out, root)
		}
		if v.root != nil {
			walk(root, v.root, map[*modelVolume]bool{v: true})
		}
	}
	slices.Sort(out)
	return out, nil
}

// fileSystemName is GetVolumeInformationW on a root: a drive root, a
// volume GUID path or a mounted folder, each with its trailing backslash.
func (m *winModel) fileSystemName(root string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := mountPointPath(root); err != nil {
		return "", err
	}
	pl, err := m.lookup(root, true)
	switch {
	case err != nil:
		return "", err
	case pl.parent != nil:
		return "", errno(modelErrDirNotRoot)
	}
	return pl.vol.fs, nil
}

// diskFreeSpace is GetDiskFreeSpaceExW: the size and free bytes of the
// volume holding dir (links followed).
func (m *winModel) diskFreeSpace(dir string) (uint64, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.existing(dir, true)
	if err != nil {
		return 0, 0, err
	}
	total := pl.vol.part.size
	return uint64(total), uint64(total - pl.vol.used()), nil
}

// attributes is GetFileAttributesW, which reports a reparse point itself
// rather than what it leads to.
func (m *winModel) attributes(path string) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.existing(path, false)
	if err != nil {
		return 0, err
	}
	return pl.node.attributes(), nil
}

func (n *modelNode) attributes() uint32 {
	const fileAttributeArchive = 0x20
	var a uint32 = fileAttributeArchive
	if n.dir {
		a = fileAttributeDirectory
	}
	if n.tag != 0 {
		a |= fileAttributeReparsePoint
	}
	return a
}

// reparseTag is WIN32_FIND_DATAW.dwReserved0 from FindFirstFileW, which
// does not follow the last element.
func (m *winModel) reparseTag(path string) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.existing(path, false)
	if err != nil {
		return 0, err
	}
	return pl.node.tag, nil
}

// mkdir is CreateDirectoryW: one level, the parent must exist.
func (m *winModel) mkdir(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl, err := m.lookup(path, false)
	switch {
	case err != nil:
		return err
	case pl.node != nil || pl.parent == nil:
		return errno(modelErrAlreadyExists)
	}
	pl.parent.children[strings.ToLower(pl.name)] = newModelDir(pl.name)
	return nil
}
