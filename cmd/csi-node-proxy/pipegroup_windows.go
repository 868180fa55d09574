//go:build windows

package main

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// groupSID returns the string SID of a local group given by SID or name.
func groupSID(group string) (string, error) {
	if sidPattern.MatchString(group) {
		return group, nil
	}
	sid, _, typ, err := windows.LookupSID("", group)
	if err != nil {
		return "", fmt.Errorf("look up group %q: %w", group, err)
	}
	if typ != windows.SidTypeGroup && typ != windows.SidTypeAlias && typ != windows.SidTypeWellKnownGroup {
		return "", fmt.Errorf("%q is not a group", group)
	}
	return sid.String(), nil
}
