package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/emit"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// planner plans the steps of one document in order, keeping what a run
// keeps between steps: the outcome of each.
type planner struct {
	ctx   context.Context
	in    Inputs
	scope *resolve.Scope
	// names are the secret names given, as a set; nil when not known.
	names map[string]bool
	// examples are the example responses, converted.
	examples map[int]*resolve.Response
}

func newPlanner(ctx context.Context, cp *compile.Plan, in Inputs) *planner {
	pl := &planner{ctx: ctx, in: in, examples: map[int]*resolve.Response{}}
	if in.SecretNames != nil {
		pl.names = map[string]bool{}
		for _, n := range in.SecretNames {
			pl.names[n] = true
		}
	}
	for i, r := range in.Responses {
		if r != nil {
			pl.examples[i] = response(r)
		}
	}
	pl.scope = &resolve.Scope{
		// The scope never sees a secret: those the names allow are stood
		// in for; any other is missing.
		Secrets:  resolve.SecretMap{},
		Redactor: resolve.NewRedactor(nil),
	}
	if in.Facts != nil {
		pl.scope.Facts = resolve.FactMap(in.Facts)
	}
	if in.Email != nil {
		atts := in.Email
		pl.scope.Attachments = func() (resolve.Attachments, error) { return atts, nil }
	} else {
		pl.scope.Attachments = func() (resolve.Attachments, error) { return unknownAttachments{}, nil }
	}
	return pl
}

// step plans one step and records its outcome for the steps after it.
func (pl *planner) step(cs *compile.Step) Step {
	pl.scope.Begin(cs.Index, pl.in.Now)
	s := Step{Index: cs.Index, Label: cs.Label, DependsOn: cs.DependsOn, ExpectedStatus: cs.ExpectedStatus}
	unknown := &unknowns{}
	opts := emit.Options{StandIn: pl.standIn(cs, unknown)}
	if pl.in.StepID != nil {
		opts.StepID = pl.in.StepID(cs.Index)
	}
	req, err := emit.RenderWith(cs, pl.scope, opts)
	if err != nil {
		pl.fail(&s, err)
		return s
	}
	r, err := describe(cs, req, unknown)
	if err != nil {
		s.Outcome, s.Reason, s.Message = Fail, runrecord.ReasonInvalidRequest, "not sent: "+err.Error()
		pl.scope.Record(cs.Index, &resolve.Result{State: runrecord.Failed})
		return s
	}
	s.Request = r
	s.Unknown = unknown.all()
	r.Host = pl.checkHost(cs, req)
	if r.Host.Check == HostDenied {
		s.Outcome, s.Reason, s.Message = Fail, runrecord.ReasonDenied, "not sent: "+r.Host.Message
		pl.scope.Record(cs.Index, &resolve.Result{State: runrecord.Failed})
		return s
	}
	if t, ok := egress.TargetOf(req.URL); ok && r.Host.Name != "" {
		// The host is known before the run: the executor's check, now.
		if vs := pl.in.Policy.Check(t, req.Secrets()); vs != nil {
			s.Outcome, s.Reason, s.Message = Fail, runrecord.ReasonDestination, "not sent: "+egress.Error(vs).Error()
			pl.scope.Record(cs.Index, &resolve.Result{State: runrecord.Failed})
			return s
		}
	}
	s.Outcome = Send
	res := &resolve.Result{State: runrecord.Succeeded}
	if ex := pl.examples[cs.Index]; ex != nil {
		if ex.Status == 0 {
			// An example without a status has the one the step expects.
			ex.Status = cs.ExpectedStatus
			if ex.Status == 0 {
				ex.Status = http.StatusOK
			}
		}
		res.Response = ex
		s.Example = &Example{Status: ex.Status, Succeeds: cs.Succeeds(ex.Status)}
		if !s.Example.Succeeds {
			res.State = runrecord.Failed
			s.Reason = runrecord.ReasonStatus
			s.Message = fmt.Sprintf("with the example response the step fails: its status is %d; the step expects %s", ex.Status, cs.Expects())
		}
	}
	pl.scope.Record(cs.Index, res)
	return s
}

