package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/certs"
	"github.com/kruise-addon/kruise-addon/installer"
)

// answerTimeout bounds a wait for the server to answer, or to close a connection. Reaching it
// fails the test (the server held on); it measures nothing.
const answerTimeout = 30 * time.Second

// served is a server run by ListenAndServe on a loopback port, as `serve` runs it: the real
// listener, caps and timeouts.
type served struct {
	// base is http://addr, or https://addr over TLS.
	base, addr string
	roots      *x509.CertPool
	// certFile and keyFile are the serving certificate's files, over TLS.
	certFile, keyFile string
	srv               *Server
	audit             *syncBuffer
	// stop ends ListenAndServe (which writes the last audit summary) and waits for it.
	stop func()
}

// serveWith serves over plain HTTP, as `serve --insecure-listen` does.
func serveWith(t *testing.T, limits Limits, configure ...func(*Options)) *served {
	t.Helper()
	return serveOn(t, false, limits, configure...)
}

// serveOn serves over TLS when tlsOn, with a certificate for 127.0.0.1, as `serve --listen`
// does; else over plain HTTP.
func serveOn(t *testing.T, tlsOn bool, limits Limits, configure ...func(*Options)) *served {
	t.Helper()
	o, audit := testOptions(t, defaultAccess())
	o.Limits = limits
	for _, c := range configure {
		c(&o)
	}
	lo, s := ListenOptions{InsecureListen: "127.0.0.1:0"}, &served{audit: audit}
	if tlsOn {
		lo = ListenOptions{Listen: "127.0.0.1:0"}
		lo.CertFile, lo.KeyFile, s.roots = servingCert(t)
		s.certFile, s.keyFile = lo.CertFile, lo.KeyFile
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.Context = ctx
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	s.srv = srv
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, srv, lo, func(addr string) { ready <- addr })
	}()
	select {
	case s.addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	s.base = "http://" + s.addr
	if tlsOn {
		s.base = "https://" + s.addr
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// servingCert writes a certificate for 127.0.0.1 and its key, and returns the pool that
// trusts its CA.
func servingCert(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	caCert, caKey, err := certs.NewCA("kruise-addon-test-ca", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := certs.NewServing(caCert, caKey, []string{"127.0.0.1"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AppendCertsFromPEM(caCert)
	return writeTemp(t, "tls.crt", string(cert)), writeTemp(t, "tls.key", string(key)), roots
}

// client is an HTTP client whose connections come from ip (all of 127.0.0.0/8 reaches the
// loopback server), every response checked against the document.
func (s *served) client(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	if s.roots != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: s.roots}
	}
	return &http.Client{Timeout: answerTimeout, Transport: validator.Transport(tr)}
}

// do makes a request from client; err is the connection's, when the server answered nothing.
func (s *served) do(client *http.Client, method, path, token string, body io.Reader) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

// dialFrom opens a TCP connection from ip to the server; reads and writes on it fail after
// answerTimeout.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: answerTimeout}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(answerTimeout)); err != nil {
		t.Fatal(err)
	}
	return c
}

// readAnswer reads one response from a raw connection and checks it against the document.
func readAnswer(br *bufio.Reader, method, path string) (*http.Response, []byte, error) {
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, data, validator.Check(method, path, resp.StatusCode, resp.Header.Get("Content-Type"), data)
}

func reasonOf(t *testing.T, body []byte) string {
	t.Helper()
	var e ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an error body: %s", body)
	}
	return e.Reason
}

