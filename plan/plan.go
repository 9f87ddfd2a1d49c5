package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/sidecar"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// Version is the version of the JSON form of a Plan; it changes only when a
// field changes meaning or goes away.
const Version = 1

// Inputs are what a plan is made with. The zero value plans with nothing
// but the document: every secret assumed to exist, facts, responses and
// attachments shown as references.
type Inputs struct {
	// SecretNames are the workspace's secret names; a step that references
	// another name fails. Nil means the names are not known, and every
	// secret is assumed to exist.
	SecretNames []string
	// Facts are the run's kobana.* facts, without the prefix. Nil shows
	// each fact as its reference; otherwise a fact missing here fails the
	// step, as in a run. kobana.now is Now.
	Facts map[string]string
	// PendingFacts are facts a run will have but whose values are known
	// only then (a run's own id, say): with Facts given, these are shown
	// as their references instead of failing their steps.
	PendingFacts []string
	// Email is the triggering e-mail's attachments (an *eml.Message); nil
	// shows each attachment as its reference.
	Email resolve.Attachments
	// Responses are example responses by step index: a step that uses the
	// response of step N reads it from here, and step N counts as failed
	// when its example's status is not the one it expects.
	Responses map[int]*Response
	// Guard decides which addresses may be reached; nil is the deny-list
	// only.
	Guard *guard.Guard
	// Policy says where requests may go (each secret's destinations, the
	// egress list): a step whose host is known before the run and that the
	// policy refuses would fail before sending, as the executor refuses it
	// (runrecord.ReasonDestination). nil refuses nothing.
	Policy *egress.Policy
	// Lookup, when set, resolves a host name written in a URL so that the
	// guard can judge its addresses. Nil resolves nothing: a name is
	// judged when the request is sent.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Now is kobana.now; the zero value is the time Make is called.
	Now time.Time
	// StepID, when set, is the identity each step's request will carry
	// (runrecord.Journal.Identity: the Inbox's runs have one, kobana run's
	// none), shown in its platform headers as the run sends them; nil
	// shows none.
	StepID func(index int) string
}

// Response is an example response of a step: Status (0 for the status
// the step expects), Headers, and Body as JSON — a JSON string is the body
// text as is; any other value is a JSON body (application/json unless
// Headers set a content type).
type Response = sidecar.Response

// Plan is the dry run of a document.
type Plan struct {
	Version int `json:"version"`
	// Valid reports whether the document compiles; an invalid one sends
	// nothing and has no Steps.
	Valid       bool                `json:"valid"`
	Diagnostics compile.Diagnostics `json:"diagnostics"`
	Inputs      Given               `json:"inputs"`
	Steps       []Step              `json:"steps"`
	Summary     Summary             `json:"summary"`
}

// Given says what the plan was made with.
type Given struct {
	// SecretNames are the names given; nil when not known.
	SecretNames []string `json:"secret_names"`
	// Facts are the facts given, with kobana.now; nil when none were.
	Facts map[string]string `json:"facts"`
	// PendingFacts are the facts shown as references, their values known
	// only when the run starts.
	PendingFacts []string `json:"pending_facts,omitempty"`
	// Attachments are the e-mail's attachments; nil without an e-mail.
	Attachments []Attachment `json:"attachments"`
	// Responses are the steps with an example response.
	Responses []int `json:"responses"`
	// Now is kobana.now.
	Now string `json:"now"`
	// Lookup says whether host names were resolved.
	Lookup bool `json:"lookup"`
}

