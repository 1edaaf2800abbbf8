package await

import (
	"context"
	"fmt"
)

// Read runs f, a read that takes no context (Helm's release storage, discovery), and returns
// as soon as ctx ends; f then finishes on its own within the request timeout and its result is
// dropped. Only for reads: nothing is left half-done when a read is abandoned. what names the
// read in the error.
func Read[T any](ctx context.Context, what string, f func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return zero, fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
}
