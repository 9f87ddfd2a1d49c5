package standin

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxRequestBytes is the largest request body the server reads.
const MaxRequestBytes = 64 << 20

// Request is one request the server received, decoded.
type Request struct {
	// Model is the model the request named.
	Model string
	// Messages are the conversation sent, in order.
	Messages []Message
	// ResponseFormat is the request's response_format as sent (nil when
	// absent).
	ResponseFormat json.RawMessage
	// Header is the request's headers.
	Header http.Header
	// Body is the request body as received.
	Body []byte
}

// Message is one message of a request.
type Message struct {
	Role string
	// Text is the message's text: a string content, or its text parts
	// joined by newlines.
	Text string
	// Files are the message's file and image parts, in order.
	Files []File
}

// File is a file or image part of a message.
type File struct {
	// Type is "file" or "image_url".
	Type string
	// Filename is the file part's filename ("" for images).
	Filename string
	// Data is the part's data as sent: a data: URL or base64.
	Data string
}

// LastUser is the text of the request's last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Text is every message's text, in order, separated by blank lines.
func (r Request) Text() string {
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, m.Text)
	}
	return strings.Join(parts, "\n\n")
}

// PromptTokens is the prompt token count the server reports for the
// request: EstimateTokens of every message's text and file data.
func (r Request) PromptTokens() int {
	n := 0
	for _, m := range r.Messages {
		n += EstimateTokens(m.Text)
		for _, f := range m.Files {
			n += EstimateTokens(f.Data)
		}
	}
	return n
}

// EstimateTokens is the server's token count of s: one token per four
// bytes, rounded up. It is an estimate that treats every request alike, not
// a tokenizer.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Reply is what the server answers one request with.
type Reply struct {
	// Status is the HTTP status; zero means 200.
	Status int
	// Header is added to the response (e.g. Retry-After).
	Header http.Header
	// Content is the assistant message's content of a 200 answer.
	Content string
	// Refusal, when set, answers with a refusal instead of content.
	Refusal string
	// FinishReason is the choice's finish_reason; empty means "stop".
	FinishReason string
	// Body, when set, is sent as the whole response body instead of a
	// completion (error bodies, malformed answers).
	Body string
	// Hang makes the server answer nothing until the client gives up.
	Hang bool
	// CompletionTokens overrides the estimated completion token count.
	CompletionTokens int
	// CachedTokens is reported as usage.prompt_tokens_details.cached_tokens.
	CachedTokens int
	// NoUsage answers without a usage object, as some servers do.
	NoUsage bool
	// ToolCall puts Content in tool_calls[0].function.arguments (a call
	// of a function named "answer") instead of the message's content.
	ToolCall bool
	// Reasoning is sent as the message's reasoning_content, as vLLM and
	// DeepSeek-style servers send a model's thinking.
	Reasoning string
	// Stream answers 200 with Content as a server-sent event stream
	// (text/event-stream), as a server that only streams does.
	Stream bool
	// HTML answers 200 with an HTML page, as a web server or a login page
	// at the base URL does.
	HTML bool
	// BodyBytes, when positive, answers 200 with a JSON completion whose
	// content is padded to about this many bytes, written as it goes: a
	// provider answering without end.
	BodyBytes int64
}

// Answer is a 200 reply whose assistant message says content.
func Answer(content string) Reply { return Reply{Content: content} }

// Error is a reply with an OpenAI-style error body:
// {"error": {"message", "type", "code"}}.
func Error(status int, code, message string) Reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "stand_in_error", "code": code}})
	return Reply{Status: status, Body: string(b)}
}

// RateLimited is a 429 reply asking the client to wait retryAfter seconds.
func RateLimited(retryAfter int) Reply {
	r := Error(http.StatusTooManyRequests, "rate_limit_exceeded", "rate limit reached, retry later")
	r.Header = http.Header{"Retry-After": {strconv.Itoa(retryAfter)}}
	return r
}

// A Responder picks the reply to a request.
type Responder func(Request) Reply

// Always answers every request with r.
func Always(r Reply) Responder { return func(Request) Reply { return r } }

// Sequence answers the n-th request with the n-th reply; once they are used
// up it answers 500 saying the script ended, so a test that sends one
// request too many sees it.
func Sequence(replies ...Reply) Responder {
	var mu sync.Mutex
	next := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return Error(http.StatusInternalServerError, "script_ended", fmt.Sprintf("the stand-in's script has %d replies and all were used", len(replies)))
		}
		next++
		return replies[next-1]
	}
}