// Summary counts the steps by outcome.
type Summary struct {
	Send int `json:"send"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// Outcomes of a step.
const (
	// Send: the request would be sent.
	Send = "send"
	// Fail: the step fails before anything is sent.
	Fail = "fail"
	// Skip: the step uses the response of a step that failed or was
	// skipped, and is never sent.
	Skip = "skip"
)

// Step is the plan of one step.
type Step struct {
	Index int    `json:"index"`
	Label string `json:"label,omitempty"`
	// Outcome is Send, Fail or Skip.
	Outcome string `json:"outcome"`
	// Reason classifies why a step fails or is skipped, in the run record's
	// words (package runrecord: the executor's reasons and the finer causes
	// of a reference, such as runrecord.ReasonMissingSecret), or why a sent
	// step counts as failed for the steps after it (runrecord.ReasonStatus).
	Reason runrecord.Reason `json:"reason,omitempty"`
	// Message says why, for a person.
	Message string `json:"message,omitempty"`
	// DependsOn are the earlier steps whose responses the step uses.
	DependsOn []int `json:"depends_on,omitempty"`
	// Request is what would be sent; nil when the step fails or is skipped
	// before it could be rendered.
	Request *Request `json:"request,omitempty"`
	// ExpectedStatus is the status that counts as success; 0 is any 2xx.
	ExpectedStatus int `json:"expected_status,omitempty"`
	// Example is the example response the plan assumes the step receives.
	Example *Example `json:"example,omitempty"`
	// Unknown are the references whose values are known only when the
	// step runs, in the order they appear.
	Unknown []string `json:"unknown,omitempty"`
}

// Example is the example response a sent step is assumed to receive.
type Example struct {
	Status int `json:"status"`
	// Succeeds says whether the status is the one the step expects; when it
	// is not, the steps using this one's response are skipped.
	Succeeds bool `json:"succeeds"`
}

// Request is a rendered request, as the run record would show it.
type Request struct {
	Method string `json:"method"`
	// URL is the URL sent, after substitution and normalisation, with
	// secrets as their markers and unknown values as their references.
	URL string `json:"url"`
	// Host is what the SSRF guard makes of the URL's host.
	Host Host `json:"host"`
	// Headers in the order they are set, names as sent over HTTP/1.1.
	Headers []Header `json:"headers"`
	Body    *Body    `json:"body,omitempty"`
}

// Host checks: how the SSRF guard's verdict on a host stands.
const (
	// HostAllowed: the host is an address the guard allows, or a name
	// whose looked-up addresses it allows.
	HostAllowed = "allowed"
	// HostDenied: the guard refuses the host's address.
	HostDenied = "denied"
	// HostAtSend: the guard judges the address when the request is sent
	// (a name not looked up, or a host built from values known only then).
	HostAtSend = "at-send"
)

// Host is the URL's host and the guard's verdict on it.
type Host struct {
	// Name is the host as sent (a name in ASCII, or an address); empty when
	// the host comes from a value known only at run time.
	Name string `json:"name,omitempty"`
	// From are the references the host is built from, when any.
	From []string `json:"from,omitempty"`
	// Check is HostAllowed, HostDenied or HostAtSend.
	Check string `json:"check"`
	// Addresses are the addresses judged: the host itself when it is an
	// address, those it resolves to when looked up.
	Addresses []Address `json:"addresses,omitempty"`
	// Message says what the check found, for a person.
	Message string `json:"message,omitempty"`
}

// Address is one address the guard judged.
type Address struct {
	Addr string `json:"addr"`
	// Denied is the guard's reason when it refuses the address.
	Denied string `json:"denied,omitempty"`
}

// Header is a request header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Body kinds.
const (
	BodyJSON      = "json"
	BodyText      = "text"
	BodyMultipart = "multipart"
)

// Body is a request body.
type Body struct {
	// Kind is BodyJSON, BodyText or BodyMultipart.
	Kind string `json:"kind"`
	// Size is the body's length in bytes, counting the values it holds
	// that are known; the values of Unknown add to it.
	Size int64 `json:"size"`
	// Unknown are the references in the body whose values are known only
	// when the step runs.
	Unknown []string `json:"unknown,omitempty"`
	// JSON is a JSON body as the record shows it.
	JSON json.RawMessage `json:"json,omitempty"`
	// Text is a text body as the record shows it.
	Text *string `json:"text,omitempty"`
	// Parts are the parts of a multipart body, in order.
	Parts []Part `json:"parts,omitempty"`
}

// Part is one part of a multipart/form-data body.
type Part struct {
	// Name is the form field's name.
	Name string `json:"name"`
	// Size is the length of the part's content in bytes (without its
	// headers), counting the values known.
	Size int64 `json:"size"`
	// Value is a text field's value as the record shows it.
	Value *string `json:"value,omitempty"`
	// File describes a file part: the attachment it carries.
	File *FilePart `json:"file,omitempty"`
	// Unknown are the references in the part whose values are known only
	// when the step runs.
	Unknown []string `json:"unknown,omitempty"`
}

// FilePart is a file part of a multipart body.
type FilePart struct {
	// Attachment is the attachment's index in the e-mail.
	Attachment int `json:"attachment"`
	// Filename and ContentType are those of the part's headers; empty
	// without an e-mail.
	Filename    string `json:"filename,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// Known says whether the attachment was read from an e-mail; without
	// one its name, type and size are unknown.
	Known bool `json:"known"`
}

