package hostile

import "strings"

// The parts of the hostile table only the Linux daemon suite uses.

// probes are the paths outside the sandbox that the inputs aim at and that
// must not exist before or after the suite.
func (s sandbox) probes() []string {
	return []string{
		"/" + s.Probe, "/etc/" + s.Probe, "/dev/" + s.Probe, "/tmp/" + s.Probe, "/run/" + s.Probe,
		"/etc/" + s.Probe + "-dir", "/etc/" + s.Probe + "-link", "/" + s.Probe + "-dir", "/" + s.Probe + "-link",
		"/tmp/" + s.Probe + "-dir", "/tmp/" + s.Probe + "-link",
	}
}

// goodPortal is a well-formed portal beside a hostile IQN or CHAP setting.
var goodPortal = &portal{"127.0.0.1", 3260}

// missingDiskNumbers are well-formed disk numbers no disk has on Linux,
// where numbers are the kernel's diskseq (there is no disk 0).
var missingDiskNumbers = []uint32{0, 4294967295, 4294967294, 3000000000, 2147483647}

// badMutualSecrets are SetMutualChapSecret values the proxy refuses.
func badMutualSecrets() []input {
	return []input{
		ia("", "empty"),
		ia("short-11byt", "11 bytes"),
		ia("seventeen-bytes!!", "17 bytes"),
		ia(strings.Repeat("s", 1000), "1000 bytes"),
		ia("mutual\nsecret1", "newline"),
		ia("mutual\x00secret1", "NUL"),
	}
}
