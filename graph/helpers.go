package graph

import (
	"context"
	"errors"

	"github.com/foya-dev/foya/core"
)

// The small adapters between the core services' results and the shapes
// gqlgen's resolver signatures want.

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ptr returns a pointer to v, or the error.
func ptr[T any](v T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// done answers a mutation's Boolean result: true, or the error.
func done(err error) (bool, error) {
	if err != nil {
		return false, err
	}
	return true, nil
}

// optional turns a not-found lookup into a null result.
func optional[T any](v T, err error) (*T, error) {
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// forward adapts a value channel to the pointer channel gqlgen wants; it
// closes when in closes or ctx ends.
func forward[T any](ctx context.Context, in <-chan T, first ...T) <-chan *T {
	out := make(chan *T, max(1, len(first)))
	for i := range first {
		out <- &first[i]
	}
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case v, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- &v:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// nonEmpty maps the zero value to null.
func nonEmpty[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// nonNil turns a nil slice into an empty one for a non-null list field.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
