package envhash

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fromField(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func TestRefs(t *testing.T) {
	tests := []struct {
		name string
		env  []corev1.EnvVar
		want []Ref
	}{
		{
			name: "labels and annotations read through fieldRef are listed in spec order",
			env:  []corev1.EnvVar{fromField("B", "metadata.annotations['b/x']"), fromField("A", "metadata.labels['app']")},
			want: []Ref{{Name: "B", Source: Annotations, Key: "b/x"}, {Name: "A", Source: Labels, Key: "app"}},
		},
		{
			name: "other fieldRefs, literal values and resource refs are not metadata reads",
			env: []corev1.EnvVar{
				fromField("NAME", "metadata.name"), fromField("ALL", "metadata.labels"), fromField("IP", "status.podIP"),
				{Name: "LIT", Value: "x"},
				{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			},
		},
		{
			name: "a literal value wins over a fieldRef, as in the kubelet",
			env:  []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['a']"}}}},
		},
		{
			name: "the SidecarSet version vars are left out",
			env:  []corev1.EnvVar{fromField("SIDECARSET_VERSION", "metadata.annotations['v']"), fromField("SIDECARSET_VERSION_ALT", "metadata.annotations['w']")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Refs(&corev1.Container{Env: tt.env})); diff != "" {
				t.Errorf("Refs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpectedAndCurrent(t *testing.T) {
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{
		fromField("TRACK", "metadata.labels['track']"), fromField("OWNER", "metadata.annotations['owner']"), {Name: "LIT", Value: "x"},
	}}
	meta := func(track, owner string) metav1.Object {
		return &metav1.ObjectMeta{Labels: map[string]string{"track": track, "other": "1"}, Annotations: map[string]string{"owner": owner}}
	}
	env := func(vars map[string]string) func(string) (string, error) {
		return func(k string) (string, error) { return vars[k], nil }
	}
	tests := []struct {
		name      string
		meta      metav1.Object
		running   map[string]string
		wantEqual bool
	}{
		{
			name:      "a container started with the pod's current metadata has the hash the metadata gives",
			meta:      meta("stable", "team-a"),
			running:   map[string]string{"TRACK": "stable", "OWNER": "team-a", "LIT": "x", "PATH": "/bin"},
			wantEqual: true,
		},
		{
			name:    "a changed label the container reads changes the hash",
			meta:    meta("canary", "team-a"),
			running: map[string]string{"TRACK": "stable", "OWNER": "team-a"},
		},
		{
			name:    "a changed annotation the container reads changes the hash",
			meta:    meta("stable", "team-b"),
			running: map[string]string{"TRACK": "stable", "OWNER": "team-a"},
		},
		{
			name:      "a label the container does not read leaves the hash alone",
			meta:      &metav1.ObjectMeta{Labels: map[string]string{"track": "stable", "other": "2"}, Annotations: map[string]string{"owner": "team-a"}},
			running:   map[string]string{"TRACK": "stable", "OWNER": "team-a"},
			wantEqual: true,
		},
		{
			name:      "a missing label is the empty value, as the kubelet sets it",
			meta:      &metav1.ObjectMeta{Annotations: map[string]string{"owner": "team-a"}},
			running:   map[string]string{"TRACK": "", "OWNER": "team-a"},
			wantEqual: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, err := Current(c, env(tt.running))
			if err != nil {
				t.Fatal(err)
			}
			exp := Expected(c, tt.meta)
			if exp == 0 || cur == 0 {
				t.Fatalf("hashes must not be 0 (0 means not recorded): expected %d current %d", exp, cur)
			}
			if got := exp == cur; got != tt.wantEqual {
				t.Errorf("Expected %d == Current %d is %v, want %v", exp, cur, got, tt.wantEqual)
			}
		})
	}
}

func TestCurrentDoesNotAskContainersThatReadNoMetadata(t *testing.T) {
	c := &corev1.Container{Name: "plain", Env: []corev1.EnvVar{{Name: "LIT", Value: "x"}}}
	got, err := Current(c, func(string) (string, error) { return "", errors.New("must not be called") })
	if err != nil {
		t.Fatalf("Current asked for the env of a container that reads no metadata: %v", err)
	}
	if want := Expected(c, &metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}); got != want {
		t.Errorf("Current %d, want %d", got, want)
	}
}

func TestCurrentPassesLookupErrors(t *testing.T) {
	c := &corev1.Container{Env: []corev1.EnvVar{fromField("A", "metadata.labels['a']")}}
	boom := errors.New("exec failed")
	if _, err := Current(c, func(string) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("Current error %v, want %v", err, boom)
	}
}
