//go:build windows

package smbmap

import (
	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/files"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// New returns the Windows SMB backend. It does no work: WMI is first
// touched by the first mapping call, so a host without the SMB WMI
// provider fails that call (errdefs.ErrUnimplemented) instead of start-up.
func New(cfg Config) (*Host, error) {
	fs, err := files.New()
	if err != nil {
		return nil, err
	}
	return newHost(cfg, wmiMappings{c: wmi.NewClient(wmi.SMBNamespace)}, reachShare, fs), nil
}

// reachShare tells whether \\server\share answers, as upstream's
// PathValid does: GetFileAttributesW on the share root, which goes through
// the global mapping's session. Any failure (not found, logon failure
// after a password change, network error) makes the mapping stale.
func reachShare(share string) error {
	p, err := windows.UTF16PtrFromString(share)
	if err != nil {
		return err
	}
	_, err = windows.GetFileAttributes(p)
	return err
}
