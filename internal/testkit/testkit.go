package testkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Cases runs one subtest per case, named by the case's sentence.
func Cases[C any](t *testing.T, cases map[string]C, run func(t *testing.T, c C)) {
	t.Helper()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { run(t, c) })
	}
}

// Diff fails t, going on, when got is not want, naming what was compared.
func Diff(t testing.TB, what string, want, got any, opts ...cmp.Option) {
	t.Helper()
	if msg := DiffMessage(what, want, got, opts...); msg != "" {
		t.Error(msg)
	}
}

// DiffMessage is the failure Diff reports: empty when got is want.
func DiffMessage(what string, want, got any, opts ...cmp.Option) string {
	if d := cmp.Diff(want, got, opts...); d != "" {
		return fmt.Sprintf("%s (-want +got):\n%s", what, d)
	}
	return ""
}

// CountStatusPatches is c with every patch of a sub-resource (a status write) counted in n.
func CountStatusPatches(c client.WithWatch, n *int) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			*n++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}
