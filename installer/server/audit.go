package server

import (
	"encoding/json"
	"io"
	"sync"
	"time"
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

// auditLog writes records as JSON lines, one write per line.
type auditLog struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

func (a *auditLog) write(r AuditRecord) {
	r.Time = a.now().UTC()
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(append(line, '\n'))
}
