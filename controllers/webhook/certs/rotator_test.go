package certs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func secretOf(b Bundle) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kruise-system", Name: SecretName}, Data: b.SecretData()}
}

func TestRotatorSync(t *testing.T) {
	now := time.Now()
	good := mustBundle(t, hosts, now, 3650*day, 365*day)
	expiring := mustBundle(t, hosts, now.Add(-360*day), 3650*day, 365*day)
	// Another manager's bundle, written between our read and our write.
	theirs := mustBundle(t, hosts, now, 3650*day, 365*day)
	secretGR := schema.GroupResource{Resource: "secrets"}

	cases := map[string]struct {
		existing *corev1.Secret
		// onCreate/onUpdate simulate another manager winning the race.
		raceCreate, raceUpdate bool
		wantKept               *Bundle // the bundle the Secret must end with, when known
		wantRenewed            bool    // the Secret must differ from existing
	}{
		"a missing Secret is created": {},
		"a good Secret is used as it is": {
			existing: secretOf(good), wantKept: &good,
		},
		"an expiring Secret is renewed": {
			existing: secretOf(expiring), wantRenewed: true,
		},
		"losing the create race uses the winner's Secret": {
			raceCreate: true, wantKept: &theirs,
		},
		"losing the update race uses the winner's renewal": {
			existing: secretOf(expiring), raceUpdate: true, wantKept: &theirs,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.existing != nil {
				b = b.WithObjects(tc.existing.DeepCopy())
			}
			var raced bool
			b = b.WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if tc.raceCreate && !raced {
						raced = true
						if err := c.Create(ctx, secretOf(theirs)); err != nil {
							return err
						}
						return apierrors.NewAlreadyExists(secretGR, SecretName)
					}
					return c.Create(ctx, obj, opts...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if tc.raceUpdate && !raced {
						raced = true
						cur := &corev1.Secret{}
						if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
							return err
						}
						cur.Data = theirs.SecretData()
						if err := c.Update(ctx, cur); err != nil {
							return err
						}
						return apierrors.NewConflict(secretGR, SecretName, nil)
					}
					return c.Update(ctx, obj, opts...)
				},
			})
			c := b.Build()
			dir := t.TempDir()
			var gotCA []byte
			r := &Rotator{
				Client: c, Namespace: "kruise-system", Hosts: hosts, Policy: DefaultPolicy(),
				Clock: clocktesting.NewFakeClock(now), CertDir: dir, Log: logr.Discard(),
				OnCAChange: func(ca []byte) { gotCA = ca },
			}
			if err := r.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := &corev1.Secret{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "kruise-system", Name: SecretName}, s); err != nil {
				t.Fatal(err)
			}
			stored := FromSecretData(s.Data)
			if tc.wantKept != nil {
				if diff := cmp.Diff(*tc.wantKept, stored); diff != "" {
					t.Errorf("stored bundle (-want +got):\n%s", diff)
				}
			}
			if tc.wantRenewed && stored.Equal(FromSecretData(tc.existing.Data)) {
				t.Error("the expiring bundle was kept")
			}
			if d := Decide(stored, hosts, now, DefaultPolicy().RenewBefore); d.Action != Keep {
				t.Errorf("the stored bundle needs %s: %s", d.Action, d.Reason)
			}
			onDisk, err := os.ReadFile(filepath.Join(dir, TLSCertKey))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(onDisk, stored.Cert) {
				t.Error("the cert dir does not hold the stored certificate")
			}
			if !bytes.Equal(gotCA, stored.CACert) || !bytes.Equal(r.CABundle(), stored.CACert) {
				t.Error("OnCAChange and CABundle do not report the stored CA")
			}
			select {
			case <-r.Ready():
			default:
				t.Error("Ready is not closed after a successful sync")
			}
		})
	}
}

// TestExternalSecretIsReadAndNeverWritten covers EnableExternalCerts: the issuer's Secret is
// served as it is, and a missing Secret, a missing key or a key that does not match the
// certificate fails the pass naming what is wrong, with nothing created or written.
func TestExternalSecretIsReadAndNeverWritten(t *testing.T) {
	now := time.Now()
	issued := mustBundle(t, hosts, now, 3650*day, 365*day)
	other := mustBundle(t, hosts, now, 3650*day, 365*day)
	external := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kruise-system", Name: SecretName}, Type: corev1.SecretTypeTLS, Data: data}
	}
	full := map[string][]byte{"ca.crt": issued.CACert, "tls.crt": issued.Cert, "tls.key": issued.Key}
	cases := map[string]struct {
		existing *corev1.Secret
		wantErr  string
	}{
		"the issuer's Secret is served as it is":               {existing: external(full)},
		"a missing Secret fails, naming it and what writes it": {wantErr: "Secret kruise-system/kruise-webhook-certs does not exist: the certificate issuer must write it"},
		"a missing key fails, naming it": {
			existing: external(map[string][]byte{"tls.crt": issued.Cert, "tls.key": issued.Key}), wantErr: "lacks [ca.crt]",
		},
		"a key of another certificate fails": {
			existing: external(map[string][]byte{"ca.crt": issued.CACert, "tls.crt": issued.Cert, "tls.key": other.Key}), wantErr: "tls.crt and tls.key",
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc struct {
		existing *corev1.Secret
		wantErr  string
	}) {
		b := fake.NewClientBuilder()
		if tc.existing != nil {
			b = b.WithObjects(tc.existing.DeepCopy())
		}
		writes := 0
		c := b.WithInterceptorFuncs(interceptor.Funcs{
			Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				writes++
				return nil
			},
			Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
				writes++
				return nil
			},
			Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				writes++
				return nil
			},
		}).Build()
		dir := t.TempDir()
		r := &Rotator{Client: c, Namespace: "kruise-system", Hosts: hosts, Policy: DefaultPolicy(), External: true,
			Clock: clocktesting.NewFakeClock(now), CertDir: dir, Log: logr.Discard()}
		err := r.Sync(context.Background())
		if tc.wantErr == "" && err != nil {
			t.Fatal(err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Fatalf("Sync() = %v, want an error with %q", err, tc.wantErr)
		}
		testkit.Diff(t, "writes to the apiserver", 0, writes)
		if tc.wantErr != "" {
			return
		}
		served, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "served certificate", string(issued.Cert), string(served))
		testkit.Diff(t, "CA", string(issued.CACert), string(r.CABundle()))
	})
}
