package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve/eml"
)

// Retry is how a request the provider may answer later is tried again: a
// 429, a 408, a 5xx (529 included), or no answer at all (connection
// refused or reset). The wait is the provider's Retry-After (or
// Retry-After-Ms) when it gives one, else an exponential backoff with
// jitter; a wait that would pass the agent's timeout is not waited.
type Retry struct {
	// Attempts is the most requests per round, the first included; 0
	// means 4.
	Attempts int
	// Backoff is the first wait without a Retry-After, doubled each
	// attempt; 0 means 1 s.
	Backoff time.Duration
	// MaxWait is the longest single wait, whatever the provider asks; 0
	// means 60 s. A longer Retry-After ends the retries.
	MaxWait time.Duration
}

func (r Retry) attempts() int {
	if r.Attempts <= 0 {
		return 4
	}
	return r.Attempts
}

func (r Retry) maxWait() time.Duration {
	if r.MaxWait <= 0 {
		return 60 * time.Second
	}
	return r.MaxWait
}

// backoff is the wait after the n-th failed attempt (from 1) when the
// provider named none: Backoff·2^(n-1), less up to a quarter of jitter,
// at most MaxWait.
func (r Retry) backoff(n int) time.Duration {
	base := r.Backoff
	if base <= 0 {
		base = time.Second
	}
	d := base << min(n-1, 20)
	if d <= 0 || d > r.maxWait() {
		d = r.maxWait()
	}
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// reply is a model's answer to one request.
type reply struct {
	content, refusal, finish string
	// reasoning is the thinking the provider sent beside the content
	// (reasoning_content).
	reasoning string
	// toolCall says the answer came as a tool call's arguments.
	toolCall bool
	tokens   inbox.Tokens
	// noUsage says the provider reported no usage for the answer.
	noUsage bool
	// header is the answer's headers, for the budget.
	header http.Header
}

// failure is a request that got no usable answer, classified.
type failure struct {
	cause  inbox.Cause
	msg    string
	status int
	// retry says a later attempt may succeed; after is the wait the
	// provider asked for (hasAfter).
	retry    bool
	after    time.Duration
	hasAfter bool
	// formatRefused says the provider refused the response format asked
	// for (its schema or JSON mode): asking with a simpler one may work.
	formatRefused bool
	// header is the answer's headers when one came, for the budget.
	header http.Header
	// closed says the budget refused the request because the server is
	// stopping: nothing was sent, and the run is not a result.
	closed bool
}

// MaxResponseBytes is the most bytes of a provider's answer the runner
// reads; a longer one fails the request as provider_error. A complete
// answer is a few kilobytes, an error body less.
const MaxResponseBytes = 8 << 20

// request is one round's request, sent as many times as its retries need.
type request struct {
	endpoint Endpoint
	client   *http.Client
	params   openai.ChatCompletionNewParams
	files    []fileInput
	msg      *eml.Message
	// format is the response format the params ask for.
	format string
	// family is the endpoint's provider family.
	family Family
	// promptBytes is the size of the messages' text and files, for the
	// budget's token estimate.
	promptBytes int64
}

// answerAllowance is the tokens an answer is expected to take, added to
// the prompt's in a call's estimate: a workflow of a few steps.
const answerAllowance = 1024

// estimate is the tokens the request is expected to use: its prompt's (a
// token per four bytes) and an answer's.
func (rq *request) estimate() int { return int(rq.promptBytes/4) + answerAllowance }

// setFormat makes the request ask for JSON with format, the schema being
// the family's.
func (rq *request) setFormat(format string) {
	rq.format = format
	switch format {
	case FormatJSONSchema:
		rq.params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: answerSchema(rq.family)}}
	case FormatJSONObject:
		rq.params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	default:
		rq.params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{}
	}
}

// notCompletion is a 200 answer that is not a Chat Completions response:
// an event stream, a web page. Asking again gets the same.
type notCompletion struct{ what string }

func (e *notCompletion) Error() string {
	return "the provider answered 200 with " + e.what + ", not a Chat Completions response"
}

// errTooLarge is an answer past MaxResponseBytes.
var errTooLarge = fmt.Errorf("the provider's answer is larger than %d MiB, the most the runner reads", MaxResponseBytes>>20)