// fail records a step that fails or is skipped before anything is sent.
func (pl *planner) fail(s *Step, err error) {
	var skip *resolve.SkipError
	if errors.As(err, &skip) {
		s.Outcome, s.Reason, s.Message = Skip, runrecord.ReasonSkipped, err.Error()
		if ex := pl.examples[skip.Step]; ex != nil && skip.State == runrecord.Failed {
			s.Message += " (with its example response)"
		}
		pl.scope.Record(s.Index, &resolve.Result{State: runrecord.Skipped})
		return
	}
	s.Outcome, s.Message = Fail, "not sent: "+pl.scope.Redactor.String(err.Error())
	var re *resolve.RefError
	switch {
	case errors.As(err, &re):
		s.Reason = re.Reason
	case errors.Is(err, emit.ErrHeaderValue):
		s.Reason = runrecord.ReasonHeaderInjection
	default:
		s.Reason = runrecord.ReasonInvalidRequest
	}
	pl.scope.Record(s.Index, &resolve.Result{State: runrecord.Failed})
}

// unknowns collects the references a step's stand-ins answered for, by
// where they stand.
type unknowns struct {
	order []string
	where map[*lang.Ref]string
}

func (u *unknowns) add(r *lang.Ref) {
	name := r.String()
	if !slices.Contains(u.order, name) {
		u.order = append(u.order, name)
	}
	if u.where == nil {
		u.where = map[*lang.Ref]string{}
	}
	u.where[r] = name
}

func (u *unknowns) all() []string { return u.order }

