package imagepulljob

import (
	"context"
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// FuzzValidatingImagePullJobs feeds arbitrary objects to the ImagePullJob and ImageListPullJob
// webhooks (the kind picked by the first byte): they must never panic and must answer with a
// known code and a message.
func FuzzValidatingImagePullJobs(f *testing.F) {
	for i, file := range []string{"imagepulljobs.yaml", "imagelistpulljobs.yaml"} {
		samples, err := webhooktest.Samples(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range samples {
			f.Add(uint8(i), uint8(0), s)
			f.Add(uint8(i), uint8(1), s)
		}
	}
	f.Add(uint8(0), uint8(0), []byte(`{"spec":{"image":"a:b@sha256:zz","parallelism":"-1","selector":{"names":["a","a"],"matchLabels":{"x":"y"}},"completionPolicy":{"type":"Never","activeDeadlineSeconds":1}}}`))
	f.Add(uint8(1), uint8(0), []byte(`{"spec":{"images":["", "a", "a"],"pullSecrets":[""]}}`))
	gates := features.NewGate()
	if err := gates.Set(string(features.ImagePullJobGate) + "=true"); err != nil {
		f.Fatal(err)
	}
	handlers := Handlers(nil, setup.Deps{Gates: gates})
	paths := []string{ValidatingPath, ListValidatingPath}
	f.Fuzz(func(t *testing.T, kind, op uint8, obj []byte) {
		h := handlers[paths[int(kind)%len(paths)]]
		req := webhooktest.Request(webhooktest.Operations[int(op)%len(webhooktest.Operations)], "ns", obj, obj)
		if !webhooktest.Reachable(req) {
			return
		}
		if _, err := webhooktest.Check(context.Background(), h, req); err != nil {
			t.Fatal(err)
		}
	})
}
