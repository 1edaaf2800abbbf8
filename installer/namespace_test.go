package installer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-addon/kruise-addon/installer/facts"
)

func TestStray(t *testing.T) {
	owner := facts.Owner{Release: "kruise-addon", Namespace: "ks"}
	ours := map[string]string{facts.AnnotationReleaseName: "kruise-addon", facts.AnnotationReleaseNamespace: "ks"}
	core := func(r string) schema.GroupResource { return schema.GroupResource{Resource: r} }
	cases := map[string]struct {
		gr   schema.GroupResource
		obj  metav1.ObjectMeta
		want bool
	}{
		"an object of the release is not stray":                    {gr: core("services"), obj: metav1.ObjectMeta{Name: "kruise-webhook-service", Annotations: ours}},
		"a user's ConfigMap is stray":                              {gr: core("configmaps"), obj: metav1.ObjectMeta{Name: "settings"}, want: true},
		"an object of another release is stray":                    {gr: core("configmaps"), obj: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{facts.AnnotationReleaseName: "other", facts.AnnotationReleaseNamespace: "ks"}}, want: true},
		"a pod a controller made is judged by its owner":           {gr: core("pods"), obj: metav1.ObjectMeta{Name: "p", OwnerReferences: []metav1.OwnerReference{{Name: "rs"}}}},
		"events are not stray":                                     {gr: core("events"), obj: metav1.ObjectMeta{Name: "e"}},
		"events of events.k8s.io are not stray":                    {gr: schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, obj: metav1.ObjectMeta{Name: "e"}},
		"the root CA ConfigMap Kubernetes makes is not":            {gr: core("configmaps"), obj: metav1.ObjectMeta{Name: "kube-root-ca.crt"}},
		"the record of a server's operation on the release is not": {gr: core("configmaps"), obj: metav1.ObjectMeta{Name: "kruise-addon-op-1", Labels: map[string]string{OperationRecordLabel: "op-1"}}},
		"the default ServiceAccount is not":                        {gr: core("serviceaccounts"), obj: metav1.ObjectMeta{Name: "default"}},
		"another ServiceAccount is":                                {gr: core("serviceaccounts"), obj: metav1.ObjectMeta{Name: "ci"}, want: true},
		"the manager's leader election Lease is not":               {gr: schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, obj: metav1.ObjectMeta{Name: "kruise-manager"}},
		"the release's record is not":                              {gr: core("secrets"), obj: metav1.ObjectMeta{Name: "sh.helm.release.v1.kruise-addon.v1", Labels: map[string]string{"owner": "helm", "name": "kruise-addon"}}},
		"the record of another release in it is stray":             {gr: core("secrets"), obj: metav1.ObjectMeta{Name: "sh.helm.release.v1.app.v1", Labels: map[string]string{"owner": "helm", "name": "app"}}, want: true},
		"the endpoints of a Service of the release are not":        {gr: core("endpoints"), obj: metav1.ObjectMeta{Name: "kruise-webhook-service"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, stray(tc.gr, &tc.obj, owner)); diff != "" {
				t.Errorf("stray (-want +got):\n%s", diff)
			}
		})
	}
}
