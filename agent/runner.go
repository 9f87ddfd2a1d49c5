package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	workflow "github.com/kobana/workflow"
	"github.com/kobana/workflow/agent/prompt"
	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/inbox"
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

	clientOnce sync.Once
	client     *http.Client
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
}

// RunAgent implements inbox.AgentRunner. The error result is for a run
// that could not be attempted because ctx ended (the server is stopping);
// everything else, the model's failures included, is a result.
func (r *Runner) RunAgent(ctx context.Context, in inbox.AgentInput) (inbox.AgentResult, error) {
	m, ok := r.model(in.Agent.Model)
	if !ok {
		return failed(inbox.CauseModelUnavailable, fmt.Sprintf("the agent's model %q is not in the catalog", in.Agent.Model)), nil
	}
	ep, ok := r.Config.Endpoint(m.Provider)
	if !ok {
		return failed(inbox.CauseModelUnavailable, fmt.Sprintf("no model endpoint is configured for %s (model %s): start the server with -model-base-url or -agents-config", m.Provider, m.ID)), nil
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
	ru.res.CostUSD = inbox.Cost(m.ID, ru.res.Tokens)
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
	for round := 0; ; round++ {
		ans, f := ru.ask(ctx, round, req)
		if f != nil {
			ru.fail(f.cause, f.msg)
			return
		}
		ru.res.Tokens.Input += ans.tokens.Input
		ru.res.Tokens.Output += ans.tokens.Output
		if round > 0 {
			ru.res.Repairs[round-1].Tokens = ans.tokens
		}
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
		doc, fenced := unfence(ans.content)
		v := Validate([]byte(doc))
		ru.res.Diagnostics = v.JSON()
		if v.Answer() {
			ru.res.Status, ru.res.Output, ru.res.Fenced = inbox.RunSucceeded, json.RawMessage(doc), fenced
			return
		}
		if round >= rounds {
			ru.res.Answer = clipAnswer(ans.content)
			ru.fail(inbox.CauseInvalidOutput, invalidMessage(v, rounds))
			return
		}
		text, err := prompt.Repair(prompt.RepairInput{Diagnostics: v.Text(), NeedsResult: v.OK() && v.lacksResult(), Round: round + 1, Rounds: rounds})
		if err != nil {
			ru.fail(inbox.CauseProviderError, err.Error())
			return
		}
		ru.res.Repairs = append(ru.res.Repairs, inbox.Repair{Round: round + 1, Diagnostics: v.JSON()})
		// The answer goes back as it was linted, so the diagnostics'
		// lines and columns point into the text the model sees.
		req.params.Messages = append(req.params.Messages, openai.AssistantMessage(doc), openai.UserMessage(text))
	}
}

// invalidMessage says why a run's output was refused: how many errors,
// and the first.
func invalidMessage(v Validation, rounds int) string {
	after := "and no repair round was allowed"
	if rounds > 0 {
		after = fmt.Sprintf("after %d repair round%s", rounds, plural(rounds))
	}
	msg := fmt.Sprintf("the model's answer did not validate %s; nothing was sent", after)
	if n := v.Report.Errors(); n > 0 {
		for _, d := range v.Report.Diagnostics {
			if d.Severity == compile.SeverityError {
				return fmt.Sprintf("%s. %d error%s, the first: %s", msg, n, plural(n), d)
			}
		}
	}
	return msg + `. The answer has no "result".`
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
func (ru *run) ask(ctx context.Context, round int, req request) (reply, *failure) {
	retry := ru.r.Retry
	for attempt := 1; ; attempt++ {
		start := ru.r.now()
		ans, f := req.send(ctx)
		call := inbox.ModelCall{Round: round, Attempt: attempt, DurationMS: ru.r.now().Sub(start).Milliseconds()}
		if f != nil && f.cause == inbox.CauseModelTimeout {
			f.msg = fmt.Sprintf("the model did not answer within the agent's timeout of %s", ru.timeout)
		}
		if f == nil {
			call.Status, call.Tokens = http.StatusOK, ans.tokens
			ru.record(call)
			return ans, nil
		}
		call.Status, call.Cause, call.Error = f.status, f.cause, f.msg
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
		if err := ru.r.sleep(ctx, wait); err != nil {
			return reply{}, &failure{cause: inbox.CauseModelTimeout, msg: fmt.Sprintf("the model did not answer within the agent's timeout of %s", ru.timeout)}
		}
	}
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
	req := request{endpoint: ru.endpoint, client: ru.r.httpClient()}
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
		Email: in.Email, Attachments: atts, FilesOffered: offered})
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
	req.params = openai.ChatCompletionNewParams{
		Model:    ru.endpoint.modelName(ru.model.ID),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(p.System), userMsg},
	}
	switch ru.endpoint.ResponseFormat {
	case FormatJSONSchema, "":
		req.params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: answerSchema()}}
	case FormatJSONObject:
		req.params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	return req, nil
}

var (
	schemaOnce sync.Once
	schema     json.RawMessage
	schemaDesc string
)

// answerSchema is response_format's json_schema: workflow.schema.json,
// without the keys that name the file rather than describe the answer,
// encoded once. It is not strict: strict structured outputs take only a
// subset of JSON Schema, and the linter, not the provider, is the
// authority.
func answerSchema() shared.ResponseFormatJSONSchemaJSONSchemaParam {
	schemaOnce.Do(func() {
		var m map[string]any
		if err := json.Unmarshal(workflow.Schema, &m); err != nil {
			panic("workflow.schema.json does not decode: " + err.Error())
		}
		delete(m, "$schema")
		delete(m, "$id")
		schemaDesc, _ = m["description"].(string)
		b, err := json.Marshal(m)
		if err != nil {
			panic("workflow.schema.json does not encode: " + err.Error())
		}
		schema = b
	})
	return shared.ResponseFormatJSONSchemaJSONSchemaParam{
		Name:        "kobana_agent_answer",
		Description: openai.String(strings.TrimSpace(schemaDesc)),
		Schema:      schema,
		Strict:      openai.Bool(false),
	}
}
