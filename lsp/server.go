package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/internal/sidecar"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/lsp/internal/jsonrpc"
)

// DefaultDebounce is how long the server waits after a change before it
// compiles the document, unless Options say otherwise.
const DefaultDebounce = 150 * time.Millisecond

// Options configure a Server.
type Options struct {
	// Debounce is how long the server waits after the last change of a
	// document before it compiles it and publishes diagnostics. Zero
	// publishes at once, before the next message is read.
	Debounce time.Duration
	// SecretNames are secret names to offer in completion, such as the
	// KOBANA_SECRETS an editor passes (in the format of SecretNamesFile).
	// Names only: the server never sees a value.
	SecretNames []string
	// SecretNamesFile, when set, is the file of secret names for every
	// document; otherwise a SecretNamesFile is looked for next to each.
	SecretNamesFile string
	// Policy, when set, says where requests may go (the hosts each secret
	// may be sent to, the egress list): a step whose host is written
	// literally and that the policy refuses is an error.
	Policy *egress.Policy
	// Version is reported to the client as the server's version.
	Version string
	// Log receives what the server cannot report to the editor: a stream
	// that cannot be read. Nil discards it.
	Log io.Writer
}

// Settings are what a client may pass as initializationOptions, in addition
// to Options.
type Settings struct {
	// Secrets are more secret names to offer.
	Secrets []string `json:"secrets"`
	// SecretNamesFile replaces Options.SecretNamesFile.
	SecretNamesFile string `json:"secretNamesFile"`
	// Policy replaces Options.Policy: {"secrets": {"NAME": ["host", …]},
	// "egress": ["host", …]}.
	Policy json.RawMessage `json:"policy"`
}

// ErrNoShutdown is returned by Serve when the stream ended, or the client
// sent exit, without a shutdown request first; the protocol asks the
// process to exit with status 1 then.
var ErrNoShutdown = errors.New("lsp: the client left without a shutdown request")

// Server is a language server for workflow documents. It serves one client
// over one stream: see Serve.
type Server struct {
	opts Options
	conn *jsonrpc.Conn

	mu          sync.Mutex
	state       serverState
	enc         Encoding
	docChanges  bool
	markdown    bool
	roots       []string
	settings    Settings
	pol         *egress.Policy
	docs        map[string]*document
	files       fileCache
	logged      map[string]bool // problems with files already told to the client
	pendingLogs []string        // messages for the client, queued while mu is held
	debouncing  sync.WaitGroup
	publishMu   sync.Mutex // orders diagnostics: one document compiled and published at a time
}

type serverState int

const (
	stateNew serverState = iota
	stateRunning
	stateShutDown
)

// document is an open text document.
type document struct {
	uri     string
	version int
	text    string
	lines   *lineIndex
	// an is the analysis of the current text, nil until needed.
	an *analysis
	// timer is the pending debounced publication.
	timer *time.Timer
	// published is the version whose diagnostics were last sent.
	published int
}

func (d *document) index() *lineIndex {
	if d.lines == nil {
		d.lines = newLineIndex(d.text)
	}
	return d.lines
}

func (d *document) analysis() *analysis {
	if d.an == nil {
		d.an = analyse(d.text)
	}
	return d.an
}

// New returns a Server with the given options.
func New(opts Options) *Server {
	return &Server{opts: opts, enc: UTF16, docs: map[string]*document{}, logged: map[string]bool{}}
}

// Serve speaks the protocol over r and w until the client sends exit or the
// stream ends. It returns nil after an orderly shutdown and exit,
// ErrNoShutdown after an exit (or the end of the stream) without shutdown,
// and the read error when the stream is broken.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	s.conn = jsonrpc.NewConn(r, w)
	defer s.stopTimers()
	for {
		msg, err := s.conn.Read()
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				s.conn.Reply(nil, nil, rpcErr)
				continue
			}
			s.mu.Lock()
			state := s.state
			s.mu.Unlock()
			if errors.Is(err, io.EOF) {
				if state == stateShutDown {
					return nil
				}
				return ErrNoShutdown
			}
			s.logf("reading the client's messages: %v", err)
			return fmt.Errorf("lsp: reading the client's messages: %w", err)
		}
		switch {
		case msg.IsRequest():
			result, rerr := s.call(msg)
			if err := s.conn.Reply(msg.ID, result, rerr); err != nil {
				return fmt.Errorf("lsp: writing to the client: %w", err)
			}
		case msg.IsNotification():
			if msg.Method == "exit" {
				s.mu.Lock()
				state := s.state
				s.mu.Unlock()
				if state == stateShutDown {
					return nil
				}
				return ErrNoShutdown
			}
			s.notification(msg)
		}
		// Responses to requests of ours: the server sends none.
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "validate-workflow lsp: "+format+"\n", args...)
	}
}