func TestManyIdleConnectionsDoNotStarveAnAuthenticatedCaller(t *testing.T) {
	type attack struct {
		ip string
		// conns is how many connections it opens, one after the other.
		conns int
	}
	cases := []struct {
		name   string
		tlsOn  bool
		limits Limits
		attack []attack
		// busy attack connections each serve a request, an operator's whose body has not all
		// come (the server asked for it with 100 Continue); the others send nothing.
		busy bool
		// wantCallerAnswered says whether a caller from 127.0.0.2 is answered while the
		// attack's connections are open.
		wantCallerAnswered bool
		// wantHeld is how many of each address's connections the server kept: they answer
		// once their request is complete, where the others were closed.
		wantHeld map[string]int
		// wantRefused is kruise_addon_serve_connections_refused_total by limit, and
		// wantEvicted kruise_addon_serve_connections_evicted_total.
		wantRefused map[string]float64
		wantEvicted float64
	}{
		{
			name:   "connections of one address over its cap are closed at once, and a caller from another address is answered",
			limits: Limits{MaxConnections: 16, MaxConnectionsPerClient: 4},
			attack: []attack{{"127.0.0.1", 300}}, wantCallerAnswered: true,
			wantHeld: map[string]int{"127.0.0.1": 4}, wantRefused: map[string]float64{"per_client": 296, "total": 0},
		},
		{
			name:  "TLS connections of one address over its cap are closed before their handshake, and a caller from another address is answered",
			tlsOn: true, limits: Limits{MaxConnections: 16, MaxConnectionsPerClient: 4},
			attack: []attack{{"127.0.0.1", 100}}, wantCallerAnswered: true,
			wantHeld: map[string]int{"127.0.0.1": 4}, wantRefused: map[string]float64{"per_client": 96, "total": 0},
		},
		{
			name:   "at the total cap a new connection takes the place of the one that has waited longest for a request, and a caller from another address is answered",
			limits: Limits{MaxConnections: 10, MaxConnectionsPerClient: 4},
			attack: []attack{{"127.0.0.3", 6}, {"127.0.0.4", 6}, {"127.0.0.5", 6}}, wantCallerAnswered: true,
			// .5's third and fourth connections and the caller's take the places of .3's first
			// three; each address's fifth and sixth are over its own cap.
			wantHeld: map[string]int{"127.0.0.3": 1, "127.0.0.4": 4, "127.0.0.5": 4}, wantRefused: map[string]float64{"per_client": 6, "total": 0}, wantEvicted: 3,
		},
		{
			name:   "at the total cap with every connection serving a request a new connection is closed, a caller's too",
			limits: Limits{MaxConnections: 10, MaxConnectionsPerClient: 4}, busy: true,
			attack:   []attack{{"127.0.0.3", 4}, {"127.0.0.4", 4}, {"127.0.0.5", 4}},
			wantHeld: map[string]int{"127.0.0.3": 4, "127.0.0.4": 4, "127.0.0.5": 2}, wantRefused: map[string]float64{"per_client": 0, "total": 3},
		},
	}
	const path, body = "/v1/clusters/prod/addon/unlock", `{"namespace":"kruise-system"}`
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The attack's connections stay open for as long as the test runs unless the
			// server closes them for a cap.
			tc.limits.ReadHeaderTimeout = metav1.Duration{Duration: time.Hour}
			tc.limits.ReadTimeout = metav1.Duration{Duration: time.Hour}
			s := serveOn(t, tc.tlsOn, tc.limits)
			type opened struct {
				ip string
				c  net.Conn
				br *bufio.Reader
				// closed is set when the server closed it before asking for the body.
				closed bool
			}
			var conns []*opened
			for _, a := range tc.attack {
				for range a.conns {
					o := &opened{ip: a.ip, c: dialFrom(t, a.ip, s.addr)}
					conns = append(conns, o)
					if tc.tlsOn {
						o.c = tls.Client(o.c, &tls.Config{RootCAs: s.roots, ServerName: "127.0.0.1"})
					}
					o.br = bufio.NewReader(o.c)
					if !tc.busy {
						continue
					}
					// The next connection is accepted only once this one serves its request.
					fmt.Fprintf(o.c, "POST %s HTTP/1.1\r\nHost: kruise-addon\r\nAuthorization: Bearer %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", path, operatorToken, len(body))
					resp, err := http.ReadResponse(o.br, nil)
					switch {
					case isTimeout(err):
						t.Fatalf("connection from %s: %v: the server neither asked for the body nor closed it", a.ip, err)
					case err != nil:
						o.closed = true
					case resp.StatusCode != http.StatusContinue:
						t.Fatalf("connection from %s: status %d, want 100 Continue", a.ip, resp.StatusCode)
					default:
						fmt.Fprint(o.c, body[:len(body)/2])
					}
				}
			}

			resp, data, err := s.do(s.client("127.0.0.2"), "GET", "/v1/clusters", operatorToken, nil)
			switch {
			case tc.wantCallerAnswered && err != nil:
				t.Errorf("the caller from another address was not answered: %v", err)
			case tc.wantCallerAnswered && resp.StatusCode != http.StatusOK:
				t.Errorf("the caller from another address: status %d, want 200: %s", resp.StatusCode, data)
			case !tc.wantCallerAnswered && err == nil:
				t.Errorf("the caller was answered %d over the total cap, want its connection closed", resp.StatusCode)
			case !tc.wantCallerAnswered && isTimeout(err):
				t.Errorf("the caller over the total cap: %v, want its connection closed at once", err)
			}

			// Each attack connection the server kept answers once its request is complete;
			// one it closed fails.
			held := map[string]int{}
			for _, o := range conns {
				if o.closed {
					continue
				}
				method, p := "GET", "/v1/versions"
				var err error
				if tc.busy {
					method, p = "POST", path
					_, err = fmt.Fprint(o.c, body[len(body)/2:])
				} else {
					_, err = fmt.Fprintf(o.c, "GET %s HTTP/1.1\r\nHost: kruise-addon\r\n\r\n", p)
				}
				if err != nil {
					continue
				}
				if _, _, err := readAnswer(o.br, method, p); err == nil {
					held[o.ip]++
				} else if isTimeout(err) {
					t.Fatalf("connection from %s: %v: the server neither answered nor closed it", o.ip, err)
				}
			}
			if diff := cmp.Diff(tc.wantHeld, held); diff != "" {
				t.Errorf("connections the server kept, by address (-want +got):\n%s", diff)
			}
			fams, err := gather(s.srv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRefused, byLabel(fams, "kruise_addon_serve_connections_refused_total")); diff != "" {
				t.Errorf("kruise_addon_serve_connections_refused_total by limit (-want +got):\n%s", diff)
			}
			if got := byLabel(fams, "kruise_addon_serve_connections_evicted_total")[""]; got != tc.wantEvicted {
				t.Errorf("kruise_addon_serve_connections_evicted_total %v, want %v", got, tc.wantEvicted)
			}
		})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestABodyThatNeverComesIsCutAfterTheReadTimeout(t *testing.T) {
	const path = "/v1/clusters/prod/addon/install"
	cases := []struct {
		name        string
		token       string
		readTimeout time.Duration
		wantStatus  int
		wantReason  string
		wantIn      string
	}{
		{"an operator's request is answered 408 naming the limit, and its connection closed", operatorToken, 100 * time.Millisecond,
			http.StatusRequestTimeout, ReasonRequestTimeout, "limits.readTimeout"},
		{"a request without a token is answered 401 and its connection closed without awaiting the body", "", time.Hour,
			http.StatusUnauthorized, ReasonUnauthorized, "authentication required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serveWith(t, Limits{ReadTimeout: metav1.Duration{Duration: tc.readTimeout}})
			c := dialFrom(t, "127.0.0.1", s.addr)
			auth := ""
			if tc.token != "" {
				auth = "Authorization: Bearer " + tc.token + "\r\n"
			}
			// The headers promise 100 bytes; 13 come, then nothing.
			if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: kruise-addon\r\n%sContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"namespace\":", path, auth); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, body, err := readAnswer(br, "POST", path)
			if err != nil {
				t.Fatalf("no answer: %v (a timeout here is the test's own: the server held the connection)", err)
			}
			if resp.StatusCode != tc.wantStatus || reasonOf(t, body) != tc.wantReason || !strings.Contains(string(body), tc.wantIn) {
				t.Errorf("status %d, want %d with reason %s naming %q: %s", resp.StatusCode, tc.wantStatus, tc.wantReason, tc.wantIn, body)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("after the answer: %v, want the connection closed (EOF)", err)
			}
		})
	}
}

