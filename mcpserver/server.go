package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/store"
)

// Options configures New.
type Options struct {
	// Store holds identities, signing keys and the confirmation ledger.
	Store interface {
		store.Identity
		store.Keys
		store.Ledger
	}
	Products []*Product
	// Roles maps a workspace role to the most powerful Access it allows;
	// nil means DefaultRoles.
	Roles map[store.Role]Access
	// Name and Version identify the server to clients.
	Name    string
	Version string
	// Instructions are sent to clients on initialize/discover.
	Instructions string
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Observe, when set, is told of every request the server answered, on
	// any transport (metrics).
	Observe func(RequestObserved)
}

// RequestObserved is one answered request, as Options.Observe hears of it.
type RequestObserved struct {
	// Method is the JSON-RPC method; Tool the tool of a tools/call
	// ("unknown" for a name the server has no tool of).
	Method, Tool string
	// Result is "ok", "tool_error" (a tool's isError result),
	// "input_required" (a confirmation asked) or "error" (a JSON-RPC error).
	Result   string
	Duration time.Duration
}

// Server is the framework's MCP server: one *mcp.Server shared by every
// transport and both protocol eras.
type Server struct {
	mcp       *mcp.Server
	opts      Options
	tools     map[string]*toolEntry
	resources []*resourceEntry
	prompts   map[string]*promptEntry
	products  []*Product
	now       func() time.Time
	log       *slog.Logger
	// confirmWait is ConfirmationWait (tests shorten it).
	confirmWait time.Duration
	// sessions counts the 2025-era HTTP sessions, once HTTPHandler is
	// built.
	sessions atomic.Pointer[sessionLimits]
}

// OpenSessions is the number of 2025-era sessions open over HTTP (0
// before HTTPHandler is built). Stateless 2026-07-28 requests hold none.
func (s *Server) OpenSessions() int {
	if l := s.sessions.Load(); l != nil {
		return l.count()
	}
	return 0
}

type toolEntry struct {
	tool    *Tool
	product *Product
}

type resourceEntry struct {
	res     *Resource
	product *Product
	// segments of the template (or URI), split on "/" after the scheme.
	segments []string
}

type promptEntry struct {
	prompt  *Prompt
	product *Product
}

