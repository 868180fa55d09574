// Package k8sname checks the forms of Kubernetes names the node sees:
// namespaces, container, volume and ServiceAccount names, pod UIDs. The
// policy validates its selectors with it and the ServiceAccount reader
// the claims and paths it believes, so the two cannot accept different
// names (k8s.io/apimachinery's validation is the reference; this module
// does not link it).
package k8sname

import "regexp"

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	podUID       = regexp.MustCompile(`^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$`)
)

// IsDNSLabel tells whether s is an RFC 1123 label (at most 63
// characters): a namespace, a container or volume name.
func IsDNSLabel(s string) bool { return dnsLabel.MatchString(s) }

// IsDNSSubdomain tells whether s is an RFC 1123 subdomain of at most 253
// characters: a ServiceAccount or pod name.
func IsDNSSubdomain(s string) bool { return len(s) <= 253 && dnsSubdomain.MatchString(s) }

// IsPodUID tells whether s is a pod UID as kubelet names the pod's
// directory: a UUID, or 32 hex digits (a static pod's).
func IsPodUID(s string) bool { return podUID.MatchString(s) }
