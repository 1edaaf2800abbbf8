package uniteddeployment

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestMutatingHandlerTemplateDefaults(t *testing.T) {
	defaulted := func(ud *appsv1alpha1.UnitedDeployment) *appsv1alpha1.UnitedDeployment {
		setDefaults(ud, false)
		return ud
	}
	podDefaults := []string{
		"add /spec/template/statefulSetTemplate/spec/template/spec/containers/0/imagePullPolicy",
		"add /spec/template/statefulSetTemplate/spec/template/spec/containers/0/terminationMessagePath",
		"add /spec/template/statefulSetTemplate/spec/template/spec/containers/0/terminationMessagePolicy",
		"add /spec/template/statefulSetTemplate/spec/template/spec/dnsPolicy",
		"add /spec/template/statefulSetTemplate/spec/template/spec/restartPolicy",
		"add /spec/template/statefulSetTemplate/spec/template/spec/schedulerName",
		"add /spec/template/statefulSetTemplate/spec/template/spec/securityContext",
		"add /spec/template/statefulSetTemplate/spec/template/spec/terminationGracePeriodSeconds",
	}
	tests := []struct {
		name        string
		gates       string
		obj         *appsv1alpha1.UnitedDeployment
		wantPatches []string
	}{
		{
			name:        "without TemplateNoDefaults a new statefulSetTemplate gets the core pod defaults",
			obj:         defaulted(kinds.UnitedDeployment("web", "ns").StatefulSet().Obj()),
			wantPatches: podDefaults,
		},
		{
			name:  "with TemplateNoDefaults a new statefulSetTemplate is stored as given",
			gates: "TemplateNoDefaults=true",
			obj:   defaulted(kinds.UnitedDeployment("web", "ns").StatefulSet().Obj()),
		},
		{
			name: "an advancedStatefulSetTemplate is stored as given, as in 1.8",
			obj:  defaulted(kinds.UnitedDeployment("web", "ns").AdvancedStatefulSet().Obj()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			webhooktest.AssertPatches(t, admit.TemplateDefaultingHandler(admit.Kind{Name: "uniteddeployment", Decoder: webhooktest.Decoder()}, webhooktest.Gates(t, tt.gates), setDefaults, subsetTemplate), admissionv1.Create, tt.obj, nil, tt.wantPatches)
		})
	}
}
