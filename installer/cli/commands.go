package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
)

func newVersionsCommand(g *globalOptions) *cobra.Command {
	var cluster string
	var fromCluster bool
	cmd := command("versions", "List add-on versions and the clusters they support", func(cmd *cobra.Command) error {
		if fromCluster {
			i, err := g.installer()
			if err != nil {
				return err
			}
			if cluster, err = i.ServerVersion(); err != nil {
				return fmt.Errorf("server version: %w", err)
			}
		}
		res, err := installer.Versions(cluster)
		if err != nil {
			return err
		}
		return g.print(res, func(w io.Writer) {
			if res.Cluster != "" {
				fmt.Fprintf(w, "add-on versions supporting cluster %s (this build: %s):\n", res.Cluster, res.Current)
			}
			fmt.Fprintf(w, "%-8s %-26s %-10s %s\n", "ADDON", "CLUSTERS", "COMMUNITY", "FEATURES")
			for _, r := range res.Rows {
				fmt.Fprintf(w, "%-8s %-26s %-10s %s\n", r.Addon, r.ClusterRange(), r.Community, r.Features)
			}
		})
	})
	cmd.Flags().StringVar(&cluster, "cluster-version", "", "only versions supporting this cluster version, e.g. v1.30.4-eks-a1b2c3")
	cmd.Flags().BoolVar(&fromCluster, "from-cluster", false, "filter for the cluster the kubeconfig points at")
	return cmd
}

func printReport(w io.Writer, r preflight.Report) {
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "%-8s %-21s %s\n", strings.ToUpper(string(v.Severity)), v.Check, v.Message)
		if v.Fix != "" {
			fmt.Fprintf(w, "%-8s %-21s fix: %s\n", "", "", v.Fix)
		}
	}
}

func newPreflightCommand(g *globalOptions) *cobra.Command {
	f := &specFlags{}
	cmd := command("preflight", "Check the cluster for an install with these choices, changing nothing", func(cmd *cobra.Command) error {
		i, o, err := g.installerFor(cmd, f, nil)
		if err != nil {
			return err
		}
		res, err := i.Preflight(cmd.Context(), o)
		if err != nil {
			return err
		}
		if err := g.print(res, func(w io.Writer) {
			printReport(w, res.Report)
			fmt.Fprintf(w, "add-on %s; recommended spec for this cluster: %s\n", res.AddonVersion, res.Recommended)
		}); err != nil {
			return err
		}
		if res.Report.Refused() {
			return &installer.RefusedError{Preflight: &res.Report}
		}
		return nil
	})
	f.register(cmd)
	return cmd
}

func newRenderCommand(g *globalOptions) *cobra.Command {
	f := &specFlags{}
	af := &airgapFlags{}
	var kubeVersion string
	cmd := command("render", "Render the manifests install would apply, client-side (no cluster needed)", func(cmd *cobra.Command) error {
		o, err := f.withAirgap(cmd, g, af)
		if err != nil {
			return err
		}
		out, err := installer.Render(cmd.Context(), installer.RenderOptions{Options: o, KubeVersion: kubeVersion})
		if err != nil {
			return err
		}
		return g.print(map[string]string{"manifest": out}, func(w io.Writer) { fmt.Fprint(w, out) })
	})
	f.register(cmd)
	af.register(cmd)
	cmd.Flags().StringVar(&kubeVersion, "kube-version", "", "cluster version to render for (default: "+installer.DefaultKubeVersion()+")")
	return cmd
}

func printResult(w io.Writer, r *installer.Result) {
	if r.Preflight != nil {
		for _, v := range r.Preflight.Verdicts {
			if v.Severity == preflight.Warning {
				fmt.Fprintf(w, "warning: %s\n", v.Message)
			}
		}
	}
	fmt.Fprintf(w, "release %s/%s: %s, revision %d, add-on %s\n", r.Namespace, r.Release, r.Status, r.Revision, r.AppVersion)
	if r.Message != "" {
		fmt.Fprintln(w, r.Message)
	}
	if r.Webhook != nil && !r.Webhook.Reachable {
		fmt.Fprintf(w, "webhook not ready yet: %s\n", r.Webhook.Message)
	}
}

