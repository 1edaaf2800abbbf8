package server

import (
	"net/http"
)

// getHealthz answers while the server serves: a liveness probe needs no caller.
func (s *Server) getHealthz(w http.ResponseWriter, _ *http.Request, _ Caller) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// getReadyz answers 200 while the server takes operations, and 503 with Retry-After once it
// stops, so that a load balancer sends the next calls to another replica.
func (s *Server) getReadyz(w http.ResponseWriter, r *http.Request, c Caller) {
	if s.ctx.Err() != nil {
		unavailable(w, "the server is stopping; retry after Retry-After seconds, on its successor")
		return
	}
	s.getHealthz(w, r, c)
}
