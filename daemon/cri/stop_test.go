package cri

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestHookURL(t *testing.T) {
	type tcase struct {
		get     corev1.HTTPGetAction
		ports   []corev1.ContainerPort
		want    string
		wantErr bool
	}
	tests := map[string]tcase{
		"a numeric port on the pod IP": {get: corev1.HTTPGetAction{Path: "/quit", Port: intstr.FromInt32(8080)}, want: "http://10.0.0.7:8080/quit"},
		"a named port is looked up in the container's ports": {get: corev1.HTTPGetAction{Path: "/q", Port: intstr.FromString("http")},
			ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9000}}, want: "http://10.0.0.7:9000/q"},
		"an explicit host and https scheme win": {get: corev1.HTTPGetAction{Host: "127.0.0.1", Scheme: corev1.URISchemeHTTPS, Port: intstr.FromInt32(443)}, want: "https://127.0.0.1:443"},
		"an unknown named port is an error":     {get: corev1.HTTPGetAction{Port: intstr.FromString("nope")}, wantErr: true},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got, err := HookURL(&Hook{HTTPGet: &tt.get, Ports: tt.ports, PodIP: "10.0.0.7"}, "app")
		if (err != nil) != tt.wantErr {
			t.Fatalf("HookURL error = %v, wantErr %v", err, tt.wantErr)
		}
		testkit.Diff(t, "HookURL", tt.want, got)
	})
}
