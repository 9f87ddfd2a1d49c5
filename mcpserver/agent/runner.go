package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	workflow "github.com/kobana/workflow"
	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/agent/prompt"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// MaxAnswerRecorded is the most bytes of an unusable answer a failed run
// records.
const MaxAnswerRecorded = 64 << 10

// Runner is the inbox.AgentRunner that calls a real model: it writes the
// prompt, asks the agent's model through the endpoint its provider is
// configured with, checks the answer with the platform's linter, and sends
// the diagnostics back for at most the agent's repair rounds. A run that
// ends without a valid answer is a failed result with a Cause; nothing of
// it is ever sent anywhere.
//
// The zero Runner has no endpoint. Set Config; the other fields have
// defaults.
type Runner struct {
	Config Config
	// Models finds a model of the catalog; nil means inbox.ModelByID.
	Models func(id string) (inbox.Model, bool)
	// Client sends the requests; nil means a client of its own, which
	// honours the environment's HTTPS_PROXY.
	Client *http.Client
	Retry  Retry
	// Logger receives one line per request (model, round, attempt,
	// status, cause, wait): never a key, a prompt or an answer. nil
	// discards.
	Logger *slog.Logger
	// Now and Sleep are the clock; nil means the real one. Sleep waits d
	// or until ctx ends.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Budget, when set, admits each request to its endpoint (Endpoint.ID)
	// for the e-mail's workspace (Config.Budget makes one with the
	// configured ceilings) and learns from every answer; a 429, 503 or 529
	// then pauses the whole endpoint, and the retry waits in the budget.
	// nil sends at once.
	Budget *budget.Budget

	clientOnce sync.Once
	client     *http.Client
	// formats remembers, by endpoint and model, the response format a
	// provider last took after refusing a richer one, so that later runs
	// start there instead of paying the refusal each time.
	formats sync.Map
}

var _ inbox.AgentRunner = (*Runner)(nil)

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) httpClient() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	r.clientOnce.Do(func() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = 0 // the agent's timeout bounds the request
		r.client = &http.Client{Transport: t}
	})
	return r.client
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (r *Runner) model(id string) (inbox.Model, bool) {
	if r.Models != nil {
		return r.Models(id)
	}
	return inbox.ModelByID(id)
}

// run is the state of one agent run.
type run struct {
	r        *Runner
	in       inbox.AgentInput
	model    inbox.Model
	endpoint Endpoint
	deadline time.Time
	timeout  time.Duration
	res      inbox.AgentResult
	log      *slog.Logger
	// closed says the budget refused a request: the server is stopping.
	closed bool
}

// RunAgent implements inbox.AgentRunner. The error result is for a run
// that could not be attempted because ctx ended or the Budget was closed
// (the server is stopping; the error then matches budget.ErrClosed), so
// that it is tried again; everything else, the model's failures included,
// is a result.
func (r *Runner) RunAgent(ctx context.Context, in inbox.AgentInput) (inbox.AgentResult, error) {
	m, ok := r.model(in.Agent.Model)
	if !ok {
		return failed(inbox.CauseModelUnavailable, fmt.Sprintf("the agent's model %q is not in the catalog", in.Agent.Model)), nil
	}
	ep, ok := r.Config.Endpoint(m.Provider)
	if !ok {
		res := failed(inbox.CauseModelUnavailable, fmt.Sprintf("no model endpoint is configured for %s (model %s): start the server with -model-base-url or -agents-config", m.Provider, m.ID))
		res.Transient = true // the operator may configure one
		return res, nil
	}
	settings := in.Agent.Settings
	ru := &run{r: r, in: in, model: m, endpoint: ep, timeout: settings.Timeout(),
		log: r.logger().With("agent_id", in.Agent.ID, "email_id", in.Email.ID, "model", m.ID, "provider", m.Provider)}
	ru.res.Model = m.ID
	ru.res.PromptVersion = prompt.Version
	runCtx, cancel := context.WithTimeout(ctx, ru.timeout)
	defer cancel()
	ru.deadline, _ = runCtx.Deadline()
	ru.converse(runCtx)
	if ctx.Err() != nil {
		return inbox.AgentResult{}, fmt.Errorf("agent %s on e-mail %s: %w", in.Agent.ID, in.Email.ID, context.Cause(ctx))
	}
	if ru.closed {
		return inbox.AgentResult{}, fmt.Errorf("agent %s on e-mail %s: %w", in.Agent.ID, in.Email.ID, budget.ErrClosed)
	}
	ru.res.CostUSD = inbox.Cost(m.ID, ru.res.Tokens)
	redactKey(&ru.res, ep.apiKeyValue())
	return ru.res, nil
}

