// Package windows is the home of the Windows host backends, one package
// per concern: storage (disks and volumes), files (paths, links, mount
// points), smbmap (SMB global mappings), iscsiinit (the iSCSI initiator),
// services (the service control manager and the BIOS serial) and wmi (the
// small COM layer the others use where Win32 has no call).
//
// Every operation calls Win32 directly, or WMI where nothing else exists,
// and none starts a process: no PowerShell, no cmd, no tool. That rule
// ended upstream csi-proxy's CPU cost and its command-injection CVE
// (CVE-2023-3893), and the test in this package holds it.
package windows
