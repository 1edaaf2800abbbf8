package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// longestRevisionLabel is the controller-revision-hash value the pods of a CloneSet called name
// carry at worst: its name, a dash and a revision hash of ten characters.
func longestRevisionLabel(name string) string { return name + "-" + strings.Repeat("1", 10) }

func TestCloneSetNameTooLongForItsPodsIsRefused(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)

	long := strings.Repeat("w", 53)
	err := env.Client.Create(ctx, kinds.CloneSet(long, ns).Image(image).Obj())
	assertDenied(t, err, "metadata.name")
	if !strings.Contains(err.Error(), "must be no more than 52 characters") {
		t.Errorf("refusal %q does not give the maximum length", err)
	}
	// The apiserver itself refuses the label such a CloneSet's pods would need: the limit is
	// the pods', not ours.
	if err := env.Client.Create(ctx, builder.Pod("long-label", ns).Image(image).
		Label(appsv1.ControllerRevisionHashLabelKey, longestRevisionLabel(long)).Obj()); err == nil {
		t.Errorf("the apiserver accepted a pod labelled %q; the name limit is too strict", longestRevisionLabel(long))
	}

	longest := strings.Repeat("w", 52)
	if err := env.Client.Create(ctx, kinds.CloneSet(longest, ns).Image(image).Obj()); err != nil {
		t.Fatalf("a 52-character name was refused: %v", err)
	}
	if err := env.Client.Create(ctx, builder.Pod("longest-label", ns).Image(image).
		Label(appsv1.ControllerRevisionHashLabelKey, longestRevisionLabel(longest)).Obj()); err != nil {
		t.Errorf("the apiserver refused the revision label of a 52-character CloneSet's pods: %v", err)
	}
}

func TestAThousandPodsToDeleteNamesAreAnswered(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)
	cs := createCloneSet(t, ns)
	createPod(t, builder.Pod("web-own", ns).Image(image).OwnedBy(controllerRef(cs, "CloneSet")).Obj())
	createPod(t, builder.Pod("web-foreign", ns).Image(image).Obj())

	names := []string{"web-own", "web-foreign"}
	for i := range 998 {
		names = append(names, fmt.Sprintf("web-none-%03d", i))
	}
	err := framework.TryChange(ctx, env.Client, client.ObjectKeyFromObject(cs), func(cur *appsv1alpha1.CloneSet) {
		cur.Spec.ScaleStrategy.PodsToDelete = names
	})
	assertDenied(t, err, "spec.scaleStrategy.podsToDelete")
	// Names sort before they are listed: web-foreign first, then the missing ones; the own pod
	// is not among them.
	framework.WantRefused(t, err, "999 listed are not", "web-foreign, web-none-000, web-none-001", "and 979 more")
	if strings.Contains(err.Error(), "web-own") {
		t.Errorf("refusal %q names the CloneSet's own pod", err)
	}
}