func failed(cause inbox.Cause, msg string) inbox.AgentResult {
	return inbox.AgentResult{Status: inbox.RunFailed, Cause: cause, Error: msg}
}

func (ru *run) fail(cause inbox.Cause, msg string) {
	ru.res.Status, ru.res.Cause, ru.res.Error = inbox.RunFailed, cause, msg
}

// converse asks the model and repairs its answer until it validates or
// the rounds are used up; the outcome is in ru.res.
func (ru *run) converse(ctx context.Context) {
	req, err := ru.firstRequest()
	if err != nil {
		ru.fail(inbox.CauseProviderError, err.Error())
		return
	}
	rounds := ru.in.Agent.Settings.Repairs()
	opts := lintOptions(ru.in)
	for round := 0; ; round++ {
		ans, f := ru.ask(ctx, round, &req)
		ru.res.ResponseFormat = req.format
		if f != nil && f.closed {
			ru.closed = true
			return
		}
		if f != nil {
			ru.fail(f.cause, f.msg)
			// An outage, a rate or a quota, a timeout: the e-mail may be
			// tried again later (the pipeline's schedule); the rest would
			// fail the same way.
			ru.res.Transient = f.retry || f.cause == inbox.CauseModelTimeout || f.cause == inbox.CauseRateLimited
			return
		}
		ru.res.Tokens = ru.res.Tokens.Add(ans.tokens)
		ru.res.UsageUnknown = ru.res.UsageUnknown || ans.noUsage
		if round > 0 {
			ru.res.Repairs[round-1].Tokens = ans.tokens
		}
		thinking, content := splitThinking(ans.content)
		ru.think(ans.reasoning)
		ru.think(thinking)
		switch {
		case ans.refusal != "":
			ru.fail(inbox.CauseRefusal, "the model refused: "+clipText(ans.refusal, 500))
			return
		case ans.finish == "content_filter":
			ru.fail(inbox.CauseRefusal, "the provider's content filter stopped the answer")
			return
		case ans.finish == "length":
			ru.res.Answer = clipAnswer(ans.content)
			ru.fail(inbox.CauseOutputTruncated, "the model stopped at its output limit before finishing its answer")
			return
		}
		doc, fenced := unfence(content)
		empty := strings.TrimSpace(doc) == ""
		v := ValidateWith([]byte(doc), opts)
		ru.res.Diagnostics = v.JSON()
		if !empty && v.Answer() {
			ru.res.Status, ru.res.Output, ru.res.Fenced = inbox.RunSucceeded, json.RawMessage(doc), fenced
			return
		}
		if round >= rounds {
			ru.res.Answer = clipAnswer(ans.content)
			if empty {
				ru.fail(inbox.CauseInvalidOutput, fmt.Sprintf("the model's answer was empty %s; nothing was sent", afterRounds(rounds)))
				return
			}
			ru.fail(inbox.CauseInvalidOutput, invalidMessage(v, rounds))
			return
		}
		text, err := prompt.Repair(prompt.RepairInput{Diagnostics: v.Text(), NeedsResult: v.OK() && v.lacksResult(), Empty: empty, Round: round + 1, Rounds: rounds})
		if err != nil {
			ru.fail(inbox.CauseProviderError, err.Error())
			return
		}
		ru.res.Repairs = append(ru.res.Repairs, inbox.Repair{Round: round + 1, Diagnostics: v.JSON()})
		if empty {
			// An empty assistant turn is refused by some providers
			// (Anthropic): the repair message says the answer was empty.
			req.params.Messages = append(req.params.Messages, openai.UserMessage(text))
			req.promptBytes += int64(len(text))
			continue
		}
		// The answer goes back as it was linted, so the diagnostics'
		// lines and columns point into the text the model sees.
		req.params.Messages = append(req.params.Messages, openai.AssistantMessage(doc), openai.UserMessage(text))
		req.promptBytes += int64(len(doc) + len(text))
	}
}

