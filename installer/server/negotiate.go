package server

import (
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Media types the events route answers with.
const (
	mediaJSON        = "application/json"
	mediaEventStream = "text/event-stream"
)

// wantsEventStream says whether a request's Accept (RFC 9110, section 12.5.1) prefers the event
// stream to JSON. Parameters such as charset are ignored, a range's most specific match gives a
// type its weight, and a tie, a wildcard or no Accept at all is JSON: only a client that names
// text/event-stream gets the stream, so a generated client that sends no Accept can poll.
func wantsEventStream(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return false
	}
	stream, json := acceptWeight(accept, mediaEventStream), acceptWeight(accept, mediaJSON)
	return stream.explicit && stream.q > 0 && stream.q > json.q
}

type weight struct {
	q float64
	// explicit is true when the type itself is named, not reached through a wildcard.
	explicit bool
}

// acceptWeight is the weight the Accept header values give a media type: that of the most
// specific range matching it (type/subtype over type/* over */*), 0 when none does.
func acceptWeight(accept []string, mediaType string) weight {
	typ, _, _ := strings.Cut(mediaType, "/")
	best, bestSpecificity := weight{}, -1
	for _, value := range accept {
		for _, rng := range strings.Split(value, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(rng))
			if err != nil {
				continue
			}
			specificity := -1
			switch {
			case mt == mediaType:
				specificity = 2
			case mt == typ+"/*":
				specificity = 1
			case mt == "*/*":
				specificity = 0
			}
			if specificity <= bestSpecificity {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			best, bestSpecificity = weight{q: q, explicit: specificity == 2}, specificity
		}
	}
	return best
}

// methodsFor lists the methods the mux routes path with (HEAD with GET), for a 405's Allow.
func (s *Server) methodsFor(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			out = append(out, m)
		}
	}
	return slices.Clip(out)
}
