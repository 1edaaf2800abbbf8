package installer

import (
	"context"
	"errors"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// A value the schema and the templates accept but the apiserver refuses (here a platform's
// admission policy against host-network Deployments) is bad input naming the object and the
// apiserver's reason, and nothing is applied: no release, no Deployment.
func TestAValueTheApiserverRefusesIsBadInputWithNothingApplied(t *testing.T) {
	ctx := context.Background()
	const ns = "kruise-dryrun"
	const why = "host network is not allowed in kruise-dryrun"
	i, _ := newInstaller(t)
	framework.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-host-network-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.metadata.namespace != '" + ns + "' || !has(object.spec.template.spec.hostNetwork) || !object.spec.template.spec.hostNetwork",
				Message:    why,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: policy.Name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	framework.Create(t, env.Client, policy)
	framework.Create(t, env.Client, binding)
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), binding)
		_ = env.Client.Delete(context.Background(), policy)
		if lastReleaseOrNil(t, ns) != nil {
			uninstall(t, i, ns)
		}
		_ = env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	// The apiserver loads a new policy in the background: wait until it refuses.
	framework.Eventually(t, settleTimeout, "the policy refuses a host-network Deployment", func(ctx context.Context) error {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
					Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "c"}}}}}}
		err := env.Client.Create(ctx, d, client.DryRunAll)
		return framework.Want(apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "not refused yet")
	})

	_, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet("manager.hostNetwork=true"), Timeout: installTimeout})
	var invalid *installer.InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("install: %v, want bad input", err)
	}
	if missing := containsAll(err.Error(), "Deployment "+ns+"/kruise-controller-manager", why, "nothing was applied"); missing != nil {
		t.Errorf("error %q lacks %q", err, missing)
	}
	if r := lastReleaseOrNil(t, ns); r != nil {
		t.Errorf("a release was stored: revision %d %s", r.Version, r.Info.Status)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kruise-controller-manager"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("manager Deployment after the refused install: %v, want NotFound", err)
	}
}
