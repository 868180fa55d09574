package identity

import "strings"

// Job object names of containers on Windows. hcsshim names the job of a
// process-isolated container \Container_<id> and the job of a HostProcess
// container JobContainer_<id>, in the global object namespace.
const (
	containerJobPrefix   = `\Container_`
	hostProcessJobPrefix = `\BaseNamedObjects\JobContainer_`
)

// ContainerIDFromJobName returns the container ID in the kernel name of a
// job object (as NtQueryObject reports it), or "" when the name is not a
// container's. Only the exact global names count: a job that another
// process named JobContainer_<id> in its own session namespace
// (\Sessions\1\BaseNamedObjects\…) is not a container's.
func ContainerIDFromJobName(name string) string {
	var id string
	switch {
	case strings.HasPrefix(name, containerJobPrefix):
		id = name[len(containerJobPrefix):]
	case strings.HasPrefix(name, hostProcessJobPrefix):
		id = name[len(hostProcessJobPrefix):]
	default:
		return ""
	}
	id = strings.ToLower(id)
	if !hex64.MatchString(id) {
		return ""
	}
	return id
}
