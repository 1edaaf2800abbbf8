package broadcastjob

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// acjManifest is an AdvancedCronJob as a user writes it for kubectl apply, with its schedule
// left to fill in.
const acjManifest = `
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata:
  name: %s
spec:
  schedule: %q
  paused: true
  template:
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: busybox
              command: ["true"]
`

// TestAdvancedCronJobWebhookRefusesABadSchedule: a manifest whose schedule does not parse as
// cron is refused naming spec.schedule and the value; the same manifest with a valid schedule
// is admitted.
func TestAdvancedCronJobWebhookRefusesABadSchedule(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name, schedule string
		// wantErr is part of the refusal, "" when the manifest is admitted.
		wantErr string
	}{
		{name: "bad-minute", schedule: "61 * * * *", wantErr: `spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59)`},
		{name: "six-fields", schedule: "0 0 * * * *", wantErr: `spec.schedule: Invalid value: "0 0 * * * *"`},
		{name: "every-five-minutes", schedule: "*/5 * * * *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(fmt.Sprintf(acjManifest, tt.name, tt.schedule)), &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetNamespace(ns)
			err := env.Client.Create(context.Background(), obj)
			if err == nil {
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("create with schedule %q: %v, want it admitted", tt.schedule, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("create with schedule %q: %v, want a refusal saying %q", tt.schedule, err, tt.wantErr)
			}
		})
	}
}

// TestAdvancedCronJobWebhookRefusesAJobTemplateThatCannotRun: the CRD keeps jobTemplate
// schemaless, so a pod a Job cannot run is caught by the webhook, naming the field.
func TestAdvancedCronJobWebhookRefusesAJobTemplateThatCannotRun(t *testing.T) {
	ns := newNamespace(t)
	acj := kinds.AdvancedCronJob("always", ns).Obj()
	acj.Spec.Template.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	err := env.Client.Create(context.Background(), acj)
	if err == nil || !strings.Contains(err.Error(), "spec.template.jobTemplate.spec.template.spec.restartPolicy") {
		t.Errorf("create with restartPolicy Always: %v, want a refusal naming spec.template.jobTemplate.spec.template.spec.restartPolicy", err)
	}
}

// TestEphemeralJobWebhookRefusesPorts: an ephemeral container may not declare ports, and the
// refusal names the field.
func TestEphemeralJobWebhookRefusesPorts(t *testing.T) {
	ns := newNamespace(t)
	job := kinds.EphemeralJob("ports", ns, "web").Obj()
	job.Spec.Template.EphemeralContainers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	err := env.Client.Create(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "spec.template.ephemeralContainers[0].ports: Forbidden") {
		t.Errorf("create with ports: %v, want a refusal naming spec.template.ephemeralContainers[0].ports", err)
	}
}

// TestTemplateNoDefaultsOffTheBroadcastJobTemplateIsStoredWithThePodDefaults: with
// TemplateNoDefaults off (1.8's default) the webhook stores the job's pod template with the
// core pod defaults, as 1.8 does, and a template without a restartPolicy gets OnFailure.
func TestTemplateNoDefaultsOffTheBroadcastJobTemplateIsStoredWithThePodDefaults(t *testing.T) {
	ns := newNamespace(t)
	job := kinds.BroadcastJob("defaults", ns).Obj()
	job.Spec.Paused = true
	job.Spec.Template.Spec.RestartPolicy = ""
	framework.Create(t, env.Client, job)
	got := &appsv1alpha1.BroadcastJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	ps := got.Spec.Template.Spec
	c := ps.Containers[0]
	if ps.RestartPolicy != corev1.RestartPolicyOnFailure || ps.DNSPolicy != corev1.DNSClusterFirst || ps.SchedulerName != corev1.DefaultSchedulerName ||
		ps.TerminationGracePeriodSeconds == nil || c.TerminationMessagePath != corev1.TerminationMessagePathDefault || c.ImagePullPolicy == "" {
		t.Errorf("stored template %+v; want restartPolicy OnFailure and the core pod defaults", ps)
	}
}

// TestTemplateNoDefaultsOffTheAdvancedCronJobJobTemplateIsStoredWithThePodDefaults: with
// TemplateNoDefaults off (1.8's default) madvancedcronjob.kb.io puts the core pod defaults into
// the Job template, which the CRD keeps schemaless, and 1.8's history limits into the spec.
func TestTemplateNoDefaultsOffTheAdvancedCronJobJobTemplateIsStoredWithThePodDefaults(t *testing.T) {
	ns := newNamespace(t)
	acj := kinds.AdvancedCronJob("defaults", ns).Obj()
	acj.Spec.Paused = ptr.To(true)
	acj.Spec.SuccessfulJobsHistoryLimit, acj.Spec.FailedJobsHistoryLimit = nil, nil
	framework.Create(t, env.Client, acj)
	got := &appsv1alpha1.AdvancedCronJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(acj), got); err != nil {
		t.Fatal(err)
	}
	ps := got.Spec.Template.JobTemplate.Spec.Template.Spec
	c := ps.Containers[0]
	if ps.DNSPolicy != corev1.DNSClusterFirst || ps.SchedulerName != corev1.DefaultSchedulerName ||
		ps.TerminationGracePeriodSeconds == nil || c.TerminationMessagePath != corev1.TerminationMessagePathDefault || c.ImagePullPolicy == "" {
		t.Errorf("stored job template %+v; want the core pod defaults", ps)
	}
	if ptr.Deref(got.Spec.SuccessfulJobsHistoryLimit, 0) != 3 || ptr.Deref(got.Spec.FailedJobsHistoryLimit, 0) != 1 {
		t.Errorf("history limits %v/%v, want 3/1", got.Spec.SuccessfulJobsHistoryLimit, got.Spec.FailedJobsHistoryLimit)
	}
}
