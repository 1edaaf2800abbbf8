package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TempFile writes content to a file called name in a directory the test removes, and returns
// its path.
func TempFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Missing are the parts that s does not contain, in their order; nil when it contains them all.
func Missing(s string, parts ...string) []string {
	var missing []string
	for _, p := range parts {
		if !strings.Contains(s, p) {
			missing = append(missing, p)
		}
	}
	return missing
}
