package mcptest

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The official JSON Schemas of the MCP specification, one per era; see
// testdata/schema/SOURCE.md for where they come from.
//
//go:embed testdata/schema/2025-11-25.json testdata/schema/2026-07-28.json
var officialSchemas embed.FS

// Legacy is the newest handshake-era protocol version; messages of every
// version before Modern are checked against its schema.
const Legacy = "2025-11-25"

// SchemaVersion returns the official schema version that messages of
// protocol version v are checked against: Modern from 2026-07-28 on, Legacy
// before.
func SchemaVersion(v string) string {
	if v >= Modern {
		return Modern
	}
	return Legacy
}

// definitions compiles the official schemas' $defs on demand, once per
// process.
var definitions = struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}{}

func schemaURL(version string) string {
	return "https://modelcontextprotocol.io/schema/" + version + ".json"
}

// definition returns the compiled $defs entry name of the official schema of
// version (Legacy or Modern).
func definition(version, name string) (*jsonschema.Schema, error) {
	definitions.mu.Lock()
	defer definitions.mu.Unlock()
	if definitions.compiler == nil {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for _, v := range []string{Legacy, Modern} {
			raw, err := officialSchemas.ReadFile("testdata/schema/" + v + ".json")
			if err != nil {
				return nil, err
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				return nil, fmt.Errorf("official schema %s: %w", v, err)
			}
			if err := c.AddResource(schemaURL(v), doc); err != nil {
				return nil, fmt.Errorf("official schema %s: %w", v, err)
			}
		}
		definitions.compiler = c
		definitions.compiled = map[string]*jsonschema.Schema{}
	}
	loc := schemaURL(version) + "#/$defs/" + name
	if s, ok := definitions.compiled[loc]; ok {
		return s, nil
	}
	s, err := definitions.compiler.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("official schema %s has no usable definition %s: %w", version, name, err)
	}
	definitions.compiled[loc] = s
	return s, nil
}

// resultDefinitions names the official result definition of each method a
// client sends (the same name in both eras).
var resultDefinitions = map[string]string{
	"initialize":               "InitializeResult",
	"server/discover":          "DiscoverResult",
	"ping":                     "EmptyResult",
	"logging/setLevel":         "EmptyResult",
	"tools/list":               "ListToolsResult",
	"tools/call":               "CallToolResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"prompts/list":             "ListPromptsResult",
	"prompts/get":              "GetPromptResult",
	"completion/complete":      "CompleteResult",
}

// multiRoundTrip lists the methods whose 2026-07-28 result may be an
// InputRequiredResult.
var multiRoundTrip = map[string]bool{"tools/call": true, "resources/read": true, "prompts/get": true}

// A Checker checks the messages a server sends on one connection against
// the official MCP schema of the connection's protocol version, plus what
// clients rely on beyond it:
//   - an error's code is a real JSON-RPC code, never 0;
//   - a result has no null member its definition does not declare (such as
//     "content": null in an input_required result);
//   - a tool result's structuredContent matches the outputSchema the tool
//     declared in tools/list on the same connection, and a successful call
//     of a tool with an outputSchema carries structuredContent;
//   - every inputSchema and outputSchema in tools/list is a JSON Schema.
//
// Sent must see every message the client sends (it learns which method each
// response answers); Received checks one message from the server. A Checker
// is safe for concurrent use.
type Checker struct {
	version string

	mu      sync.Mutex
	pending map[string]sentRequest
	// outputs holds the compiled outputSchema of each listed tool; a listed
	// tool without one maps to nil.
	outputs map[string]*jsonschema.Schema
	// seen counts the messages checked by kind (see Seen).
	seen map[string]int
}

type sentRequest struct {
	method string
	tool   string // tools/call only
}

// NewChecker returns a Checker for a connection speaking protocol version.
func NewChecker(version string) *Checker {
	return &Checker{
		version: SchemaVersion(version),
		pending: map[string]sentRequest{},
		outputs: map[string]*jsonschema.Schema{},
		seen:    map[string]int{},
	}
}

// Seen counts the messages the Checker accepted, by kind: the result
// definition a response was checked against ("CallToolResult",
// "InputRequiredResult", "ReadResourceResult", …), "error <code>" for
// errors, "request <method>" and "notification <method>" for what the
// server sent on its own. Tests use it to show that they exercised a kind.
func (c *Checker) Seen() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.seen)
}

