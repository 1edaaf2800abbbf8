package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

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
	// ReasonIdempotencyKeyReused (422): the caller sent the Idempotency-Key of an earlier call
	// with another route or body.
	ReasonIdempotencyKeyReused = "IdempotencyKeyReused"
	// ReasonUnavailable (503, with Retry-After): the server is stopping, or what it must ask
	// (the cluster, the TokenReview of a caller's token) cannot be reached now.
	ReasonUnavailable = "Unavailable"
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
	case ReasonIdempotencyKeyReused:
		return http.StatusUnprocessableEntity
	case ReasonUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Retry-After, in seconds: of a 409 OperationInProgress (an operation takes minutes), and of a
// 503 Unavailable (a server restarts, or a cluster's apiserver comes back, in seconds).
const (
	retryAfterConflict    = "10"
	retryAfterUnavailable = "5"
)

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
	if b.Reason == ReasonUnavailable {
		w.Header().Set("Retry-After", retryAfterUnavailable)
	}
	if rec, ok := w.(*statusRecorder); ok {
		rec.body = b
	}
	writeJSON(w, httpStatusOf(b), b)
}

// fail answers with a library error, classified: an error of reaching the cluster is 503
// Unavailable, which a retry may mend.
func fail(w http.ResponseWriter, err error) {
	b := errorBodyOf(err)
	if b.Reason == ReasonError && unreachable(err) {
		b.Reason = ReasonUnavailable
		b.Error = "the cluster cannot be reached now; retry after Retry-After seconds: " + b.Error
	}
	writeError(w, b)
}

// unreachable says whether err is a failure to reach an apiserver, or its answer that it
// cannot serve now, rather than an answer about the request.
func unreachable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err)
}

// unavailable answers 503 with Retry-After.
func unavailable(w http.ResponseWriter, msg string) {
	writeError(w, ErrorBody{Error: msg, Reason: ReasonUnavailable, ExitCode: installer.ExitError})
}

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