func TestAnOversizeBodyIsAnswered413NamingTheLimit(t *testing.T) {
	const path = "/v1/clusters/prod/addon/unlock"
	big := `{"namespace":"` + strings.Repeat("x", 2048) + `"}`
	cases := []struct {
		name       string
		body       io.Reader
		wantStatus int
	}{
		{"a body over the limit with its length declared is refused before it is read", strings.NewReader(big), http.StatusRequestEntityTooLarge},
		{"a chunked body over the limit is refused once the limit is read", io.MultiReader(strings.NewReader(big)), http.StatusRequestEntityTooLarge},
		{"a body within the limit is read", strings.NewReader(`{}`), http.StatusAccepted},
	}
	s := serveWith(t, Limits{MaxBodyBytes: 1024})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body, err := s.do(s.client("127.0.0.1"), "POST", path, operatorToken, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus == http.StatusRequestEntityTooLarge && (reasonOf(t, body) != ReasonPayloadTooLarge || !strings.Contains(string(body), "larger than 1024 bytes (limits.maxBodyBytes")) {
				t.Errorf("want reason PayloadTooLarge naming the limit of 1024 bytes and its key: %s", body)
			}
		})
	}
}

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func withClock(c *clock) func(*Options) { return func(o *Options) { o.Now = c.Now } }

