package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kobana/workflow/mcpserver/agent/prompt"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// instantServer answers every Chat Completions request at once with the
// complete example, reading and discarding the request: a model that takes
// no time, so what is measured is the client's own work.
func instantServer(b *testing.B) *httptest.Server {
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": payableAnswer}}},
		"usage":   map[string]any{"prompt_tokens": 1700, "completion_tokens": 250, "total_tokens": 1950},
	})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	b.Cleanup(s.Close)
	return s
}

// BenchmarkRunnerOverhead is one agent run on the sample invoice against
// an instant server: prompt, request, answer, lint, result. Compare with
// BenchmarkBareSDKCall, the same request sent by the SDK alone, in the same
// run: the difference is the runner's own overhead per agent run.
//
//	go test ./agent -run '^$' -bench 'RunnerOverhead|BareSDKCall' -benchmem
func BenchmarkRunnerOverhead(b *testing.B) {
	s := instantServer(b)
	ep := Endpoint{BaseURL: s.URL + "/v1", ResponseFormat: FormatJSONSchema, Family: FamilyOpenAI, key: newKey(testKey)}
	r := &Runner{Config: Config{Providers: map[string]Endpoint{AnyProvider: ep}}}
	in := invoiceInput(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.RunAgent(context.Background(), in)
		if err != nil || res.Status != inbox.RunSucceeded {
			b.Fatalf("%v %s %s", err, res.Cause, res.Error)
		}
	}
}

// BenchmarkBareSDKCall sends the request an agent run sends — the same
// messages and response format — with the SDK alone, and decodes the answer.
func BenchmarkBareSDKCall(b *testing.B) {
	s := instantServer(b)
	in := invoiceInput(b)
	p, err := prompt.Render(prompt.Input{Agent: in.Agent, InboxAddress: in.Inbox.Address, SecretNames: in.SecretNames, Email: in.Email})
	if err != nil {
		b.Fatal(err)
	}
	params := openai.ChatCompletionNewParams{
		Model:          "claude-sonnet-4-5",
		Messages:       []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(p.System), openai.UserMessage(p.User)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: answerSchema(FamilyOpenAI)}},
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	svc := openai.NewChatCompletionService(option.WithBaseURL(s.URL+"/v1"), option.WithAPIKey(testKey), option.WithHTTPClient(client), option.WithMaxRetries(0))
	b.ReportAllocs()
	for b.Loop() {
		res, err := svc.New(context.Background(), params)
		if err != nil || len(res.Choices) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkCappedAnswer is one agent run against a provider that answers
// 150 MiB: B/op is what the runner allocates before it stops reading at
// MaxResponseBytes (compare with the 150 MiB the provider sends).
//
//	go test ./agent -run '^$' -bench CappedAnswer -benchmem
func BenchmarkCappedAnswer(b *testing.B) {
	srv := standin.New(standin.Always(standin.Reply{BodyBytes: 150 << 20}))
	s := httptest.NewServer(srv)
	b.Cleanup(s.Close)
	ep := Endpoint{BaseURL: s.URL + "/v1", ResponseFormat: FormatJSONSchema, Family: FamilyOpenAI}
	r := &Runner{Config: Config{Providers: map[string]Endpoint{AnyProvider: ep}}}
	in := invoiceInput(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.RunAgent(context.Background(), in)
		if err != nil || res.Cause != inbox.CauseProviderError {
			b.Fatalf("%v %s %s", err, res.Cause, res.Error)
		}
	}
}