// New builds a server serving the given products.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("mcpserver: Options.Store is required")
	}
	roles, err := checkRoles(opts.Roles)
	if err != nil {
		return nil, err
	}
	// A copy: the caller's map cannot change who may do what later.
	opts.Roles = roles
	opts.Products = slices.Clone(opts.Products)
	if err := checkProducts(opts.Products); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "kobana"
	}
	if opts.Version == "" {
		opts.Version = "0.1.0"
	}
	s := &Server{
		opts:    opts,
		tools:   map[string]*toolEntry{},
		prompts: map[string]*promptEntry{},
		now:     opts.Now,
		log:     opts.Logger,

		confirmWait: ConfirmationWait,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Instructions:      opts.Instructions,
		Logger:            s.log,
		PageSize:          1000,
		CompletionHandler: s.complete,
		// Resources are served stateless: no subscriptions, no list-changed notices.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
			Prompts:   &mcp.PromptCapabilities{},
		},
		SetCacheable: s.cacheable,
	})
	for _, p := range opts.Products {
		s.addProduct(p)
	}
	// The last added is the outermost: contain covers every layer inside
	// it, the observer and the permission checks too.
	s.mcp.AddReceivingMiddleware(s.middleware)
	if opts.Observe != nil {
		s.mcp.AddReceivingMiddleware(s.observe(opts.Observe)) // it sees every answer
	}
	s.mcp.AddReceivingMiddleware(s.contain)
	return s, nil
}

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// addProduct registers a product checkProducts accepted.
func (s *Server) addProduct(p *Product) {
	s.products = append(s.products, p)
	for i := range p.Tools {
		t := &p.Tools[i]
		s.tools[t.Name] = &toolEntry{tool: t, product: p}
		readOnly := t.Access == Read
		destructive := t.Destructive
		idempotent := t.Idempotent
		openWorld := t.OpenWorld
		ann := &mcp.ToolAnnotations{
			Title:          t.Title,
			ReadOnlyHint:   readOnly,
			IdempotentHint: idempotent,
			OpenWorldHint:  &openWorld,
		}
		if !readOnly {
			ann.DestructiveHint = &destructive
		}
		s.mcp.AddTool(&mcp.Tool{
			Name:         t.Name,
			Title:        t.Title,
			Description:  t.Description,
			InputSchema:  t.inputSchema,
			OutputSchema: t.outputSchema,
			Annotations:  ann,
		}, s.toolHandler(t, p))
	}
	for i := range p.Resources {
		r := &p.Resources[i]
		mime := r.MIMEType
		if mime == "" {
			mime = "application/json"
		}
		if r.URI != "" {
			s.resources = append(s.resources, &resourceEntry{res: r, product: p, segments: uriSegments(r.URI)})
			s.mcp.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: mime}, s.readResource)
		} else {
			s.resources = append(s.resources, &resourceEntry{res: r, product: p, segments: uriSegments(r.Template)})
			s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: r.Template, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: mime}, s.readResource)
		}
	}
	for i := range p.Prompts {
		pr := &p.Prompts[i]
		s.prompts[pr.Name] = &promptEntry{prompt: pr, product: p}
		args := make([]*mcp.PromptArgument, 0, len(pr.Arguments))
		for _, a := range pr.Arguments {
			args = append(args, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		s.mcp.AddPrompt(&mcp.Prompt{Name: pr.Name, Title: pr.Title, Description: pr.Description, Arguments: args}, s.getPrompt)
	}
}

func uriSegments(u string) []string {
	return strings.Split(u, "/")
}

// match finds the resource serving uri and its parameters.
func (s *Server) match(uri string) (*resourceEntry, map[string]string) {
	segs := uriSegments(uri)
	for _, e := range s.resources {
		if len(e.segments) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, want := range e.segments {
			if strings.HasPrefix(want, "{") && strings.HasSuffix(want, "}") {
				if segs[i] == "" || !validID(segs[i]) {
					ok = false
					break
				}
				params[want[1:len(want)-1]] = segs[i]
				continue
			}
			if want != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return e, params
		}
	}
	return nil, nil
}

// validID accepts the characters record ids and template parameters use.
func validID(s string) bool {
	if len(s) > 200 || strings.Trim(s, ".") == "" {
		return false // too long, empty, or a path segment such as ".."
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}

// ---- per-request middleware ----

// observe tells fn of each request answered. A tool the server does not
// have is named "unknown", so that what a client sends cannot make up
// names.
func (s *Server) observe(fn func(RequestObserved)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			res, err := next(ctx, method, req)
			o := RequestObserved{Method: method, Result: "ok", Duration: time.Since(start)}
			if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil {
				o.Tool = "unknown"
				if s.tools[ct.Params.Name] != nil {
					o.Tool = ct.Params.Name
				}
			}
			// A call that ends in a JSON-RPC error may come back as a nil
			// *mcp.CallToolResult inside a non-nil Result: the error decides
			// first, and a result is read only when it is there.
			switch r := res.(type) {
			case inputRequired:
				o.Result = "input_required"
			case *mcp.CallToolResult:
				if r != nil && r.IsError {
					o.Result = "tool_error"
				}
			}
			if err != nil {
				o.Result = "error"
			}
			fn(o)
			return res, err
		}
	}
}

// errUnauthenticated is returned when a request carries no usable identity.
var errUnauthenticated = &jsonrpc.Error{Code: -32001, Message: "unauthenticated: no valid token for this request"}

// stdioTokenKey carries a stdio connection's token through the context.
type stdioTokenKey struct{}

func (s *Server) principal(ctx context.Context, req mcp.Request) (store.Principal, error) {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		if p, ok := ex.TokenInfo.Extra[principalExtra].(store.Principal); ok {
			return p, nil
		}
	}
	if tok, ok := ctx.Value(stdioTokenKey{}).(string); ok {
		p, err := s.opts.Store.Authenticate(ctx, tok)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return store.Principal{}, errUnauthenticated
			}
			return store.Principal{}, fmt.Errorf("authenticating: %w", err)
		}
		return p, nil
	}
	return store.Principal{}, errUnauthenticated
}

