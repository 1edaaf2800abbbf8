package webhooktest

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/manager"
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

// Manager is the part of a manager the kinds' webhook sets read, over Reader(objs...): the
// add-on's scheme, and the fake client standing in for the cache, the API reader and the client.
// It starts nothing; any other method panics.
func Manager(objs ...client.Object) manager.Manager {
	c := Reader(objs...)
	return readerManager{scheme: c.Scheme(), client: c}
}

type readerManager struct {
	manager.Manager
	scheme *runtime.Scheme
	client client.Client
}

func (m readerManager) GetScheme() *runtime.Scheme  { return m.scheme }
func (m readerManager) GetClient() client.Client    { return m.client }
func (m readerManager) GetAPIReader() client.Reader { return m.client }

// GetCache answers a cache's reads from the client; the webhook sets start no informers.
func (m readerManager) GetCache() cache.Cache {
	return struct {
		client.Reader
		cache.Informers
	}{Reader: m.client}
}
