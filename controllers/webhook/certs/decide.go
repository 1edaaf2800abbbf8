package certs

import (
	"crypto/x509"
	"fmt"
	"time"
)

// Action is what a bundle needs.
type Action string

const (
	// Keep leaves the bundle as it is.
	Keep Action = "Keep"
	// IssueServing signs a new serving certificate with the existing CA.
	IssueServing Action = "IssueServing"
	// IssueAll makes a new CA and a new serving certificate.
	IssueAll Action = "IssueAll"
)

// Decision is an Action and why.
type Decision struct {
	Action Action
	Reason string
}

// Decide says what b needs so that it serves every host in hosts at now and for at least
// renewBefore more.
func Decide(b Bundle, hosts []string, now time.Time, renewBefore time.Duration) Decision {
	ca, _, err := parsePair(b.CACert, b.CAKey)
	if err != nil {
		return Decision{IssueAll, fmt.Sprintf("no usable CA: %v", err)}
	}
	if !now.Before(ca.NotAfter.Add(-renewBefore)) {
		return Decision{IssueAll, fmt.Sprintf("CA expires at %s", ca.NotAfter.UTC().Format(time.RFC3339))}
	}
	cert, _, err := parsePair(b.Cert, b.Key)
	if err != nil {
		return Decision{IssueServing, fmt.Sprintf("no usable serving certificate: %v", err)}
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return Decision{IssueServing, "serving certificate is not signed by the CA"}
	}
	if !now.Before(cert.NotAfter.Add(-renewBefore)) {
		return Decision{IssueServing, fmt.Sprintf("serving certificate expires at %s", cert.NotAfter.UTC().Format(time.RFC3339))}
	}
	if missing := missingHosts(cert, hosts); len(missing) > 0 {
		return Decision{IssueServing, fmt.Sprintf("serving certificate does not cover %v", missing)}
	}
	return Decision{Action: Keep}
}

// Apply carries out d on b. A new serving certificate covers hosts and every name the old one
// covered, so that managers asking for different hosts do not undo each other.
func Apply(d Decision, b Bundle, hosts []string, now time.Time, caValidity, validity time.Duration) (Bundle, error) {
	switch d.Action {
	case Keep:
		return b, nil
	case IssueAll:
		return NewBundle(hosts, now, caValidity, validity)
	}
	all := append([]string{}, hosts...)
	if old, err := ParseCert(b.Cert); err == nil {
		all = append(all, certHosts(old)...)
	}
	cert, key, err := NewServing(b.CACert, b.CAKey, SortedHosts(all), now, validity)
	if err != nil {
		return Bundle{}, err
	}
	return Bundle{CACert: b.CACert, CAKey: b.CAKey, Cert: cert, Key: key}, nil
}

func missingHosts(c *x509.Certificate, hosts []string) []string {
	var missing []string
	for _, h := range SortedHosts(hosts) {
		if c.VerifyHostname(h) != nil {
			missing = append(missing, h)
		}
	}
	return missing
}
