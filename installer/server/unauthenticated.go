package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/kruise-addon/kruise-addon/installer"
)

// maxTrackedClients bounds the client addresses remembered for the rate limit and for the
// audit summary, so that a flood from many addresses cannot grow them without end.
const maxTrackedClients = 10000

// topClients is how many addresses an audit summary names.
const topClients = 5

// unauthenticated rate-limits requests without a known caller per client address, and counts
// the refused ones for the audit log's summary.
type unauthenticated struct {
	limit rate.Limit
	burst int

	mu sync.Mutex
	// limiters are per client address; a client beyond maxTrackedClients (when none can be
	// forgotten) shares overflow.
	limiters map[string]*rate.Limiter
	overflow *rate.Limiter
	// The refusals since the last summary.
	since              time.Time
	count, rateLimited int
	byClient           map[string]int
}

func newUnauthenticated(l Limits, now time.Time) *unauthenticated {
	limit := rate.Limit(float64(l.UnauthenticatedPerMinute) / 60)
	return &unauthenticated{limit: limit, burst: l.UnauthenticatedBurst, limiters: map[string]*rate.Limiter{},
		overflow: rate.NewLimiter(limit, l.UnauthenticatedBurst), since: now, byClient: map[string]int{}}
}

// refuse counts one request of client without a known caller and says how long it must wait:
// 0 when it is within its rate (and is answered 401).
func (u *unauthenticated) refuse(client string, now time.Time) (retryAfter time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	lim := u.limiter(client, now)
	if r := lim.ReserveN(now, 1); r.OK() {
		if retryAfter = r.DelayFrom(now); retryAfter > 0 {
			r.CancelAt(now)
		}
	} else {
		retryAfter = time.Minute
	}
	u.count++
	if retryAfter > 0 {
		u.rateLimited++
	}
	if _, known := u.byClient[client]; known || len(u.byClient) < maxTrackedClients {
		u.byClient[client]++
	}
	return retryAfter
}

// limiter finds client's limiter, forgetting those that have refilled (they are as good as
// new) when the map is full.
func (u *unauthenticated) limiter(client string, now time.Time) *rate.Limiter {
	if lim, ok := u.limiters[client]; ok {
		return lim
	}
	if len(u.limiters) >= maxTrackedClients {
		for c, lim := range u.limiters {
			if lim.TokensAt(now) >= float64(u.burst) {
				delete(u.limiters, c)
			}
		}
		if len(u.limiters) >= maxTrackedClients {
			return u.overflow
		}
	}
	lim := rate.NewLimiter(u.limit, u.burst)
	u.limiters[client] = lim
	return lim
}

// ClientCount is how many requests one client address made.
type ClientCount struct {
	Address string `json:"address"`
	Count   int    `json:"count"`
}

// summary takes the refusals counted since the last summary as an audit record, and starts
// counting anew; ok is false when there were none.
func (u *unauthenticated) summary(now time.Time) (rec AuditRecord, ok bool) {
	u.mu.Lock()
	since, count, rateLimited, byClient := u.since, u.count, u.rateLimited, u.byClient
	u.since, u.count, u.rateLimited, u.byClient = now, 0, 0, map[string]int{}
	u.mu.Unlock()
	if count == 0 {
		return AuditRecord{}, false
	}
	top := make([]ClientCount, 0, len(byClient))
	for a, n := range byClient {
		top = append(top, ClientCount{Address: a, Count: n})
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].Count != top[j].Count {
			return top[i].Count > top[j].Count
		}
		return top[i].Address < top[j].Address
	})
	since = since.UTC()
	return AuditRecord{Phase: "summary", Result: "denied", Since: &since, Count: count, RateLimited: rateLimited,
		Clients: len(byClient), TopClients: top[:min(len(top), topClients)]}, true
}

// refuseUnauthenticated answers a request without a known caller: 401, or 429 with
// Retry-After once its address is over its rate. Neither gets an audit line of its own; the
// count goes to the metric and to the next audit summary. Either closes the connection, so
// that no one holds a connection open without a token: not idle between requests, and not
// trickling a body that the server would otherwise read to its end (the read deadline, moved
// to now, ends that read at once).
func (s *Server) refuseUnauthenticated(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	client := clientKey(r.RemoteAddr)
	if wait := s.unauth.refuse(client, s.now()); wait > 0 {
		s.metrics.unauthenticated.WithLabelValues("rate_limited").Inc()
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeError(w, ErrorBody{Error: fmt.Sprintf("too many requests without a known token or certificate from %s (limits.unauthenticatedPerMinute %d, burst %d); retry after %d s with a token from the tokens file",
			client, s.limits.UnauthenticatedPerMinute, s.limits.UnauthenticatedBurst, secs), Reason: ReasonTooManyRequests, ExitCode: installer.ExitError})
		return
	}
	s.metrics.unauthenticated.WithLabelValues("denied").Inc()
	w.Header().Set("WWW-Authenticate", `Bearer realm="kruise-addon"`)
	msg := "authentication required: a bearer token from the tokens file, or a client certificate it lists"
	if s.reviewer != nil {
		msg += ", or a token the cluster's TokenReview accepts for a user in a group given a role"
	}
	writeError(w, ErrorBody{Error: msg, Reason: ReasonUnauthorized, ExitCode: installer.ExitError})
}

// auditUnauthenticated writes the audit summary of refused requests every
// limits.auditSummaryInterval, and a last one when ctx ends.
func (s *Server) auditUnauthenticated(ctx context.Context) {
	t := time.NewTicker(s.limits.AuditSummaryInterval.Duration)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			s.writeUnauthenticatedSummary()
			return
		}
		s.writeUnauthenticatedSummary()
	}
}

func (s *Server) writeUnauthenticatedSummary() {
	if rec, ok := s.unauth.summary(s.now()); ok {
		s.audit.write(rec)
	}
}
