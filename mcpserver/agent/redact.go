package agent

import (
	"encoding/json"
	"strings"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve"
)

// keyRedacted is what an API key a provider echoed back is recorded as.
const keyRedacted = "[redacted api key]"

// redactKey removes the endpoint's API key from every text of a result
// that came from the provider — errors (some 401 bodies quote the key),
// the answer, its output and diagnostics, the thinking — before the result
// is stored, logged or sent anywhere: as written, percent-encoded and
// JSON-escaped (resolve.Redactor's forms), the output and diagnostics as
// JSON so they stay valid.
func redactKey(res *inbox.AgentResult, key string) {
	if key == "" {
		return
	}
	red := &resolve.Redactor{}
	red.Replace(key, keyRedacted)
	text := func(s string) string {
		if len(key) < resolve.MinReplaced {
			return strings.ReplaceAll(s, key, keyRedacted)
		}
		return red.String(s)
	}
	doc := func(b json.RawMessage) json.RawMessage {
		if len(b) == 0 {
			return b
		}
		if len(key) < resolve.MinReplaced {
			return json.RawMessage(strings.ReplaceAll(string(b), key, keyRedacted))
		}
		if out, ok := red.JSON(b); ok {
			return out
		}
		return json.RawMessage(text(string(b)))
	}
	res.Error = text(res.Error)
	res.Answer = text(res.Answer)
	res.Thinking = text(res.Thinking)
	res.Output = doc(res.Output)
	res.Diagnostics = doc(res.Diagnostics)
	for i := range res.Repairs {
		res.Repairs[i].Diagnostics = doc(res.Repairs[i].Diagnostics)
	}
	for i := range res.Calls {
		res.Calls[i].Error = text(res.Calls[i].Error)
	}
}