// Attachment describes an attachment of the e-mail given.
type Attachment struct {
	Index       int    `json:"index"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// Make plans doc with in: it compiles the document and renders each step
// as a run would, opening no connection. ctx bounds Inputs.Lookup.
func Make(ctx context.Context, doc []byte, in Inputs) *Plan {
	p := &Plan{Version: Version, Steps: []Step{}}
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	p.Inputs = given(in)
	cp, diags := compile.Compile(doc, compile.Options{})
	p.Diagnostics = diags
	if p.Diagnostics == nil {
		p.Diagnostics = compile.Diagnostics{}
	}
	p.Valid = !diags.HasErrors()
	if cp == nil {
		return p
	}
	pl := newPlanner(ctx, cp, in)
	for _, step := range cp.Steps {
		s := pl.step(step)
		switch s.Outcome {
		case Send:
			p.Summary.Send++
		case Fail:
			p.Summary.Fail++
		case Skip:
			p.Summary.Skip++
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

func given(in Inputs) Given {
	g := Given{Now: in.Now.UTC().Format(resolve.NowFormat), Lookup: in.Lookup != nil, Responses: []int{}}
	if in.SecretNames != nil {
		g.SecretNames = slices.Compact(slices.Sorted(slices.Values(in.SecretNames)))
	}
	if in.Facts != nil {
		g.Facts = make(map[string]string, len(in.Facts)+1)
		for k, v := range in.Facts {
			g.Facts[k] = v
		}
		g.Facts["now"] = g.Now
		for _, k := range in.PendingFacts {
			if _, given := in.Facts[k]; !given && !slices.Contains(g.PendingFacts, k) {
				g.PendingFacts = append(g.PendingFacts, k)
			}
		}
		slices.Sort(g.PendingFacts)
	}
	if in.Email != nil {
		g.Attachments = []Attachment{}
		for i := range in.Email.Len() {
			if a, err := in.Email.Attachment(i); err == nil {
				g.Attachments = append(g.Attachments, Attachment{Index: a.Index, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size})
			}
		}
	}
	for i := range in.Responses {
		if in.Responses[i] != nil {
			g.Responses = append(g.Responses, i)
		}
	}
	slices.Sort(g.Responses)
	return g
}

// response converts an example response into what a later step reads.
func response(r *Response) *resolve.Response {
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	out := &resolve.Response{Status: r.Status, Header: h, Limit: 10 << 20}
	body := bytes.TrimSpace(r.Body)
	if len(body) == 0 || string(body) == "null" {
		return out
	}
	var text string
	if body[0] == '"' && json.Unmarshal(body, &text) == nil {
		out.Body = []byte(text)
		return out
	}
	out.Body = body
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return out
}