func TestAFloodOfUnauthenticatedRequestsWritesOneAuditSummaryAndIsCounted(t *testing.T) {
	// The clock stands still: no address earns a request back during the flood.
	clk := &clock{t: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)}
	s := serveWith(t, Limits{UnauthenticatedPerMinute: 1, UnauthenticatedBurst: 5, AuditSummaryInterval: metav1.Duration{Duration: time.Hour}}, withClock(clk))
	flood := map[string]int{"127.0.0.1": 200, "127.0.0.3": 50}
	statuses := map[int]int{}
	for ip, n := range flood {
		client := s.client(ip)
		for k := range n {
			// Every mutating route, with no token or a wrong one.
			route := []string{"install", "upgrade", "uninstall", "unlock"}[k%4]
			token := []string{"", "not-a-token-of-the-file"}[k%2]
			resp, _, err := s.do(client, "POST", "/v1/clusters/prod/addon/"+route, token, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			statuses[resp.StatusCode]++
		}
	}
	if diff := cmp.Diff(map[int]int{401: 10, 429: 240}, statuses); diff != "" {
		t.Errorf("answers by status, 5 of each address's within its burst (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff(map[string]float64{"denied": 10, "rate_limited": 240}, s.unauthenticatedCounted(t)); diff != "" {
		t.Errorf("kruise_addon_serve_unauthenticated_requests_total by result (-want +got):\n%s", diff)
	}

	s.stop()
	since := clk.Now()
	want := []AuditRecord{{Time: since, Phase: "summary", Result: "denied", Since: &since, Count: 250, RateLimited: 240, Clients: 2,
		TopClients: []ClientCount{{Address: "127.0.0.1", Count: 200}, {Address: "127.0.0.3", Count: 50}}}}
	if diff := cmp.Diff(want, s.audit.records(t)); diff != "" {
		t.Errorf("audit log after the flood, one summary line (-want +got):\n%s", diff)
	}
}

// unauthenticatedCounted reads kruise_addon_serve_unauthenticated_requests_total by result
// from /metrics, as a reader calling from 127.0.0.2.
func (s *served) unauthenticatedCounted(t *testing.T) map[string]float64 {
	t.Helper()
	resp, body, err := s.do(s.client("127.0.0.2"), "GET", "/metrics", readerToken, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics: %v: %s", err, body)
		return nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return byLabel(slices.Collect(maps.Values(fams)), "kruise_addon_serve_unauthenticated_requests_total")
}

// byLabel is the counter name by the value of its one label ("" for a counter without).
func byLabel(fams []*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			label := ""
			if len(m.GetLabel()) > 0 {
				label = m.GetLabel()[0].GetValue()
			}
			out[label] = m.GetCounter().GetValue()
		}
	}
	return out
}

