package broadcastjob

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// podDefaults are the patches the core defaults make to the builder's BroadcastJob template.
var podDefaults = []string{
	"add /spec/template/spec/containers/0/imagePullPolicy",
	"add /spec/template/spec/containers/0/terminationMessagePath",
	"add /spec/template/spec/containers/0/terminationMessagePolicy",
	"add /spec/template/spec/dnsPolicy",
	"add /spec/template/spec/schedulerName",
	"add /spec/template/spec/securityContext",
	"add /spec/template/spec/terminationGracePeriodSeconds",
}

func TestMutatingHandlerTemplateDefaults(t *testing.T) {
	defaulted := func(f ...func(*appsv1alpha1.BroadcastJob)) *appsv1alpha1.BroadcastJob {
		job := kinds.BroadcastJob("web", "ns").Obj()
		setDefaults(job, false)
		for _, fn := range f {
			fn(job)
		}
		return job
	}
	image := func(j *appsv1alpha1.BroadcastJob) { j.Spec.Template.Spec.Containers[0].Image = "busybox:2" }
	tests := []struct {
		name        string
		gates       string
		obj, old    *appsv1alpha1.BroadcastJob
		wantPatches []string
	}{
		{
			name:        "without TemplateNoDefaults a new BroadcastJob's pod template gets the core defaults",
			obj:         defaulted(),
			wantPatches: podDefaults,
		},
		{
			name:  "with TemplateNoDefaults a new BroadcastJob's pod template is stored as given",
			gates: "TemplateNoDefaults=true",
			obj:   defaulted(),
		},
		{
			name: "an update that keeps the pod template does not default it",
			obj:  defaulted(func(j *appsv1alpha1.BroadcastJob) { j.Spec.Paused = true }),
			old:  defaulted(),
		},
		{
			name:        "an update that changes the pod template defaults it",
			obj:         defaulted(image),
			old:         defaulted(),
			wantPatches: podDefaults,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, old := admissionv1.Create, runtime.Object(nil)
			if tt.old != nil {
				op, old = admissionv1.Update, tt.old
			}
			webhooktest.AssertPatches(t, admit.TemplateDefaultingHandler(admit.Kind{Name: "broadcastjob", Decoder: webhooktest.Decoder()}, webhooktest.Gates(t, tt.gates), setDefaults, podTemplate), op, tt.obj, old, tt.wantPatches)
		})
	}
}
