package installer

import (
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/clock"

	"github.com/kruise-addon/kruise-addon/versions"
)

// Installer runs the commands against one cluster.
type Installer struct {
	getter   genericclioptions.RESTClientGetter
	kube     kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface
	table    *versions.Table
	progress io.Writer
	// onReadiness, when set, receives each readiness change instead of its line on progress.
	onReadiness func(Readiness)
	clock       clock.WithTicker
}

// Option configures New.
type Option func(*Installer)

// WithProgress receives progress lines ("ready 1/2: manager 0/1, daemon 2/2"); default discards.
func WithProgress(w io.Writer) Option { return func(i *Installer) { i.progress = w } }

// WithReadiness receives each change of readiness while a command waits, and the readiness it
// ends with, as a value instead of a line on the progress writer; other progress lines (a
// rollback starting) still go to the writer. f is called from the command's goroutines, one
// call at a time.
func WithReadiness(f func(Readiness)) Option { return func(i *Installer) { i.onReadiness = f } }

// New connects to the cluster getter points at. Every request, ours and Helm's, gets the
// getter's timeout, or DefaultRequestTimeout when it sets none.
func New(getter genericclioptions.RESTClientGetter, opts ...Option) (*Installer, error) {
	getter = newBoundedGetter(getter, DefaultRequestTimeout)
	i := &Installer{getter: getter, progress: io.Discard, clock: clock.RealClock{}}
	for _, o := range opts {
		o(i)
	}
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if i.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if i.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	if i.metadata, err = metadata.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	if i.table, err = versions.Load(); err != nil {
		return nil, err
	}
	return i, nil
}
