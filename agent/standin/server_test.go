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
