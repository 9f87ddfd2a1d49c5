package standin

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, key, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("the stand-in answered %d with a body that is not JSON: %s", res.StatusCode, b)
	}
	return res.StatusCode, res.Header, v
}

const chat = `{"model": "m", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,QUJD"}}]}]}`

func TestServer(t *testing.T) {
	s := New(Match([]string{"hello"}, map[string]Reply{"hello": Answer(`{"result": 1}`)}, Answer("otherwise")))
	s.APIKey = "k"
	base, stop, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	code, _, v := post(t, base+"/chat/completions", "k", chat)
	if code != 200 {
		t.Fatalf("status %d: %v", code, v)
	}
	choice := v["choices"].([]any)[0].(map[string]any)
	if choice["message"].(map[string]any)["content"] != `{"result": 1}` || choice["finish_reason"] != "stop" {
		t.Errorf("choice %v", choice)
	}
	usage := v["usage"].(map[string]any)
	// "be brief" 2 tokens, "hello" 2, the file data's 32 bytes 8.
	if usage["prompt_tokens"] != float64(12) || usage["completion_tokens"] != float64(EstimateTokens(`{"result": 1}`)) {
		t.Errorf("usage %v", usage)
	}
	r := s.Requests()[0]
	if r.Model != "m" || len(r.Messages) != 2 || r.Messages[1].Text != "hello" || r.LastUser() != "hello" ||
		len(r.Messages[1].Files) != 1 || r.Messages[1].Files[0].Filename != "a.pdf" {
		t.Errorf("recorded %+v", r)
	}
	if !s.Contains("QUJD") || s.Contains("absent") {
		t.Error("Contains does not search the bodies")
	}

	for _, c := range []struct {
		path, key, body string
		status          int
		code            string
	}{
		{"/chat/completions", "", chat, 401, "invalid_api_key"},
		{"/chat/completions", "wrong", chat, 401, "invalid_api_key"},
		{"/completions", "k", chat, 404, "not_found"},
		{"/chat/completions", "k", `{"model": "m"}`, 400, "invalid_request"},
		{"/chat/completions", "k", `{"messages": [{"role": "user", "content": "x"}]}`, 400, "invalid_request"},
		{"/chat/completions", "k", `{"model": "m", "messages": [{"role": "user", "content": [{"type": "audio"}]}]}`, 400, "invalid_request"},
		{"/chat/completions", "k", `nope`, 400, "invalid_request"},
	} {
		code, _, v := post(t, base+c.path, c.key, c.body)
		if code != c.status || v["error"].(map[string]any)["code"] != c.code {
			t.Errorf("%s %q %s: %d %v", c.path, c.key, c.body, code, v)
		}
	}
}

func TestSequence(t *testing.T) {
	s := New(Sequence(RateLimited(2), Reply{Refusal: "no", FinishReason: "stop"}))
	base, stop, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	code, h, v := post(t, base+"/chat/completions", "", chat)
	if code != 429 || h.Get("Retry-After") != "2" || v["error"].(map[string]any)["code"] != "rate_limit_exceeded" {
		t.Errorf("first: %d %v %v", code, h, v)
	}
	code, _, v = post(t, base+"/chat/completions", "", chat)
	msg := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if code != 200 || msg["refusal"] != "no" || msg["content"] != nil {
		t.Errorf("second: %d %v", code, v)
	}
	code, _, v = post(t, base+"/chat/completions", "", chat)
	if code != 500 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "all were used") {
		t.Errorf("third: %d %v", code, v)
	}
}

// TestProviders checks what each provider stand-in refuses and how it
// writes the refusal, as its documentation says.
func TestProviders(t *testing.T) {
	schema := func(s string) string {
		return `{"model": "m", "messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": ` + s + `}}}`
	}
	for _, c := range []struct {
		p      Provider
		body   string
		status int
		says   string
	}{
		{LlamaCpp, schema(`{"type": "object", "properties": {"u": {"type": "string", "pattern": "^(?:a|b)$"}}}`), 500, `JSON schema conversion failed:\nUnsupported pattern syntax`},
		{LlamaCpp, schema(`{"type": "string", "pattern": "^a"}`), 500, "Pattern must start with '^' and end with '$'"},
		{LlamaCpp, schema(`{"type": "object", "properties": {"r": {"description": "any"}}}`), 500, "Unrecognized schema"},
		{LlamaCpp, schema(`{"type": "string", "pattern": "^[a-z]+$"}`), 200, ""},
		{Ollama, schema(`{"type": "string", "pattern": "a"}`), 500, "invalid JSON schema in format"},
		{VLLM, schema(`{"type": "object", "propertyNames": {"pattern": "^a$"}}`), 400, "propertyNames"},
		{VLLM, schema(`{"type": "object", "not": {"required": ["a"]}}`), 200, ""},
		{VLLMLLGuidance, schema(`{"type": "object", "not": {"required": ["a"]}}`), 400, `Unimplemented keys: [\"not\"]`},
		{VLLMLegacy, schema(`{"type": "object", "propertyNames": {}}`), 400, `"object":"error"`},
		{Gemini, schema(`{"type": ["string", "null"]}`), 400, "Proto field is not repeating"},
		{Gemini, schema(`{"type": "object", "properties": {"t": {"const": "request"}}}`), 400, `Unknown name \"const\"`},
		{Anthropic, schema(`{"not": {}}`), 200, ""},
		{Anthropic, `{"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}, {"role": "user", "content": "again"}]}`, 400, "text content blocks must be non-empty"},
		{OpenAI, schema(`{"not": {}, "propertyNames": {}, "type": ["string", "null"]}`), 200, ""},
	} {
		s := New(Always(Answer(`{"result": 1}`)))
		s.Provider = c.p
		base, stop, err := s.Start()
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", strings.NewReader(c.body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		stop()
		if res.StatusCode != c.status || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.p, res.StatusCode, b, c.status, c.says)
		}
		if c.p == Gemini && c.status != 200 && !strings.HasPrefix(string(b), "[") {
			t.Errorf("gemini's error is not a JSON array: %s", b)
		}
	}
}
