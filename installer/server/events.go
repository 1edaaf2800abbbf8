package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// heartbeat keeps an idle event stream open through proxies. A stream beats at least twice per
// write timeout, so that the deadline it extends never passes while it waits.
const heartbeat = 15 * time.Second

// EventsResponse is the events of an operation as JSON, for clients that poll.
type EventsResponse struct {
	Operation Operation `json:"operation"`
	Events    []Event   `json:"events"`
}

// getEvents streams an operation's events as Server-Sent Events (id: the event's ID, event: its
// type, data: the Event as JSON) until its done event, when Accept prefers text/event-stream. A
// client that reconnects with Last-Event-ID (or ?after=N) gets only the events after it. Any
// other Accept (application/json with or without parameters, */*, none) gets the events so far
// at once, for clients that poll.
//
// An operation this server does not hold is read from its record in the cluster (see
// records.go): a restarted server streams its predecessor's events, from Last-Event-ID on too.
//
// The stream outlives the server's write timeout: it moves the write deadline on before every
// write, so only a client that stops reading for a whole write timeout is cut. It ends with
// its operation, which its own timeout bounds.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request, _ Caller) {
	o, ok := s.operation(w, r)
	if !ok {
		return
	}
	after := 0
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			badInput(w, fmt.Errorf("Last-Event-ID or after: %q is not an event ID (a whole number from 0)", v))
			return
		}
		after = max(after, n)
	}
	if !wantsEventStream(r) {
		events, _, _ := o.eventsAfter(after)
		if events == nil {
			events = []Event{}
		}
		writeJSON(w, http.StatusOK, EventsResponse{Operation: o.snapshot(), Events: events})
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		fail(w, fmt.Errorf("the connection cannot stream events; ask with Accept: application/json"))
		return
	}
	rc := http.NewResponseController(w)
	extend := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.limits.WriteTimeout.Duration)) }
	extend()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	tick := time.NewTicker(min(heartbeat, s.limits.WriteTimeout.Duration/2))
	defer tick.Stop()
	// Another server's operation: its events come from its record, read again as often as
	// that server writes it when idle.
	var poll <-chan time.Time
	if o.isRemote() {
		t := time.NewTicker(recordWriteEvery * 2)
		defer t.Stop()
		poll = t.C
	}
	for {
		extend()
		events, ended, changed := o.eventsAfter(after)
		for _, e := range events {
			data, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, data); err != nil {
				return
			}
			after = e.ID
		}
		flusher.Flush()
		if ended && len(events) == 0 {
			return
		}
		if ended {
			continue
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-poll:
			if err := s.ops.refresh(r.Context(), o); err != nil {
				s.log.V(1).Info("Operation record not read again", "operation", o.snapshot().ID, "err", err.Error())
			}
		case <-tick.C:
			extend()
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}