// lintOptions are what the answer is linted with: the workspace's secret
// names and the run's policy.
func lintOptions(in inbox.AgentInput) lint.Options {
	names := in.SecretNames
	if names == nil {
		names = []string{}
	}
	return lint.Options{SecretNames: names, Policy: in.Policy}
}

// think records thinking the model wrote, clipped with the rest.
func (ru *run) think(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	if ru.res.Thinking != "" {
		s = ru.res.Thinking + "\n\n" + s
	}
	ru.res.Thinking = clipAnswer(s)
}

// splitThinking takes the thinking a model wrote before its answer —
// <think>…</think> (or <thinking>, <reasoning>) blocks at the start — out
// of it. An unclosed block is all thinking.
func splitThinking(answer string) (thinking, rest string) {
	rest = answer
	var parts []string
	for {
		t := strings.TrimLeft(rest, " \t\r\n")
		tag := ""
		for _, name := range []string{"think", "thinking", "reasoning"} {
			if len(t) >= len(name)+2 && strings.EqualFold(t[:len(name)+2], "<"+name+">") {
				tag = name
				break
			}
		}
		if tag == "" {
			break
		}
		body := t[len(tag)+2:]
		end := strings.Index(strings.ToLower(body), "</"+tag+">")
		if end < 0 {
			return strings.Join(append(parts, body), "\n\n"), ""
		}
		parts = append(parts, body[:end])
		rest = body[end+len(tag)+3:]
	}
	return strings.Join(parts, "\n\n"), rest
}

// invalidMessage says why a run's output was refused: how many errors,
// and the first.
func invalidMessage(v Validation, rounds int) string {
	msg := fmt.Sprintf("the model's answer did not validate %s; nothing was sent", afterRounds(rounds))
	if n := v.Report.Errors(); n > 0 {
		for _, d := range v.Report.Diagnostics {
			if d.Severity == compile.SeverityError {
				return fmt.Sprintf("%s. %d error%s, the first: %s", msg, n, plural(n), d)
			}
		}
	}
	return msg + `. The answer has no "result".`
}

