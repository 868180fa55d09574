//go:build unix

package audit

import "syscall"

// noFollow makes opening the audit file fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
