package client

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ogenModule is the ogen release the test generates with; its runtime is what the generated
// client imports.
const ogenModule = "github.com/ogen-go/ogen"

const ogenVersion = "v1.25.0"

// A second generator, ogen, accepts openapi.yaml, and the client it makes builds: the document
// is not written for one generator only.
func TestOgenBuildsAClientFromTheDocument(t *testing.T) {
	config, _ := filepath.Abs("ogen.yml")
	doc, _ := filepath.Abs("../openapi.yaml")
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		// The generated client is its own module, as a console team's would be.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, msg)
		}
	}
	run("go", "run", ogenModule+"/cmd/ogen@"+ogenVersion, "-config", config, "-package", "ogenclient", "-target", "ogenclient", "-clean", doc)
	gomod := "module example.invalid/console\n\ngo 1.26.0\n\nrequire " + ogenModule + " " + ogenVersion + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o600); err != nil {
		t.Fatal(err)
	}
	run("go", "mod", "tidy")
	run("go", "build", "./...")
}
