package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Helm's media types for a chart stored in an OCI registry.
const (
	HelmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Registry is a mirror registry and how to reach it.
type Registry struct {
	// Host is host[:port][/path]: images go to <Host>/<repository>. Loopback hosts are reached
	// over plain HTTP.
	Host string `json:"host"`
	// Insecure allows plain HTTP (and unverified TLS) to a host that is not loopback.
	Insecure bool `json:"insecure,omitempty"`
	// Username and Password are basic auth; empty uses the docker config (~/.docker/config.json,
	// $DOCKER_CONFIG) and its credential helpers.
	Username string `json:"username,omitempty"`
	Password string `json:"-"`
	// Timeout bounds each request to the registry, from connecting to the end of its answer, a
	// blob's upload included; zero is DefaultTimeout. The CLI sets it from --request-timeout.
	Timeout time.Duration `json:"-"`
}

// DefaultTimeout bounds each registry request when Registry.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// NoAnswerError is a registry request that did not finish within the registry's timeout: a
// registry that accepts connections and never answers, or one too slow for the timeout.
type NoAnswerError struct {
	Host  string        `json:"host"`
	After time.Duration `json:"after"`
	// Err is what the request failed with, when it was not the timeout itself (a connection or
	// TLS handshake timeout of the transport).
	Err error `json:"-"`
}

func (e *NoAnswerError) Error() string {
	msg := fmt.Sprintf("registry %s did not answer a request within %s", e.Host, e.After)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

// Validate checks the registry's host before any request.
func (r Registry) Validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case r.Host == "":
		errs = append(errs, field.Required(p.Child("host"), "the mirror registry as host[:port][/path], e.g. registry.internal:5000/kruise"))
	case strings.Contains(r.Host, "://"):
		errs = append(errs, field.Invalid(p.Child("host"), r.Host, "must be host[:port][/path] without a scheme, e.g. registry.internal:5000/kruise"))
	default:
		if _, err := name.NewRepository(r.Host+"/probe", r.nameOptions()...); err != nil {
			errs = append(errs, field.Invalid(p.Child("host"), r.Host, "must be host[:port][/path] with lower-case path components, e.g. registry.internal:5000/kruise: "+err.Error()))
		}
	}
	if r.Password != "" && r.Username == "" {
		errs = append(errs, field.Required(p.Child("username"), "a password needs a username"))
	}
	return errs
}

func (r Registry) nameOptions() []name.Option {
	if r.Insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

func (r Registry) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// client is the options of every remote call of one command, and a function that closes the
// connections they leave idle. Each request gets the registry's timeout: the transport bounds
// connecting, the TLS handshake and the wait for response headers, and deadlineTransport the
// whole request, so a registry that accepts connections and never answers cannot hold a
// command. Timeouts are not retried.
func (r Registry) client(ctx context.Context) ([]remote.Option, func()) {
	d := r.timeout()
	base := remote.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = (&net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}).DialContext
	base.TLSHandshakeTimeout, base.ResponseHeaderTimeout = d, d
	o := []remote.Option{remote.WithContext(ctx), remote.WithTransport(deadlineTransport{base: base, timeout: d, host: r.Host})}
	if r.Username != "" {
		o = append(o, remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: r.Username, Password: r.Password})))
	} else {
		o = append(o, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	}
	return o, base.CloseIdleConnections
}

// noAnswer names a request that timed out as a *NoAnswerError, whichever layer noticed.
func (r Registry) noAnswer(err error) error {
	var na *NoAnswerError
	if err == nil || errors.As(err, &na) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &NoAnswerError{Host: r.Host, After: r.timeout(), Err: err}
	}
	return err
}

// deadlineTransport gives each request at most timeout, from dialing to the end of its
// response body, as --request-timeout gives each request to the cluster. A request cut off
// fails with a *NoAnswerError.
type deadlineTransport struct {
	base    http.RoundTripper
	timeout time.Duration
	host    string
}

