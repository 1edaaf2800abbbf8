package server

import (
	"net"
	"sync"
)

// connLimiter is a listener that holds at most max connections at once, and at most perClient
// from one client address. A connection over either cap is closed as soon as it is accepted,
// before TLS and before it is read: it costs a file descriptor for an instant, where an idle
// or trickling connection would hold one until its timeout.
type connLimiter struct {
	net.Listener
	max, perClient int
	metrics        *metrics

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

func newConnLimiter(ln net.Listener, l Limits, m *metrics) *connLimiter {
	return &connLimiter{Listener: ln, max: l.MaxConnections, perClient: l.MaxConnectionsPerClient, metrics: m, byClient: map[string]int{}}
}

// Accept returns the next connection within the caps, closing those over them.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientKey(c.RemoteAddr().String())
		if over := l.admit(client); over != "" {
			l.metrics.connectionsRefused.WithLabelValues(over).Inc()
			_ = c.Close()
			continue
		}
		return &limitedConn{Conn: c, release: func() { l.release(client) }}, nil
	}
}

// admit counts a connection of client, or names the cap it is over.
func (l *connLimiter) admit(client string) (over string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open >= l.max:
		return "total"
	case l.byClient[client] >= l.perClient:
		return "per_client"
	}
	l.open++
	l.byClient[client]++
	l.metrics.connections.Set(float64(l.open))
	return ""
}

func (l *connLimiter) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[client]--; l.byClient[client] <= 0 {
		delete(l.byClient, client)
	}
	l.metrics.connections.Set(float64(l.open))
}

// limitedConn gives its place back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
