package server

import (
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
)

// TestGateMethodsMatchWire holds the gate's written-out method table,
// which library mode's policy is validated against, to the method names
// the wire descriptors define, which the daemon's is: a policy that loads
// in one loads in the other.
func TestGateMethodsMatchWire(t *testing.T) {
	wire, err := GroupMethods(adapter.All())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wire, callgate.Methods) {
		t.Errorf("callgate.Methods = %v\nthe wire defines %v", callgate.Methods, wire)
	}
}