// methods that carry no workspace data and need no identity.
var anonymousMethods = map[string]bool{
	"initialize":                true,
	"notifications/initialized": true,
	"notifications/cancelled":   true,
	"notifications/progress":    true,
	"ping":                      true,
	"server/discover":           true,
	"logging/setLevel":          true,
}

func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if anonymousMethods[method] {
			return next(ctx, method, req)
		}
		p, err := s.principal(ctx, req)
		if err != nil {
			return nil, err
		}
		c := &Caller{Principal: p, Allowed: allowedTools(p, s.opts.Roles, s.tools)}
		c.ProtocolVersion, c.FormElicitation = requestEra(req)
		ctx = WithCaller(ctx, c)
		if rr, ok := req.(*mcp.ReadResourceRequest); ok && rr.Params != nil {
			// Served here rather than by the SDK, whose template lookup
			// compiles a regular expression per template per read; the
			// SDK still stamps resultType and serverInfo on the way out.
			res, err := s.readResource(ctx, rr)
			if err != nil {
				return nil, err
			}
			res.CacheScope, res.TTLMs = "private", 0
			if c.Modern() {
				return completeRead{res}, nil
			}
			return res, nil
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.CallToolResult:
			if r != nil && r.NeedsInput() {
				return inputRequired{r}, nil
			}
		case *mcp.ListToolsResult:
			r.Tools = filter(r.Tools, func(t *mcp.Tool) bool { return c.May(t.Name) })
		case *mcp.ListResourcesResult:
			r.Resources = filter(r.Resources, func(x *mcp.Resource) bool { return s.resourceVisible(c, x.URI) })
		case *mcp.ListResourceTemplatesResult:
			r.ResourceTemplates = filter(r.ResourceTemplates, func(x *mcp.ResourceTemplate) bool { return s.resourceVisible(c, x.URITemplate) })
		case *mcp.ListPromptsResult:
			r.Prompts = filter(r.Prompts, func(x *mcp.Prompt) bool {
				e := s.prompts[x.Name]
				return e != nil && c.MayAll(e.prompt.Tools)
			})
		}
		return res, nil
	}
}