func afterRounds(rounds int) string {
	if rounds > 0 {
		return fmt.Sprintf("after %d repair round%s", rounds, plural(rounds))
	}
	return "and no repair round was allowed"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func clipAnswer(s string) string {
	if len(s) <= MaxAnswerRecorded {
		return s
	}
	i := MaxAnswerRecorded
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// ask sends one round's request, retrying what may succeed later, and
// records every attempt on the result.
func (ru *run) ask(ctx context.Context, round int, req *request) (reply, *failure) {
	retry := ru.r.Retry
	fallbacks := 0
	for attempt := 1; ; attempt++ {
		lease, f := ru.admit(ctx, req)
		if f != nil {
			return reply{}, f
		}
		start := ru.r.now()
		ans, f := req.send(ctx)
		lease.done(ans, f)
		call := inbox.ModelCall{Round: round, Attempt: attempt, DurationMS: ru.r.now().Sub(start).Milliseconds(), ResponseFormat: req.format}
		if f != nil && f.cause == inbox.CauseModelTimeout {
			f.msg = fmt.Sprintf("the model did not answer within the agent's timeout of %s", ru.timeout)
		}
		if f == nil {
			call.Status, call.Tokens, call.NoUsage = http.StatusOK, ans.tokens, ans.noUsage
			ru.record(call)
			if fallbacks > 0 {
				ru.r.formats.Store(ru.formatKey(), req.format)
			}
			return ans, nil
		}
		call.Status, call.Cause, call.Error = f.status, f.cause, f.msg
		if f.formatRefused {
			// The provider cannot use this response format: ask once
			// more with the next simpler one, at once, and remember it.
			next := FormatNone
			if req.format == FormatJSONSchema {
				next = FormatJSONObject
			}
			call.Error = fmt.Sprintf("%s; asking again with response format %s", f.msg, next)
			ru.record(call)
			req.setFormat(next)
			fallbacks++
			attempt-- // a fallback is not a retry of the same request
			continue
		}
		if !f.retry || attempt >= retry.attempts() {
			if f.retry {
				f.msg = fmt.Sprintf("%s; gave up after %d attempts", f.msg, attempt)
			}
			ru.record(call)
			return reply{}, f
		}
		wait := retry.backoff(attempt)
		if f.hasAfter {
			wait = f.after
		}
		if f.hasAfter && wait > retry.maxWait() {
			f.msg = fmt.Sprintf("%s; the provider asked to wait %s, longer than the %s the runner waits", f.msg, wait, retry.maxWait())
			ru.record(call)
			return reply{}, f
		}
		if left := ru.deadline.Sub(ru.r.now()); wait >= left {
			f.msg = fmt.Sprintf("%s; waiting %s more would pass the agent's timeout of %s", f.msg, wait.Round(time.Millisecond), ru.timeout)
			if f.cause != inbox.CauseRateLimited {
				f.cause = inbox.CauseModelTimeout
			}
			ru.record(call)
			return reply{}, f
		}
		call.WaitMS = wait.Milliseconds()
		ru.record(call)
		if ru.r.Budget != nil && slows(f.status) {
			continue // the budget paused the endpoint: the retry waits there
		}
		if err := ru.r.sleep(ctx, wait); err != nil {
			return reply{}, &failure{cause: inbox.CauseModelTimeout, msg: fmt.Sprintf("the model did not answer within the agent's timeout of %s", ru.timeout)}
		}
	}
}

// slows says an answer of this status pauses the endpoint in the budget.
func slows(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == 529
}

// lease is a request's admission by the Runner's budget; the zero lease
// is a Runner without one.
type lease struct{ l *budget.Lease }

// admit waits for the budget to admit the request, when there is one.
func (ru *run) admit(ctx context.Context, req *request) (lease, *failure) {
	b := ru.r.Budget
	if b == nil {
		return lease{}, nil
	}
	l, err := b.Acquire(ctx, ru.endpoint.ID(), ru.in.Workspace.ID, req.estimate())
	switch {
	case err == nil:
		return lease{l}, nil
	case errors.Is(err, budget.ErrClosed):
		return lease{}, &failure{cause: inbox.CauseModelUnavailable, closed: true, msg: "the request was not sent: " + err.Error()}
	}
	return lease{}, &failure{cause: inbox.CauseModelTimeout, msg: fmt.Sprintf("the model endpoint did not admit the request within the agent's timeout of %s (its rate limit was reached)", ru.timeout)}
}

// done tells the budget what the answer said.
func (l lease) done(ans reply, f *failure) {
	if l.l == nil {
		return
	}
	if f != nil {
		l.l.Done(budget.Result{Status: f.status, Header: f.header})
		return
	}
	l.l.Done(budget.Result{Status: http.StatusOK, Header: ans.header, Tokens: ans.tokens.Input + ans.tokens.Output})
}

func (ru *run) record(c inbox.ModelCall) {
	ru.res.Calls = append(ru.res.Calls, c)
	attrs := []any{"round", c.Round, "attempt", c.Attempt, "status", c.Status, "duration_ms", c.DurationMS}
	if c.Cause != "" {
		attrs = append(attrs, "cause", string(c.Cause))
	}
	if c.WaitMS > 0 {
		attrs = append(attrs, "wait_ms", c.WaitMS)
	}
	if c.ResponseFormat != "" {
		attrs = append(attrs, "response_format", c.ResponseFormat)
	}
	if c.NoUsage {
		attrs = append(attrs, "usage", "not reported")
	}
	if c.Tokens != (inbox.Tokens{}) {
		attrs = append(attrs, "input_tokens", c.Tokens.Input, "output_tokens", c.Tokens.Output)
	}
	ru.log.Info("model request", attrs...)
}

// firstRequest builds the request of the first round: the prompt, the
// file inputs the agent and model allow, and the response format the
// endpoint takes.
func (ru *run) firstRequest() (request, error) {
	in := ru.in
	req := request{endpoint: ru.endpoint, client: ru.r.httpClient(), family: ru.endpoint.family()}
	atts := make([]prompt.Attachment, 0, len(in.Email.Attachments))
	for _, a := range in.Email.Attachments {
		pa := prompt.Attachment{Index: a.Index, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size}
		for _, d := range a.Defects {
			pa.Defects = append(pa.Defects, d.Message)
		}
		atts = append(atts, pa)
	}
	offered := in.Agent.Settings.FileInputs && ru.model.SupportsAttachment && ru.endpoint.acceptsFiles()
	if offered {
		notes := map[int]string{}
		if in.Message == nil {
			for _, a := range atts {
				notes[a.Index] = "not attached: the e-mail's stored message is no longer kept"
			}
		} else if msg, err := openMessage(in.Message); err != nil {
			for _, a := range atts {
				notes[a.Index] = "not attached: the e-mail's stored message could not be read"
			}
			ru.log.Warn("file inputs skipped: the stored message could not be read", "error", err.Error())
		} else {
			req.msg = msg
			req.files, notes = chooseFiles(msg.Attachments(), in.Agent.Settings.FileBytes())
		}
		for i := range atts {
			atts[i].File = notes[atts[i].Index]
		}
	}
	p, err := prompt.Render(prompt.Input{Agent: in.Agent, InboxAddress: in.Inbox.Address, SecretNames: in.SecretNames,
		Policy: in.Policy, Email: in.Email, Attachments: atts, FilesOffered: offered})
	if err != nil {
		return req, err
	}
	user := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(p.User)}
	for _, f := range req.files {
		switch f.kind {
		case "file":
			user = append(user, openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
				Filename: openai.String(f.att.Filename), FileData: openai.String(f.placeholder)}))
		case "image_url":
			user = append(user, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: f.placeholder}))
		}
	}
	var userMsg openai.ChatCompletionMessageParamUnion
	if len(user) == 1 {
		userMsg = openai.UserMessage(p.User)
	} else {
		userMsg = openai.UserMessage(user)
	}
	req.promptBytes = int64(len(p.System) + len(p.User))
	for _, f := range req.files {
		req.promptBytes += f.att.Size * 4 / 3 // sent as base64
	}
	req.params = openai.ChatCompletionNewParams{
		Model:    ru.endpoint.modelName(ru.model.ID),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(p.System), userMsg},
	}
	format := ru.endpoint.ResponseFormat
	if format == "" {
		format = req.family.defaultFormat()
	}
	if learned, ok := ru.r.formats.Load(ru.formatKey()); ok && formatRank(learned.(string)) < formatRank(format) {
		format = learned.(string)
	}
	req.setFormat(format)
	return req, nil
}

// formatKey names the endpoint and model a learned response format is
// kept under.
func (ru *run) formatKey() string {
	return ru.endpoint.BaseURL + "\x00" + ru.endpoint.modelName(ru.model.ID)
}

// formatRank orders the response formats from the richest.
func formatRank(f string) int {
	switch f {
	case FormatJSONSchema:
		return 2
	case FormatJSONObject:
		return 1
	}
	return 0
}

// answerSchema is response_format's json_schema: the answer's schema as
// the family takes it (Schema). It is not strict: strict structured
// outputs take only a subset of JSON Schema, and the linter, not the
// provider, is the authority.
func answerSchema(f Family) shared.ResponseFormatJSONSchemaJSONSchemaParam {
	return shared.ResponseFormatJSONSchemaJSONSchemaParam{
		Name:        "kobana_agent_answer",
		Description: openai.String(schemaDescription()),
		Schema:      Schema(f),
		Strict:      openai.Bool(false),
	}
}

var schemaDescription = sync.OnceValue(func() string {
	var m struct {
		Description string `json:"description"`
	}
	if err := json.Unmarshal(workflow.Schema, &m); err != nil {
		panic("workflow.schema.json does not decode: " + err.Error())
	}
	return strings.TrimSpace(m.Description)
})
