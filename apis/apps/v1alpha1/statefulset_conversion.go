package v1alpha1

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// ConvertTo converts to the v1beta1 hub. The two versions share spec and status, so nothing is
// lost either way: a cluster whose CRD still names the /convert webhook (as OpenKruise 1.8's
// chart installs it) reads and writes either version without pruning the newer fields.
func (sts *StatefulSet) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*v1beta1.StatefulSet)
	if !ok {
		return fmt.Errorf("convert StatefulSet v1alpha1 to %T: only apps.kruise.io/v1beta1 StatefulSet is a hub", dst)
	}
	sts.ObjectMeta.DeepCopyInto(&hub.ObjectMeta)
	sts.Spec.DeepCopyInto(&hub.Spec)
	sts.Status.DeepCopyInto(&hub.Status)
	return nil
}

// ConvertFrom converts from the v1beta1 hub; see ConvertTo.
func (sts *StatefulSet) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*v1beta1.StatefulSet)
	if !ok {
		return fmt.Errorf("convert %T to StatefulSet v1alpha1: only apps.kruise.io/v1beta1 StatefulSet is a hub", src)
	}
	hub.ObjectMeta.DeepCopyInto(&sts.ObjectMeta)
	hub.Spec.DeepCopyInto(&sts.Spec)
	hub.Status.DeepCopyInto(&sts.Status)
	return nil
}
