package server

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/kruise-addon/kruise-addon/installer"
)

// idempotencyHeader carries a caller's key for a mutating call: a retry with the same key and
// the same body gets the first call's answer instead of a second operation.
const idempotencyHeader = "Idempotency-Key"

// The keys are kept for a bounded time and count, so that a caller cannot grow them without
// end; a retry comes within minutes.
const (
	idempotencyTTL     = 24 * time.Hour
	maxIdempotencyKeys = 10000
)

// usableIdempotencyKey is what a key may be: 1 to 255 visible ASCII characters.
var usableIdempotencyKey = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)

// idemKey is a key as one caller sent it: two callers' keys never meet.
type idemKey struct{ caller, key string }

// idemEntry is one key's first call: in flight until done is closed, then its answer when
// the call started an operation (202). A refusal is not kept: it changed nothing, and a retry
// is checked anew.
type idemEntry struct {
	key         idemKey
	fingerprint [sha256.Size]byte
	expires     time.Time
	done        chan struct{}
	kept        bool
	status      int
	header      http.Header
	body        []byte
	ref         ReleaseRef
	op          string
}

// idempotency remembers the keys of mutating calls.
type idempotency struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[idemKey]*idemEntry
	// order holds the entries oldest first; an entry no longer in entries is skipped.
	order []*idemEntry
}

func newIdempotency() *idempotency {
	return &idempotency{ttl: idempotencyTTL, max: maxIdempotencyKeys, entries: map[idemKey]*idemEntry{}}
}

// claim finds k's entry, or makes one for a first call (first is true: the caller answers,
// then calls settle). Entries past their time are forgotten first, then the oldest beyond the
// count.
func (s *idempotency) claim(k idemKey, fingerprint [sha256.Size]byte, now time.Time) (e *idemEntry, first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[k]; ok && now.Before(e.expires) {
		return e, false
	}
	delete(s.entries, k)
	for len(s.order) > 0 {
		oldest := s.order[0]
		current := s.entries[oldest.key] == oldest
		if current && now.Before(oldest.expires) && len(s.entries) < s.max {
			break
		}
		if current {
			delete(s.entries, oldest.key)
		}
		s.order = s.order[1:]
	}
	e = &idemEntry{key: k, fingerprint: fingerprint, expires: now.Add(s.ttl), done: make(chan struct{})}
	s.entries[k] = e
	s.order = append(s.order, e)
	return e, true
}

// settle ends a first call: its answer is kept when it started an operation, else its key is
// forgotten.
func (s *idempotency) settle(e *idemEntry, rec *statusRecorder, answer *bytes.Buffer) {
	s.mu.Lock()
	if rec.status == http.StatusAccepted {
		e.kept, e.status, e.body, e.ref, e.op = true, rec.status, answer.Bytes(), rec.ref, rec.op
		e.header = http.Header{}
		for _, h := range []string{"Content-Type", "Location"} {
			if v := rec.Header().Get(h); v != "" {
				e.header.Set(h, v)
			}
		}
	} else if s.entries[e.key] == e {
		delete(s.entries, e.key)
	}
	s.mu.Unlock()
	close(e.done)
}

// idempotent answers a mutating call that carries an Idempotency-Key: a first call runs the
// route; a retry with the same body (and path) gets the first answer, once it is there; the
// same key with another body is 422.
func (s *Server) idempotent(rt Route, rec *statusRecorder, r *http.Request, caller Caller) {
	key := r.Header.Get(idempotencyHeader)
	if !usableIdempotencyKey.MatchString(key) {
		badInput(rec, fmt.Errorf("header %s: must be 1 to 255 visible ASCII characters, such as a UUID", idempotencyHeader))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.badBody(rec, err)
		return
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.Path)
	h.Write(body)
	var fingerprint [sha256.Size]byte
	copy(fingerprint[:], h.Sum(nil))
	k := idemKey{caller: caller.Name, key: key}
	for {
		e, first := s.idem.claim(k, fingerprint, s.now())
		if e.fingerprint != fingerprint {
			writeError(rec, ErrorBody{Error: fmt.Sprintf("header %s: the key %q was used for another request (another route or body) by the same caller; send a new key for a new request", idempotencyHeader, key),
				Reason: ReasonIdempotencyKeyReused, ExitCode: installer.ExitError})
			return
		}
		if first {
			answer := &bytes.Buffer{}
			rec.keep = answer
			r.Body = io.NopCloser(bytes.NewReader(body))
			defer s.idem.settle(e, rec, answer)
			rt.handler(rec, r, caller)
			return
		}
		select {
		case <-e.done:
		case <-r.Context().Done():
			return
		}
		if !e.kept {
			// The first call was refused and its key forgotten: this one is checked anew.
			continue
		}
		for name, v := range e.header {
			rec.Header()[name] = v
		}
		note(rec, e.ref, e.op)
		rec.replayed = true
		rec.WriteHeader(e.status)
		_, _ = rec.Write(e.body)
		return
	}
}