func TestUnauthenticatedRequestsOverTheRateAreAnswered429WithRetryAfter(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)}
	s := serveWith(t, Limits{UnauthenticatedPerMinute: 1, UnauthenticatedBurst: 3}, withClock(clk))
	type step struct {
		name           string
		ip, token      string
		wait           time.Duration
		wantStatus     int
		wantRetryAfter string
	}
	steps := []step{
		{name: "the first request without a token is answered 401", ip: "127.0.0.1", wantStatus: 401},
		{name: "the second is answered 401", ip: "127.0.0.1", wantStatus: 401},
		{name: "the third, the burst's last, is answered 401", ip: "127.0.0.1", wantStatus: 401},
		{name: "the fourth is answered 429 with the seconds until the next one", ip: "127.0.0.1", wantStatus: 429, wantRetryAfter: "60"},
		{name: "a known caller from the same address is answered", ip: "127.0.0.1", token: readerToken, wantStatus: 200},
		{name: "another address has its own burst", ip: "127.0.0.2", wantStatus: 401},
		{name: "half the wait later the address is still refused", ip: "127.0.0.1", wait: 30 * time.Second, wantStatus: 429, wantRetryAfter: "30"},
		{name: "after Retry-After the address is answered 401 again", ip: "127.0.0.1", wait: 30 * time.Second, wantStatus: 401},
	}
	for _, st := range steps {
		clk.Add(st.wait)
		resp, body, err := s.do(s.client(st.ip), "GET", "/v1/clusters", st.token, nil)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if resp.StatusCode != st.wantStatus || resp.Header.Get("Retry-After") != st.wantRetryAfter {
			t.Errorf("%s: status %d with Retry-After %q, want %d with %q: %s", st.name, resp.StatusCode, resp.Header.Get("Retry-After"), st.wantStatus, st.wantRetryAfter, body)
		}
		if st.wantStatus == 429 && reasonOf(t, body) != ReasonTooManyRequests {
			t.Errorf("%s: want reason TooManyRequests: %s", st.name, body)
		}
	}
}

func TestAWriteTimeoutDoesNotCutAnEventStream(t *testing.T) {
	const heartbeats = 6
	cases := []struct {
		name  string
		tlsOn bool
	}{
		{"over plain HTTP", false},
		{"over TLS, whose connection carries the deadline", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The operation runs until the test has seen the stream outlive several write
			// timeouts.
			release := make(chan struct{})
			var once sync.Once
			finish := func() { once.Do(func() { close(release) }) }
			s := serveOn(t, tc.tlsOn, Limits{WriteTimeout: metav1.Duration{Duration: 200 * time.Millisecond}}, func(o *Options) {
				o.NewInstaller = func(genericclioptions.RESTClientGetter, ...installer.Option) (*installer.Installer, error) {
					<-release
					return nil, errNoCluster
				}
			})
			// Cleanups run last-registered first: the operation ends before the server stops.
			t.Cleanup(finish)
			client := s.client("127.0.0.1")
			resp, body, err := s.do(client, "POST", "/v1/clusters/prod/addon/unlock", operatorToken, strings.NewReader(`{}`))
			if err != nil || resp.StatusCode != http.StatusAccepted {
				t.Fatalf("unlock: %v: %s", err, body)
			}
			var acc OperationResponse
			if err := json.Unmarshal(body, &acc); err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest("GET", s.base+"/v1/operations/"+acc.Operation.ID+"/events", nil)
			req.Header.Set("Authorization", "Bearer "+readerToken)
			req.Header.Set("Accept", "text/event-stream")
			stream, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Body.Close()
			sc := bufio.NewScanner(stream.Body)
			seen, done := 0, false
			for sc.Scan() {
				switch sc.Text() {
				case ": keep-alive":
					// A heartbeat comes every half write timeout: these span three of them.
					if seen++; seen == heartbeats {
						finish()
					}
				case "event: done":
					done = true
				}
			}
			if !done || seen < heartbeats {
				t.Errorf("the stream ended after %d heartbeats, done event seen: %t (%v); want it open past %d heartbeats, then the done event", seen, done, sc.Err(), heartbeats)
			}
		})
	}
}