func (t deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeoutCause(req.Context(), t.timeout, &NoAnswerError{Host: t.host, After: t.timeout})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a request's deadline with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// reference is <host>/<repository>:<tag> or, when tag is a digest, <host>/<repository>@<digest>.
func (r Registry) reference(repository, tagOrDigest string) (name.Reference, error) {
	s := strings.TrimSuffix(r.Host, "/") + "/" + repository
	if strings.HasPrefix(tagOrDigest, "sha256:") {
		s += "@" + tagOrDigest
	} else {
		s += ":" + tagOrDigest
	}
	ref, err := name.ParseReference(s, r.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("image reference %s: %w", s, err)
	}
	return ref, nil
}

// PushOptions say where a bundle goes.
type PushOptions struct {
	Registry Registry
	// ChartRepository is the path under Registry.Host the chart is pushed to as a Helm OCI
	// artifact (<host>/<path>/<chart>:<version>, for `helm upgrade oci://<host>/<path>/<chart>`);
	// empty pushes no chart.
	ChartRepository string
}

// Pushed is what a push wrote.
type Pushed struct {
	Images []string `json:"images"`
	// Chart is the chart's OCI reference, for helm: oci://<host>/<path>/<chart>.
	Chart        string `json:"chart,omitempty"`
	ChartVersion string `json:"chartVersion,omitempty"`
	Bytes        int64  `json:"bytes"`
}

// Push mirrors the bundle's images, which Open verified, to the registry under their
// repositories and tags (and so digests), then, with a ChartRepository, the chart as a Helm OCI artifact: MirroredChart, so
// that it names this registry and runs every image by digest. Blobs the registry already has are
// not uploaded again.
func Push(ctx context.Context, b *Bundle, o PushOptions) (Pushed, error) {
	if errs := o.Registry.Validate(field.NewPath("registry")); len(errs) > 0 {
		return Pushed{}, errs.ToAggregate()
	}
	lp, err := b.Layout()
	if err != nil {
		return Pushed{}, err
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return Pushed{}, fmt.Errorf("bundle images: %w", err)
	}
	ropts, done := o.Registry.client(ctx)
	defer done()
	out, err := push(b, idx, o, ropts)
	return out, o.Registry.noAnswer(err)
}

// push is Push with the registry's client.
func push(b *Bundle, idx v1.ImageIndex, o PushOptions, ropts []remote.Option) (Pushed, error) {
	var out Pushed
	for _, img := range sortedImages(b.Manifest) {
		ref, err := o.Registry.reference(img.Repository, img.Tag)
		if err != nil {
			return out, err
		}
		h, err := v1.NewHash(img.Digest)
		if err != nil {
			return out, fmt.Errorf("image %s: digest %q: %w", img.Ref(), img.Digest, err)
		}
		if types.MediaType(img.MediaType).IsIndex() {
			ii, err := idx.ImageIndex(h)
			if err != nil {
				return out, fmt.Errorf("bundle image %s: %w", img.Ref(), err)
			}
			if err := remote.WriteIndex(ref, ii, ropts...); err != nil {
				return out, fmt.Errorf("push %s: %w", ref, err)
			}
			if h, err = ii.Digest(); err != nil {
				return out, err
			}
		} else {
			im, err := idx.Image(h)
			if err != nil {
				return out, fmt.Errorf("bundle image %s: %w", img.Ref(), err)
			}
			if err := remote.Write(ref, im, ropts...); err != nil {
				return out, fmt.Errorf("push %s: %w", ref, err)
			}
			if h, err = im.Digest(); err != nil {
				return out, err
			}
		}
		// The digest of what was written, which Open verified to be the one bundle.json names.
		out.Images = append(out.Images, ref.Context().String()+"@"+h.String())
		out.Bytes += img.Size
	}
	if o.ChartRepository == "" {
		return out, nil
	}
	mirrored, err := MirroredChart(b, o.Registry.Host)
	if err != nil {
		return out, err
	}
	ref, n, err := pushChart(mirrored, o, ropts)
	if err != nil {
		return out, err
	}
	out.Chart, out.ChartVersion, out.Bytes = "oci://"+ref.Context().String(), b.Manifest.Chart.Version, out.Bytes+n
	return out, nil
}

// rawManifest is a manifest written as is.
type rawManifest struct {
	body      []byte
	mediaType types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.body, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mediaType, nil }

// pushChart pushes the packaged chart as Helm stores charts in OCI registries: an OCI image
// manifest whose config is the chart's metadata (Helm's config media type) and whose one layer
// is the .tgz (Helm's chart media type), tagged with the chart's version ('+' as '_').
func pushChart(c Chart, o PushOptions, ropts []remote.Option) (name.Reference, int64, error) {
	md := c.Metadata
	config, err := json.Marshal(md)
	if err != nil {
		return nil, 0, fmt.Errorf("chart metadata: %w", err)
	}
	repo := strings.Trim(o.ChartRepository, "/") + "/" + md.Name
	ref, err := o.Registry.reference(repo, strings.ReplaceAll(md.Version, "+", "_"))
	if err != nil {
		return nil, 0, err
	}
	cfgLayer := static.NewLayer(config, HelmConfigMediaType)
	chartLayer := static.NewLayer(c.Data, HelmChartMediaType)
	var descs []v1.Descriptor
	for _, l := range []v1.Layer{cfgLayer, chartLayer} {
		if err := remote.WriteLayer(ref.Context(), l, ropts...); err != nil {
			return nil, 0, fmt.Errorf("push chart %s: %w", ref, err)
		}
		d, err := l.Digest()
		if err != nil {
			return nil, 0, err
		}
		sz, err := l.Size()
		if err != nil {
			return nil, 0, err
		}
		mt, err := l.MediaType()
		if err != nil {
			return nil, 0, err
		}
		descs = append(descs, v1.Descriptor{MediaType: mt, Digest: d, Size: sz})
	}
	descs[1].Annotations = map[string]string{"org.opencontainers.image.title": md.Name + "-" + md.Version + ".tgz"}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        descs[0],
		Layers:        descs[1:],
		Annotations: map[string]string{
			"org.opencontainers.image.title":       md.Name,
			"org.opencontainers.image.version":     md.Version,
			"org.opencontainers.image.description": md.Description,
		},
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, 0, err
	}
	if err := remote.Put(ref, rawManifest{body: body, mediaType: types.OCIManifestSchema1}, ropts...); err != nil {
		return nil, 0, fmt.Errorf("push chart %s: %w", ref, err)
	}
	return ref, int64(len(config) + len(c.Data) + len(body)), nil
}

