package servertest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

const docURL = "https://kruise-addon.invalid/openapi.json"

// Validator checks responses against an OpenAPI 3.1 document.
type Validator struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	paths    []docPath

	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
	checked  map[string]int // "METHOD /template STATUS" -> responses validated
	failures []string
}

type docPath struct {
	template string
	re       *regexp.Regexp
}

// New reads the document (YAML or JSON).
func New(document []byte) (*Validator, error) {
	js, err := yaml.YAMLToJSON(document)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("openapi document: not an object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	v := &Validator{doc: m, compiler: c, schemas: map[string]*jsonschema.Schema{}, checked: map[string]int{}}
	paths, _ := m["paths"].(map[string]any)
	for t := range paths {
		re := "^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(t), `[^/]+`) + "$"
		v.paths = append(v.paths, docPath{template: t, re: regexp.MustCompile(re)})
	}
	// Literal paths before templated ones.
	sort.Slice(v.paths, func(a, b int) bool {
		return strings.Count(v.paths[a].template, "{") < strings.Count(v.paths[b].template, "{")
	})
	return v, nil
}

// Operations lists "METHOD /path" of every documented operation.
func (v *Validator) Operations() []string {
	var out []string
	paths, _ := v.doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m := range ops {
			switch m {
			case "get", "put", "post", "delete", "patch":
				out = append(out, strings.ToUpper(m)+" "+p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Check validates one response. The body of a text/event-stream response is validated event
// by event against the media type's x-event-data schema.
func (v *Validator) Check(method, path string, status int, contentType string, body []byte) error {
	err := v.check(method, path, status, contentType, body)
	if err != nil {
		v.mu.Lock()
		v.failures = append(v.failures, fmt.Sprintf("%s %s %d: %v", method, path, status, err))
		v.mu.Unlock()
	}
	return err
}

func (v *Validator) check(method, path string, status int, contentType string, body []byte) error {
	tmpl := ""
	for _, p := range v.paths {
		if p.re.MatchString(path) {
			tmpl = p.template
			break
		}
	}
	var respPtr string
	if tmpl == "" {
		// A path the API does not have: the answer must still be the document's Error.
		if status < 400 {
			return fmt.Errorf("path %s is not in the document, yet answered %d", path, status)
		}
		tmpl, respPtr = "(undocumented path)", "/components/responses/Error"
	} else {
		opPtr := "/paths/" + escape(tmpl) + "/" + strings.ToLower(method)
		op, ok := lookup(v.doc, opPtr).(map[string]any)
		switch {
		case !ok && status != http.StatusMethodNotAllowed:
			return fmt.Errorf("%s %s is not in the document, yet answered %d, not 405", method, tmpl, status)
		case !ok:
			// A method the path does not have: the answer must still be the document's Error.
			op = map[string]any{"responses": map[string]any{"default": map[string]any{}}}
			opPtr = ""
		}
		responses, _ := op["responses"].(map[string]any)
		code := strconv.Itoa(status)
		respPtr = opPtr + "/responses/" + code
		if _, ok := responses[code]; !ok {
			if _, ok := responses["default"]; !ok {
				return fmt.Errorf("status %d of %s %s is not documented", status, method, tmpl)
			}
			respPtr = opPtr + "/responses/default"
		}
		if opPtr == "" {
			respPtr = "/components/responses/Error"
		}
	}
	resp, _ := lookup(v.doc, respPtr).(map[string]any)
	if ref, ok := resp["$ref"].(string); ok {
		respPtr = strings.TrimPrefix(ref, "#")
		resp, _ = lookup(v.doc, respPtr).(map[string]any)
	}
	media, _, _ := strings.Cut(contentType, ";")
	media = strings.TrimSpace(media)
	content, _ := resp["content"].(map[string]any)
	if _, ok := content[media]; !ok {
		return fmt.Errorf("content type %q of %s %s %d is not documented", media, method, tmpl, status)
	}
	mediaPtr := respPtr + "/content/" + escape(media)
	if media == "text/event-stream" {
		sch, err := v.schema(mediaPtr + "/x-event-data")
		if err != nil {
			return err
		}
		return validateEvents(sch, body)
	}
	sch, err := v.schema(mediaPtr + "/schema")
	if err != nil {
		return err
	}
	var inst any
	if strings.Contains(media, "json") {
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(body)); err != nil {
			return fmt.Errorf("body is not JSON: %w", err)
		}
	} else {
		inst = string(body)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("body does not match the document: %v\nbody: %s", err, truncate(body))
	}
	v.mu.Lock()
	v.checked[fmt.Sprintf("%s %s %d", method, tmpl, status)]++
	v.mu.Unlock()
	return nil
}

func validateEvents(sch *jsonschema.Schema, body []byte) error {
	// Only complete events: a client may have left in the middle of one.
	if k := bytes.LastIndex(body, []byte("\n\n")); k >= 0 {
		body = body[:k]
	} else {
		body = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
		if err != nil {
			return fmt.Errorf("event data is not JSON: %w", err)
		}
		if err := sch.Validate(inst); err != nil {
			return fmt.Errorf("event does not match the document: %v\ndata: %s", err, data)
		}
	}
	return sc.Err()
}

func (v *Validator) schema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.schemas[ptr]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", ptr, err)
	}
	v.schemas[ptr] = s
	return s, nil
}

// Failures lists every response that did not validate.
func (v *Validator) Failures() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.failures...)
}

// Checked counts the responses validated per "METHOD /template STATUS".
func (v *Validator) Checked() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]int{}
	for k, n := range v.checked {
		out[k] = n
	}
	return out
}

// Transport validates every response that passes through it. The body is read in full, so
// an event stream is validated once it ends.
func (v *Validator) Transport(base http.RoundTripper) http.RoundTripper {
	return roundTripper{v: v, base: base}
}

type roundTripper struct {
	v    *Validator
	base http.RoundTripper
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	resp.Body = &checkingBody{rc: resp.Body, done: func(body []byte) {
		_ = t.v.Check(r.Method, r.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}}
	return resp, nil
}

// checkingBody keeps what is read and validates it on Close.
type checkingBody struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	done func([]byte)
	once sync.Once
}

func (b *checkingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.buf.Write(p[:n])
	return n, err
}

// Close validates what the client read: all of a JSON body (tests read it all), and the
// complete events of a stream the client may leave early (to reconnect).
func (b *checkingBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() { b.done(b.buf.Bytes()) })
	return err
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func lookup(doc any, ptr string) any {
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