// stopTimers cancels pending publications and waits for running ones.
func (s *Server) stopTimers() {
	s.mu.Lock()
	for _, d := range s.docs {
		s.cancelTimer(d)
	}
	s.mu.Unlock()
	s.debouncing.Wait()
}

func (s *Server) cancelTimer(d *document) {
	if d.timer != nil && d.timer.Stop() {
		s.debouncing.Done()
	}
	d.timer = nil
}

// call answers a request. A panic in a handler answers an internal error
// instead of ending the session.
func (s *Server) call(msg *jsonrpc.Message) (result any, rerr *jsonrpc.Error) {
	defer func() {
		if p := recover(); p != nil {
			s.logf("panic serving %s: %v\n%s", msg.Method, p, debug.Stack())
			result, rerr = nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error serving %s: %v", msg.Method, p)
		}
	}()
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case msg.Method == "initialize":
		if state != stateNew {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "initialize was already received")
		}
		return s.initialize(msg.Params)
	case state == stateNew:
		return nil, jsonrpc.Errorf(jsonrpc.CodeServerNotInitialized, "the server is not initialized: send initialize first")
	case state == stateShutDown:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "the server is shut down: only exit is accepted")
	}
	switch msg.Method {
	case "shutdown":
		s.stopTimers()
		s.mu.Lock()
		s.state = stateShutDown
		s.mu.Unlock()
		return nil, nil
	case "textDocument/completion":
		var p textDocumentPositionParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return s.completion(p), nil
	case "textDocument/hover":
		var p textDocumentPositionParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return s.hover(p), nil
	case "textDocument/definition":
		var p textDocumentPositionParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return s.definition(p), nil
	case "textDocument/codeAction":
		var p codeActionParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return s.codeActions(p), nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not supported", msg.Method)
}

func decodeParams(raw json.RawMessage, v any) *jsonrpc.Error {
	if len(raw) == 0 {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "params are missing")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

func (s *Server) initialize(raw json.RawMessage) (any, *jsonrpc.Error) {
	var p initializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	var offers []string
	if p.Capabilities.General != nil {
		offers = p.Capabilities.General.PositionEncodings
	}
	legacy := len(offers) == 0 && len(p.Capabilities.OffsetEncoding) > 0
	if legacy {
		offers = p.Capabilities.OffsetEncoding
	}
	var settings Settings
	if len(p.InitializationOptions) > 0 && string(p.InitializationOptions) != "null" {
		if err := json.Unmarshal(p.InitializationOptions, &settings); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "initializationOptions: %v; expected {\"secrets\": [names], \"secretNamesFile\": path, \"policy\": {…}}", err)
		}
		if len(settings.Policy) > 0 && string(settings.Policy) != "null" {
			pol, err := egress.ParsePolicy(settings.Policy)
			if err != nil {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "initializationOptions.policy: %v", err)
			}
			s.mu.Lock()
			s.pol = pol
			s.mu.Unlock()
		}
		for _, n := range settings.Secrets {
			if !lang.IsName(n) {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "initializationOptions.secrets: %q is not a secret name (letters, digits, _ or -)", n)
			}
		}
	}
	var roots []string
	for _, f := range p.WorkspaceFolders {
		if path, ok := filePath(f.URI); ok {
			roots = append(roots, path)
		}
	}
	if len(roots) == 0 && p.RootURI != nil {
		if path, ok := filePath(*p.RootURI); ok {
			roots = append(roots, path)
		}
	}
	if len(roots) == 0 && p.RootPath != nil && *p.RootPath != "" {
		roots = append(roots, filepath.Clean(*p.RootPath))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = stateRunning
	s.enc = negotiateEncoding(offers)
	s.roots = roots
	s.settings = settings
	if w := p.Capabilities.Workspace; w != nil && w.WorkspaceEdit != nil {
		s.docChanges = w.WorkspaceEdit.DocumentChanges
	}
	if td := p.Capabilities.TextDocument; td != nil && td.Hover != nil {
		s.markdown = slices.Contains(td.Hover.ContentFormat, "markdown")
	}
	res := initializeResult{
		Capabilities: serverCapabilities{
			PositionEncoding:   string(s.enc),
			TextDocumentSync:   textDocumentSync{OpenClose: true, Change: syncIncremental},
			CompletionProvider: completionOptions{TriggerCharacters: []string{".", "{"}},
			HoverProvider:      true,
			DefinitionProvider: true,
			CodeActionProvider: codeActionOptions{CodeActionKinds: []string{"quickfix"}},
		},
		ServerInfo: serverInfo{Name: "validate-workflow", Version: s.opts.Version},
	}
	if legacy {
		res.OffsetEncoding = string(s.enc)
	}
	return res, nil
}

