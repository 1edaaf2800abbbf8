package statefulset

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// withClaim gives the StatefulSet one volume claim template, "data", of 1Gi.
func withClaim(s *appsv1beta1.StatefulSet) {
	s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
}

// templateDefaults are the patches the core defaults make to valid(withClaim)'s templates.
var templateDefaults = []string{
	"add /spec/template/spec/containers/0/imagePullPolicy",
	"add /spec/template/spec/containers/0/terminationMessagePath",
	"add /spec/template/spec/containers/0/terminationMessagePolicy",
	"add /spec/template/spec/dnsPolicy",
	"add /spec/template/spec/restartPolicy",
	"add /spec/template/spec/schedulerName",
	"add /spec/template/spec/securityContext",
	"add /spec/template/spec/terminationGracePeriodSeconds",
	"add /spec/volumeClaimTemplates/0/spec/volumeMode",
	"add /spec/volumeClaimTemplates/0/status/phase",
}

func TestMutatingHandlerTemplateDefaults(t *testing.T) {
	tests := []struct {
		name        string
		gates       string
		obj, old    *appsv1beta1.StatefulSet
		wantPatches []string
	}{
		{
			name:        "without TemplateNoDefaults a new StatefulSet's pod and claim templates get the core defaults",
			obj:         valid(withClaim),
			wantPatches: templateDefaults,
		},
		{
			name:  "with TemplateNoDefaults a new StatefulSet's templates are stored as given",
			gates: "TemplateNoDefaults=true",
			obj:   valid(withClaim),
		},
		{
			name: "an update that keeps the pod template does not default the templates",
			obj:  valid(withClaim, func(s *appsv1beta1.StatefulSet) { s.Spec.Replicas = nil }),
			old:  valid(withClaim),
			wantPatches: []string{
				"add /spec/replicas",
			},
		},
		{
			name:        "an update that changes the pod template defaults the templates",
			obj:         valid(withClaim, func(s *appsv1beta1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" }),
			old:         valid(withClaim),
			wantPatches: templateDefaults,
		},
		{
			name:  "with TemplateNoDefaults an update that changes the pod template stores it as given",
			gates: "TemplateNoDefaults=true",
			obj:   valid(withClaim, func(s *appsv1beta1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" }),
			old:   valid(withClaim),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, old := admissionv1.Create, runtime.Object(nil)
			if tt.old != nil {
				op, old = admissionv1.Update, tt.old
			}
			webhooktest.AssertPatches(t, mutatingHandler(webhooktest.Gates(t, tt.gates)), op, tt.obj, old, tt.wantPatches)
		})
	}
}
