package installer

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
)

var imageLine = regexp.MustCompile(`(?m)^\s*image:\s*"?([^"\s]+)"?\s*$`)

func TestRenderFromBundle(t *testing.T) {
	p, m := testbundle.Write(t, 64)
	const host = "mirror.internal:5000/kruise"
	digest := map[string]string{}
	for _, img := range m.Images {
		digest[img.Repository] = img.Digest
	}
	cases := map[string]struct {
		set []string
	}{
		"every image, the uninstall hook's included, runs from the mirror by digest": {},
		"the bundle's images win over a user's image values, so what runs is what was verified": {
			set: []string{"imageRegistry=elsewhere.example", "manager.image.tag=v9", "hook.image.repository=other/hook", "daemon.image.registry=x.example"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Render(context.Background(), RenderOptions{Options: Options{
				Bundle: p, Registry: bundle.Registry{Host: host}, Set: tc.set,
			}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sm := range imageLine.FindAllStringSubmatch(out, -1) {
				got = append(got, sm[1])
			}
			sort.Strings(got)
			want := []string{
				host + "/kruise-addon/kruise-daemon@" + digest["kruise-addon/kruise-daemon"],
				host + "/kruise-addon/kruise-manager@" + digest["kruise-addon/kruise-manager"],
				host + "/kruise-addon/kruise-manager@" + digest["kruise-addon/kruise-manager"],
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rendered images (manager, daemon, hook) (-want +got):\n%s", d)
			}
			if !strings.Contains(out, "# Source: kruise/templates/hook-uninstall-check.yaml") {
				t.Errorf("the render has no uninstall hook, so the test proves nothing about hook images")
			}
		})
	}
}

func TestBundleOptionsAreValidated(t *testing.T) {
	p, _ := testbundle.Write(t, 64)
	cases := map[string]struct {
		o    Options
		want string
	}{
		"a bundle without a registry names the registry":  {o: Options{Bundle: p}, want: "registry.host: Required value"},
		"a registry without a bundle names the bundle":    {o: Options{Registry: bundle.Registry{Host: "r.internal"}}, want: "bundle: Required value"},
		"a bundle and a chart exclude each other":         {o: Options{Bundle: p, ChartPath: "charts/kruise", Registry: bundle.Registry{Host: "r.internal"}}, want: "chartPath: Invalid value"},
		"a registry URL with a scheme says what is valid": {o: Options{Bundle: p, Registry: bundle.Registry{Host: "https://r.internal"}}, want: "without a scheme"},
		"a bundle file that does not exist is bad input":  {o: Options{Bundle: p + ".missing", Registry: bundle.Registry{Host: "r.internal"}}, want: "open bundle"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), RenderOptions{Options: tc.o})
			if !IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want bad input containing %q", err, tc.want)
			}
		})
	}
}
