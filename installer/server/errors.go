package server

import (
	"encoding/json"
	"errors"
	"net/http"

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
	return b
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
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, b ErrorBody) {
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

func notFound(w http.ResponseWriter, msg string) {
	writeError(w, ErrorBody{Error: msg, Reason: ReasonNotFound, ExitCode: installer.ExitInvalid})
}