func newInstallCommand(g *globalOptions) *cobra.Command {
	cmd, _ := newApplyCommand(g, "install", "Install the add-on (atomic; waits until the manager and daemon are ready)", (*installer.Installer).Install)
	return cmd
}

func newUpgradeCommand(g *globalOptions) *cobra.Command {
	cmd, f := newApplyCommand(g, "upgrade", "Upgrade the add-on: CRDs first, previous values reused over new defaults, rolled back on failure", (*installer.Installer).Upgrade)
	cmd.Flags().BoolVar(&f.resetValues, "reset-values", false, "drop the previous values and use only the chart's defaults and this command's values")
	cmd.Flags().BoolVar(&f.force, "force", false, "as helm's --force; also allows upgrade paths that need force")
	cmd.Flags().BoolVarP(&f.install, "install", "i", false, "install the add-on when the release is not installed, as helm's upgrade --install")
	return cmd
}

// newApplyCommand is install or upgrade: the same flags, read in the same order (the input,
// then the cluster), and the same output around run.
func newApplyCommand(g *globalOptions, use, short string, run func(*installer.Installer, context.Context, installer.Options) (*installer.Result, error)) (*cobra.Command, *specFlags) {
	f := &specFlags{}
	af := &airgapFlags{}
	cmd := command(use, short, func(cmd *cobra.Command) error {
		i, o, err := g.installerFor(cmd, f, af)
		if err != nil {
			return err
		}
		res, err := run(i, cmd.Context(), o)
		if err != nil {
			return err
		}
		return g.print(res, func(w io.Writer) { printResult(w, res) })
	})
	f.register(cmd)
	af.register(cmd)
	return cmd, f
}

