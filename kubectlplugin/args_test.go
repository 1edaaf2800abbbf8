package kubectlplugin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestParseTargets(t *testing.T) {
	type got struct {
		Kinds, Names []string
		Err          string
	}
	tests := map[string]struct {
		args []string
		want got
	}{
		"TYPE/NAME pairs name one workload each": {
			args: []string{"cloneset/web", "asts/db"},
			want: got{Kinds: []string{"CloneSet", "StatefulSet"}, Names: []string{"web", "db"}},
		},
		"a TYPE then names applies the type to each": {
			args: []string{"ads", "a", "b"},
			want: got{Kinds: []string{"DaemonSet", "DaemonSet"}, Names: []string{"a", "b"}},
		},
		"the fully qualified resource is accepted": {
			args: []string{"clonesets.apps.kruise.io/web"},
			want: got{Kinds: []string{"CloneSet"}, Names: []string{"web"}},
		},
		"an unknown type is refused with the accepted ones": {
			args: []string{"deployment/web"},
			want: got{Err: `resource type "deployment" is not supported: use one of ads, advancedstatefulset, asts, clone, cloneset, cloneset.apps.kruise.io, clonesets, clonesets.apps.kruise.io, daemon, daemonset, daemonset.apps.kruise.io, daemonsets, daemonsets.apps.kruise.io, statefulset, statefulset.apps.kruise.io, statefulsets, statefulsets.apps.kruise.io, sts`},
		},
		"a type without a name asks for one": {
			args: []string{"cloneset"},
			want: got{Err: "you must name the clonesets: TYPE NAME or TYPE/NAME"},
		},
		"no argument asks for a resource": {
			want: got{Err: "you must name a resource: TYPE NAME or TYPE/NAME, where TYPE is one of ads, advancedstatefulset, asts, clone, cloneset, cloneset.apps.kruise.io, clonesets, clonesets.apps.kruise.io, daemon, daemonset, daemonset.apps.kruise.io, daemonsets, daemonsets.apps.kruise.io, statefulset, statefulset.apps.kruise.io, statefulsets, statefulsets.apps.kruise.io, sts"},
		},
		"mixing the two forms is refused": {
			args: []string{"cloneset/web", "db"},
			want: got{Err: `argument "db": want TYPE/NAME when the first argument has that form`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			targets, err := parseTargets(tc.args)
			var g got
			if err != nil {
				g.Err = err.Error()
			}
			for _, tg := range targets {
				g.Kinds = append(g.Kinds, tg.kind.gvk.Kind)
				g.Names = append(g.Names, tg.name)
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetImages(t *testing.T) {
	tmpl := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
			Containers:     []corev1.Container{{Name: "main", Image: "nginx:1"}, {Name: "side", Image: "envoy:1"}},
		}}
	}
	images := func(t *corev1.PodTemplateSpec) []string {
		var out []string
		for _, c := range append(t.Spec.InitContainers, t.Spec.Containers...) {
			out = append(out, c.Name+"="+c.Image)
		}
		return out
	}
	tests := map[string]struct {
		set     map[string]string
		want    []string
		wantErr string
	}{
		"a named container gets its image and the others keep theirs": {
			set:  map[string]string{"main": "nginx:2"},
			want: []string{"init=busybox:1", "main=nginx:2", "side=envoy:1"},
		},
		"an init container can be named": {
			set:  map[string]string{"init": "busybox:2"},
			want: []string{"init=busybox:2", "main=nginx:1", "side=envoy:1"},
		},
		"a star sets every container not named": {
			set:  map[string]string{"*": "x:1", "side": "envoy:2"},
			want: []string{"init=x:1", "main=x:1", "side=envoy:2"},
		},
		"an unknown container is an error naming it": {
			set:     map[string]string{"nope": "x:1"},
			wantErr: `unable to find container named "nope"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tmpl()
			err := setImages(got, tc.set)
			if !wantError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, images(got)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitImageArgs(t *testing.T) {
	tests := map[string]struct {
		args          []string
		wantResources []string
		wantErr       string
	}{
		"resources come first, then the pairs": {
			args: []string{"cloneset/web", "main=nginx:2"}, wantResources: []string{"cloneset/web"},
		},
		"no pair is refused": {
			args: []string{"cloneset/web"}, wantErr: "at least one image update is required: CONTAINER=IMAGE",
		},
		"an empty image is refused": {
			args: []string{"cloneset/web", "main="}, wantErr: `argument "main=": want CONTAINER=IMAGE, or *=IMAGE for every container`,
		},
		"a resource after the pairs is refused": {
			args: []string{"cloneset/web", "main=nginx:2", "cloneset/api"}, wantErr: `argument "cloneset/api": resources must come before the CONTAINER=IMAGE pairs`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, _, err := splitImageArgs(tc.args)
			if !wantError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.wantResources, res); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPickRollback(t *testing.T) {
	revs := []*appsv1.ControllerRevision{{Revision: 1}, {Revision: 3}, {Revision: 4}}
	tests := map[string]struct {
		revs    []*appsv1.ControllerRevision
		to      int64
		want    int64
		wantErr string
	}{
		"without --to-revision the one before the latest is chosen": {revs: revs, want: 3},
		"--to-revision picks that revision":                         {revs: revs, to: 1, want: 1},
		"a revision not in the history is an error":                 {revs: revs, to: 2, wantErr: "unable to find specified revision 2 in history"},
		"a single revision leaves nothing to roll back to":          {revs: revs[:1], wantErr: "no last revision to roll back to"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := pickRollback(tc.revs, tc.to)
			if !wantError(t, err, tc.wantErr) {
				return
			}
			if r.Revision != tc.want {
				t.Errorf("revision = %d, want %d", r.Revision, tc.want)
			}
		})
	}
}

func TestHistoryTable(t *testing.T) {
	revs := []*appsv1.ControllerRevision{{Revision: 1}, {Revision: 12}}
	revs[1].Annotations = map[string]string{changeCauseAnnotation: "set image nginx:2"}
	want := "REVISION  CHANGE-CAUSE\n1         <none>\n12        set image nginx:2\n"
	if diff := cmp.Diff(want, historyTable(revs)); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if got := historyTable(nil); got != "No rollout history found." {
		t.Errorf("empty history = %q", got)
	}
}

// wantError checks err against want ("" for none) and tells whether the test goes on to check
// the result: only when no error was wanted or got.
func wantError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || err.Error() != want {
			t.Fatalf("error = %v, want %q", err, want)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestResourceArgumentsForKubectl(t *testing.T) {
	type got struct {
		Native, Ours bool
		Qualified    []string
		Err          string
	}
	tests := map[string]struct {
		args []string
		want got
	}{
		"a Deployment goes to kubectl as it is": {
			args: []string{"deployment/web", "main=nginx:2"},
			want: got{Native: true, Qualified: []string{"deployment/web", "main=nginx:2"}},
		},
		"the bare statefulset is the Advanced StatefulSet, spelled so for kubectl": {
			args: []string{"statefulset", "web", "GREETING=hello"},
			want: got{Ours: true, Qualified: []string{"statefulsets.v1beta1.apps.kruise.io", "web", "GREETING=hello"}},
		},
		"statefulset.apps is the built-in StatefulSet": {
			args: []string{"statefulset.apps/web"},
			want: got{Native: true, Qualified: []string{"statefulset.apps/web"}},
		},
		"every TYPE/NAME of the add-on is spelled out": {
			args: []string{"clone/a", "ads/b"},
			want: got{Ours: true, Qualified: []string{"clonesets.v1alpha1.apps.kruise.io/a", "daemonsets.v1alpha1.apps.kruise.io/b"}},
		},
		"set serviceaccount's account name is no resource": {
			args: []string{"deployment/web", "builder"},
			want: got{Native: true, Qualified: []string{"deployment/web", "builder"}},
		},
		"built-in and add-on workloads in one command are refused": {
			args: []string{"deployment/a", "cloneset/b"},
			want: got{Qualified: []string{"deployment/a", "clonesets.v1alpha1.apps.kruise.io/b"}, Err: `arguments ["deployment/a" "cloneset/b"] mix built-in workloads with the add-on's: run one command for each`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			native, err := namesNative(tc.args)
			g := got{Native: native, Ours: namesOurs(tc.args), Qualified: qualifyOurs(tc.args)}
			if err != nil {
				g.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
