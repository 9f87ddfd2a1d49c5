package prompt

import (
	"bytes"
	"embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/lang"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// Version names the prompt the templates produce. It is recorded on every
// agent run, so a run can be traced to the instructions its model was
// given; it changes whenever the templates change (TestVersionNamesTheTemplates
// enforces it).
const Version = "2026-12-02.1"

// MaxBodyChars is the most characters of an e-mail's text body the prompt
// holds; the rest is left out and the prompt says how much.
const MaxBodyChars = 40000

//go:embed system.tmpl user.tmpl repair.tmpl
var files embed.FS

var templates = template.Must(template.New("prompt").Delims("[[", "]]").
	Funcs(template.FuncMap{"join": strings.Join}).
	ParseFS(files, "*.tmpl"))

// Input is what a prompt is made of: the agent, the e-mail and what the
// workspace offers. It never holds a secret value.
type Input struct {
	Agent inbox.Agent
	// InboxAddress is the address the e-mail arrived at.
	InboxAddress string
	// SecretNames are the names of the workspace's secrets.
	SecretNames []string
	// Policy says where the agent's workflows may send requests: the
	// egress list and each secret's destinations; nil when nothing is
	// restricted.
	Policy *egress.Policy
	// Email is the e-mail record: sender and its authentication,
	// recipients, subject, date, text body.
	Email inbox.Email
	// Attachments describe the e-mail's attachments, in message order.
	Attachments []Attachment
	// FilesOffered says that some attachments may be attached as files
	// for the model to read (the agent allows it and the model can).
	FilesOffered bool
}

// Attachment is one attachment as the prompt lists it: metadata only.
type Attachment struct {
	Index       int
	Filename    string
	ContentType string
	Size        int64
	// Defects are the repairs made to read it, for people.
	Defects []string
	// File says whether its bytes are attached for the model to read, and
	// if not why, when FilesOffered: "attached for you to read", "not
	// attached: …". Empty otherwise.
	File string
}

// Prompt is the two messages an agent run starts with.
type Prompt struct {
	System string
	User   string
}

// Render builds the prompt of in.
func Render(in Input) (Prompt, error) {
	sys, err := execute("system.tmpl", systemData{
		AgentName:        line(in.Agent.Name),
		InboxAddress:     line(in.InboxAddress),
		SystemMessage:    strings.TrimSpace(text(in.Agent.SystemMessage)),
		Skills:           lines(in.Agent.Skills),
		StepFields:       compile.StepFields(),
		Methods:          compile.Methods(),
		ReservedHeaders:  compile.ReservedHeaders(),
		TransportHeaders: compile.TransportHeaders(),
		MaxSteps:         compile.MaxSteps,
		KobanaKeys:       lang.KobanaKeys(),
		SecretNames:      lines(in.SecretNames),
		Example:          Example,
		ExampleNames:     exampleNamesNote(in.SecretNames),
		Egress:           egressHosts(in.Policy),
		Destinations:     secretDestinations(in.Policy, in.SecretNames),
	})
	if err != nil {
		return Prompt{}, err
	}
	e := in.Email
	body, clipped := clip(markers(text(e.Text)), MaxBodyChars)
	ud := userData{
		InboxAddress: line(in.InboxAddress),
		From:         markers(line(e.From)),
		Auth:         authSummary(e.Auth),
		To:           lines(e.To),
		Cc:           lines(e.Cc),
		Subject:      markers(line(e.Subject)),
		Date:         "(none)",
		MessageID:    line(e.MessageID),
		FilesOffered: in.FilesOffered,
		Body:         strings.TrimSpace(body),
		BodyClipped:  clipped,
	}
	if !e.Date.IsZero() {
		ud.Date = e.Date.Format(time.RFC3339)
	}
	for _, a := range in.Attachments {
		a.Filename = markers(line(a.Filename))
		a.ContentType = line(a.ContentType)
		a.Defects = lines(a.Defects)
		ud.Attachments = append(ud.Attachments, a)
	}
	user, err := execute("user.tmpl", ud)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{System: sys, User: user}, nil
}

// RepairInput is what a repair message says.
type RepairInput struct {
	// Diagnostics is the linter's text output for the answer.
	Diagnostics string
	// NeedsResult says the answer lacked "result" (or was no object).
	NeedsResult bool
	// Empty says the answer was empty: the diagnostics are not repeated,
	// and the model's empty turn is not sent back.
	Empty bool
	// Round is this repair round, from 1; Rounds how many there may be.
	Round, Rounds int
}

// Repair is the message that sends an invalid answer's diagnostics back to
// the model.
func Repair(in RepairInput) (string, error) {
	left := in.Rounds - in.Round
	return execute("repair.tmpl", struct {
		Diagnostics string
		NeedsResult bool
		Empty       bool
		Left        int
		Last        bool
	}{strings.TrimRight(in.Diagnostics, "\n"), in.NeedsResult, in.Empty, left, left <= 0})
}

type systemData struct {
	AgentName, InboxAddress, SystemMessage string
	Skills                                 []string
	StepFields, Methods                    []string
	ReservedHeaders, TransportHeaders      []string
	MaxSteps                               int
	KobanaKeys, SecretNames                []string
	Example                                string
	// ExampleNames, when set, says the example's secret names are not the
	// workspace's.
	ExampleNames string
	// Egress are the hosts workflows may reach; nil when any.
	Egress []string
	// Destinations say, for each bound secret the workspace has, where it
	// may be sent.
	Destinations []string
}

type userData struct {
	InboxAddress, From, Auth string
	To, Cc                   []string
	Subject, Date, MessageID string
	Attachments              []Attachment
	FilesOffered             bool
	Body                     string
	BodyClipped              int
}

func execute(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("prompt %s: %w", name, err)
	}
	return b.String(), nil
}