func newUninstallCommand(g *globalOptions) *cobra.Command {
	var deleteCRDs bool
	wait := true
	timeout := installer.DefaultTimeout
	cmd := command("uninstall", "Remove the add-on; refused while any of its custom resources exist", func(cmd *cobra.Command) error {
		if timeout <= 0 {
			return &installer.InvalidError{Err: fmt.Errorf("--timeout must be a positive duration such as 5m, not %s", timeout)}
		}
		i, err := g.installer()
		if err != nil {
			return err
		}
		// --timeout bounds the whole command, the gate's reads included.
		ctx, cancel := context.WithTimeoutCause(cmd.Context(), timeout, &installer.TimeoutError{Timeout: timeout})
		defer cancel()
		uo := installer.UninstallOptions{ReleaseName: g.release, Namespace: g.namespace, DeleteCRDs: deleteCRDs}
		uo.Timeout, uo.Wait = timeout, &wait
		res, err := i.Uninstall(ctx, uo)
		if err != nil && ctx.Err() != nil && !errors.Is(err, context.Cause(ctx)) {
			err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		if err != nil {
			return err
		}
		return g.print(res, func(w io.Writer) {
			fmt.Fprintf(w, "release %s/%s: %s\n", res.Namespace, res.Release, res.Step)
			if res.Message != "" {
				fmt.Fprintln(w, res.Message)
			}
			for _, c := range res.DeletedCRDs {
				fmt.Fprintf(w, "deleted crd %s\n", c)
			}
			for _, k := range res.Kept {
				fmt.Fprintf(w, "kept %s: not this release's\n", k)
			}
		})
	})
	cmd.Flags().BoolVar(&deleteCRDs, "delete-crds", false, "also delete the add-on's CRDs (no user custom resource can remain: the gate checks first)")
	cmd.Flags().DurationVar(&timeout, "timeout", installer.DefaultTimeout, "how long the whole command may take, the wait for the release's objects to go included")
	cmd.Flags().BoolVar(&wait, "wait", true, "wait until the release's objects are gone (--wait=false on control planes without kube-controller-manager, where namespaces never finish terminating)")
	return cmd
}

func newUnlockCommand(g *globalOptions) *cobra.Command {
	return command("unlock", "Free a release stuck pending-install/upgrade/rollback or uninstalling", func(cmd *cobra.Command) error {
		return onRelease(g, cmd, (*installer.Installer).Unlock, func(w io.Writer, res *installer.Result) { fmt.Fprintln(w, res.Message) })
	})
}

func newStatusCommand(g *globalOptions) *cobra.Command {
	return command("status", "Show the release, component readiness, the webhook and the daemon per node", func(cmd *cobra.Command) error {
		return onRelease(g, cmd, (*installer.Installer).Status, func(w io.Writer, st *installer.Status) {
			if st.Release != nil {
				fmt.Fprintf(w, "release %s/%s: %s, revision %d, add-on %s\n", st.Release.Namespace, st.Release.Release, st.Release.Status, st.Release.Revision, st.Release.AppVersion)
			} else {
				fmt.Fprintf(w, "release %s/%s: %s\n", g.namespace, g.release, st.State)
			}
			fmt.Fprintln(w, st.Readiness.String())
			// The message names what the apiserver calls (the Service, or the URL in URL mode).
			fmt.Fprintf(w, "webhook: reachable=%t: %s\n", st.Webhook.Reachable, st.Webhook.Message)
			for _, d := range st.DaemonNodes {
				rt := "runtime unknown: " + d.RuntimeError
				if d.Runtime != nil {
					rt = "runtime " + d.Runtime.String()
				}
				fmt.Fprintf(w, "daemon on %s: ready=%t (%s), %s\n", d.Node, d.Ready, d.Pod, rt)
			}
			if st.FeatureGates != "" {
				fmt.Fprintf(w, "feature gates: %s\n", st.FeatureGates)
			}
			if st.Advice != "" {
				fmt.Fprintln(w, st.Advice)
			}
		})
	})
}

// onRelease runs call on the release the global flags name, and prints what it returns.
func onRelease[T any](g *globalOptions, cmd *cobra.Command, call func(*installer.Installer, context.Context, installer.Options) (T, error), text func(io.Writer, T)) error {
	i, err := g.installer()
	if err != nil {
		return err
	}
	res, err := call(i, cmd.Context(), installer.Options{ReleaseName: g.release, Namespace: g.namespace})
	if err != nil {
		return err
	}
	return g.print(res, func(w io.Writer) { text(w, res) })
}

func newRollbackCommand(g *globalOptions) *cobra.Command {
	ro := installer.RollbackOptions{Timeout: installer.DefaultTimeout}
	wait := true
	cmd := command("rollback", "Go back to an earlier revision of the release (the previous one unless --to-revision); the way to an older add-on version", func(cmd *cobra.Command) error {
		if ro.Timeout <= 0 {
			return &installer.InvalidError{Err: fmt.Errorf("--timeout must be a positive duration such as 5m, not %s", ro.Timeout)}
		}
		i, err := g.installer()
		if err != nil {
			return err
		}
		ro.ReleaseName, ro.Namespace, ro.Wait = g.release, g.namespace, &wait
		res, err := i.Rollback(cmd.Context(), ro)
		if err != nil {
			return err
		}
		return g.print(res, func(w io.Writer) { printResult(w, res) })
	})
	cmd.Flags().IntVar(&ro.ToRevision, "to-revision", 0, "the revision to go back to (see `helm history`); 0 is the one before the latest")
	cmd.Flags().DurationVar(&ro.Timeout, "timeout", installer.DefaultTimeout, "how long the whole command may take, the wait for readiness included")
	cmd.Flags().BoolVar(&wait, "wait", true, "wait for the manager and daemon to be ready")
	cmd.Flags().BoolVar(&ro.Force, "force", false, "go back even to an add-on version that does not support the cluster's version")
	return cmd
}
