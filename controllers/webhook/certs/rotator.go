package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretName is the Secret that holds the bundle.
const SecretName = "kruise-webhook-certs"

// Policy says how long certificates live and when they are renewed.
type Policy struct {
	// CAValidity is the CA's lifetime.
	CAValidity time.Duration
	// Validity is the serving certificate's lifetime.
	Validity time.Duration
	// RenewBefore is how long before expiry a certificate is replaced.
	RenewBefore time.Duration
	// CheckInterval is how often the Secret is read again.
	CheckInterval time.Duration
}

// DefaultPolicy is a ten-year CA, one-year serving certificates renewed a month ahead, and a
// check every five minutes.
func DefaultPolicy() Policy {
	return Policy{
		CAValidity:    10 * 365 * 24 * time.Hour,
		Validity:      365 * 24 * time.Hour,
		RenewBefore:   30 * 24 * time.Hour,
		CheckInterval: 5 * time.Minute,
	}
}

// Validate rejects a policy under which a fresh certificate would already need renewal.
func (p Policy) Validate() error {
	switch {
	case p.Validity <= 0 || p.CAValidity <= 0:
		return errors.New("certificate validity must be positive")
	case p.RenewBefore < 0:
		return errors.New("renewal margin must not be negative")
	case p.RenewBefore >= p.Validity:
		return fmt.Errorf("renewal margin %s must be shorter than the serving certificate validity %s", p.RenewBefore, p.Validity)
	case p.RenewBefore >= p.CAValidity:
		return fmt.Errorf("renewal margin %s must be shorter than the CA validity %s", p.RenewBefore, p.CAValidity)
	case p.CheckInterval <= 0:
		return errors.New("certificate check interval must be positive")
	}
	return nil
}

// Rotator keeps the Secret's bundle valid and the cert dir in step with it.
type Rotator struct {
	// Client reads and writes the Secret; it should not be cached (one Secret, read rarely).
	Client    client.Client
	Namespace string
	// Hosts the serving certificate must cover.
	Hosts  []string
	Policy Policy
	Clock  clock.WithTicker
	// CertDir receives tls.crt, tls.key and ca.crt for the webhook server.
	CertDir string
	// OnCAChange is called, after the files are written, whenever the CA differs from the
	// previous pass (and after the first pass).
	OnCAChange func(caPEM []byte)
	Log        logr.Logger
	// External reads the Secret as a certificate issuer writes it (the EnableExternalCerts
	// gate: ca.crt, tls.crt and tls.key, as cert-manager's Certificate does) and never creates,
	// renews or writes it; a missing Secret or key fails the pass, naming what is missing.
	External bool

	readyOnce sync.Once
	ready     chan struct{}
	mu        sync.Mutex
	current   Bundle
}

// Ready is closed once the cert dir holds a valid bundle.
func (r *Rotator) Ready() <-chan struct{} {
	r.init()
	return r.ready
}

// CABundle is the CA of the last bundle written, or nil before the first.
func (r *Rotator) CABundle() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.current.CACert)
}

func (r *Rotator) init() {
	r.readyOnce.Do(func() { r.ready = make(chan struct{}) })
}

