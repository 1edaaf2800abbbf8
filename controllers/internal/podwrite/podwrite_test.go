package podwrite

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
}

func newWriter(existing ...client.Object) (Writer, *record.FakeRecorder) {
	rec := record.NewFakeRecorder(10)
	clk := clocktesting.NewFakeClock(metav1.Now().Time)
	return Writer{
		Client:   fake.NewClientBuilder().WithObjects(existing...).Build(),
		Recorder: rec,
		Owner:    &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}},
		Scale:    expectations.NewScale(clk),
		Messages: Messages{
			Created: func(p *corev1.Pod) string { return "created " + p.Name },
			Deleted: func(p *corev1.Pod) string { return "deleted " + p.Name },
		},
	}, rec
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for len(rec.Events) > 0 {
		out = append(out, <-rec.Events)
	}
	return out
}

func TestDelete(t *testing.T) {
	type tcase struct {
		existing    []client.Object
		wantDeleted bool
		wantEvents  []string
	}
	tests := map[string]tcase{
		"a pod that exists is deleted, with the kind's event": {
			existing: []client.Object{pod("web-0")}, wantDeleted: true, wantEvents: []string{"Normal SuccessfulDelete deleted web-0"},
		},
		"a pod already gone is no error and is not reported deleted": {},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		w, rec := newWriter(tc.existing...)
		deleted, err := w.Delete(context.Background(), pod("web-0"))
		if err != nil {
			t.Fatal(err)
		}
		satisfied, _ := w.Scale.Satisfied("ns/web")
		got := []any{deleted, events(rec), satisfied}
		testkit.Diff(t, "deleted, events, expectations satisfied", []any{tc.wantDeleted, tc.wantEvents, !tc.wantDeleted}, got)
	})
}

func TestCreateBatch(t *testing.T) {
	type tcase struct {
		existingTaken bool
		wantErr       bool
		wantEvents    []string
	}
	tests := map[string]tcase{
		"a name taken already fails the batch, and the others are still created": {
			wantErr: true,
			wantEvents: []string{"Normal SuccessfulCreate created web-1",
				"Warning FailedCreate failed to create pods: create pod web-0: pods \"web-0\" already exists"},
		},
		"a name taken already is no error when the name's owner keeps it": {
			existingTaken: true, wantEvents: []string{"Normal SuccessfulCreate created web-1"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		w, rec := newWriter(pod("web-0"))
		batch := []Creation{{Pod: pod("web-0"), What: "pod web-0"}, {Pod: pod("web-1"), What: "pod web-1"}}
		err := w.CreateBatch(context.Background(), batch, tc.existingTaken)
		satisfied, _ := w.Scale.Satisfied("ns/web")
		got := []any{err != nil, events(rec), satisfied}
		// web-1 waits for the cache to see it; the failed or taken web-0 is forgotten at once.
		testkit.Diff(t, "error, events, expectations satisfied", []any{tc.wantErr, tc.wantEvents, false}, got)
	})
}
