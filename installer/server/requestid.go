package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"regexp"
)

// requestIDHeader carries a request's ID: the caller's when it sent a usable one, else one the
// server makes. Every answer echoes it, and the audit log records it, so that a console can
// match its own logs to the server's.
const requestIDHeader = "X-Request-ID"

// usableRequestID is what a caller's ID may be: short, and safe to write in a log line.
var usableRequestID = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

// requestID is the request's ID, the caller's if usable, else a new random one.
func requestID(r *http.Request) string {
	if id := r.Header.Get(requestIDHeader); usableRequestID.MatchString(id) {
		return id
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// requestIDOf is the ID guard gave the request w answers.
func requestIDOf(w http.ResponseWriter) string {
	if rec, ok := w.(*statusRecorder); ok {
		return rec.requestID
	}
	return ""
}