// cappedBody reads at most MaxResponseBytes of a response body, then fails
// with errTooLarge.
type cappedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.r.Close() }

// inspect caps every answer's body and refuses a 200 that is not JSON: an
// event stream (a server that only streams), an HTML page (a wrong base
// URL, a login page). A JSON body sent under another content type is
// read as JSON.
func inspect(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(r)
	if err != nil || res == nil {
		return res, err
	}
	res.Body = &cappedBody{r: res.Body, left: MaxResponseBytes}
	if res.StatusCode >= 300 {
		return res, nil
	}
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return res, nil
	}
	br := bufio.NewReader(res.Body)
	head, _ := br.Peek(512)
	first := bytes.TrimLeft(head, " \t\r\n\ufeff")
	res.Body = struct {
		io.Reader
		io.Closer
	}{br, res.Body}
	var what string
	switch {
	case len(first) > 0 && first[0] == '{':
		res.Header.Set("Content-Type", "application/json")
		return res, nil
	case mt == "text/event-stream" || bytes.HasPrefix(first, []byte("data:")) || bytes.HasPrefix(first, []byte("event:")):
		what = "a server-sent event stream (the endpoint only streams)"
	case mt == "text/html" || len(first) > 0 && first[0] == '<':
		what = "an HTML page (is the base URL the API's, not a web page or a sign-in page?)"
	case mt == "":
		what = "a body of no declared type"
	default:
		what = "a body of type " + mt
	}
	res.Body.Close()
	return nil, &notCompletion{what: what}
}