// MissingError is a registry that lacks images of a bundle.
type MissingError struct {
	Registry string `json:"registry"`
	// Images are <repository>@<digest> (roles), one for each image the registry lacks.
	Images []string `json:"images"`
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("registry %s lacks %s; mirror the bundle first with `kruise-addon bundle push --registry %s`",
		e.Registry, strings.Join(e.Images, ", "), e.Registry)
}

// Verify checks that the registry holds every image of m by digest, and reports each one it
// lacks by name in a *MissingError. Any other failure (unreachable, unauthorised) is returned
// as it is: it says nothing about which images are there.
func Verify(ctx context.Context, m Manifest, r Registry) error {
	if errs := r.Validate(field.NewPath("registry")); len(errs) > 0 {
		return errs.ToAggregate()
	}
	ropts, done := r.client(ctx)
	defer done()
	var missing []string
	for _, img := range sortedImages(m) {
		ref, err := r.reference(img.Repository, img.Digest)
		if err != nil {
			return err
		}
		_, err = remote.Head(ref, ropts...)
		if isNotFound(err) {
			missing = append(missing, fmt.Sprintf("%s@%s (%s)", img.Repository, img.Digest, joinRoles(img.Roles)))
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", ref, r.noAnswer(err))
		}
	}
	if len(missing) > 0 {
		return &MissingError{Registry: r.Host, Images: missing}
	}
	return nil
}

func isNotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}

// Values are the chart values that run every image of m from the registry by digest:
// imageRegistry (which the chart puts in front of every image) and, for each role,
// <role>.image.registry, repository and tag (the digest, which the chart renders as
// repository@digest). They go over everything else a user sets, so that what runs is what was
// verified.
func Values(m Manifest, registry string) map[string]any {
	host := strings.TrimSuffix(registry, "/")
	out := map[string]any{"imageRegistry": host}
	for _, img := range m.Images {
		for _, role := range img.Roles {
			out[string(role)] = map[string]any{"image": map[string]any{
				"registry": host, "repository": img.Repository, "tag": img.Digest,
			}}
		}
	}
	return out
}

// Need is an image the chosen values run that a bundle does not hold.
type Need struct {
	Role Role `json:"role"`
	// Image is repository:tag, as the chart's defaults name it.
	Image string `json:"image"`
	// Value is the value that asks for it, e.g. server.enabled.
	Value string `json:"value"`
}

// roleSwitches are the chart values that turn each role's workload on, with their defaults; the
// manager always runs.
var roleSwitches = []struct {
	role  Role
	value string
	def   bool
}{
	{RoleManager, "", true},
	{RoleDaemon, "daemon.enabled", true},
	{RoleHook, "hook.enabled", true},
	{RoleServer, "server.enabled", false},
}

// Lacks lists the images that values (the user's, over the chart's defaults) run and bundle m
// does not hold, each with the value that asks for it: with server.enabled, the console API's
// image of a bundle created without it. Without this check such an image would be run by tag
// from a mirror nobody checked.
func Lacks(m Manifest, ch *chart.Chart, values map[string]any) ([]Need, error) {
	held := map[Role]bool{}
	for _, img := range m.Images {
		for _, r := range img.Roles {
			held[r] = true
		}
	}
	defaults, err := chartImages(ch.Values, ch.Metadata.AppVersion, true)
	if err != nil {
		return nil, err
	}
	var out []Need
	for _, s := range roleSwitches {
		if held[s.role] {
			continue
		}
		on, value := s.def, s.value
		if s.value != "" {
			if v, ok := lookupBool(values, s.value); ok {
				on = v
			} else if v, ok := lookupBool(ch.Values, s.value); ok {
				on = v
			}
		} else {
			value = string(s.role) + ".image"
		}
		if !on {
			continue
		}
		n := Need{Role: s.role, Value: value}
		for _, w := range defaults {
			for _, r := range w.roles {
				if r == s.role {
					n.Image = w.repository + ":" + w.tag
				}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// lookupBool reads a dotted boolean value.
func lookupBool(values map[string]any, dotted string) (bool, bool) {
	cur := any(values)
	for _, k := range strings.Split(dotted, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false, false
		}
		if cur, ok = m[k]; !ok {
			return false, false
		}
	}
	b, ok := cur.(bool)
	return b, ok
}
