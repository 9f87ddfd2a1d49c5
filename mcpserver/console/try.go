package console

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/kobana/workflow/mcpserver/inboxmcp"
)

// maxTryDocument bounds the document the trial page takes: the size
// workflows_plan accepts, and room for the rest of the form.
const maxTryDocument = 1 << 20

var emailIDRe = regexp.MustCompile(`^eml_[A-Za-z0-9_-]{1,64}$`)

// trial is the workflow trial page: an agent's answer checked and planned
// (a dry run: nothing is sent) against an e-mail of the workspace, through
// the workflows_plan tool, as an MCP client would.
type trial struct {
	Document string
	EmailID  string
	// Ran reports whether a document was tried (a POST).
	Ran bool
	// Problem says why the trial could not be made (a bad e-mail id, an
	// e-mail of another workspace); empty when it was.
	Problem     string
	Valid       bool
	Diagnostics []trialDiagnostic
	Steps       []trialStep
	Summary     struct{ Send, Fail, Skip int }
	// Text is the plan as kobana plan prints it.
	Text string
}

// trialDiagnostic is a diagnostic with the line of the document it is on
// and a caret under its column.
type trialDiagnostic struct {
	Severity, Code, Message, Pointer string
	Line, Column                     int
	Source, Caret                    string
}

type trialStep struct {
	Index           int
	Label, Outcome  string
	Reason, Message string
	Method, URL     string
	DependsOn       []int
	Unknown         []string
	ExpectedStatus  int
}

// try shows the trial form, its e-mail taken from ?email_id= (the e-mail
// page links here).
func (c *Console) try(w http.ResponseWriter, r *http.Request, s *session) {
	t := trial{EmailID: r.URL.Query().Get("email_id")}
	if t.EmailID != "" && !emailIDRe.MatchString(t.EmailID) {
		t.EmailID = ""
	}
	c.render(w, r, s, http.StatusOK, "try", t)
}

// tryBody reads the trial form with room for a whole document before the
// session check reads its CSRF token from it.
func tryBody(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxTryDocument+64<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "The document is larger than 1 MiB, the limit of an agent's answer.", http.StatusRequestEntityTooLarge)
			return
		}
		h(w, r)
	}
}

// tryRun plans the posted document.
func (c *Console) tryRun(w http.ResponseWriter, r *http.Request, s *session) {
	t := trial{Document: r.PostFormValue("document"), EmailID: strings.TrimSpace(r.PostFormValue("email_id")), Ran: true}
	code := http.StatusOK
	switch {
	case strings.TrimSpace(t.Document) == "":
		t.Problem, code = "Paste an agent's answer to try: {\"result\": …, \"workflow\": [steps]}.", http.StatusBadRequest
	case t.EmailID != "" && !emailIDRe.MatchString(t.EmailID):
		t.Problem, code = "An e-mail id looks like eml_… (see the e-mails list).", http.StatusBadRequest
	default:
		var out inboxmcp.Planned
		err := c.call(r, s, inboxmcp.ToolWorkflowsPlan, inboxmcp.PlanArg{Document: t.Document, EmailID: t.EmailID}, &out)
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
		if err := t.read(out); err != nil {
			c.log.ErrorContext(r.Context(), "console: reading a plan", "error", err)
			c.message(w, r, s, http.StatusInternalServerError, "The plan could not be shown.")
			return
		}
	}
	c.render(w, r, s, code, "try", t)
}

// read fills t from the tool's answer.
func (t *trial) read(out inboxmcp.Planned) error {
	var p struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity string `json:"severity"`
			Code     string `json:"code"`
			Message  string `json:"message"`
			Pointer  string `json:"pointer"`
			Range    struct {
				Start struct {
					Line   int `json:"line"`
					Column int `json:"column"`
				} `json:"start"`
			} `json:"range"`
		} `json:"diagnostics"`
		Steps []struct {
			Index          int      `json:"index"`
			Label          string   `json:"label"`
			Outcome        string   `json:"outcome"`
			Reason         string   `json:"reason"`
			Message        string   `json:"message"`
			DependsOn      []int    `json:"depends_on"`
			Unknown        []string `json:"unknown"`
			ExpectedStatus int      `json:"expected_status"`
			Request        *struct {
				Method string `json:"method"`
				URL    string `json:"url"`
			} `json:"request"`
		} `json:"steps"`
		Summary struct {
			Send int `json:"send"`
			Fail int `json:"fail"`
			Skip int `json:"skip"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out.Plan, &p); err != nil {
		return err
	}
	t.Valid, t.Text = p.Valid, out.Text
	t.Summary.Send, t.Summary.Fail, t.Summary.Skip = p.Summary.Send, p.Summary.Fail, p.Summary.Skip
	lines := strings.Split(t.Document, "\n")
	for _, d := range p.Diagnostics {
		td := trialDiagnostic{Severity: d.Severity, Code: d.Code, Message: d.Message, Pointer: d.Pointer,
			Line: d.Range.Start.Line, Column: d.Range.Start.Column}
		if td.Line >= 1 && td.Line <= len(lines) {
			td.Source, td.Caret = caretLine(strings.TrimSuffix(lines[td.Line-1], "\r"), td.Column)
		}
		t.Diagnostics = append(t.Diagnostics, td)
	}
	for _, s := range p.Steps {
		ts := trialStep{Index: s.Index, Label: s.Label, Outcome: s.Outcome, Reason: s.Reason, Message: s.Message,
			DependsOn: s.DependsOn, Unknown: s.Unknown, ExpectedStatus: s.ExpectedStatus}
		if s.Request != nil {
			ts.Method, ts.URL = s.Request.Method, s.Request.URL
		}
		t.Steps = append(t.Steps, ts)
	}
	return nil
}

// caretLine returns a document's line, shortened around column (counted
// in characters, from 1) when it is long, and a caret under that column.
// Tabs stay tabs in the caret's line, so the caret lines up.
func caretLine(line string, column int) (source, caret string) {
	const width = 120
	runes := []rune(line)
	if !utf8.ValidString(line) {
		runes = []rune(strings.ToValidUTF8(line, "\uFFFD"))
	}
	col := max(column-1, 0)
	col = min(col, len(runes))
	start := 0
	if len(runes) > width && col > width/2 {
		start = min(col-width/2, len(runes)-width)
	}
	end := min(start+width, len(runes))
	var pad strings.Builder
	for _, r := range runes[start:col] {
		if r == '\t' {
			pad.WriteRune('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	source = string(runes[start:end])
	if start > 0 {
		source, caret = "…"+source, " "
	}
	if end < len(runes) {
		source += "…"
	}
	return source, caret + pad.String() + "^"
}
