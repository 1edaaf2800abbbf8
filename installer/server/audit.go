package server

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// AuditRecord is one line of the audit log: a mutating call of a known caller as it was
// answered, an operation as it ended, or a summary of the requests without a known caller
// refused over an interval (they get no line each, so that they cannot flood the log).
type AuditRecord struct {
	Time time.Time `json:"time"`
	// Who is the caller's name from the tokens file or certificate, "" when unauthenticated.
	Who  string `json:"who"`
	Role Role   `json:"role,omitempty"`
	Via  string `json:"via,omitempty"`
	// Action is install, upgrade, uninstall, unlock or rollback; "" in a summary.
	Action    string `json:"action"`
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Release   string `json:"release,omitempty"`
	Operation string `json:"operation,omitempty"`
	// RequestID is the X-Request-ID of the call (of the call that started the operation, on a
	// finished line).
	RequestID string `json:"requestID,omitempty"`
	// Phase is request (the call was answered with HTTPStatus), finished (the operation ended
	// with Result) or summary.
	Phase      string `json:"phase"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	// Result is accepted, denied, rejected, succeeded or failed; a summary's is denied.
	Result string `json:"result"`
	// Replayed is set on a call answered with an earlier call's answer, for the same
	// Idempotency-Key: it started nothing.
	Replayed bool   `json:"replayed,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Error    string `json:"error,omitempty"`
	// A summary counts the requests without a known caller refused since Since: Count in all,
	// RateLimited of them answered 429 (the others 401), from Clients client addresses, the
	// ones that sent the most in TopClients.
	Since       *time.Time    `json:"since,omitempty"`
	Count       int           `json:"count,omitempty"`
	RateLimited int           `json:"rateLimited,omitempty"`
	Clients     int           `json:"clients,omitempty"`
	TopClients  []ClientCount `json:"topClients,omitempty"`
}

// auditLog writes records as JSON lines, one write per line. A record it cannot write is logged
// with the error, so a full disk is seen; the call it records is not undone.
type auditLog struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
	log logr.Logger
}

func (a *auditLog) write(r AuditRecord) {
	r.Time = a.now().UTC()
	line, err := json.Marshal(r)
	if err == nil {
		a.mu.Lock()
		_, err = a.w.Write(append(line, '\n'))
		a.mu.Unlock()
	}
	if err != nil {
		a.log.Error(err, "Audit record not written", "who", r.Who, "action", r.Action, "cluster", r.Cluster, "operation", r.Operation, "result", r.Result)
	}
}
