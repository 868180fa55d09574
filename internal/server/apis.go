package server

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
)

// SelectAPIs picks the group-versions named by spec from available, for
// the daemon's --apis flag. spec is a comma-separated list whose items are
// a group-version ("disk-v1"), the endpoint name ("csi-proxy-disk-v1") or
// a whole group ("disk", meaning every available version of it), compared
// without case. An empty spec or "all" selects everything. The result keeps
// available's order and holds each API once; an unknown item is an error
// that lists the valid names.
func SelectAPIs(available []adapter.API, spec string) ([]adapter.API, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || strings.EqualFold(spec, "all") {
		return append([]adapter.API(nil), available...), nil
	}
	picked := make([]bool, len(available))
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		if item == "" {
			continue
		}
		item = strings.TrimPrefix(item, "csi-proxy-")
		found := false
		for i, api := range available {
			if item == strings.ToLower(api.Group) || item == strings.ToLower(api.Group+"-"+api.Version) {
				picked[i], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown API %q; valid names: %s", item, validNames(available))
		}
	}
	var out []adapter.API
	for i, api := range available {
		if picked[i] {
			out = append(out, api)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no API selected by %q; valid names: %s", spec, validNames(available))
	}
	return out, nil
}

// validNames lists every group and group-version in available.
func validNames(available []adapter.API) string {
	if len(available) == 0 {
		return "none (no API is registered)"
	}
	var names []string
	seen := map[string]bool{}
	for _, api := range available {
		if !seen[api.Group] {
			seen[api.Group] = true
			names = append(names, api.Group)
		}
		names = append(names, api.Group+"-"+api.Version)
	}
	return strings.Join(names, ", ")
}

// MethodsOf returns the method names of an API's gRPC service, read from
// the descriptors its generated code registered.
func MethodsOf(api adapter.API) ([]string, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(api.Service))
	if err != nil {
		return nil, fmt.Errorf("API %s: service %s: %w", api.Name(), api.Service, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("API %s: %s is not a service", api.Name(), api.Service)
	}
	ms := sd.Methods()
	out := make([]string, ms.Len())
	for i := range ms.Len() {
		out[i] = string(ms.Get(i).Name())
	}
	return out, nil
}

// GroupMethods returns, for each group of apis, the names of the methods
// its versions define, each once.
func GroupMethods(apis []adapter.API) (map[string][]string, error) {
	out := map[string][]string{}
	for _, api := range apis {
		ms, err := MethodsOf(api)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !slices.Contains(out[api.Group], m) {
				out[api.Group] = append(out[api.Group], m)
			}
		}
	}
	return out, nil
}