// Match answers with the reply of the first key that the request's last
// user message contains, in the order of keys, else with otherwise.
func Match(keys []string, replies map[string]Reply, otherwise Reply) Responder {
	return func(req Request) Reply {
		text := req.LastUser()
		for _, k := range keys {
			if strings.Contains(text, k) {
				return replies[k]
			}
		}
		return otherwise
	}
}

// Server is the stand-in: an http.Handler serving Chat Completions.
type Server struct {
	respond Responder
	// APIKey, when set, is the bearer token every request must carry;
	// others are answered 401 (Gemini: 400 "API key not valid").
	APIKey string
	// EchoKey makes the answer to a wrong key quote the key it received,
	// as some providers' 401 bodies do.
	EchoKey bool
	// Provider is whose documented behaviour the server reproduces (its
	// response_format checks and error bodies); "" takes every request.
	Provider Provider
	// Latency is how long the server takes to answer a request it takes:
	// a model writing its answer (2 s, 10 s). A client that gives up
	// first gets nothing.
	Latency time.Duration
	// Forget keeps no request (Requests is then empty): for benchmarks
	// that send more than memory should hold.
	Forget bool

	limiter  *limiter
	mu       sync.Mutex
	requests []Request
	seq      int
}

// New returns a server answering with respond.
func New(respond Responder) *Server { return &Server{respond: respond} }

// Limit makes the server enforce rl, as a provider enforces its rate
// limits: every answer carries OpenAI's x-ratelimit-limit|remaining|reset-
// requests|tokens headers, and a request past the limit is answered at
// once with 429, retry-after (seconds) and retry-after-ms. Call it before
// serving.
func (s *Server) Limit(rl RateLimit) { s.limiter = newLimiter(rl, time.Now()) }

