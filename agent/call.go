package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/kobana/workflow/inbox"
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
	tokens                   inbox.Tokens
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
}

// request is one round's request, sent as many times as its retries need.
type request struct {
	endpoint Endpoint
	client   *http.Client
	params   openai.ChatCompletionNewParams
	files    []fileInput
	msg      *eml.Message
}

// send makes one attempt.
func (rq request) send(ctx context.Context) (reply, *failure) {
	opts := []option.RequestOption{
		option.WithBaseURL(rq.endpoint.BaseURL),
		option.WithHTTPClient(rq.client),
		option.WithMaxRetries(0), // the runner retries, and records each attempt
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
		return reply{}, classify(ctx, err)
	}
	if len(res.Choices) == 0 {
		return reply{}, &failure{cause: inbox.CauseProviderError, status: statusOf(httpRes), msg: "the provider answered without a choice"}
	}
	c := res.Choices[0]
	return reply{content: c.Message.Content, refusal: c.Message.Refusal, finish: c.FinishReason,
		tokens: inbox.Tokens{Input: int(res.Usage.PromptTokens), Output: int(res.Usage.CompletionTokens)}}, nil
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// contextLength matches providers' ways of saying the prompt does not fit.
var contextLength = regexp.MustCompile(`(?i)context.length|context.window|maximum context|prompt is too long|input is too long|too many (input )?tokens|reduce the length`)

// classify turns a request's error into a failure.
func classify(ctx context.Context, err error) *failure {
	var ae *AttachmentError
	if errors.As(err, &ae) {
		return &failure{cause: inbox.CauseAttachmentUnreadable, msg: ae.Error()}
	}
	if ctx.Err() != nil {
		return &failure{cause: inbox.CauseModelTimeout, msg: "the model did not answer in time"}
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		// No answer: connection refused or reset, DNS, TLS, or a body that
		// is not a Chat Completions response.
		if strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "invalid character") {
			return &failure{cause: inbox.CauseProviderError, msg: "the provider's answer is not a Chat Completions response: " + clipText(err.Error(), 300)}
		}
		return &failure{cause: inbox.CauseProviderError, retry: true, msg: "no answer from the provider: " + clipText(err.Error(), 300)}
	}
	f := &failure{status: apiErr.StatusCode}
	said := providerSaid(apiErr)
	switch s := apiErr.StatusCode; {
	case s == http.StatusTooManyRequests && (apiErr.Code == "insufficient_quota" || apiErr.Type == "insufficient_quota"):
		f.cause, f.msg = inbox.CauseRateLimited, "the provider's quota is used up (429 insufficient_quota)"+said
	case s == http.StatusTooManyRequests:
		f.cause, f.retry, f.msg = inbox.CauseRateLimited, true, "the provider limited the rate of requests (429)"+said
	case s == http.StatusRequestTimeout || s >= 500:
		f.cause, f.retry, f.msg = inbox.CauseProviderError, true, fmt.Sprintf("the provider failed (%d %s)%s", s, http.StatusText(s), said)
	case s == http.StatusRequestEntityTooLarge || apiErr.Code == "context_length_exceeded" || (s == http.StatusBadRequest && contextLength.MatchString(apiErr.Message)):
		f.cause, f.msg = inbox.CauseContextLength, fmt.Sprintf("the e-mail and instructions do not fit the model's context (%d)%s", s, said)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		f.cause, f.msg = inbox.CauseProviderError, fmt.Sprintf("the provider refused the API key (%d %s); check the key the endpoint is configured with%s", s, http.StatusText(s), said)
	case s == http.StatusNotFound:
		f.cause, f.msg = inbox.CauseProviderError, fmt.Sprintf("the provider does not know the model or the path (404); check the endpoint's base URL and its model names%s", said)
	default:
		f.cause, f.msg = inbox.CauseProviderError, fmt.Sprintf("the provider rejected the request (%d %s)%s", s, http.StatusText(s), said)
	}
	if apiErr.Response != nil {
		f.after, f.hasAfter = retryAfter(apiErr.Response.Header, time.Now())
	}
	return f
}

// providerSaid is the provider's own message, for the record: ": …".
func providerSaid(e *openai.Error) string {
	if m := strings.TrimSpace(e.Message); m != "" {
		return ": " + clipText(m, 300)
	}
	return ""
}

// retryAfter reads the wait a response asks for: Retry-After-Ms, or
// Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
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
