package testkit

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// CountStatusPatches is c with every patch of a sub-resource (a status write) counted in n.
func CountStatusPatches(c client.WithWatch, n *int) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			*n++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}
