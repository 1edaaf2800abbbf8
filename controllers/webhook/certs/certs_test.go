package certs

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

var hosts = ServiceHosts("kruise-webhook-service", "kruise-system")

func mustBundle(t *testing.T, hosts []string, issued time.Time, caValidity, validity time.Duration) Bundle {
	t.Helper()
	b, err := NewBundle(hosts, issued, caValidity, validity)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecide(t *testing.T) {
	fresh := mustBundle(t, hosts, t0, 3650*day, 365*day)
	other := mustBundle(t, hosts, t0, 3650*day, 365*day)
	cases := map[string]struct {
		bundle     Bundle
		hosts      []string
		now        time.Time
		wantAction Action
		wantReason string
	}{
		"a fresh bundle is kept": {
			bundle: fresh, hosts: hosts, now: t0.Add(day), wantAction: Keep,
		},
		"an empty secret needs everything": {
			bundle: Bundle{}, hosts: hosts, now: t0, wantAction: IssueAll, wantReason: "no usable CA",
		},
		"a CA whose key does not match needs everything": {
			bundle: Bundle{CACert: fresh.CACert, CAKey: other.CAKey, Cert: fresh.Cert, Key: fresh.Key},
			hosts:  hosts, now: t0, wantAction: IssueAll, wantReason: "key does not match",
		},
		"a CA inside the renewal margin needs everything": {
			bundle: mustBundle(t, hosts, t0, 40*day, 20*day), hosts: hosts, now: t0.Add(10 * day),
			wantAction: IssueAll, wantReason: "CA expires",
		},
		"a serving certificate inside the renewal margin is reissued": {
			bundle: fresh, hosts: hosts, now: t0.Add(335 * day), wantAction: IssueServing,
			wantReason: "serving certificate expires",
		},
		"one day before the margin the serving certificate is kept": {
			bundle: fresh, hosts: hosts, now: t0.Add(334 * day), wantAction: Keep,
		},
		"a serving certificate signed by another CA is reissued": {
			bundle: Bundle{CACert: fresh.CACert, CAKey: fresh.CAKey, Cert: other.Cert, Key: other.Key},
			hosts:  hosts, now: t0, wantAction: IssueServing, wantReason: "not signed by the CA",
		},
		"a missing serving key is reissued": {
			bundle: Bundle{CACert: fresh.CACert, CAKey: fresh.CAKey, Cert: fresh.Cert},
			hosts:  hosts, now: t0, wantAction: IssueServing, wantReason: "no usable serving certificate",
		},
		"a host the certificate does not cover is reissued": {
			bundle: fresh, hosts: append([]string{"127.0.0.1"}, hosts...), now: t0,
			wantAction: IssueServing, wantReason: "does not cover [127.0.0.1]",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Decide(tc.bundle, tc.hosts, tc.now, 30*day)
			if diff := cmp.Diff(tc.wantAction, got.Action); diff != "" {
				t.Errorf("action (-want +got):\n%s", diff)
			}
			if !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("reason %q does not say %q", got.Reason, tc.wantReason)
			}
		})
	}
}

func TestApply(t *testing.T) {
	old := mustBundle(t, append([]string{"10.0.0.1"}, hosts...), t0, 3650*day, 365*day)
	oldCA, err := ParseCert(old.CACert)
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(340 * day)
	cases := map[string]struct {
		decision     Decision
		hosts        []string
		wantSameCA   bool
		wantHosts    []string
		wantNotAfter time.Time
	}{
		"reissuing keeps the CA and the old names, adds the new ones": {
			decision: Decision{Action: IssueServing}, hosts: append([]string{"127.0.0.1"}, hosts...),
			wantSameCA: true, wantHosts: SortedHosts(append([]string{"10.0.0.1", "127.0.0.1"}, hosts...)),
			wantNotAfter: now.Add(365 * day),
		},
		"issuing everything makes a new CA for the asked hosts only": {
			decision: Decision{Action: IssueAll}, hosts: hosts,
			wantSameCA: false, wantHosts: SortedHosts(hosts), wantNotAfter: now.Add(365 * day),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Apply(tc.decision, old, tc.hosts, now, 3650*day, 365*day)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantSameCA, string(got.CACert) == string(old.CACert)); diff != "" {
				t.Errorf("same CA (-want +got):\n%s", diff)
			}
			c, err := ParseCert(got.Cert)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantHosts, SortedHosts(certHosts(c))); diff != "" {
				t.Errorf("hosts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotAfter, c.NotAfter.UTC()); diff != "" {
				t.Errorf("notAfter (-want +got):\n%s", diff)
			}
			ca, err := ParseCert(got.CACert)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.CheckSignatureFrom(ca); err != nil {
				t.Errorf("serving certificate not signed by the bundle's CA: %v", err)
			}
			if tc.wantSameCA && !ca.Equal(oldCA) {
				t.Errorf("CA changed")
			}
			if diff := cmp.Diff(Keep, Decide(got, tc.hosts, now, 30*day).Action); diff != "" {
				t.Errorf("the new bundle still needs work (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewServingNeverOutlivesTheCA(t *testing.T) {
	b := mustBundle(t, hosts, t0, 10*day, 365*day)
	c, err := ParseCert(b.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(t0.Add(10*day), c.NotAfter.UTC()); diff != "" {
		t.Errorf("notAfter (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, c.ExtKeyUsage); diff != "" {
		t.Errorf("ext key usage (-want +got):\n%s", diff)
	}
}

func TestSecretDataKeys(t *testing.T) {
	b := Bundle{CACert: []byte("a"), CAKey: []byte("b"), Cert: []byte("c"), Key: []byte("d")}
	want := map[string][]byte{
		"ca-cert.pem": []byte("a"), "ca-key.pem": []byte("b"), "cert.pem": []byte("c"), "key.pem": []byte("d"),
		"tls.crt": []byte("c"), "tls.key": []byte("d"),
	}
	if diff := cmp.Diff(want, b.SecretData()); diff != "" {
		t.Errorf("secret data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(b, FromSecretData(b.SecretData())); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestPolicyValidate(t *testing.T) {
	cases := map[string]struct {
		mutate  func(*Policy)
		wantErr string
	}{
		"the default policy is valid":                 {mutate: func(*Policy) {}},
		"a margin as long as the validity is refused": {mutate: func(p *Policy) { p.RenewBefore = p.Validity }, wantErr: "must be shorter than the serving"},
		"a zero validity is refused":                  {mutate: func(p *Policy) { p.Validity = 0 }, wantErr: "must be positive"},
		"a negative margin is refused":                {mutate: func(p *Policy) { p.RenewBefore = -1 }, wantErr: "must not be negative"},
		"a zero check interval is refused":            {mutate: func(p *Policy) { p.CheckInterval = 0 }, wantErr: "check interval"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := DefaultPolicy()
			tc.mutate(&p)
			err := p.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("Validate() = %q, want it to contain %q", got, tc.wantErr)
			}
		})
	}
}