func (c *Checker) count(kind string) {
	c.mu.Lock()
	c.seen[kind]++
	c.mu.Unlock()
}

// Version is the schema version the Checker checks against.
func (c *Checker) Version() string { return c.version }

// messages splits a JSON-RPC message or batch into its messages.
func messages(raw []byte) ([]map[string]any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	switch m := v.(type) {
	case map[string]any:
		return []map[string]any{m}, nil
	case []any:
		out := make([]map[string]any, 0, len(m))
		for i, x := range m {
			o, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("batch element %d is not an object", i)
			}
			out = append(out, o)
		}
		return out, nil
	}
	return nil, errors.New("not a JSON-RPC message (neither an object nor a batch)")
}

// idKey is a request id as a map key (numbers and strings kept apart).
func idKey(id any) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// Sent notes a message (or batch) the client sent.
func (c *Checker) Sent(raw []byte) {
	msgs, err := messages(raw)
	if err != nil {
		return // not ours to judge: the server answers bad requests
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		method, _ := m["method"].(string)
		id, hasID := m["id"]
		if method == "" || !hasID {
			continue
		}
		req := sentRequest{method: method}
		if p, ok := m["params"].(map[string]any); ok && method == "tools/call" {
			req.tool, _ = p["name"].(string)
		}
		c.pending[idKey(id)] = req
	}
}

// Received checks a message (or batch) the server sent. The error lists
// every violation found, each naming the method it answers.
func (c *Checker) Received(raw []byte) error {
	msgs, err := messages(raw)
	if err != nil {
		return fmt.Errorf("server sent %.200q: %w", raw, err)
	}
	var errs []error
	for _, m := range msgs {
		if err := c.receivedOne(m); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Checker) receivedOne(m map[string]any) error {
	method, _ := m["method"].(string)
	id, hasID := m["id"]
	switch {
	case method != "" && hasID:
		return c.counted("request "+method, c.validate("server request "+method, m, "JSONRPCRequest", "ServerRequest"))
	case method != "":
		return c.counted("notification "+method, c.validate("server notification "+method, m, "JSONRPCNotification", "ServerNotification"))
	}
	c.mu.Lock()
	req, known := c.pending[idKey(id)]
	delete(c.pending, idKey(id))
	c.mu.Unlock()
	what := "response to " + req.method
	if !known {
		what = fmt.Sprintf("response to unknown request id %v", id)
	}
	if e, ok := m["error"]; ok {
		if err := c.validate(what, m, "JSONRPCErrorResponse"); err != nil {
			return err
		}
		em, _ := e.(map[string]any)
		code, _ := em["code"].(json.Number)
		if code.String() == "0" {
			return fmt.Errorf("%s (%s schema): error code 0 is not a JSON-RPC error code: %s", what, c.version, compact(m))
		}
		c.count("error " + code.String())
		return nil
	}
	if err := c.validate(what, m, "JSONRPCResultResponse"); err != nil {
		return err
	}
	if !known {
		return nil
	}
	result, _ := m["result"].(map[string]any)
	def, ok := resultDefinitions[req.method]
	if !ok {
		return nil
	}
	if c.version == Modern && multiRoundTrip[req.method] && result["resultType"] == "input_required" {
		def = "InputRequiredResult"
	}
	if err := c.validate(what, result, def); err != nil {
		return err
	}
	if err := c.undeclaredNulls(what, def, result); err != nil {
		return err
	}
	var err error
	switch {
	case req.method == "tools/list":
		err = c.learnTools(what, result)
	case req.method == "tools/call" && def == "CallToolResult":
		err = c.checkStructured(what, req.tool, result)
	}
	if isError, _ := result["isError"].(bool); isError && err == nil {
		c.count("CallToolResult isError")
	}
	return c.counted(def, err)
}

// counted counts kind when err is nil, and returns err.
func (c *Checker) counted(kind string, err error) error {
	if err == nil {
		c.count(kind)
	}
	return err
}

// validate checks v against each named definition in turn.
func (c *Checker) validate(what string, v any, defs ...string) error {
	for _, name := range defs {
		s, err := definition(c.version, name)
		if err != nil {
			return err
		}
		if err := s.Validate(v); err != nil {
			return fmt.Errorf("%s is not a valid %s (%s schema): %v\nmessage: %s", what, name, c.version, err, compact(v))
		}
	}
	return nil
}

// undeclaredNulls reports result members that are null and not declared by
// the result's definition: such a member is in no version of the schema and
// strict clients refuse it.
func (c *Checker) undeclaredNulls(what, def string, result map[string]any) error {
	declared := declaredProperties(c.version, def)
	var bad []string
	for k, v := range result {
		if v == nil && !declared[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s: %s (%s schema) has no member %s, yet the result carries it as null: %s",
		what, def, c.version, strings.Join(bad, ", "), compact(result))
}

// declared caches the property names of each definition, per version.
var declared = struct {
	once sync.Once
	defs map[string]map[string]map[string]bool // version → definition → property
}{}

// declaredProperties returns the property names a definition declares.
func declaredProperties(version, def string) map[string]bool {
	declared.once.Do(func() {
		declared.defs = map[string]map[string]map[string]bool{}
		for _, v := range []string{Legacy, Modern} {
			raw, err := officialSchemas.ReadFile("testdata/schema/" + v + ".json")
			if err != nil {
				panic(err) // embedded: cannot happen
			}
			var doc struct {
				Defs map[string]struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"$defs"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				panic(fmt.Sprintf("official schema %s: %v", v, err))
			}
			declared.defs[v] = map[string]map[string]bool{}
			for name, d := range doc.Defs {
				props := map[string]bool{}
				for k := range d.Properties {
					props[k] = true
				}
				declared.defs[v][name] = props
			}
		}
	})
	return declared.defs[version][def]
}

// learnTools compiles every listed tool's schemas and remembers the output
// schemas for later tools/call results.
func (c *Checker) learnTools(what string, result map[string]any) error {
	tools, _ := result["tools"].([]any)
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, x := range tools {
		tool, _ := x.(map[string]any)
		name, _ := tool["name"].(string)
		if _, err := c.compileSchema(tool["inputSchema"]); err != nil {
			errs = append(errs, fmt.Errorf("%s: tool %s: inputSchema is not a JSON Schema: %v", what, name, err))
		}
		out, ok := tool["outputSchema"]
		if !ok {
			c.outputs[name] = nil
			continue
		}
		s, err := c.compileSchema(out)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: tool %s: outputSchema is not a JSON Schema: %v", what, name, err))
			continue
		}
		c.outputs[name] = s
	}
	return errors.Join(errs...)
}

// declaredSchemas caches the schemas servers declared, compiled, by their
// JSON text: every connection of a test suite lists the same tools.
var declaredSchemas = struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	byText   map[string]*jsonschema.Schema
	seq      int
}{compiler: jsonschema.NewCompiler(), byText: map[string]*jsonschema.Schema{}}

