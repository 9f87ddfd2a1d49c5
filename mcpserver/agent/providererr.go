package agent

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// providerError is an error body as a provider wrote it, read whatever its
// shape.
type providerError struct {
	// Message is the provider's own words.
	Message string
	// Code and Type are its codes, as strings ("context_length_exceeded",
	// "400", "RESOURCE_EXHAUSTED"…), for classifying.
	Code, Type, Status string
	// RetryDelay is the wait a google.rpc.RetryInfo detail asks for;
	// HasDelay says one was given.
	RetryDelay time.Duration
	HasDelay   bool
}

// errorShape is every field the providers' error objects use.
type errorShape struct {
	Message json.RawMessage `json:"message"`
	Code    json.RawMessage `json:"code"`
	Type    json.RawMessage `json:"type"`
	Status  json.RawMessage `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
	Error  json.RawMessage `json:"error"`
	Detail json.RawMessage `json:"detail"`
	Object string          `json:"object"`
}

// parseProviderError reads an error body in the shapes providers write:
//
//   - {"error": {"message", "type", "code", "param"}} (OpenAI, vLLM from
//     0.10.1, llama.cpp, Ollama, LiteLLM, OpenRouter);
//   - {"type": "error", "error": {"type", "message"}} (Anthropic);
//   - [{"error": {"code", "message", "status", "details"}}] (Gemini, with
//     a google.rpc.RetryInfo retryDelay among the details);
//   - {"object": "error", "message", "type", "code"} (vLLM before 0.10.1);
//   - {"error": "text"}, {"detail": "text"}, {"message": "text"};
//   - anything else: its text (an HTML page without its tags), clipped.
func parseProviderError(body []byte) providerError {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) == nil && len(arr) > 0 {
			b = bytes.TrimSpace(arr[0])
		}
	}
	var top errorShape
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &top) != nil {
		return providerError{Message: plainText(body)}
	}
	obj := top
	if len(top.Error) > 0 {
		var inner errorShape
		if json.Unmarshal(top.Error, &inner) == nil {
			obj = inner
		} else if s := jsonText(top.Error); s != "" {
			return providerError{Message: s}
		}
	}
	pe := providerError{Message: jsonText(obj.Message), Code: jsonText(obj.Code), Type: jsonText(obj.Type), Status: jsonText(obj.Status)}
	if pe.Message == "" {
		pe.Message = jsonText(top.Detail)
	}
	if pe.Message == "" {
		pe.Message = jsonText(top.Message)
	}
	for _, d := range obj.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if delay, err := time.ParseDuration(d.RetryDelay); err == nil && delay >= 0 {
				pe.RetryDelay, pe.HasDelay = delay, true
			}
		}
	}
	return pe
}

// jsonText is a JSON value as text: a string's contents, a number's
// digits, another value's JSON; "" for null or nothing.
func jsonText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	if v[0] == '{' || v[0] == '[' {
		return ""
	}
	return string(v)
}

var tags = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`)

// plainText is a body that is not JSON as one line of text: an HTML
// page's words without its tags.
func plainText(b []byte) string {
	s := string(b)
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		s = html.UnescapeString(tags.ReplaceAllString(s, " "))
	}
	return clipText(s, 300)
}

// Wordings by which providers say what went wrong, when their status and
// codes do not (LiteLLM maps providers' exceptions the same way).
var (
	// contextLength: the prompt does not fit the model's context window.
	contextLength = regexp.MustCompile(`(?i)context.length|context.window|maximum context|prompt is too long|input is too long|too many (input )?tokens|reduce the length|exceeds the maximum number of tokens|maximum number of tokens allowed|input token count|exceeds the context|longer than the model|maximum prompt length|prompt token count|request too large for model|exceeds the available context|context size`)
	// badKey: the key was refused, whatever the status (Gemini says so
	// with 400 INVALID_ARGUMENT).
	badKey = regexp.MustCompile(`(?i)api[ _-]?key (is )?(not valid|invalid|missing|expired)|invalid[ _-]api[ _-]key|incorrect api key|unauthenticated|permission_denied`)
	// schemaRefused: the provider cannot use the response format asked
	// for (its schema, or JSON mode).
	schemaRefused = regexp.MustCompile(`(?i)json[ _-]?schema|response_format|response_schema|responseschema|json_object|json mode|grammar|guided|xgrammar|llguidance|structured output|invalid .*\bformat\b|unknown name .*(type|pattern|not|const|allof|propertynames)`)
	// quota: the account's quota or credit is used up, not a rate.
	quota = regexp.MustCompile(`(?i)insufficient_quota|insufficient credits|exceeded your current quota.*billing|credit balance is too low|billing`)
	// modelMissing: the model is not served there.
	modelMissing = regexp.MustCompile(`(?i)model.{0,40}(not found|does not exist|not exist|is not supported|unknown|not available)|no such model|unknown model`)
)

// codes joins a provider error's codes and type for matching.
func (pe providerError) codes() string {
	return strings.ToLower(pe.Code + " " + pe.Type + " " + pe.Status)
}

// retryDelayText is a Gemini retryDelay for people.
func retryDelayText(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
