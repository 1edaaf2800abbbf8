package kit

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestDeleteAfterTTL(t *testing.T) {
	finished := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type tcase struct {
		ttl         *int32
		since       time.Duration
		wantResult  ctrl.Result
		wantDeleted bool
	}
	ttl := func(s int32) *int32 { return &s }
	testkit.Cases(t, map[string]tcase{
		"no ttl keeps the object":                         {ttl: nil, since: time.Hour},
		"before the ttl the pass runs again when it ends": {ttl: ttl(60), since: 20 * time.Second, wantResult: ctrl.Result{RequeueAfter: 40 * time.Second}},
		"once the ttl passed the object is deleted":       {ttl: ttl(60), since: time.Minute, wantDeleted: true},
	}, func(t *testing.T, c tcase) {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
		tools := Tools{Client: fake.NewClientBuilder().WithObjects(obj).Build(), Clock: clocktesting.NewFakeClock(finished.Add(c.since))}
		got, err := tools.DeleteAfterTTL(context.Background(), "ConfigMap", obj, c.ttl, finished)
		if err != nil {
			t.Fatal(err)
		}
		found, err := Lookup(context.Background(), tools.Client, client.ObjectKeyFromObject(obj), &corev1.ConfigMap{})
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "result, deleted", []any{c.wantResult, c.wantDeleted}, []any{got, !found})
	})
}
