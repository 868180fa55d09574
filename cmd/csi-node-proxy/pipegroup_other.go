//go:build !windows

package main

import "fmt"

// groupSID returns group when it is a SID. Names can only be looked up on
// Windows, where the pipes are.
func groupSID(group string) (string, error) {
	if sidPattern.MatchString(group) {
		return group, nil
	}
	return "", fmt.Errorf("%q is not a SID; group names are looked up only on Windows", group)
}
