package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/runrecord"
)

// MaxShownBody caps the bytes of a request or response body a run's page
// shows; the rest is cut on the server and said so.
const MaxShownBody = 64 << 10

// segment is a piece of recorded text: plain, or a steps.N reference
// linked to step N of the same run.
type segment struct {
	Text string
	Step int // -1: plain text
}

var stepRef = regexp.MustCompile(`steps\.(\d+)`)

// segments splits s at its steps.N references to steps of the run (n
// steps); other text, and references to steps it has not, stay plain.
func segments(s string, n int) []segment {
	var out []segment
	last := 0
	for _, m := range stepRef.FindAllStringSubmatchIndex(s, -1) {
		i, err := strconv.Atoi(s[m[2]:m[3]])
		if err != nil || i >= n {
			continue
		}
		if m[0] > last {
			out = append(out, segment{Text: s[last:m[0]], Step: -1})
		}
		out = append(out, segment{Text: s[m[0]:m[1]], Step: i})
		last = m[1]
	}
	if last < len(s) {
		out = append(out, segment{Text: s[last:], Step: -1})
	}
	return out
}

// shownBody is a recorded body as a page shows it: indented JSON (a JSON
// string's text as it is), cut at MaxShownBody.
type shownBody struct {
	Segments []segment
	Cut      int // bytes left out; 0 when whole
	// Rest is the URL of the page with this body whole, when it is cut.
	Rest string
}

// showBody shows a body cut at MaxShownBody, or whole.
func showBody(raw json.RawMessage, steps int, whole bool) *shownBody {
	if len(raw) == 0 {
		return nil
	}
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	} else {
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") == nil {
			text = b.String()
		}
	}
	out := &shownBody{}
	if len(text) > MaxShownBody && !whole {
		cut := MaxShownBody
		for cut > 0 && !validStart(text[cut]) {
			cut--
		}
		out.Cut, text = len(text)-cut, text[:cut]
	}
	out.Segments = segments(text, steps)
	return out
}

// validStart says whether b can begin a UTF-8 sequence.
func validStart(b byte) bool { return b&0xC0 != 0x80 }

type shownHeader struct {
	Name  string
	Value []segment
}

func showHeaders(h map[string]string, steps int) []shownHeader {
	out := make([]shownHeader, 0, len(h))
	for k, v := range h {
		out = append(out, shownHeader{k, segments(v, steps)})
	}
	slices.SortFunc(out, func(a, b shownHeader) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type shownStep struct {
	runrecord.Step
	URL             []segment
	RequestHeaders  []shownHeader
	RequestBody     *shownBody
	RequestForm     *shownBody
	ResponseHeaders []shownHeader
	ResponseBody    *shownBody
	IdempotencyKey  string
	ErrorText       []segment
	// Resume says what resuming the run does with this step, for a step
	// whose outcome is unknown; empty for the others.
	Resume string
}

type workflowRunData struct {
	Run   inbox.WorkflowRun
	Steps []shownStep
}

// live: a workflow run's page refreshes itself while the run sends its
// steps.
func (d workflowRunData) live() bool { return d.Run.Status == runrecord.RunRunning }

// resumeNote says whether an unknown step is safe to send again.
func resumeNote(s runrecord.Step, key string) string {
	switch {
	case s.State != runrecord.Unknown && s.State != runrecord.Sending:
		return ""
	case s.PartialUpload:
		return "Safe to resume: the request was cut before its body ended, so the receiver cannot have taken it as complete."
	case key != "":
		return "Resuming sends it again with the same " + runrecord.HeaderStepID + " and Idempotency-Key: safe when the receiver honours the key; otherwise check the receiver first."
	case s.Request != nil && (s.Request.Method == http.MethodGet || s.Request.Method == http.MethodHead || s.Request.Method == http.MethodPut || s.Request.Method == http.MethodDelete):
		return "Resuming sends it again; its method (" + s.Request.Method + ") is idempotent."
	}
	return "Not known to be safe: the request may have been received, and it carries no Idempotency-Key. Check the receiver before resuming."
}

func (c *Console) workflowRun(w http.ResponseWriter, r *http.Request, s *session) {
	var run inbox.WorkflowRun
	if err := c.call(r, s, inboxmcp.ToolWorkflowRunsGet, inboxmcp.WorkflowRunIDArg{ID: r.PathValue("id")}, &run); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := workflowRunData{Run: run}
	n := len(run.Steps)
	// ?whole=STEP.PART shows that body uncut ("load the rest").
	whole := r.URL.Query().Get("whole")
	show := func(raw json.RawMessage, step int, part string) *shownBody {
		key := strconv.Itoa(step) + "." + part
		b := showBody(raw, n, whole == key)
		if b != nil && b.Cut > 0 {
			b.Rest = Prefix + "workflow-runs/" + url.PathEscape(run.ID) + "?" + url.Values{"whole": {key}}.Encode() + "#step-" + strconv.Itoa(step)
		}
		return b
	}
	for _, st := range run.Steps {
		sh := shownStep{Step: st}
		if q := st.Request; q != nil {
			sh.URL = segments(q.URL, n)
			sh.RequestHeaders = showHeaders(q.Headers, n)
			sh.RequestBody = show(q.Body, st.Index, "request")
			sh.RequestForm = show(q.Form, st.Index, "form")
			for k, v := range q.Headers {
				if strings.EqualFold(k, runrecord.HeaderIdempotencyKey) {
					sh.IdempotencyKey = v
				}
			}
		}
		if p := st.Response; p != nil {
			sh.ResponseHeaders = showHeaders(p.Headers, n)
			sh.ResponseBody = show(p.Body, st.Index, "response")
		}
		sh.Resume = resumeNote(st, sh.IdempotencyKey)
		if st.Error != "" {
			sh.ErrorText = segments(st.Error, n)
		}
		d.Steps = append(d.Steps, sh)
	}
	c.render(w, r, s, http.StatusOK, "workflowrun", d)
}

type agentRunData struct {
	Run    inbox.AgentRun
	Answer string
	// Repairs are the rounds with their diagnostics decoded.
	Repairs []repairRound
	Cost    string
}

type repairRound struct {
	inbox.Repair
	Diagnostics []diagnostic
}

// diagnostic is the part of a compile diagnostic the page shows.
type diagnostic struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Pointer  string `json:"pointer"`
	Range    struct {
		Start struct {
			Line   int `json:"line"`
			Column int `json:"column"`
		} `json:"start"`
	} `json:"range"`
}

// decodeDiagnostics reads compile's JSON diagnostics (a list, or an
// object with a diagnostics list); nil when they are neither.
func decodeDiagnostics(raw json.RawMessage) []diagnostic {
	var list []diagnostic
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var doc struct {
		Diagnostics []diagnostic `json:"diagnostics"`
	}
	if json.Unmarshal(raw, &doc) == nil {
		return doc.Diagnostics
	}
	return nil
}

func (c *Console) agentRun(w http.ResponseWriter, r *http.Request, s *session) {
	var run inbox.AgentRun
	if err := c.call(r, s, inboxmcp.ToolAgentRunsGet, inboxmcp.AgentRunIDArg{ID: r.PathValue("id")}, &run); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := agentRunData{Run: run, Cost: strconv.FormatFloat(run.CostUSD, 'f', -1, 64)}
	if len(run.Output) > 0 {
		d.Answer = string(run.Output)
	}
	for _, rp := range run.Repairs {
		d.Repairs = append(d.Repairs, repairRound{Repair: rp, Diagnostics: decodeDiagnostics(rp.Diagnostics)})
	}
	c.render(w, r, s, http.StatusOK, "agentrun", d)
}
