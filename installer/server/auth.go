package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Role is what a caller may do.
type Role string

const (
	// ReadOnly may read versions, clusters, preflight, status and operations.
	ReadOnly Role = "read-only"
	// Operator may also install, upgrade, uninstall, unlock and roll back.
	Operator Role = "operator"
)

// AccessConfig is the tokens file (--tokens): who may call, and in which role.
//
//	tokens:
//	- name: console          # who, as the audit log names them
//	  token: <32+ random characters>
//	  role: operator
//	clientCertificates:      # callers with a client certificate signed by --client-ca
//	- commonName: console-backend
//	  role: read-only
type AccessConfig struct {
	Tokens             []TokenEntry `json:"tokens,omitempty"`
	ClientCertificates []CertEntry  `json:"clientCertificates,omitempty"`
}

// TokenEntry is one bearer token.
type TokenEntry struct {
	Name  string `json:"name"`
	Token string `json:"token"`
	Role  Role   `json:"role"`
}

// CertEntry maps a client certificate's subject common name to a role.
type CertEntry struct {
	CommonName string `json:"commonName"`
	Role       Role   `json:"role"`
}

// minTokenLength keeps guessable tokens out of the file.
const minTokenLength = 16

// Caller is an authenticated caller.
type Caller struct {
	Name string
	Role Role
	// Via is token or certificate.
	Via string
}

// Access authenticates callers.
type Access struct {
	tokens []tokenHash
	certs  map[string]Role
}

type tokenHash struct {
	sum  [sha256.Size]byte
	name string
	role Role
}

// LoadAccess reads and validates the tokens file.
func LoadAccess(path string) (*Access, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	var cfg AccessConfig
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return cfg.Build()
}

// Build validates the configuration, reporting every problem at once.
func (cfg AccessConfig) Build() (*Access, error) {
	var errs field.ErrorList
	a := &Access{certs: map[string]Role{}}
	roles := []string{string(ReadOnly), string(Operator)}
	names := map[string]bool{}
	for k, t := range cfg.Tokens {
		p := field.NewPath("tokens").Index(k)
		if t.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "who holds the token, as the audit log names them"))
		} else if names[t.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), t.Name))
		}
		names[t.Name] = true
		if len(t.Token) < minTokenLength {
			errs = append(errs, field.Invalid(p.Child("token"), "<redacted>", fmt.Sprintf("must be at least %d characters", minTokenLength)))
		}
		if t.Role != ReadOnly && t.Role != Operator {
			errs = append(errs, field.NotSupported(p.Child("role"), t.Role, roles))
		}
		a.tokens = append(a.tokens, tokenHash{sum: sha256.Sum256([]byte(t.Token)), name: t.Name, role: t.Role})
	}
	for k, c := range cfg.ClientCertificates {
		p := field.NewPath("clientCertificates").Index(k)
		if c.CommonName == "" {
			errs = append(errs, field.Required(p.Child("commonName"), "the subject common name of the client certificate"))
		} else if _, dup := a.certs[c.CommonName]; dup {
			errs = append(errs, field.Duplicate(p.Child("commonName"), c.CommonName))
		}
		if c.Role != ReadOnly && c.Role != Operator {
			errs = append(errs, field.NotSupported(p.Child("role"), c.Role, roles))
		}
		a.certs[c.CommonName] = c.Role
	}
	if len(cfg.Tokens)+len(cfg.ClientCertificates) == 0 {
		errs = append(errs, field.Required(field.NewPath("tokens"), "at least one token or client certificate, or no one can call"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("tokens file: %w", errs.ToAggregate())
	}
	return a, nil
}

// Authenticate finds the caller of r: a verified client certificate listed in the file, else a
// bearer token. ok is false for anyone else.
func (a *Access) Authenticate(r *http.Request) (Caller, bool) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
		if role, ok := a.certs[cn]; ok {
			return Caller{Name: cn, Role: role, Via: "certificate"}, true
		}
	}
	token := bearerToken(r)
	if token == "" {
		return Caller{}, false
	}
	sum := sha256.Sum256([]byte(token))
	// Compare with every entry, in constant time, so timing tells nothing about the tokens.
	var match *tokenHash
	for k := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[k].sum[:]) == 1 {
			match = &a.tokens[k]
		}
	}
	if match == nil {
		return Caller{}, false
	}
	return Caller{Name: match.name, Role: match.role, Via: "token"}, true
}

// accessSource gives the callers as they are now: a fixed Access, or an AccessFile.
type accessSource interface{ current() *Access }

func (a *Access) current() *Access { return a }

// bearerToken is the request's bearer token, "" without one.
func bearerToken(r *http.Request) string {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return ""
	}
	return token
}

// authenticate finds the caller of r: from the tokens file or a client certificate, else, with
// a TokenReview configured, from the cluster's review of its bearer token. err is set when the
// review could not be made: the caller is then neither accepted nor refused.
func (s *Server) authenticate(r *http.Request) (Caller, bool, error) {
	if c, ok := s.access.current().Authenticate(r); ok {
		return c, true, nil
	}
	token := bearerToken(r)
	if s.reviewer == nil || token == "" {
		return Caller{}, false, nil
	}
	return s.reviewer.review(r.Context(), token)
}

// may reports whether role may call a route that needs need.
func may(role, need Role) bool {
	return need == ReadOnly || role == Operator
}