// Requests returns the requests received so far, oldest first; requests
// refused before decoding (wrong path, method or key) are included with
// what could be read.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	req := Request{Header: r.Header.Clone(), Body: body}
	if err != nil {
		s.record(req)
		writeReply(w, Error(http.StatusBadRequest, "unreadable_body", "the request body could not be read: "+err.Error()), "", 0, 0)
		return
	}
	if len(body) > MaxRequestBytes {
		s.record(req)
		writeReply(w, Error(http.StatusRequestEntityTooLarge, "request_too_large", "the request body is larger than the stand-in reads"), "", 0, 0)
		return
	}
	if r.Method != http.MethodPost || (r.URL.Path != "/chat/completions" && r.URL.Path != "/v1/chat/completions") {
		s.record(req)
		writeReply(w, Error(http.StatusNotFound, "not_found", fmt.Sprintf("the stand-in serves POST /chat/completions, not %s %s", r.Method, r.URL.Path)), "", 0, 0)
		return
	}
	if s.APIKey != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.APIKey)) != 1 {
			s.record(req)
			msg := "the API key is missing or wrong"
			if s.EchoKey {
				msg = fmt.Sprintf("Incorrect API key provided: %s. You can find your API key in your account settings.", got)
			}
			reply := ErrorFor(s.Provider, http.StatusUnauthorized, "invalid_api_key", msg)
			if s.Provider == Gemini {
				reply = ErrorFor(s.Provider, http.StatusBadRequest, "", "API key not valid. Please pass a valid API key. "+strings.TrimPrefix(msg, "the API key is missing or wrong"))
			}
			writeReply(w, reply, "", 0, 0)
			return
		}
	}
	if err := decode(body, &req); err != nil {
		s.record(req)
		writeReply(w, Error(http.StatusBadRequest, "invalid_request", err.Error()), "", 0, 0)
		return
	}
	n := s.record(req)
	if s.limiter != nil && !s.limiter.take(req.PromptTokens(), time.Now(), w.Header()) {
		writeReply(w, Error(http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached for requests: the stand-in's limit; retry after the time in retry-after"), req.Model, n, 0)
		return
	}
	if s.Latency > 0 {
		t := time.NewTimer(s.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if refused, ok := checkRequest(s.Provider, req); !ok {
		writeReply(w, refused, req.Model, n, 0)
		return
	}
	reply := s.respond(req)
	switch {
	case reply.Hang:
		<-r.Context().Done()
		return
	case reply.Stream:
		writeStream(w, reply, req.Model, n)
		return
	case reply.HTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "<!doctype html><html><head><title>Sign in</title></head><body><h1>Welcome</h1><p>Please sign in to continue.</p></body></html>\n")
		return
	case reply.BodyBytes > 0:
		writeHuge(w, reply, req.Model, n)
		return
	}
	writeReply(w, reply, req.Model, n, req.PromptTokens())
}

// writeStream answers with a server-sent event stream of one chunk of
// content, then [DONE].
func writeStream(w http.ResponseWriter, r Reply, model string, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	chunk, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-standin-%d", n), "object": "chat.completion.chunk", "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": r.Content}, "finish_reason": "stop"}}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
}

// writeHuge writes a completion of about r.BodyBytes bytes, a piece at a
// time, until it is written or the client goes away.
func writeHuge(w http.ResponseWriter, r Reply, model string, n int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	head := fmt.Sprintf(`{"id":"chatcmpl-standin-%d","object":"chat.completion","model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`, n, model)
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	piece := []byte(strings.Repeat("x", 64<<10))
	for written := int64(0); written < r.BodyBytes; written += int64(len(piece)) {
		if _, err := w.Write(piece); err != nil {
			return
		}
	}
	io.WriteString(w, `"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
}

func (s *Server) record(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.Forget {
		s.requests = append(s.requests, req)
	}
	s.seq++
	return s.seq
}

// wireRequest is the part of a Chat Completions request the server reads.
type wireRequest struct {
	Model          string          `json:"model"`
	Messages       []wireMessage   `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
	File struct {
		Filename string `json:"filename"`
		FileData string `json:"file_data"`
	} `json:"file"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func decode(body []byte, req *Request) error {
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return fmt.Errorf("the request body is not a Chat Completions request: %v", err)
	}
	if wr.Model == "" {
		return errors.New(`the request names no "model"`)
	}
	if len(wr.Messages) == 0 {
		return errors.New(`the request has no "messages"`)
	}
	req.Model = wr.Model
	if len(wr.ResponseFormat) > 0 && string(wr.ResponseFormat) != "null" {
		req.ResponseFormat = wr.ResponseFormat
	}
	for i, wm := range wr.Messages {
		m := Message{Role: wm.Role}
		var text string
		var parts []wirePart
		switch {
		case json.Unmarshal(wm.Content, &text) == nil:
			m.Text = text
		case json.Unmarshal(wm.Content, &parts) == nil:
			var texts []string
			for _, p := range parts {
				switch p.Type {
				case "text":
					texts = append(texts, p.Text)
				case "file":
					m.Files = append(m.Files, File{Type: "file", Filename: p.File.Filename, Data: p.File.FileData})
				case "image_url":
					m.Files = append(m.Files, File{Type: "image_url", Data: p.ImageURL.URL})
				default:
					return fmt.Errorf("message %d has a content part of unknown type %q", i, p.Type)
				}
			}
			m.Text = strings.Join(texts, "\n")
		default:
			return fmt.Errorf("message %d: content is neither a string nor an array of parts", i)
		}
		req.Messages = append(req.Messages, m)
	}
	return nil
}

func writeReply(w http.ResponseWriter, r Reply, model string, n, promptTokens int) {
	for k, vs := range r.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	body := []byte(r.Body)
	if r.Body == "" {
		body = completion(r, model, n, promptTokens)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func completion(r Reply, model string, n, promptTokens int) []byte {
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
	}
	msg := map[string]any{"role": "assistant", "content": r.Content, "refusal": nil}
	if r.Refusal != "" {
		msg["content"], msg["refusal"] = nil, r.Refusal
	}
	if r.ToolCall {
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": "answer", "arguments": r.Content}}}
		if finish == "stop" {
			finish = "tool_calls"
		}
	}
	if r.Reasoning != "" {
		msg["reasoning_content"] = r.Reasoning
	}
	out := r.CompletionTokens
	if out == 0 {
		out = EstimateTokens(r.Content + r.Refusal + r.Reasoning)
	}
	body := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-standin-%d", n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
	}
	if !r.NoUsage {
		usage := map[string]any{"prompt_tokens": promptTokens, "completion_tokens": out, "total_tokens": promptTokens + out}
		if r.CachedTokens > 0 {
			usage["prompt_tokens_details"] = map[string]any{"cached_tokens": r.CachedTokens}
		}
		body["usage"] = usage
	}
	b, _ := json.Marshal(body)
	return b
}

// Start serves s on a fresh port of 127.0.0.1 and returns the base URL to
// configure a client with (http://127.0.0.1:PORT/v1) and a function that
// stops it.
func (s *Server) Start() (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("starting the model stand-in: %w", err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(ln)
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
		<-done
	}
	return "http://" + ln.Addr().String() + "/v1", stop, nil
}

// Contains reports whether any request received so far holds needle
// anywhere in its body or headers.
func (s *Server) Contains(needle string) bool {
	for _, r := range s.Requests() {
		if bytes.Contains(r.Body, []byte(needle)) {
			return true
		}
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, needle) {
					return true
				}
			}
		}
	}
	return false
}
