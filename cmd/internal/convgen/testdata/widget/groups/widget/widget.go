// Package widget is the model of the golden test's group.
package widget

import "context"

// Interface is the group.
type Interface interface {
	// Get only reads.
	//convgen:read
	Get(context.Context, *GetRequest) (*GetResponse, error)
}

// Kind is the model's enum.
type Kind int32

// GetRequest uses Go initialisms where the wire does not.
type GetRequest struct {
	ID     string
	Kind   Kind
	Labels map[string]string
	// Number has a wire field in v3 only, as a decimal string.
	Number uint32
}

// GetResponse carries nested messages.
type GetResponse struct {
	Widget   *Widget
	Parts    []*Part
	ByNumber map[uint32]*Part
	PartIDs  []string
	// Extra has no wire field in any version: model-only fields are fine.
	Extra string
}

// Widget is nested.
type Widget struct {
	Name    string
	SizeMiB int64
}

// Part is nested.
type Part struct {
	LUNID string
}
