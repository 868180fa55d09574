package widget

import (
	"context"
	"time"
)

// Host is what a backend provides for the widget group: the golden test's
// Host decorators time it. Its methods take every shape of signature the
// generator must copy.
type Host interface {
	// Paint returns only an error; a parameter is named like the model
	// package, which the generated file imports.
	Paint(ctx context.Context, widget string, kind Kind) error
	// Parts has unnamed parameters and returns the model's types.
	Parts(context.Context, uint32) (map[uint32]*Part, error)
	// Sizes has named results and parameters named like the decorator's
	// own locals.
	Sizes(ctx context.Context, t, w string) (current, maximum int64, err error)
	// Wait takes another package's type and a variadic list.
	Wait(ctx context.Context, d time.Duration, ids ...string) ([]string, error)
}