func filter[T any](in []T, keep func(T) bool) []T {
	out := make([]T, 0, len(in))
	for _, x := range in {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func (s *Server) resourceVisible(c *Caller, uriOrTemplate string) bool {
	for _, e := range s.resources {
		if e.res.URI == uriOrTemplate || e.res.Template == uriOrTemplate {
			return c.May(e.res.Tool)
		}
	}
	return false
}

// resourceNotFound is the error of reading a resource that does not
// exist (or that c may not read), with the era's code: -32002 before
// 2026-07-28, -32602 (invalid params) from it on; the data names the URI.
func resourceNotFound(c *Caller, uri string) error {
	code := int64(-32002)
	if c.Modern() {
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := json.Marshal(struct { // a string always encodes
		URI string `json:"uri"`
	}{uri})
	return &jsonrpc.Error{Code: code, Message: "Resource not found", Data: data}
}

func (s *Server) cacheable(ctx context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.GetParams().(*mcp.DiscoverParams); ok {
		return // capabilities and versions are the same for everyone
	}
	// Everything else depends on the caller's token: never shared.
	c.CacheScope = "private"
	c.TTLMs = 0
}

// requestMeta returns the request's params._meta, nil when there is none
// (params may be a typed nil pointer).
func requestMeta(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// requestEra returns the protocol version of a request and whether its
// client declared elicitation-form support. A session that negotiated a
// handshake-era version (initialize) keeps that era whatever a request's
// _meta claims, as go-sdk serves such requests on the legacy path; otherwise
// the per-request _meta of 2026-07-28 decides, falling back to what the
// session learned from server/discover.
func requestEra(req mcp.Request) (version string, form bool) {
	var sess *mcp.InitializeParams
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		sess = ss.InitializeParams()
	}
	if sess != nil && sess.ProtocolVersion != "" && sess.ProtocolVersion < ProtocolModern {
		return sess.ProtocolVersion, sessionForm(sess)
	}
	m := requestMeta(req)
	if v, ok := m[mcp.MetaKeyProtocolVersion].(string); ok {
		version = v
	} else if sess != nil {
		version = sess.ProtocolVersion
	}
	if raw, ok := m[mcp.MetaKeyClientCapabilities]; ok {
		return version, metaForm(raw)
	}
	return version, sessionForm(sess)
}

func sessionForm(ip *mcp.InitializeParams) bool {
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// metaForm reads elicitation-form support from per-request capabilities. A
// bare "elicitation": {} means form support (the specification's
// backwards-compatible reading, which go-sdk leaves as a nil Form); an
// object with only "url" does not.
func metaForm(raw any) bool {
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var caps struct {
		Elicitation map[string]json.RawMessage `json:"elicitation"`
	}
	if json.Unmarshal(b, &caps) != nil || caps.Elicitation == nil {
		return false
	}
	_, form := caps.Elicitation["form"]
	_, url := caps.Elicitation["url"]
	return form || !url
}

// ---- handlers ----

func (s *Server) toolHandler(t *Tool, p *Product) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, ok := CallerFrom(ctx)
		if !ok {
			return nil, errUnauthenticated
		}
		if !c.May(t.Name) {
			return errorResult(Errorf("permission_denied",
				"your role (%s) and token scopes (%s) do not allow %s", c.Role, strings.Join(c.Scopes, ","), t.Name)), nil
		}
		args := req.Params.Arguments
		if err := t.validate(args); err != nil {
			return errorResult(Errorf("invalid_arguments", "%v", err)), nil
		}
		if t.Destructive {
			if res := s.confirm(ctx, c, t, p, req); res != nil {
				return res, nil
			}
		}
		return s.run(ctx, c, t, args)
	}
}

func (s *Server) run(ctx context.Context, c *Caller, t *Tool, args json.RawMessage) (*mcp.CallToolResult, error) {
	out, err := t.handler(ctx, c, args)
	if err != nil {
		return s.failure(t, err), nil
	}
	b, err := t.encode(out)
	if err != nil {
		// The tool ran: say so, with what it returned, rather than a
		// structuredContent clients would refuse.
		s.log.Error("tool result outside its output schema", "tool", t.Name, "error", err)
		text := fmt.Sprintf("%s: %s ran, but its result does not match the tool's declared output schema (a server bug, logged); do not retry it blindly. The result was: %s",
			CodeOutputMismatch, t.Name, b)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}, nil
}

// CodeOutputMismatch is the error code of a tool that ran but whose result
// does not match its declared output schema (a bug in the product).
const CodeOutputMismatch = "output_schema_mismatch"

// encode renders a tool's result as its outputSchema declares it: nil
// slices and maps are sent as [] and {}. The Go type guarantees the rest of
// the shape (types, required members, no others), so the result is checked
// against the schema only when the schema says more than the type can (a
// constraint tag: enum, pattern, lengths, bounds, format). On a mismatch it
// returns the JSON with the error.
func (t *Tool) encode(out any) ([]byte, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	if bytes.Contains(b, []byte("null")) {
		if b, err = fillNulls(t.outputSchema, b); err != nil {
			return nil, fmt.Errorf("re-encoding the result: %w", err)
		}
	}
	if !t.constrainedOutput {
		return b, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return b, fmt.Errorf("decoding the result: %w", err)
	}
	if err := t.output.Validate(v); err != nil {
		return b, err
	}
	return b, nil
}

// failure is the tool result of a handler's (or check's) error: a
// *ToolError as it is, a missing record as not_found, anything else as an
// internal error whose detail only the log sees.
func (s *Server) failure(t *Tool, err error) *mcp.CallToolResult {
	var te *ToolError
	switch {
	case errors.As(err, &te):
		return errorResult(te)
	case errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotFound):
		return errorResult(Errorf("not_found", "%v", err))
	default:
		s.log.Error("tool failed", "tool", t.Name, "error", err)
		return errorResult(Errorf("internal_error", "%s failed; try again later", t.Name))
	}
}

// errorResult is the tool result of a failure: its text starts with the
// code ("not_found: …"), which programs read. It carries no
// structuredContent: that must match the tool's outputSchema, which
// describes success, and clients that listed the tools refuse a result
// whose structured content does not (-32602), hiding the message.
func errorResult(e *ToolError) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: e.Code + ": " + e.Message}},
	}
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	c, ok := CallerFrom(ctx)
	if !ok {
		return nil, errUnauthenticated
	}
	e, params := s.match(uri)
	// A resource the caller may not read is indistinguishable from one
	// that does not exist.
	if e == nil || !c.May(e.res.Tool) {
		return nil, resourceNotFound(c, uri)
	}
	v, err := e.res.Read(ctx, c, uri, params)
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
			return nil, resourceNotFound(c, uri)
		}
		var te *ToolError
		if errors.As(err, &te) {
			if te.Code == "not_found" {
				return nil, resourceNotFound(c, uri)
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: te.Error()}
		}
		s.log.Error("resource read failed", "uri", uri, "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading the resource failed; try again later"}
	}
	if rc, ok := v.(*mcp.ResourceContents); ok {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
	}
	var b []byte
	if raw, ok := v.(json.RawMessage); ok {
		b = raw // already the served JSON (a stored record)
	} else if b, err = json.Marshal(v); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	mime := e.res.MIMEType
	if mime == "" {
		mime = "application/json"
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(b)}}}, nil
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func (s *Server) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	c, ok := CallerFrom(ctx)
	if !ok {
		return nil, errUnauthenticated
	}
	e := s.prompts[req.Params.Name]
	if e == nil || !c.MayAll(e.prompt.Tools) {
		return nil, invalidParams("unknown prompt %q", req.Params.Name)
	}
	args := map[string]string{}
	known := map[string]bool{}
	for _, a := range e.prompt.Arguments {
		known[a.Name] = true
		// Values are taken exactly as sent: " 2026-11-20" is not a date.
		v, present := req.Params.Arguments[a.Name]
		if !present || v == "" {
			if a.Required {
				return nil, invalidParams("prompt %s: missing required argument %q", e.prompt.Name, a.Name)
			}
			continue
		}
		if a.Check != nil {
			if err := a.Check(v); err != nil {
				return nil, invalidParams("prompt %s: argument %q: %v", e.prompt.Name, a.Name, err)
			}
		}
		args[a.Name] = v
	}
	var extra []string
	for k := range req.Params.Arguments {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, invalidParams("prompt %s: unknown argument(s) %s", e.prompt.Name, strings.Join(extra, ", "))
	}
	res, err := e.prompt.Get(ctx, c, args)
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
			return nil, invalidParams("prompt %s: %v", e.prompt.Name, err)
		}
		var te *ToolError
		if errors.As(err, &te) {
			return nil, invalidParams("prompt %s: %s", e.prompt.Name, te.Message)
		}
		s.log.Error("prompt failed", "prompt", e.prompt.Name, "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "building the prompt failed; try again later"}
	}
	return res, nil
}

