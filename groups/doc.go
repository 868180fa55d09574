// Package groups is the home of csi-node-proxy's API groups: disk, volume,
// filesystem, smb, iscsi and system, one package each.
//
// Each group package holds the group's internal model (plain Go request and
// response types with v1 semantics), the Interface every way of reaching the
// group implements (the daemon's gRPC adapters call it, library mode is it,
// the client offers it), the Host interface a host backend implements, and
// the Service that joins them. The Service is where every rule that must hold
// however a call arrives lives: validation, path policy, idempotency and
// per-object locking.
//
// Every method of an Interface says in its doc comment whether it changes
// the node: //convgen:mutates or //convgen:read. convgen generates from
// them the audit log's classification of every method and of every RPC
// that calls it (a mutating call has its intent recorded before it runs),
// so the decision is stated once, next to the method (cmd/internal/convgen).
package groups
