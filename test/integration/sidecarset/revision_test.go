package sidecarset

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// TestSidecarSetRevisionDataKeepsEmptyFieldsAsNull checks a SidecarSet's ControllerRevision
// holds, under data.spec, the "$patch": "replace" directive and all five recorded fields, those
// the SidecarSet leaves empty as null, as tools written against 1.8's revisions expect.
func TestSidecarSetRevisionDataKeepsEmptyFieldsAsNull(t *testing.T) {
	ns := newNamespace(t)
	latest := createWithRevision(t, agentSet("revision-data", ns))
	var rev appsv1.ControllerRevision
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: harness.ManagerNamespace, Name: latest}, &rev); err != nil {
		t.Fatal(err)
	}
	var data struct {
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(rev.Data.Raw, &data); err != nil {
		t.Fatalf("decode revision data: %v", err)
	}
	got := map[string]string{}
	for k, v := range data.Spec {
		if k == "containers" {
			got[k] = fmt.Sprintf("%d bytes", len(v))
			continue
		}
		got[k] = string(v)
	}
	want := map[string]string{"$patch": `"replace"`, "containers": got["containers"], "imagePullSecrets": "null",
		"initContainers": "null", "patchPodMetadata": "null", "volumes": "null"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revision data.spec (-want +got):\n%s", diff)
	}
}
