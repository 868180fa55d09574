//go:build !unix

package audit

// noFollow is 0 where the OS has no O_NOFOLLOW (Windows): the audit
// directory's ACL must keep others from planting links there.
const noFollow = 0
