package framework

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
)

// Option configures Start.
type Option func(*options)

type options struct {
	assetsDir      string
	crdDirs        []string
	scheme         *runtime.Scheme
	schemeAdders   []func(*runtime.Scheme) error
	apiserverFlags map[string]string
	logger         logr.Logger
	startTimeout   time.Duration
}

func defaultOptions() options {
	return options{
		logger: logr.Discard(),
		// A cold apiserver on a busy 2-core machine takes a few seconds; a minute only runs
		// out when something is wrong, and then the error carries the log.
		startTimeout: time.Minute,
	}
}

// WithAssetsDir takes etcd, kube-apiserver and kubectl from dir instead of $KUBEBUILDER_ASSETS.
func WithAssetsDir(dir string) Option {
	return func(o *options) { o.assetsDir = dir }
}

// WithCRDDirs installs the CRDs found in dirs too, after those in CRDDir(). Unlike CRDDir(),
// which may be empty before generation, each dir must exist.
func WithCRDDirs(dirs ...string) Option {
	return func(o *options) { o.crdDirs = append(o.crdDirs, dirs...) }
}

// WithScheme makes Env.Client use s instead of a scheme with the client-go and
// apiextensions kinds; s must then hold every kind the caller reads.
func WithScheme(s *runtime.Scheme) Option {
	return func(o *options) { o.scheme = s }
}

// WithSchemeAdder adds kinds to Env.Scheme, for example apis.AddToScheme.
func WithSchemeAdder(add func(*runtime.Scheme) error) Option {
	return func(o *options) { o.schemeAdders = append(o.schemeAdders, add) }
}

// WithAPIServerFlags sets kube-apiserver flags, keyed by name without the leading dashes. They
// replace the defaults of the same name; an empty value drops a default flag.
func WithAPIServerFlags(flags map[string]string) Option {
	return func(o *options) {
		if o.apiserverFlags == nil {
			o.apiserverFlags = map[string]string{}
		}
		for k, v := range flags {
			o.apiserverFlags[k] = v
		}
	}
}

// WithLogger receives the control plane's progress messages; the default discards them.
func WithLogger(l logr.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithStartTimeout bounds how long Start waits for etcd, the apiserver and the CRDs.
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) { o.startTimeout = d }
}