// filePath returns the local path of a file: URI.
func filePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	path := u.Path
	if len(path) >= 3 && path[0] == '/' && path[2] == ':' {
		path = path[1:] // file:///C:/… on Windows
	}
	return filepath.FromSlash(path), true
}

func (s *Server) notification(msg *jsonrpc.Message) {
	defer func() {
		if p := recover(); p != nil {
			s.logf("panic handling %s: %v\n%s", msg.Method, p, debug.Stack())
		}
	}()
	s.mu.Lock()
	running := s.state == stateRunning
	s.mu.Unlock()
	if !running {
		return // before initialize, and after shutdown, notifications are dropped
	}
	switch msg.Method {
	case "textDocument/didOpen":
		var p didOpenParams
		if decodeParams(msg.Params, &p) != nil {
			return
		}
		s.mu.Lock()
		if d := s.docs[p.TextDocument.URI]; d != nil {
			s.cancelTimer(d)
		}
		s.docs[p.TextDocument.URI] = &document{uri: p.TextDocument.URI, version: p.TextDocument.Version, text: p.TextDocument.Text, published: -1 << 31}
		s.mu.Unlock()
		s.publish(p.TextDocument.URI)
	case "textDocument/didChange":
		var p didChangeParams
		if decodeParams(msg.Params, &p) != nil {
			return
		}
		s.change(p)
	case "textDocument/didClose":
		var p didCloseParams
		if decodeParams(msg.Params, &p) != nil {
			return
		}
		s.mu.Lock()
		d := s.docs[p.TextDocument.URI]
		if d != nil {
			s.cancelTimer(d)
			delete(s.docs, p.TextDocument.URI)
		}
		s.mu.Unlock()
		if d != nil {
			s.publishMu.Lock()
			s.conn.Notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{URI: d.uri, Diagnostics: []Diagnostic{}})
			s.publishMu.Unlock()
		}
	}
}

// change applies a didChange and schedules the diagnostics.
func (s *Server) change(p didChangeParams) {
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		s.mu.Unlock()
		s.logMessage(msgWarning, fmt.Sprintf("a change to %s, which is not open, is ignored", p.TextDocument.URI))
		return
	}
	for _, c := range p.ContentChanges {
		if c.Range == nil {
			d.text = c.Text
		} else {
			li := d.index()
			start, end := li.offset(c.Range.Start, s.enc), li.offset(c.Range.End, s.enc)
			if end < start {
				start, end = end, start
			}
			d.text = d.text[:start] + c.Text + d.text[end:]
		}
		d.lines = nil
	}
	d.an = nil
	d.version = p.TextDocument.Version
	debounce := s.opts.Debounce
	if debounce > 0 {
		s.cancelTimer(d)
		s.debouncing.Add(1)
		uri := d.uri
		d.timer = time.AfterFunc(debounce, func() {
			defer s.debouncing.Done()
			s.publish(uri)
		})
	}
	s.mu.Unlock()
	if debounce <= 0 {
		s.publish(p.TextDocument.URI)
	}
}

// publish compiles the current text of uri and sends its diagnostics,
// unless they were already sent for this version.
func (s *Server) publish(uri string) {
	s.publishMu.Lock()
	defer s.publishMu.Unlock()
	s.mu.Lock()
	d := s.docs[uri]
	if d == nil || d.published == d.version {
		s.mu.Unlock()
		return
	}
	if d.timer != nil {
		d.timer = nil
	}
	version := d.version
	text := d.text
	an := d.analysis()
	enc := s.enc
	li := d.index()
	names := s.secretNamesLocked(uri)
	d.published = version
	s.mu.Unlock()
	s.flushLogs()
	diags := s.diagnostics(text, an, li, enc, names)
	s.conn.Notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{URI: uri, Version: &version, Diagnostics: diags})
}

// policy is the policy documents are linted with: the client's, else the
// Options'.
func (s *Server) policy() *egress.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pol != nil {
		return s.pol
	}
	return s.opts.Policy
}

