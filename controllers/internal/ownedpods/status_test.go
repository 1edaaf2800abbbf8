package ownedpods

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

func TestWriteStatus(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "apps.kruise.io", Resource: "clonesets"}, "web", errors.New("the object has been modified"))
	tests := map[string]struct {
		fail    error
		wantErr string
	}{
		"a write that goes through":                       {},
		"a write that lost to a newer object is no error": {fail: conflict},
		"any other failure is returned":                   {fail: errors.New("etcd is down"), wantErr: "update status: etcd is down"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cs := &appsv1alpha1.CloneSet{}
			cs.Namespace, cs.Name = "ns", "web"
			base := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(cs).WithStatusSubresource(cs).Build()
			writes := 0
			c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					writes++
					if tt.fail != nil {
						return tt.fail
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
			cur := &appsv1alpha1.CloneSet{}
			if err := base.Get(context.Background(), client.ObjectKeyFromObject(cs), cur); err != nil {
				t.Fatal(err)
			}
			cur.Status.Replicas = 3
			err := WriteStatus(context.Background(), c, cur)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if writes != 1 {
				t.Errorf("%d status writes, want 1", writes)
			}
			if tt.fail == nil {
				stored := &appsv1alpha1.CloneSet{}
				if err := base.Get(context.Background(), client.ObjectKeyFromObject(cs), stored); err != nil {
					t.Fatal(err)
				}
				if stored.Status.Replicas != 3 {
					t.Errorf("stored status.replicas = %d, want 3", stored.Status.Replicas)
				}
			}
		})
	}
}
