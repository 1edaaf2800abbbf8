package server

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// AuditRecord is one line of the audit log: a mutating call as it was answered, or an
// operation as it ended.
type AuditRecord struct {
	Time time.Time `json:"time"`
	// Who is the caller's name from the tokens file or certificate, "" when unauthenticated.
	Who  string `json:"who"`
	Role Role   `json:"role,omitempty"`
	Via  string `json:"via,omitempty"`
	// Action is install, upgrade, uninstall or unlock.
	Action    string `json:"action"`
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Release   string `json:"release,omitempty"`
	Operation string `json:"operation,omitempty"`
	// Phase is request (the call was answered with HTTPStatus) or finished (the operation ended
	// with Result).
	Phase      string `json:"phase"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	// Result is accepted, denied, rejected, succeeded or failed.
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
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