// in returns the names of the unknown references among refs, each once.
func (u *unknowns) in(refs []*lang.Ref) []string {
	var out []string
	for _, r := range refs {
		if name, ok := u.where[r]; ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// standIn answers, for step cs, the references a plan cannot resolve:
// a secret (whose value a plan never has), a fact when none were given, a
// response it has no example of, an attachment when there is no e-mail.
// Inside the URL a stand-in keeps the URL a URL; anywhere else it is empty,
// so that sizes count only what is known.
func (pl *planner) standIn(cs *compile.Step, u *unknowns) func(*lang.Ref) (resolve.Value, string, bool) {
	urlRefs := cs.URL.Refs()
	return func(r *lang.Ref) (resolve.Value, string, bool) {
		text := ""
		if i := slices.Index(urlRefs, r); i >= 0 {
			text = "unknown"
			if cs.URL.Segments[0].Ref == r {
				text = "https://unknown.invalid"
			}
		}
		reference := "${{" + r.String() + "}}"
		switch r.Namespace {
		case lang.Secrets:
			if pl.names != nil && !pl.names[r.Key] {
				return resolve.Value{}, "", false // the scope has no secrets: missing
			}
			u.add(r)
			return resolve.Value{Kind: resolve.Secret, Text: text}, "", true
		case lang.Kobana:
			if r.Key == "now" {
				return resolve.Value{}, "", false
			}
			if _, given := pl.in.Facts[r.Key]; pl.in.Facts != nil && (given || !slices.Contains(pl.in.PendingFacts, r.Key)) {
				return resolve.Value{}, "", false
			}
		case lang.Steps:
			if r.Index >= cs.Index || pl.examples[r.Index] != nil {
				return resolve.Value{}, "", false
			}
		case lang.Email:
			if pl.in.Email != nil {
				return resolve.Value{}, "", false
			}
			if r.Attachment == lang.AttachmentContent || r.Attachment == lang.AttachmentBase64 {
				kind := resolve.File
				if r.Attachment == lang.AttachmentBase64 {
					kind = resolve.Base64
				}
				u.add(r)
				return resolve.Value{Kind: kind, Attachment: eml.Attachment{Index: r.Index}}, reference, true
			}
		default:
			return resolve.Value{}, "", false
		}
		u.add(r)
		return resolve.Value{Kind: resolve.Text, Text: text}, reference, true
	}
}

// unknownAttachments stands for the attachments of an e-mail not given:
// any index exists, with no name, type or byte.
type unknownAttachments struct{}

func (unknownAttachments) Len() int { return 0 }

func (unknownAttachments) Attachment(i int) (eml.Attachment, error) {
	return eml.Attachment{Index: i}, nil
}

func (unknownAttachments) Check(int) error { return nil }

func (unknownAttachments) Open(int) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}

// describe turns a rendered request into its plan: the record's URL,
// headers and body, with the body's layout and sizes read from the body
// the renderer would send.
func describe(cs *compile.Step, req *emit.Request, u *unknowns) (*Request, error) {
	rec := req.Record
	r := &Request{Method: req.Method, URL: rec.URL, Headers: []Header{}}
	seen := map[string]bool{}
	for _, h := range cs.Headers {
		r.Headers = append(r.Headers, Header{Name: http.CanonicalHeaderKey(h.Name), Value: rec.Headers[h.Name]})
		seen[http.CanonicalHeaderKey(h.Name)] = true
	}
	// Headers the renderer adds: the body's content type.
	var added []string
	for name := range rec.Headers {
		if !seen[http.CanonicalHeaderKey(name)] {
			added = append(added, name)
		}
	}
	slices.Sort(added)
	for _, name := range added {
		r.Headers = append(r.Headers, Header{Name: http.CanonicalHeaderKey(name), Value: rec.Headers[name]})
	}
	if cs.Form != nil {
		// The boundary is drawn at random for each request.
		for i, h := range r.Headers {
			if h.Name == "Content-Type" {
				r.Headers[i].Value = "multipart/form-data; boundary=" + BoundaryShown
			}
		}
	}
	switch {
	case cs.Body != nil && cs.Body.Kind == compile.BodyText:
		var text string
		if err := json.Unmarshal(rec.Body, &text); err != nil {
			return nil, fmt.Errorf("reading the body's record: %w", err)
		}
		r.Body = &Body{Kind: BodyText, Size: req.ContentLength(), Text: &text, Unknown: u.in(cs.Body.Text.Refs())}
	case cs.Body != nil:
		r.Body = &Body{Kind: BodyJSON, Size: req.ContentLength(), JSON: rec.Body, Unknown: u.in(cs.Refs()[len(cs.URL.Refs())+headerRefs(cs):])}
	case cs.Form != nil:
		b, err := multipartLayout(cs, req, u)
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	return r, nil
}

func headerRefs(cs *compile.Step) int {
	n := 0
	for _, h := range cs.Headers {
		n += len(h.Value.Refs())
	}
	return n
}

// multipartLayout reads the multipart body the renderer would send, part by
// part, for each part's size; attachments are read from the e-mail as they
// would be sent.
func multipartLayout(cs *compile.Step, req *emit.Request, u *unknowns) (*Body, error) {
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, fmt.Errorf("the form's content type has no boundary: %q", req.Header.Get("Content-Type"))
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(req.Record.Form, &values); err != nil {
		return nil, fmt.Errorf("reading the form's record: %w", err)
	}
	b := &Body{Kind: BodyMultipart, Size: req.ContentLength(), Parts: []Part{}}
	body := req.Body()
	defer body.Close()
	mr := multipart.NewReader(body, params["boundary"])
	for _, f := range cs.Form {
		mp, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("reading part %q of the body: %w", f.Name, err)
		}
		n, err := io.Copy(io.Discard, mp)
		if err != nil {
			return nil, fmt.Errorf("reading part %q of the body: %w", f.Name, err)
		}
		p := Part{Name: f.Name, Size: n}
		if f.File != nil {
			p.File = &FilePart{Attachment: f.File.Index}
			if _, standIn := u.where[f.File]; standIn {
				p.Unknown = []string{f.File.String()}
			} else {
				p.File.Known = true
				p.File.Filename = mp.FileName()
				p.File.ContentType = mp.Header.Get("Content-Type")
			}
		} else {
			var v string
			if err := json.Unmarshal(values[f.Name], &v); err != nil {
				return nil, fmt.Errorf("reading field %q of the form's record: %w", f.Name, err)
			}
			p.Value = &v
			p.Unknown = u.in(f.Value.Refs())
		}
		b.Unknown = appendNew(b.Unknown, p.Unknown...)
		b.Parts = append(b.Parts, p)
	}
	return b, nil
}

func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
