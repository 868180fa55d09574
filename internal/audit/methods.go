package audit

// Kind says whether a method changes the node.
type Kind int

const (
	// Unclassified is a name that is no model method and no RPC of any
	// served version. It is audited like a mutating call: what nobody
	// decided about is audited.
	Unclassified Kind = iota
	// Read methods only report state.
	Read
	// Mutate methods change the node: disks, volumes, files, mappings,
	// sessions, services, secrets.
	Mutate
)

// String names the kind as audit records do.
func (k Kind) String() string {
	switch k {
	case Read:
		return "read"
	case Mutate:
		return "mutate"
	}
	return "unclassified"
}

// kinds classifies every method by name: each method of each group's
// model Interface (library mode's calls are named so) by its
// //convgen:read or //convgen:mutates directive, and each RPC of every
// wire version, current and upstream's older ones, as the model method it
// calls. convgen generates both tables (zz_generated.methods.go) and fails
// when a name would be read in one place and mutate in another, so a
// name means the same thing in every group and version.
var kinds = classifyAll()

func classifyAll() map[string]Kind {
	kind := func(mutates bool) Kind {
		if mutates {
			return Mutate
		}
		return Read
	}
	out := map[string]Kind{}
	for group, model := range modelMutates {
		for m, mutates := range model {
			out[m] = kind(mutates)
		}
		for rpc, m := range wireMethods[group] {
			// convgen lists only methods the model has; one it did not
			// would stay Unclassified, audited as mutating.
			if mutates, ok := model[m]; ok {
				out[rpc] = kind(mutates)
			}
		}
	}
	return out
}

// Classify returns the kind of a method, by its name: a model method
// (GetDiskStats) or an RPC of any wire version (DiskStats).
func Classify(method string) Kind { return kinds[method] }