// compileSchema compiles a schema a server declared.
func (c *Checker) compileSchema(v any) (*jsonschema.Schema, error) {
	text, err := json.Marshal(v) // map keys sorted: one text per schema
	if err != nil {
		return nil, err
	}
	d := &declaredSchemas
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.byText[string(text)]; ok {
		return s, nil
	}
	d.seq++
	url := fmt.Sprintf("urn:mcptest:schema:%d", d.seq)
	if err := d.compiler.AddResource(url, v); err != nil {
		return nil, err
	}
	s, err := d.compiler.Compile(url)
	if err != nil {
		return nil, err
	}
	d.byText[string(text)] = s
	return s, nil
}

// checkStructured checks a tool result against its tool's outputSchema.
func (c *Checker) checkStructured(what, tool string, result map[string]any) error {
	c.mu.Lock()
	out, listed := c.outputs[tool]
	c.mu.Unlock()
	if !listed || out == nil {
		return nil
	}
	structured, has := result["structuredContent"]
	isError, _ := result["isError"].(bool)
	if !has {
		if isError {
			return nil
		}
		return fmt.Errorf("%s %s: the tool declares an outputSchema, yet its result has no structuredContent: %s", what, tool, compact(result))
	}
	if err := out.Validate(structured); err != nil {
		return fmt.Errorf("%s %s: structuredContent does not match the tool's outputSchema (clients that listed the tools refuse it with -32602): %v\nresult: %s", what, tool, err, compact(result))
	}
	return nil
}

// compact renders v for an error message, clipped.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 600
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
