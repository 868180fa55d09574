package iscsiinit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// DefaultInitiatorNameFile is where open-iscsi keeps the node's initiator
// name.
const DefaultInitiatorNameFile = "/etc/iscsi/initiatorname.iscsi"

// ReadInitiatorName returns the InitiatorName= value of an open-iscsi
// initiatorname.iscsi file.
func ReadInitiatorName(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "InitiatorName="); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s has no InitiatorName= line", path)
}

// GeneratedInitiatorName is the initiator name used when neither the
// configuration nor open-iscsi's file names one: an IQN under the
// project's naming authority with the host name as its unique part, so it
// stays the same across restarts of one node.
func GeneratedInitiatorName(hostname string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(hostname) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-.")
	if id == "" {
		id = "node"
	}
	return "iqn.2026-01.io.github.csi-node-proxy:" + id
}
