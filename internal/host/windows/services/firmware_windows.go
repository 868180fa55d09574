//go:build windows

package services

import "errors"

var errRawSMBIOSUnstable = errors.New("GetSystemFirmwareTable('RSMB') kept asking for a larger buffer")

// rsmb is the 'RSMB' firmware table provider signature: the raw SMBIOS
// table provider of GetSystemFirmwareTable.
const rsmb = 'R'<<24 | 'S'<<16 | 'M'<<8 | 'B'

// winFirmware implements firmware with GetSystemFirmwareTable.
type winFirmware struct{}

var _ firmware = winFirmware{}

// RawSMBIOS implements firmware: the first call asks for the size, the
// second fills the buffer; a table that grew in between (it does not in
// practice) is asked for again, a few times at most.
func (winFirmware) RawSMBIOS() ([]byte, error) {
	n, err := getSystemFirmwareTable(rsmb, 0, nil, 0)
	if err != nil {
		return nil, err
	}
	for range 4 {
		buf := make([]byte, n)
		got, err := getSystemFirmwareTable(rsmb, 0, &buf[0], uint32(len(buf)))
		if err != nil {
			return nil, err
		}
		if got <= uint32(len(buf)) {
			return buf[:got], nil
		}
		n = got
	}
	return nil, errRawSMBIOSUnstable
}