// Run syncs until ctx ends: every CheckInterval, and after a failure again after a backoff
// that doubles from one second up to CheckInterval.
func (r *Rotator) Run(ctx context.Context) error {
	r.init()
	backoff := time.Second
	for {
		wait := r.Policy.CheckInterval
		if err := r.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.Log.Error(err, "syncing webhook certificates", "retryIn", backoff)
			wait, backoff = backoff, min(2*backoff, r.Policy.CheckInterval)
		} else {
			backoff = time.Second
		}
		t := r.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Sync makes one pass: read or create the Secret, renew what Decide asks for, write the files.
func (r *Rotator) Sync(ctx context.Context) error {
	r.init()
	b, err := r.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := writeFiles(r.CertDir, b); err != nil {
		return err
	}
	r.mu.Lock()
	caChanged := !bytes.Equal(r.current.CACert, b.CACert)
	r.current = b
	r.mu.Unlock()
	select {
	case <-r.ready:
	default:
		close(r.ready)
	}
	if caChanged && r.OnCAChange != nil {
		r.OnCAChange(bytes.Clone(b.CACert))
	}
	return nil
}

func (r *Rotator) ensureSecret(ctx context.Context) (Bundle, error) {
	if r.External {
		return r.readExternal(ctx)
	}
	var out Bundle
	err := retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		now := r.Clock.Now()
		s := &corev1.Secret{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: SecretName}, s)
		if apierrors.IsNotFound(err) {
			b, err := NewBundle(r.Hosts, now, r.Policy.CAValidity, r.Policy.Validity)
			if err != nil {
				return err
			}
			s = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: SecretName},
				Type:       corev1.SecretTypeOpaque,
				Data:       b.SecretData(),
			}
			if err := r.Client.Create(ctx, s); err != nil {
				return err
			}
			r.Log.Info("created webhook certificates", "secret", SecretName, "namespace", r.Namespace)
			out = b
			return nil
		}
		if err != nil {
			return fmt.Errorf("get secret %s/%s: %w", r.Namespace, SecretName, err)
		}
		old := FromSecretData(s.Data)
		d := Decide(old, r.Hosts, now, r.Policy.RenewBefore)
		b, err := Apply(d, old, r.Hosts, now, r.Policy.CAValidity, r.Policy.Validity)
		if err != nil {
			return err
		}
		if d.Action != Keep || !hasAllKeys(s.Data, b) {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range b.SecretData() {
				s.Data[k] = v
			}
			// The update carries the resourceVersion we read: a concurrent writer makes it
			// conflict, and the retry decides again from what that writer left.
			if err := r.Client.Update(ctx, s); err != nil {
				return err
			}
			r.Log.Info("renewed webhook certificates", "action", d.Action, "reason", d.Reason)
		}
		out = b
		return nil
	})
	if err != nil {
		return Bundle{}, fmt.Errorf("ensure webhook certificates: %w", err)
	}
	return out, nil
}

// The keys of an externally issued Secret (kubernetes.io/tls with the CA beside it).
const (
	ExternalCAKey   = "ca.crt"
	ExternalCertKey = corev1.TLSCertKey
	ExternalKeyKey  = corev1.TLSPrivateKeyKey
)

// readExternal reads the bundle an issuer wrote into the Secret and checks the pair matches.
func (r *Rotator) readExternal(ctx context.Context) (Bundle, error) {
	s := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: SecretName}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return Bundle{}, fmt.Errorf("EnableExternalCerts is on and Secret %s/%s does not exist: the certificate issuer "+
				"must write it (for cert-manager, a Certificate with secretName %s for the hosts %v)", r.Namespace, SecretName, SecretName, r.Hosts)
		}
		return Bundle{}, fmt.Errorf("get secret %s/%s: %w", r.Namespace, SecretName, err)
	}
	b := Bundle{CACert: s.Data[ExternalCAKey], Cert: s.Data[ExternalCertKey], Key: s.Data[ExternalKeyKey]}
	var missing []string
	for _, k := range []struct {
		name string
		data []byte
	}{{ExternalCAKey, b.CACert}, {ExternalCertKey, b.Cert}, {ExternalKeyKey, b.Key}} {
		if len(k.data) == 0 {
			missing = append(missing, k.name)
		}
	}
	if len(missing) > 0 {
		return Bundle{}, fmt.Errorf("EnableExternalCerts is on and Secret %s/%s lacks %v: the issuer must write ca.crt, tls.crt and tls.key", r.Namespace, SecretName, missing)
	}
	// Any key encoding an issuer writes (PKCS#1, PKCS#8, EC) is accepted, as the server loads it.
	if _, err := tls.X509KeyPair(b.Cert, b.Key); err != nil {
		return Bundle{}, fmt.Errorf("Secret %s/%s: tls.crt and tls.key: %w", r.Namespace, SecretName, err)
	}
	return b, nil
}

func hasAllKeys(data map[string][]byte, b Bundle) bool {
	for k, v := range b.SecretData() {
		if !bytes.Equal(data[k], v) {
			return false
		}
	}
	return true
}

// writeFiles writes the bundle into dir, each file replaced atomically and only if changed, so
// that the server's certificate watcher sees whole files.
func writeFiles(dir string, b Bundle) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create cert dir: %w", err)
	}
	// The key goes first: the watcher reloads on the certificate's change.
	for _, f := range []struct {
		name string
		data []byte
	}{{TLSKeyKey, b.Key}, {TLSCertKey, b.Cert}, {"ca.crt", b.CACert}} {
		path := filepath.Join(dir, f.name)
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, f.data) {
			continue
		}
		tmp, err := os.CreateTemp(dir, "."+f.name+"-")
		if err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}
