package framework

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Kubectl runs the kubectl of the assets folder against this control plane and returns its
// output. The command is killed when ctx ends.
func (e *Env) Kubectl(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, e.assets.kubectl, append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), nil
}
