package register

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// thing is a kind to register.
type thing struct{ runtime.TypeMeta }

func (t *thing) DeepCopyObject() runtime.Object { c := *t; return &c }

func TestVersionsBuilderRegistersItsKindsInItsGroupVersion(t *testing.T) {
	gv, b := Version("apps.example.com", "v1")
	if want := (schema.GroupVersion{Group: "apps.example.com", Version: "v1"}); gv != want {
		t.Errorf("group version = %v, want %v", gv, want)
	}
	b.Register(&thing{})
	s := runtime.NewScheme()
	if err := b.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if !s.Recognizes(gv.WithKind("thing")) {
		t.Errorf("the scheme does not know %v", gv.WithKind("thing"))
	}
}
