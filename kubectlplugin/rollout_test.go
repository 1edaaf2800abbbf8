package kubectlplugin

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	build "github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestFollowRolloutTimeout: --timeout ends the wait with kubectl's timeout error, and only
// that: a read is never cut short by it (client-go's rate limiter refuses a request whose wait
// would pass the context's deadline, with an error that does not wrap it).
func TestFollowRolloutTimeout(t *testing.T) {
	s, err := scheme()
	if err != nil {
		t.Fatal(err)
	}
	cs := build.CloneSet("web", "ns").Replicas(3).Obj()
	cs.Generation = 2 // never observed: the rollout cannot finish
	tests := map[string]struct {
		get func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
	}{
		"the deadline strikes between two reads": {
			get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				return c.Get(ctx, key, obj, opts...)
			},
		},
		"a read that would be cut short by the deadline fails": {
			get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := ctx.Deadline(); ok {
					return errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")
				}
				return c.Get(ctx, key, obj, opts...)
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(cs.DeepCopy()).
				WithInterceptorFuncs(interceptor.Funcs{Get: tc.get}).Build()
			sess := &session{c: c, scheme: s, namespace: "ns"}
			var out bytes.Buffer
			err := followRollout(context.Background(), sess, target{kind: cloneSetKind(), name: "web"}, true, 50*time.Millisecond, 10*time.Millisecond, &out)
			if !errors.Is(err, errTimedOut) {
				t.Fatalf("followRollout = %v, want %v", err, errTimedOut)
			}
		})
	}
}