// send makes one attempt.
func (rq request) send(ctx context.Context) (reply, *failure) {
	opts := []option.RequestOption{
		option.WithBaseURL(rq.endpoint.BaseURL),
		option.WithHTTPClient(rq.client),
		option.WithMaxRetries(0), // the runner retries, and records each attempt
		option.WithMiddleware(inspect),
	}
	if k := rq.endpoint.apiKeyValue(); k != "" {
		opts = append(opts, option.WithAPIKey(k))
	}
	if len(rq.files) > 0 {
		enc, err := rq.params.MarshalJSON()
		if err != nil {
			return reply{}, &failure{cause: inbox.CauseProviderError, msg: "encoding the request: " + err.Error()}
		}
		body, err := newStreamedBody(enc, rq.files, rq.msg)
		if err != nil {
			return reply{}, &failure{cause: inbox.CauseProviderError, msg: "encoding the request: " + err.Error()}
		}
		opts = append(opts, option.WithRequestBody("application/json", body),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				r.ContentLength = body.size
				return next(r)
			}))
	}
	svc := openai.NewChatCompletionService(opts...)
	var httpRes *http.Response
	res, err := svc.New(ctx, rq.params, option.WithResponseInto(&httpRes))
	if err != nil {
		f := classify(ctx, err)
		f.formatRefused = f.formatRefused && rq.format != FormatNone
		if httpRes != nil {
			f.header = httpRes.Header
		}
		return reply{}, f
	}
	if len(res.Choices) == 0 {
		return reply{}, &failure{cause: inbox.CauseProviderError, status: statusOf(httpRes), msg: "the provider answered without a choice"}
	}
	c := res.Choices[0]
	out := reply{content: c.Message.Content, refusal: c.Message.Refusal, finish: c.FinishReason,
		tokens: inbox.Tokens{Input: int(res.Usage.PromptTokens), Output: int(res.Usage.CompletionTokens),
			Cached: int(res.Usage.PromptTokensDetails.CachedTokens)},
		noUsage: !res.JSON.Usage.Valid()}
	if httpRes != nil {
		out.header = httpRes.Header
	}
	if strings.TrimSpace(out.content) == "" && len(c.Message.ToolCalls) > 0 {
		out.content, out.toolCall = c.Message.ToolCalls[0].Function.Arguments, true
	}
	if f, ok := c.Message.JSON.ExtraFields["reasoning_content"]; ok {
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil {
			out.reasoning = s
		}
	}
	return out, nil
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// classify turns a request's error into a failure.
func classify(ctx context.Context, err error) *failure {
	var ae *AttachmentError
	if errors.As(err, &ae) {
		return &failure{cause: inbox.CauseAttachmentUnreadable, msg: ae.Error()}
	}
	if ctx.Err() != nil {
		return &failure{cause: inbox.CauseModelTimeout, msg: "the model did not answer in time"}
	}
	var nc *notCompletion
	if errors.As(err, &nc) {
		return &failure{cause: inbox.CauseProviderError, status: http.StatusOK, msg: nc.Error() + "; it is not asked again"}
	}
	if errors.Is(err, errTooLarge) {
		return &failure{cause: inbox.CauseProviderError, msg: errTooLarge.Error() + "; it is not asked again"}
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		// No answer: connection refused or reset, DNS, TLS, or a body that
		// is not a Chat Completions response.
		if strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "invalid character") || strings.Contains(err.Error(), "parsing response json") {
			return &failure{cause: inbox.CauseProviderError, msg: "the provider's answer is not a Chat Completions response: " + clipText(err.Error(), 300)}
		}
		return &failure{cause: inbox.CauseProviderError, retry: true, msg: "no answer from the provider: " + clipText(err.Error(), 300)}
	}
	pe := providerError{Message: apiErr.Message, Code: apiErr.Code, Type: apiErr.Type}
	if apiErr.Response != nil && apiErr.Response.Body != nil {
		if body, rerr := io.ReadAll(io.LimitReader(apiErr.Response.Body, 64<<10)); rerr == nil && len(body) > 0 {
			pe = parseProviderError(body)
		}
	}
	f := &failure{status: apiErr.StatusCode}
	said := ""
	if m := strings.TrimSpace(pe.Message); m != "" {
		said = ": " + clipText(m, 300)
	}
	codes := pe.codes()
	switch s := apiErr.StatusCode; {
	case s == http.StatusTooManyRequests && (strings.Contains(codes, "insufficient_quota") || quota.MatchString(pe.Message) && !pe.HasDelay):
		f.cause, f.msg = inbox.CauseRateLimited, fmt.Sprintf("the provider's quota is used up (429)%s", said)
	case s == http.StatusTooManyRequests:
		f.cause, f.retry, f.msg = inbox.CauseRateLimited, true, "the provider limited the rate of requests (429)"+said
	case s == http.StatusRequestEntityTooLarge || strings.Contains(codes, "context_length_exceeded") || contextLength.MatchString(pe.Message):
		f.cause, f.msg = inbox.CauseContextLength, fmt.Sprintf("the e-mail and instructions do not fit the model's context (%d)%s", s, said)
	case s == http.StatusUnauthorized || s == http.StatusForbidden || badKey.MatchString(pe.Message) || strings.Contains(codes, "invalid_api_key") || strings.Contains(codes, "unauthenticated"):
		f.cause, f.msg = inbox.CauseProviderError, fmt.Sprintf("the provider refused the API key (%d %s); check the key the endpoint is configured with%s", s, http.StatusText(s), said)
	case (s == http.StatusBadRequest || s == http.StatusUnprocessableEntity || s >= 500) && schemaRefused.MatchString(pe.Message):
		f.cause, f.formatRefused, f.msg = inbox.CauseProviderError, true, fmt.Sprintf("the provider refused the response format (%d %s)%s", s, http.StatusText(s), said)
	case s == http.StatusNotFound || modelMissing.MatchString(pe.Message):
		f.cause, f.msg = inbox.CauseProviderError, fmt.Sprintf("the provider does not know the model or the path (%d); check the endpoint's base URL and its model names%s", s, said)
	case s == http.StatusRequestTimeout || s >= 500:
		f.cause, f.retry, f.msg = inbox.CauseProviderError, true, fmt.Sprintf("the provider failed (%d %s)%s", s, http.StatusText(s), said)
	default:
		f.cause, f.msg = inbox.CauseProviderError, fmt.Sprintf("the provider rejected the request (%d %s)%s", s, http.StatusText(s), said)
	}
	if apiErr.Response != nil {
		f.after, f.hasAfter = budget.RetryAfter(apiErr.Response.Header, time.Now())
	}
	if !f.hasAfter && pe.HasDelay {
		f.after, f.hasAfter = pe.RetryDelay, true
		f.msg += " (retryDelay " + retryDelayText(pe.RetryDelay) + ")"
	}
	return f
}

// clipText makes s one line of at most n bytes.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
