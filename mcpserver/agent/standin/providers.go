package standin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Provider is a model server whose documented behaviour the stand-in
// reproduces: how it takes response_format, and how it writes its errors.
// The zero Provider takes every request and writes OpenAI's errors.
type Provider string

// Providers whose behaviour the stand-in reproduces. Each reproduces only
// what its documentation (or its source, for the open servers) says; the
// tests that use one name it.
const (
	// OpenAI takes any json_schema when strict is false; errors are
	// {"error": {"message", "type", "param", "code"}}.
	OpenAI Provider = "openai"
	// Anthropic's OpenAI SDK compatibility layer ignores response_format
	// and rejects an assistant message whose text is empty (400,
	// "messages: text content blocks must be non-empty"); errors are
	// Anthropic's {"type": "error", "error": {"type", "message"}}.
	Anthropic Provider = "anthropic"
	// Gemini's OpenAI-compatible endpoint takes a subset of JSON Schema
	// and writes errors as a JSON array, [{"error": {"code", "message",
	// "status", "details"}}], with a google.rpc.RetryInfo retryDelay in
	// the details of a 429.
	Gemini Provider = "gemini"
	// VLLM is vLLM from 0.10.1 with xgrammar guided decoding: a schema
	// with propertyNames is refused (400); errors are OpenAI's shape.
	VLLM Provider = "vllm"
	// VLLMLLGuidance is vLLM with the llguidance backend: a schema with
	// "not" is refused.
	VLLMLLGuidance Provider = "vllm-llguidance"
	// VLLMLegacy is vLLM before 0.10.1 (xgrammar): errors are a flat
	// {"object": "error", "message", "type", "param", "code"}.
	VLLMLegacy Provider = "vllm-legacy"
	// LlamaCpp is llama.cpp's server: its JSON-schema-to-grammar converter
	// refuses a pattern not anchored ^…$, a (?: group, and a schema that
	// holds only a description (500, "JSON schema conversion failed").
	LlamaCpp Provider = "llama.cpp"
	// Ollama has llama.cpp's converter behind its format parameter and
	// answers what it cannot convert with 500 "invalid JSON schema in
	// format".
	Ollama Provider = "ollama"
)

// Providers lists the providers the stand-in reproduces.
func Providers() []Provider {
	return []Provider{OpenAI, Anthropic, Gemini, VLLM, VLLMLLGuidance, VLLMLegacy, LlamaCpp, Ollama}
}

// ErrorFor is a reply with the error body provider p writes for status
// and message: its own shape, so a client must read each.
func ErrorFor(p Provider, status int, code, message string) Reply {
	var v any
	switch p {
	case Gemini:
		v = []any{map[string]any{"error": map[string]any{"code": status, "message": message, "status": googleStatus(status)}}}
	case VLLMLegacy:
		v = map[string]any{"object": "error", "message": message, "type": "BadRequestError", "param": nil, "code": status}
	case Anthropic:
		v = map[string]any{"type": "error", "error": map[string]any{"type": code, "message": message}}
	case LlamaCpp:
		v = map[string]any{"error": map[string]any{"code": status, "message": message, "type": code}}
	case VLLM, VLLMLLGuidance:
		v = map[string]any{"error": map[string]any{"message": message, "type": "BadRequestError", "param": nil, "code": status}}
	default:
		return Error(status, code, message)
	}
	b, _ := json.Marshal(v)
	return Reply{Status: status, Body: string(b)}
}

// GeminiRateLimited is Gemini's 429: RESOURCE_EXHAUSTED with the wait in
// a google.rpc.RetryInfo detail and no Retry-After header.
func GeminiRateLimited(retryDelay string) Reply {
	b, _ := json.Marshal([]any{map[string]any{"error": map[string]any{
		"code": 429, "status": "RESOURCE_EXHAUSTED",
		"message": "You exceeded your current quota, please check your plan and billing details.",
		"details": []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryDelay},
		},
	}}})
	return Reply{Status: http.StatusTooManyRequests, Body: string(b)}
}

func googleStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// checkRequest is what provider p refuses in a request before any model
// runs: its response_format, an empty assistant message. ok is false with
// the reply p answers.
func checkRequest(p Provider, req Request) (Reply, bool) {
	if p == Anthropic {
		for i, m := range req.Messages {
			if m.Role == "assistant" && strings.TrimSpace(m.Text) == "" && len(m.Files) == 0 {
				return ErrorFor(p, 400, "invalid_request_error", fmt.Sprintf("messages.%d: text content blocks must be non-empty", i)), false
			}
		}
		return Reply{}, true // response_format is ignored
	}
	schema, ok := jsonSchemaOf(req.ResponseFormat)
	if !ok {
		return Reply{}, true
	}
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return ErrorFor(p, 400, "invalid_request_error", "response_format.json_schema.schema is not JSON"), false
	}
	problem, at := schemaProblem(p, doc, "")
	if problem == "" {
		return Reply{}, true
	}
	switch p {
	case Gemini:
		return ErrorFor(p, 400, "", fmt.Sprintf("Invalid JSON payload received. %s at 'generation_config.response_schema%s'", problem, at)), false
	case VLLM, VLLMLegacy:
		return ErrorFor(p, 400, "", "The provided JSON schema contains features not supported by xgrammar: "+problem), false
	case VLLMLLGuidance:
		return ErrorFor(p, 400, "", "Error in guided decoding (llguidance): "+problem), false
	case LlamaCpp:
		return ErrorFor(p, 500, "server_error", "\"json_schema\": JSON schema conversion failed:\n"+problem), false
	case Ollama:
		// Ollama reports the converter's failure without its reason.
		return ErrorFor(p, 500, "api_error", "invalid JSON schema in format"), false
	}
	return Reply{}, true
}

// jsonSchemaOf is the schema of a response_format {"type": "json_schema"}.
func jsonSchemaOf(rf json.RawMessage) (json.RawMessage, bool) {
	if len(rf) == 0 {
		return nil, false
	}
	var f struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(rf, &f) != nil || f.Type != "json_schema" || len(f.JSONSchema.Schema) == 0 {
		return nil, false
	}
	return f.JSONSchema.Schema, true
}

// geminiUnknown are keywords outside Gemini's schema subset.
var geminiUnknown = map[string]bool{"not": true, "propertyNames": true, "const": true, "allOf": true, "$schema": true, "examples": true}

// schemaProblem is the first thing in schema that provider p refuses, and
// where (a path in Gemini's style); "" when it takes all of it.
func schemaProblem(p Provider, v any, at string) (problem, where string) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if pr, w := schemaProblem(p, e, fmt.Sprintf("%s[%d]", at, i)); pr != "" {
				return pr, w
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if (p == LlamaCpp || p == Ollama) && onlyDescription(x) {
			b, _ := json.Marshal(x)
			return "Unrecognized schema: " + string(b), at
		}
		for _, k := range keys {
			val := x[k]
			switch p {
			case Gemini:
				if geminiUnknown[k] {
					return fmt.Sprintf("Unknown name %q: Cannot find field.", k), at
				}
				if _, list := val.([]any); list && k == "type" {
					return `Unknown name "type": Proto field is not repeating, cannot start list.`, at
				}
			case VLLM, VLLMLegacy:
				if k == "propertyNames" {
					return `the keyword "propertyNames" is not supported`, at
				}
			case VLLMLLGuidance:
				if k == "not" {
					return `Unimplemented keys: ["not"]`, at
				}
			case LlamaCpp, Ollama:
				if k == "pattern" {
					if s, _ := val.(string); !strings.HasPrefix(s, "^") || !strings.HasSuffix(s, "$") {
						return "Pattern must start with '^' and end with '$'", at
					} else if strings.Contains(s, "(?") {
						return "Unsupported pattern syntax: (? groups are not supported", at
					}
				}
			}
			if k == "enum" || k == "required" || k == "const" || k == "examples" || k == "default" {
				continue // values, not schemas
			}
			if pr, w := schemaProblem(p, val, at+"."+k); pr != "" {
				return pr, w
			}
		}
	}
	return "", ""
}

// onlyDescription reports a schema object with a description and no
// other keyword.
func onlyDescription(m map[string]any) bool {
	_, ok := m["description"]
	return ok && len(m) == 1
}
