package client

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The generator accepts openapi.yaml, and what it generates is the committed client.gen.go
// (run go generate ./installer/server/client after changing the document).
func TestGeneratedClientMatchesTheDocument(t *testing.T) {
	config, _ := filepath.Abs("oapi-codegen.yaml")
	doc, _ := filepath.Abs("../openapi.yaml")
	dir := t.TempDir()
	// The config's output is relative to the working directory: generate into dir.
	cmd := exec.Command("go", "run", "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.5.1", "-config", config, doc)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen refuses openapi.yaml: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(filepath.Join(dir, "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("client.gen.go differs from what oapi-codegen makes of openapi.yaml; run go generate ./installer/server/client")
	}
}
