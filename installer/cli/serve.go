package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/server"
)

// serveOptions are the flags of serve.
type serveOptions struct {
	config, tokens, auditLog string
	listen                   server.ListenOptions
	bundleDir                string
	bundleKey                string
	chartRepo                string
	// tokenReviewGroups are group=role pairs; given any, unknown bearer tokens are reviewed by
	// the cluster of tokenReviewKubeconfig (the pod's own without it).
	tokenReviewGroups     []string
	tokenReviewKubeconfig string
	tokenReviewCacheTTL   time.Duration
}

func newServeCommand(g *globalOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API for a console: the clusters of --config, callers of --tokens, over TLS",
		Long: `Serve the HTTP API (see /openapi.yaml on the server) that installs, upgrades and removes the
add-on on the clusters named in --config, for the callers in --tokens. It serves only over TLS
(--listen with --tls-cert and --tls-key); --insecure-listen serves plain HTTP on a loopback address
only, for local tests or a proxy beside it that terminates TLS. With --token-review-group, a
bearer token --tokens does not know is checked with the cluster's TokenReview, and its user's
groups give its role. --tokens, --tls-cert and --tls-key are read again when they change on
disk, without a restart; a change that does not load keeps the previous one and is logged. Every mutating call of a known
caller is written to --audit-log as a JSON line; requests without a known caller are rate-limited
per address, counted at /metrics and summed up in the audit log once a minute. The limits: section
of --config bounds timeouts, connections (in all and per client address) and body size. SIGINT or
SIGTERM stops it: running operations are cancelled and undone as the CLI's are, and the release
history tells what happened.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, g)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.config, "config", "", "clusters file: named kubeconfigs, inCluster: true for the cluster the server runs in, and the server's limits (required)")
	fl.StringVar(&o.tokens, "tokens", "", "tokens file: bearer tokens and client certificate names, each with a role, read-only or operator (required)")
	fl.StringVar(&o.auditLog, "audit-log", "-", "file the audit log is appended to, one JSON line per mutating call of a known caller and a summary of refused ones; - for stdout")
	fl.StringVar(&o.listen.Listen, "listen", "", "TLS address to serve on, e.g. :8443")
	fl.StringVar(&o.listen.CertFile, "tls-cert", "", "serving certificate (PEM)")
	fl.StringVar(&o.listen.KeyFile, "tls-key", "", "serving certificate's key (PEM)")
	fl.StringVar(&o.listen.ClientCAFile, "client-ca", "", "CA (PEM) whose client certificates authenticate callers the tokens file names")
	fl.StringVar(&o.bundleDir, "bundle-dir", "", "directory of air-gap bundles (kruise-addon bundle create) that install and upgrade requests may name by file name, with the mirror their images were pushed to")
	fl.StringVar(&o.bundleKey, "bundle-key", "", "PEM public key: every bundle of --bundle-dir a request installs from must carry a signature that verifies with it (bundle create --sign-key)")
	fl.StringVar(&o.chartRepo, "chart-repo", "", "URL of a Helm chart repository (kruise-addon bundle chart-repo) whose add-on charts install and upgrade requests may also pick by version")
	fl.StringArrayVar(&o.tokenReviewGroups, "token-review-group", nil, "<group>=<role> (repeatable): a bearer token the tokens file does not know is checked with the cluster's TokenReview, and a user in group gets role (read-only or operator); the highest of its groups wins")
	fl.StringVar(&o.tokenReviewKubeconfig, "token-review-kubeconfig", "", "kubeconfig of the cluster that reviews tokens with --token-review-group; default: the cluster the server runs in")
	fl.DurationVar(&o.tokenReviewCacheTTL, "token-review-cache-ttl", server.DefaultTokenReviewCacheTTL, "how long a token review's answer is reused for the same token")
	fl.StringVar(&o.listen.InsecureListen, "insecure-listen", "", "loopback address served over plain HTTP instead of TLS, e.g. 127.0.0.1:8080")
	return cmd
}

func (o *serveOptions) run(cmd *cobra.Command, g *globalOptions) error {
	var problems []string
	if o.config == "" {
		problems = append(problems, "--config: Required value: the clusters file")
	}
	if o.tokens == "" {
		problems = append(problems, "--tokens: Required value: the tokens file")
	}
	if err := o.listen.Validate(); err != nil {
		problems = append(problems, err.Error())
	}
	var review *server.TokenReviewOptions
	if len(o.tokenReviewGroups) > 0 {
		groups, err := server.ParseGroupRoles(field.NewPath("--token-review-group"), o.tokenReviewGroups)
		if err != nil {
			problems = append(problems, err.Error())
		}
		if o.tokenReviewCacheTTL <= 0 {
			problems = append(problems, "--token-review-cache-ttl: Invalid value: must be a positive duration such as 10s")
		}
		review = &server.TokenReviewOptions{Groups: groups, CacheTTL: o.tokenReviewCacheTTL}
	} else if o.tokenReviewKubeconfig != "" {
		problems = append(problems, "--token-review-kubeconfig: Forbidden: needs at least one --token-review-group, or no reviewed token could call")
	}
	if len(problems) > 0 {
		return &installer.InvalidError{Err: errors.New(strings.Join(problems, "; "))}
	}
	if review != nil {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.tokenReviewKubeconfig)
		if err != nil {
			return &installer.InvalidError{Err: fmt.Errorf("--token-review-kubeconfig: %w", err)}
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return &installer.InvalidError{Err: fmt.Errorf("--token-review-kubeconfig: %w", err)}
		}
		review.Client = cs.AuthenticationV1().TokenReviews()
	}
	clusters, limits, err := server.LoadConfig(o.config)
	if err != nil {
		return &installer.InvalidError{Err: err}
	}
	access, err := server.LoadAccessFile(o.tokens, klog.Background())
	if err != nil {
		return &installer.InvalidError{Err: err}
	}
	var audit io.Writer = g.out
	if o.auditLog != "-" {
		f, err := os.OpenFile(o.auditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer f.Close()
		audit = f
	}
	ctx := cmd.Context()
	var bundleKey []byte
	if o.bundleKey != "" {
		if o.bundleDir == "" {
			return &installer.InvalidError{Err: fmt.Errorf("--bundle-key checks the bundles of --bundle-dir: give --bundle-dir too")}
		}
		if bundleKey, err = os.ReadFile(o.bundleKey); err == nil {
			err = bundle.CheckPublicKey(bundleKey)
		}
		if err != nil {
			return &installer.InvalidError{Err: fmt.Errorf("--bundle-key: %w", err)}
		}
	}
	s, err := server.New(server.Options{Clusters: clusters, TokensFile: access, Audit: audit, Context: ctx, Log: klog.Background(), Limits: limits, TokenReview: review,
		BundleDir: o.bundleDir, BundleKey: string(bundleKey), ChartRepository: o.chartRepo})
	if err != nil {
		return err
	}
	scheme := "https"
	if o.listen.InsecureListen != "" {
		scheme = "http"
	}
	return server.ListenAndServe(ctx, s, o.listen, func(addr string) {
		fmt.Fprintf(g.errOut, "serving the API on %s://%s for clusters %v\n", scheme, addr, clusters.Names())
	})
}
