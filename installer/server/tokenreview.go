package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
)

// TokenReviewOptions let a cluster's TokenReview API (authentication.k8s.io/v1) authenticate
// the bearer tokens the tokens file does not know: a ServiceAccount's, or any the cluster's
// authenticators accept. The caller's role comes from its groups.
type TokenReviewOptions struct {
	// Client reviews tokens; the server's own cluster, usually.
	Client authenticationv1client.TokenReviewInterface
	// Groups maps a group of the reviewed user to a role. A user in several gets the highest
	// (operator over read-only); a user in none is not a caller (401).
	Groups map[string]Role
	// Audiences, when set, are the audiences a token must be issued for.
	Audiences []string
	// CacheTTL is how long a review's answer, either way, is reused for the same token.
	// Default 10s.
	CacheTTL time.Duration
}

// DefaultTokenReviewCacheTTL is how long a review's answer is reused by default: short, so that
// a deleted ServiceAccount or a changed group is seen within seconds.
const DefaultTokenReviewCacheTTL = 10 * time.Second

// maxReviewedTokens bounds the answers kept, so that many tokens cannot grow the cache without
// end.
const maxReviewedTokens = 4096

// ParseGroupRoles reads group=role pairs (the --token-review-group flags), reporting every bad
// one at once.
func ParseGroupRoles(p *field.Path, pairs []string) (map[string]Role, error) {
	out := map[string]Role{}
	var errs field.ErrorList
	for k, pair := range pairs {
		group, role, found := strings.Cut(pair, "=")
		switch {
		case !found || group == "":
			errs = append(errs, field.Invalid(p.Index(k), pair, "must be <group>=<role>, e.g. system:serviceaccounts:console=operator"))
		case Role(role) != ReadOnly && Role(role) != Operator:
			errs = append(errs, field.NotSupported(p.Index(k).Child("role"), role, []string{string(ReadOnly), string(Operator)}))
		default:
			if _, dup := out[group]; dup {
				errs = append(errs, field.Duplicate(p.Index(k), group))
			}
			out[group] = Role(role)
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return out, nil
}

// reviewed is a review's answer for one token, until expires.
type reviewed struct {
	caller  Caller
	ok      bool
	expires time.Time
}

// tokenReviewer authenticates tokens through TokenReview, caching the answers briefly.
type tokenReviewer struct {
	o   TokenReviewOptions
	now func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]reviewed
}

func newTokenReviewer(o TokenReviewOptions, now func() time.Time) (*tokenReviewer, error) {
	if o.Client == nil {
		return nil, fmt.Errorf("token review: no client of the cluster that reviews tokens")
	}
	if len(o.Groups) == 0 {
		return nil, fmt.Errorf("token review: no group is given a role, so no reviewed token could call")
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = DefaultTokenReviewCacheTTL
	}
	return &tokenReviewer{o: o, now: now, cache: map[[sha256.Size]byte]reviewed{}}, nil
}

// review authenticates token: ok is false for a token the cluster does not accept, or whose
// user is in no group with a role; err is set when the review could not be made, which is
// never an accept.
func (t *tokenReviewer) review(ctx context.Context, token string) (Caller, bool, error) {
	sum := sha256.Sum256([]byte(token))
	now := t.now()
	t.mu.Lock()
	if r, found := t.cache[sum]; found && now.Before(r.expires) {
		t.mu.Unlock()
		return r.caller, r.ok, nil
	}
	t.mu.Unlock()
	res, err := t.o.Client.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: t.o.Audiences}}, metav1.CreateOptions{})
	if err != nil {
		return Caller{}, false, fmt.Errorf("token review: %w", err)
	}
	caller, ok := t.callerOf(res.Status)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.cache) >= maxReviewedTokens {
		for k, r := range t.cache {
			if !now.Before(r.expires) {
				delete(t.cache, k)
			}
		}
		if len(t.cache) >= maxReviewedTokens {
			t.cache = map[[sha256.Size]byte]reviewed{}
		}
	}
	t.cache[sum] = reviewed{caller: caller, ok: ok, expires: now.Add(t.o.CacheTTL)}
	return caller, ok, nil
}

// callerOf is the caller a review's status names, with the highest role of its groups.
func (t *tokenReviewer) callerOf(st authenticationv1.TokenReviewStatus) (Caller, bool) {
	if !st.Authenticated {
		return Caller{}, false
	}
	if len(t.o.Audiences) > 0 && !slices.ContainsFunc(st.Audiences, func(a string) bool { return slices.Contains(t.o.Audiences, a) }) {
		return Caller{}, false
	}
	var role Role
	groups := append([]string(nil), st.User.Groups...)
	sort.Strings(groups)
	for _, g := range groups {
		switch r := t.o.Groups[g]; {
		case r == Operator:
			role = Operator
		case r == ReadOnly && role == "":
			role = ReadOnly
		}
	}
	if role == "" {
		return Caller{}, false
	}
	return Caller{Name: st.User.Username, Role: role, Via: "tokenreview"}, true
}
