package ownedpods

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestListGivesThePodsTheOwnerControlsThatItsSelectorMatches(t *testing.T) {
	owned := func(name string, ownerUID types.UID, controller bool, app string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": app}}}
		if ownerUID != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web", UID: ownerUID, Controller: ptr.To(controller)}}
		}
		return p
	}
	c := testclient.Builder(
		owned("mine", "web-uid", true, "web"),
		owned("mine-relabelled", "web-uid", true, "other"),
		owned("orphan", "", false, "web"),
		owned("not-controlled", "web-uid", false, "web"),
		owned("another-owners", "api-uid", true, "web"),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other-ns", Name: "elsewhere", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "CloneSet", Name: "web", UID: "web-uid", Controller: ptr.To(true)}}}},
	).WithIndex(&corev1.Pod{}, ControllerIndex, controllerUID).Build()
	owner := &metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "web-uid"}
	pods, sel, err := List(context.Background(), c, owner, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	testkit.Diff(t, "pods", []string{"mine"}, names)
	testkit.Diff(t, "selector", "app=web", sel.String())
}
