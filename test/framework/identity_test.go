package framework

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestImageID(t *testing.T) {
	cases := map[string]struct {
		image      string
		wantPrefix string
	}{
		"a tag is dropped from the repository":         {"nginx:1.27", "nginx@sha256:"},
		"a registry port is not mistaken for a tag":    {"localhost:5000/app:v1", "localhost:5000/app@sha256:"},
		"an untagged reference keeps its repository":   {"registry.example.com/pause", "registry.example.com/pause@sha256:"},
		"a digest reference keeps its digest":          {"nginx@sha256:" + strings.Repeat("a", 64), "nginx@sha256:" + strings.Repeat("a", 64)},
		"a tag and a digest keep the digest, drop tag": {"nginx:1@sha256:" + strings.Repeat("b", 64), "nginx@sha256:" + strings.Repeat("b", 64)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := imageID(tc.image)
			if !strings.HasPrefix(got, tc.wantPrefix) || len(got) != len(imageRepository(strings.SplitN(tc.image, "@", 2)[0]))+len("@sha256:")+64 {
				t.Errorf("imageID(%q) = %q, want %q followed by 64 hex digits", tc.image, got, tc.wantPrefix)
			}
			if again := imageID(tc.image); again != got {
				t.Errorf("imageID is not deterministic: %q then %q", got, again)
			}
		})
	}
	if imageID("nginx:1") == imageID("nginx:2") {
		t.Error("two tags of one repository got the same imageID")
	}
}

func TestIPAllocatorGivesEveryLivePodItsOwnAddress(t *testing.T) {
	a := newIPAllocator()
	seen := map[string]types.UID{}
	for i := range 600 {
		uid := types.UID(fmt.Sprint("pod-", i))
		ip := a.get(uid)
		if other, dup := seen[ip]; dup {
			t.Fatalf("%s got %s, already held by %s", uid, ip, other)
		}
		if strings.HasSuffix(ip, ".0") || strings.HasSuffix(ip, ".255") {
			t.Errorf("%s got network or broadcast-looking address %s", uid, ip)
		}
		seen[ip] = uid
		if again := a.get(uid); again != ip {
			t.Fatalf("%s got %s, then %s", uid, ip, again)
		}
	}
	// An address a pod already had (say from an earlier simulator) is never handed out again.
	b := newIPAllocator()
	taken := uint32ToIP(podIPBase + 2)
	b.claim("adopted", taken)
	for i := range 10 {
		if ip := b.get(types.UID(fmt.Sprint("new-", i))); ip == taken {
			t.Fatalf("new pod got %s, which an adopted pod holds", ip)
		}
	}
	// A released address may go to a new pod; the pod that had it holds a new one when back.
	b.release("adopted")
	if ip := b.get("adopted"); ip == "" {
		t.Error("no address after release")
	}
}