// maxCompletions is the protocol's cap on completion values.
const maxCompletions = 100

func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	c, ok := CallerFrom(ctx)
	if !ok {
		return nil, errUnauthenticated
	}
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	ref := req.Params.Ref
	var product *Product
	switch ref.Type {
	case "ref/prompt":
		e := s.prompts[ref.Name]
		if e == nil || !c.MayAll(e.prompt.Tools) {
			return empty, nil
		}
		product = e.product
	case "ref/resource":
		for _, e := range s.resources {
			if e.res.Template == ref.URI || e.res.URI == ref.URI {
				if !c.May(e.res.Tool) {
					return empty, nil
				}
				product = e.product
			}
		}
	}
	if product == nil {
		return empty, nil
	}
	answer := product.Complete
	if answer == nil && product.Completer != nil {
		answer = product.Completer.Complete
	}
	if answer == nil {
		return empty, nil
	}
	var ctxArgs map[string]string
	if req.Params.Context != nil {
		ctxArgs = req.Params.Context.Arguments
	}
	vals, err := answer(ctx, c, ref, req.Params.Argument, ctxArgs)
	if err != nil {
		s.log.Error("completion failed", "ref", ref.Name+ref.URI, "error", err)
		return empty, nil
	}
	total := len(vals)
	if len(vals) > maxCompletions {
		vals = vals[:maxCompletions]
	}
	if vals == nil {
		vals = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: total, HasMore: total > len(vals)}}, nil
}

// authFailure is the HTTP status an auth error maps to.
func authFailure(err error) int {
	if errors.Is(err, store.ErrNotFound) {
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}