func TestLimitsComeFromTheConfigFile(t *testing.T) {
	kc := writeTemp(t, "kubeconfig", "apiVersion: v1\nkind: Config\n")
	cases := []struct {
		name       string
		file       string
		wantLimits Limits
	}{
		{"a file without limits takes every default", "clusters:\n- {name: prod, kubeconfig: " + kc + "}\n", DefaultLimits()},
		{"the limits given replace their defaults only", "clusters:\n- {name: prod, kubeconfig: " + kc + "}\nlimits:\n  readTimeout: 5s\n  maxConnectionsPerClient: 8\n",
			func() Limits {
				l := DefaultLimits()
				l.ReadTimeout, l.MaxConnectionsPerClient = metav1.Duration{Duration: 5 * time.Second}, 8
				return l
			}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, limits, err := LoadConfig(writeTemp(t, "clusters.yaml", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLimits, limits.withDefaults()); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientKey(t *testing.T) {
	cases := []struct {
		name, remote, want string
	}{
		{"an IPv4 client is its address", "192.0.2.7:51000", "192.0.2.7"},
		{"an IPv4-mapped IPv6 client is its IPv4 address", "[::ffff:192.0.2.7]:51000", "192.0.2.7"},
		{"an IPv6 client is its /64, which one host usually holds whole", "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", "2001:db8:1:2::/64"},
		{"an address that is not IP is itself", "pipe", "pipe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clientKey(tc.remote); got != tc.want {
				t.Errorf("clientKey(%q) = %q, want %q", tc.remote, got, tc.want)
			}
		})
	}
}

func TestTheUnauthenticatedCountsStayBoundedUnderManyAddresses(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	u := newUnauthenticated(Limits{UnauthenticatedPerMinute: 1, UnauthenticatedBurst: 1}, now)
	const extra = 100
	for k := range maxTrackedClients + extra {
		u.refuse(fmt.Sprintf("10.%d.%d.%d", k>>16&255, k>>8&255, k&255), now)
	}
	// A client past the bound shares one limiter with the others past it: its first request
	// finds that limiter's burst spent.
	if wait := u.refuse("192.0.2.1", now); wait == 0 {
		t.Errorf("a client past the bound was answered 401, want it to share the spent overflow limiter")
	}
	if len(u.limiters) > maxTrackedClients || len(u.byClient) > maxTrackedClients {
		t.Errorf("%d limiters and %d counted addresses, want at most %d each", len(u.limiters), len(u.byClient), maxTrackedClients)
	}
	rec, ok := u.summary(now)
	if !ok || rec.Count != maxTrackedClients+extra+1 || rec.Clients != maxTrackedClients || len(rec.TopClients) != topClients {
		t.Errorf("summary %+v, want every request counted (%d) over the %d addresses remembered, %d named", rec, maxTrackedClients+extra+1, maxTrackedClients, topClients)
	}
	// Limiters that have refilled are as good as new, and are forgotten to make room.
	later := now.Add(time.Hour)
	if wait := u.refuse("192.0.2.2", later); wait != 0 {
		t.Errorf("a new client once the others have refilled: wait %v, want its own limiter and a 401", wait)
	}
	if len(u.limiters) > maxTrackedClients {
		t.Errorf("%d limiters, want at most %d", len(u.limiters), maxTrackedClients)
	}
}
