package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// connLimiter is a listener that holds at most max connections at once, and at most perClient
// from one client address. A connection over its client's cap is closed as soon as it is
// accepted, before TLS and before it is read: it costs a file descriptor for an instant, where
// an idle or trickling connection would hold one until its timeout. At the total cap, a new
// connection takes the place of the one that has waited longest for a request (new, or idle
// between keep-alive requests), so that connections which send nothing cannot keep a caller
// out; only when every connection is serving a request is the new one closed.
type connLimiter struct {
	net.Listener
	max, perClient int
	metrics        *metrics

	mu       sync.Mutex
	conns    map[*limitedConn]struct{}
	byClient map[string]int
	// seq orders the connections by when they began to wait for a request.
	seq uint64
}

func newConnLimiter(ln net.Listener, l Limits, m *metrics) *connLimiter {
	return &connLimiter{Listener: ln, max: l.MaxConnections, perClient: l.MaxConnectionsPerClient, metrics: m,
		conns: map[*limitedConn]struct{}{}, byClient: map[string]int{}}
}

// limitedConn is an admitted connection; it gives its place back once, when closed.
type limitedConn struct {
	net.Conn
	client string
	l      *connLimiter
	once   sync.Once
	// waiting is the seq at which it began to wait for a request, 0 while it serves one;
	// guarded by l.mu.
	waiting uint64
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		defer c.l.mu.Unlock()
		c.l.forget(c)
	})
	return err
}

// Accept returns the next connection within the caps, closing those over them.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, client: clientKey(c.RemoteAddr().String()), l: l}
		over, evicted := l.admit(lc)
		if evicted != nil {
			l.metrics.connectionsEvicted.Inc()
			_ = evicted.Conn.Close()
		}
		if over != "" {
			l.metrics.connectionsRefused.WithLabelValues(over).Inc()
			_ = c.Close()
			continue
		}
		return lc, nil
	}
}

// admit counts lc, making room at the total cap by forgetting the connection that has waited
// longest (evicted, for the caller to close), or names the cap lc is over.
func (l *connLimiter) admit(lc *limitedConn) (over string, evicted *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byClient[lc.client] >= l.perClient {
		return "per_client", nil
	}
	if len(l.conns) >= l.max {
		for c := range l.conns {
			if c.waiting != 0 && (evicted == nil || c.waiting < evicted.waiting) {
				evicted = c
			}
		}
		if evicted == nil {
			return "total", nil
		}
		l.forget(evicted)
	}
	l.seq++
	lc.waiting = l.seq
	l.conns[lc] = struct{}{}
	l.byClient[lc.client]++
	l.metrics.connections.Set(float64(len(l.conns)))
	return "", evicted
}

// forget gives c's place back, once; l.mu is held.
func (l *connLimiter) forget(c *limitedConn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.byClient[c.client]--; l.byClient[c.client] <= 0 {
		delete(l.byClient, c.client)
	}
	l.metrics.connections.Set(float64(len(l.conns)))
}

// connState is the http.Server's ConnState hook: a connection waits for a request while idle
// between keep-alive requests (and while new, from its accept), and serves one while active.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateIdle:
		l.seq++
		lc.waiting = l.seq
	case http.StateActive:
		lc.waiting = 0
	}
}
