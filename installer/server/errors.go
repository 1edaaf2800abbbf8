package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/kruise-addon/kruise-addon/installer"
)

// Reasons of an error body. BadInput, Refused and RolledBack are the CLI's exit-code classes
// 2, 3 and 4; the others are the API's own.
const (
	ReasonBadInput            = "BadInput"
	ReasonRefused             = "Refused"
	ReasonRolledBack          = "RolledBack"
	ReasonError               = "Error"
	ReasonNotFound            = "NotFound"
	ReasonUnauthorized        = "Unauthorized"
	ReasonForbidden           = "Forbidden"
	ReasonOperationInProgress = "OperationInProgress"
	// ReasonPayloadTooLarge (413): the body is over limits.maxBodyBytes.
	ReasonPayloadTooLarge = "PayloadTooLarge"
	// ReasonRequestTimeout (408): the body did not come in full within limits.readTimeout.
	ReasonRequestTimeout = "RequestTimeout"
	// ReasonTooManyRequests (429): too many requests without a known caller from one address.
	ReasonTooManyRequests = "TooManyRequests"
	// ReasonMethodNotAllowed (405): the path is served, not with this method; Allow lists those
	// it is.
	ReasonMethodNotAllowed = "MethodNotAllowed"
	// ReasonInterrupted is the error of an operation whose server stopped while it ran.
	ReasonInterrupted = "Interrupted"
)

// ErrorBody is every error response, and a failed operation's error.
type ErrorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason"`
	// ExitCode is the exit code the CLI gives the same error.
	ExitCode   int                        `json:"exitCode"`
	Refused    *installer.RefusedError    `json:"refused,omitempty"`
	RolledBack *installer.RolledBackError `json:"rolledBack,omitempty"`
	// Operation is the running operation a 409 OperationInProgress names.
	Operation string `json:"operation,omitempty"`
}

// errorBodyOf classifies a library error as the CLI does.
func errorBodyOf(err error) ErrorBody {
	code := installer.ExitClass(err)
	b := ErrorBody{Error: err.Error(), ExitCode: code, Reason: ReasonError}
	switch code {
	case installer.ExitInvalid:
		b.Reason = ReasonBadInput
	case installer.ExitRefused:
		b.Reason = ReasonRefused
		errors.As(err, &b.Refused)
	case installer.ExitRolledBack:
		b.Reason = ReasonRolledBack
		errors.As(err, &b.RolledBack)
	}
	return forConsole(b)
}

// httpStatusOf is the status of an error body answered at once (not an operation's).
func httpStatusOf(b ErrorBody) int {
	switch b.Reason {
	case ReasonBadInput:
		return http.StatusBadRequest
	case ReasonRefused, ReasonOperationInProgress:
		return http.StatusConflict
	case ReasonNotFound:
		return http.StatusNotFound
	case ReasonUnauthorized:
		return http.StatusUnauthorized
	case ReasonForbidden:
		return http.StatusForbidden
	case ReasonPayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case ReasonRequestTimeout:
		return http.StatusRequestTimeout
	case ReasonTooManyRequests:
		return http.StatusTooManyRequests
	case ReasonMethodNotAllowed:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// retryAfterConflict is the Retry-After, in seconds, of a 409 OperationInProgress.
const retryAfterConflict = "10"

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, b ErrorBody) {
	b = forConsole(b)
	if b.Reason == ReasonOperationInProgress {
		// A console retries after a while rather than at once; an operation takes minutes.
		w.Header().Set("Retry-After", retryAfterConflict)
	}
	if rec, ok := w.(*statusRecorder); ok {
		rec.body = b
	}
	writeJSON(w, httpStatusOf(b), b)
}

// fail answers with a library error, classified.
func fail(w http.ResponseWriter, err error) { writeError(w, errorBodyOf(err)) }

func badInput(w http.ResponseWriter, err error) {
	writeError(w, ErrorBody{Error: err.Error(), Reason: ReasonBadInput, ExitCode: installer.ExitInvalid})
}

// badBody answers a body that could not be read or decoded: 413 over limits.maxBodyBytes, 408
// when it did not come within limits.readTimeout, else 400.
func (s *Server) badBody(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.bodyTooLarge(w)
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.metrics.bodiesRefused.WithLabelValues("timeout").Inc()
		writeError(w, ErrorBody{Error: fmt.Sprintf("body: not received in full within %s (limits.readTimeout of --config)", s.limits.ReadTimeout.Duration),
			Reason: ReasonRequestTimeout, ExitCode: installer.ExitError})
	default:
		badInput(w, err)
	}
}

func (s *Server) bodyTooLarge(w http.ResponseWriter) {
	s.metrics.bodiesRefused.WithLabelValues("too_large").Inc()
	writeError(w, ErrorBody{Error: fmt.Sprintf("body: larger than %d bytes (limits.maxBodyBytes of --config); send a smaller request", s.limits.MaxBodyBytes),
		Reason: ReasonPayloadTooLarge, ExitCode: installer.ExitError})
}

func notFound(w http.ResponseWriter, msg string) {
	// The API's own reason: exit 1, as the document says of every reason but the CLI's classes.
	writeError(w, ErrorBody{Error: msg, Reason: ReasonNotFound, ExitCode: installer.ExitError})
}
