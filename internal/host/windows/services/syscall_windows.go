//go:build windows

package services

// GetSystemFirmwareTable is not in golang.org/x/sys v0.49.0.
//go:generate go run golang.org/x/sys/windows/mkwinsyscall -output zsyscall_windows.go syscall_windows.go

//sys	getSystemFirmwareTable(provider uint32, tableID uint32, buf *byte, size uint32) (n uint32, err error) [failretval==0] = kernel32.GetSystemFirmwareTable