// Example is the worked example the system message shows: the complete
// example (examples/workflows/payable.json), in English.
const Example = `{
  "result": {"supplier": "ACME", "amount": 1250.5},
  "workflow": [
    {
      "type": "request",
      "label": "create the payable",
      "method": "POST",
      "url": "https://erp.example.com/payables",
      "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"},
      "body": {"supplier": "ACME", "amount": 1250.5, "source_email_id": "${{kobana.email_id}}"},
      "expected_status": 201
    },
    {
      "type": "request",
      "label": "attach the original document",
      "method": "POST",
      "url": "https://erp.example.com/payables/${{steps.0.response.body.data.id}}/attachments",
      "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"},
      "form": {"file": "${{email.attachments.0}}", "kobana_email_id": "${{kobana.email_id}}"}
    },
    {
      "type": "request",
      "label": "tell the finance channel",
      "method": "POST",
      "url": "${{secrets.SLACK_WEBHOOK_URL}}",
      "body": {"text": "Payable ${{steps.0.response.body.data.id}} created at ${{kobana.now}}"}
    }
  ]
}`

// ExampleSecrets are the secret names the Example references.
var ExampleSecrets = []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"}

// exampleNamesNote says, when the workspace lacks a secret the example
// uses, that the example's names are placeholders.
func exampleNamesNote(names []string) string {
	var missing []string
	for _, n := range ExampleSecrets {
		if !slices.Contains(names, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, " and ")
}

// egressHosts are the egress list's patterns; nil when any host is
// allowed.
func egressHosts(p *egress.Policy) []string {
	if p == nil || p.Egress == nil {
		return nil
	}
	return append([]string{}, p.Egress.Strings()...)
}

// secretDestinations say, for each of the workspace's secrets that is
// bound, where it may be sent: "FINANCE_TOKEN: erp.example.com".
func secretDestinations(p *egress.Policy, names []string) []string {
	var out []string
	for _, n := range lines(names) {
		if d, ok := p.Destinations(n); ok {
			out = append(out, n+": "+d.String())
		}
	}
	return out
}

// authSummary says what the intake learned about the sender, in one line.
func authSummary(a *inbox.SenderAuth) string {
	if a == nil {
		return "not checked (the e-mail did not come through an intake that checks senders)"
	}
	var parts []string
	check := func(name string, c inbox.AuthCheck) string {
		s := name + " " + orNone(c.Result)
		var det []string
		if c.Domain != "" {
			det = append(det, c.Domain)
		}
		if c.Selector != "" {
			det = append(det, "selector "+c.Selector)
		}
		if len(det) > 0 {
			s += " (" + strings.Join(det, ", ") + ")"
		}
		return line(s)
	}
	parts = append(parts, check("SPF", a.SPF))
	if len(a.DKIM) == 0 {
		parts = append(parts, "DKIM none (no signature)")
	}
	for _, d := range a.DKIM {
		parts = append(parts, check("DKIM", d))
	}
	parts = append(parts, check("DMARC", a.DMARC))
	s := strings.Join(parts, "; ")
	if a.EnvelopeFrom != "" {
		s += "; envelope sender " + line(a.EnvelopeFrom)
	}
	if a.AuthenticatedFrom != "" {
		return s + ". Authenticated sender: " + line(a.AuthenticatedFrom) + "."
	}
	return s + ". The sender is NOT authenticated: the From address may be forged."
}

func orNone(s string) string {
	if s == "" {
		return inbox.AuthNone
	}
	return s
}

// line makes s one line of text: control characters (CR, LF, tabs…)
// become spaces, runs of blanks one space.
func line(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

func lines(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = line(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// text keeps the lines and tabs of s and drops other control characters;
// CRLF becomes LF.
func text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r == '\r' {
			return '\n'
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// markers defuses the lines that delimit the e-mail, so an e-mail cannot
// close its own section and write past it.
func markers(s string) string {
	if !strings.Contains(s, "-----") {
		return s
	}
	r := strings.NewReplacer("-----BEGIN E-MAIL-----", "[BEGIN E-MAIL marker removed]", "-----END E-MAIL-----", "[END E-MAIL marker removed]")
	return r.Replace(s)
}

// clip keeps the first max characters of s and reports how many it left out.
func clip(s string, max int) (string, int) {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, 0
	}
	i, count := 0, 0
	for i = range s {
		if count == max {
			break
		}
		count++
	}
	return s[:i], n - max
}
