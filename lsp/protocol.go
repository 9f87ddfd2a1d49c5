package lsp

import "encoding/json"

// The subset of the Language Server Protocol 3.17 this server speaks. Field
// names follow the specification.

// Position is a zero-based line and a character offset in that line, counted
// in the units of the negotiated position encoding.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open range of positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Diagnostic severities.
const (
	severityError   = 1
	severityWarning = 2
)

// Diagnostic is a problem shown in the editor.
type Diagnostic struct {
	Range           Range            `json:"range"`
	Severity        int              `json:"severity"`
	Code            string           `json:"code,omitempty"`
	CodeDescription *codeDescription `json:"codeDescription,omitempty"`
	Source          string           `json:"source"`
	Message         string           `json:"message"`
	// Data carries the suggested replacement, when there is one, back to
	// codeAction requests.
	Data *diagnosticData `json:"data,omitempty"`
}

type codeDescription struct {
	Href string `json:"href"`
}

type diagnosticData struct {
	Suggestion string `json:"suggestion"`
}

// PublishDiagnosticsParams is the parameter of textDocument/publishDiagnostics.
type PublishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type contentChange struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                 `json:"contentChanges"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

type textDocumentPositionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

type initializeParams struct {
	RootURI          *string            `json:"rootUri"`
	RootPath         *string            `json:"rootPath"`
	WorkspaceFolders []workspaceFolder  `json:"workspaceFolders"`
	Capabilities     clientCapabilities `json:"capabilities"`
	// InitializationOptions are this server's own settings (see Settings).
	InitializationOptions json.RawMessage `json:"initializationOptions"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type clientCapabilities struct {
	General *struct {
		PositionEncodings []string `json:"positionEncodings"`
	} `json:"general"`
	// OffsetEncoding is the extension clangd introduced before LSP 3.17;
	// older Neovim clients may send it.
	OffsetEncoding []string `json:"offsetEncoding"`
	Workspace      *struct {
		WorkspaceEdit *struct {
			DocumentChanges bool `json:"documentChanges"`
		} `json:"workspaceEdit"`
	} `json:"workspace"`
	TextDocument *struct {
		Hover *struct {
			ContentFormat []string `json:"contentFormat"`
		} `json:"hover"`
	} `json:"textDocument"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   serverInfo         `json:"serverInfo"`
	// OffsetEncoding answers a client that asked with the clangd extension.
	OffsetEncoding string `json:"offsetEncoding,omitempty"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type serverCapabilities struct {
	PositionEncoding   string            `json:"positionEncoding"`
	TextDocumentSync   textDocumentSync  `json:"textDocumentSync"`
	CompletionProvider completionOptions `json:"completionProvider"`
	HoverProvider      bool              `json:"hoverProvider"`
	DefinitionProvider bool              `json:"definitionProvider"`
	CodeActionProvider codeActionOptions `json:"codeActionProvider"`
}

// Text document sync kinds.
const syncIncremental = 2

type textDocumentSync struct {
	OpenClose bool `json:"openClose"`
	Change    int  `json:"change"`
}

type completionOptions struct {
	TriggerCharacters []string `json:"triggerCharacters"`
}

type codeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
}

// Completion item kinds used here.
const (
	kindField     = 5
	kindVariable  = 6
	kindModule    = 9
	kindProperty  = 10
	kindValue     = 12
	kindConstant  = 21
	kindReference = 18
)

// CompletionItem is one suggestion.
type CompletionItem struct {
	Label         string         `json:"label"`
	Kind          int            `json:"kind,omitempty"`
	Detail        string         `json:"detail,omitempty"`
	Documentation *markupContent `json:"documentation,omitempty"`
	SortText      string         `json:"sortText,omitempty"`
	FilterText    string         `json:"filterText,omitempty"`
	TextEdit      *TextEdit      `json:"textEdit,omitempty"`
}

// CompletionList is the answer to textDocument/completion.
type CompletionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []CompletionItem `json:"items"`
}

type markupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Hover is the answer to textDocument/hover.
type Hover struct {
	Contents markupContent `json:"contents"`
	Range    *Range        `json:"range,omitempty"`
}

// TextEdit replaces a range with new text.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit is a set of edits, in either of the two forms the
// specification allows.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []textDocumentEdit    `json:"documentChanges,omitempty"`
}

type textDocumentEdit struct {
	TextDocument versionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                      `json:"edits"`
}

type codeActionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
	Context      struct {
		Only []string `json:"only"`
	} `json:"context"`
}

// CodeAction is a quick fix.
type CodeAction struct {
	Title       string         `json:"title"`
	Kind        string         `json:"kind"`
	Diagnostics []Diagnostic   `json:"diagnostics,omitempty"`
	IsPreferred bool           `json:"isPreferred,omitempty"`
	Edit        *WorkspaceEdit `json:"edit,omitempty"`
}
