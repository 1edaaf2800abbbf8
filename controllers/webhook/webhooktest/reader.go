package webhooktest

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
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

// Decoder decodes every kind of the add-on and of Kubernetes, as the manager's webhooks do.
func Decoder() admission.Decoder { return admission.NewDecoder(apis.NewScheme()) }

// Reader is a fake client over objs, with every kind of the add-on and of Kubernetes.
func Reader(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(objs...).Build()
}
