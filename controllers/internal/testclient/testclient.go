package testclient

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/apis"
)

// Builder is the builder of New's client, for a test that adds interceptors or indexes.
func Builder(objs ...client.Object) *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(objs...).
		WithStatusSubresource(append([]client.Object{&corev1.Pod{}}, objs...)...)
}

// New is a fake client over the add-on's scheme that holds objs, with the status subresource of
// pods and of the kinds of objs.
func New(objs ...client.Object) client.WithWatch {
	return Builder(objs...).Build()
}
