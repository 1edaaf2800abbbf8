package webhooktest

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CountingReader counts the Gets and Lists that reach Reader, for tests that bound the API
// reads a handler makes.
type CountingReader struct {
	client.Reader
	Reads int
}

// Get counts the read and passes it on.
func (c *CountingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.Reads++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// List counts the read and passes it on.
func (c *CountingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.Reads++
	return c.Reader.List(ctx, list, opts...)
}
