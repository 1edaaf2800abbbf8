package imagepuller

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// pullingImages is a runtime whose every pull succeeds at once and that holds no image before.
type pullingImages struct {
	criv1.ImageServiceClient
}

func (pullingImages) ImageStatus(context.Context, *criv1.ImageStatusRequest, ...grpc.CallOption) (*criv1.ImageStatusResponse, error) {
	return &criv1.ImageStatusResponse{}, nil
}

func (pullingImages) PullImage(_ context.Context, req *criv1.PullImageRequest, _ ...grpc.CallOption) (*criv1.PullImageResponse, error) {
	if req.GetImage().GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "no image")
	}
	return &criv1.PullImageResponse{ImageRef: "sha256:0123"}, nil
}

// apiCalls counts what the puller asked of the apiserver (live) and what it wrote (the cached
// client's status updates).
type apiCalls struct {
	liveGets, statusUpdates int
}

// pulledNodeImage runs a puller over a NodeImage with one tag until the tag is pulled and its
// status written once; the clock stands at a time with a fraction of a second, as a real one does.
func pulledNodeImage(t *testing.T) (*Puller, *apiCalls) {
	t.Helper()
	ctx := context.Background()
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: appsv1alpha1.NodeImageSpec{Images: map[string]appsv1alpha1.ImageSpec{
		"registry.example.com/web": {Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1}}},
	}}}
	calls := &apiCalls{}
	store := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(ni).WithStatusSubresource(ni).Build()
	cached := interceptor.NewClient(store.(client.WithWatch), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			calls.statusUpdates++
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	live := interceptor.NewClient(store.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			calls.liveGets++
			return c.Get(ctx, key, obj, opts...)
		},
	})
	p := New(cached, live, pullingImages{}, Options{NodeName: "n1", Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC))})
	if _, err := p.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "n1"}}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	p.work(ctx)
	<-p.dirty // what writeStatusLoop takes before it writes
	if err := p.syncStatus(ctx); err != nil {
		t.Fatalf("status write: %v", err)
	}
	got := &appsv1alpha1.NodeImage{}
	if err := store.Get(ctx, types.NamespacedName{Name: "n1"}, got); err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "succeeded tags after the first write", int32(1), got.Status.Succeeded)
	return p, calls
}

// TestStatusAlreadyWrittenIsNotWrittenAgain: the times the puller stamps keep the precision the
// apiserver stores, so a status read back equals the one written and is not sent again.
func TestStatusAlreadyWrittenIsNotWrittenAgain(t *testing.T) {
	p, calls := pulledNodeImage(t)
	if err := p.syncStatus(context.Background()); err != nil {
		t.Fatalf("status write: %v", err)
	}
	testkit.Diff(t, "status updates", 1, calls.statusUpdates)
}

// TestOwnStatusWriteAsksForNoFurtherWrite: the watch event of the puller's own status write
// reconciles the NodeImage, which finds the status current and asks for no write.
func TestOwnStatusWriteAsksForNoFurtherWrite(t *testing.T) {
	p, _ := pulledNodeImage(t)
	if _, err := p.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "n1"}}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	testkit.Diff(t, "status writes asked for", 0, len(p.dirty))
}

// TestStatusWriteReadsTheCacheNotTheAPIServer: a status write starts from the cached NodeImage;
// the apiserver is read only after a conflict.
func TestStatusWriteReadsTheCacheNotTheAPIServer(t *testing.T) {
	_, calls := pulledNodeImage(t)
	testkit.Diff(t, "NodeImage reads from the apiserver", 0, calls.liveGets)
}
