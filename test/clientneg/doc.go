// Package clientneg tests the client module (github.com/.../client) against
// the daemon's real server code: version negotiation with daemons serving
// every version, only old ones, or none the client asks for; that Dial
// leaves exactly one connection per group and Close none; and that every
// model method of every group round-trips through the client, with errors
// mapped as in library mode.
//
// The tests live in the main module, not the client's, so that the client
// module's go.mod lists only what the client itself needs: these tests link
// the daemon (internal/server, host/simulated), and a client-module test
// would pull all of the daemon's dependencies into the client's go.mod.
package clientneg