// diagnostics converts the compiler's diagnostics of the document. When
// secret names or a policy are known, the document is linted with them
// (compile.Options): a reference to a secret not among the names, and a
// step whose literal host the policy refuses, are errors too.
func (s *Server) diagnostics(text string, an *analysis, li *lineIndex, enc Encoding, names []string) []Diagnostic {
	ds := an.diags
	if len(names) > 0 || s.policy() != nil {
		opts := compile.Options{Policy: s.policy()}
		if len(names) > 0 {
			opts.SecretNames = names
		}
		_, ds = compile.Compile([]byte(text), opts)
	}
	out := make([]Diagnostic, 0, len(ds))
	for _, d := range ds {
		ld := Diagnostic{
			Range:    li.rng(d.Range.Start.Byte, d.Range.End.Byte, enc),
			Severity: severityError,
			Code:     d.Code,
			Source:   "kobana",
			Message:  d.Message,
		}
		if d.Severity == compile.SeverityWarning {
			ld.Severity = severityWarning
		}
		if _, ok := lint.RuleFor(d.Code); ok {
			ld.CodeDescription = &codeDescription{Href: lint.HelpURI + d.Code}
		}
		if d.Suggestion != "" {
			ld.Data = &diagnosticData{Suggestion: d.Suggestion}
		}
		out = append(out, ld)
	}
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line - b.Range.Start.Line
		}
		return a.Range.Start.Character - b.Range.Start.Character
	})
	return out
}

// msgWarning is the window/logMessage type of a warning.
const msgWarning = 2

// logMessage tells the client something about the server's own work.
func (s *Server) logMessage(typ int, text string) {
	s.conn.Notify("window/logMessage", struct {
		Type    int    `json:"type"`
		Message string `json:"message"`
	}{typ, text})
}

// secretNamesLocked returns the secret names known for the document uri:
// the options', the client's and those of the secret names file. s.mu is
// held.
func (s *Server) secretNamesLocked(uri string) []string {
	var names []string
	names = append(names, s.opts.SecretNames...)
	names = append(names, s.settings.Secrets...)
	file := s.settings.SecretNamesFile
	if file != "" && !filepath.IsAbs(file) && len(s.roots) > 0 {
		file = filepath.Join(s.roots[0], file) // the client's path is the workspace's
	}
	if file == "" {
		file = s.opts.SecretNamesFile
	}
	if file != "" {
		names = append(names, s.readSecretNames(file, true)...)
	} else if path, ok := filePath(uri); ok {
		for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
			if found := s.readSecretNames(filepath.Join(dir, SecretNamesFile), false); found != nil {
				names = append(names, found...)
				break
			}
			if s.isRoot(dir) || filepath.Dir(dir) == dir {
				break
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// isRoot reports whether dir is a workspace root.
func (s *Server) isRoot(dir string) bool {
	for _, r := range s.roots {
		if filepath.Clean(r) == dir {
			return true
		}
	}
	return false
}

// readSecretNames reads a secret names file, queueing a message for the
// client about each problem once. It returns nil when the file does not
// exist. s.mu is held.
func (s *Server) readSecretNames(path string, required bool) []string {
	v, found, changed, err := s.files.load(path, parseSecretNamesFile)
	if !found {
		if required && !s.logged[path] {
			s.logged[path] = true
			s.pendingLogs = append(s.pendingLogs, fmt.Sprintf("secret names file %s cannot be read", path))
		}
		return nil
	}
	if err != nil {
		if changed {
			s.pendingLogs = append(s.pendingLogs, fmt.Sprintf("secret names file %s: %v", path, err))
		}
		return []string{}
	}
	sn := v.(*secretNames)
	if changed {
		for _, p := range sn.problems {
			s.pendingLogs = append(s.pendingLogs, fmt.Sprintf("secret names file %s: %s", path, p))
		}
	}
	if sn.names == nil {
		return []string{}
	}
	return sn.names
}

// examplesFor returns the example responses of the document uri, or nil.
func (s *Server) examplesFor(uri string) *examples {
	path, ok := filePath(uri)
	if !ok {
		return nil
	}
	for _, name := range sidecarNames(path) {
		v, found, changed, err := s.files.load(name, func(b []byte) (any, error) { return sidecar.ParseResponses(b) })
		if !found {
			continue
		}
		if err != nil {
			if changed {
				s.logMessage(msgWarning, fmt.Sprintf("example responses %s: %v", name, err))
			}
			return nil
		}
		return &examples{file: filepath.Base(name), steps: v.(map[int]*exampleResponse)}
	}
	return nil
}

// snapshot returns a copy of the document uri and the session's encoding,
// with the document's analysis when analysed is set; the document is nil when
// it is not open.
func (s *Server) snapshot(uri string, analysed bool) (*document, *analysis, Encoding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[uri]
	if d == nil {
		return nil, nil, s.enc
	}
	copy := &document{uri: d.uri, version: d.version, text: d.text, lines: d.index()}
	var an *analysis
	if analysed {
		an = d.analysis()
	}
	return copy, an, s.enc
}

// flushLogs sends the messages queued while s.mu was held.
func (s *Server) flushLogs() {
	s.mu.Lock()
	logs := s.pendingLogs
	s.pendingLogs = nil
	s.mu.Unlock()
	for _, l := range logs {
		s.logMessage(msgWarning, l)
	}
}
