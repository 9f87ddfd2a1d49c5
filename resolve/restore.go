package resolve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/kobana/workflow/runrecord"
)

// redactionMarks are the beginnings of the text the platform writes into a
// record in place of what it must not keep: a secret's marker and an
// attachment's description.
var redactionMarks = []string{"[redacted secrets.", "[attachment "}

// Restore reads the recorded response of an earlier run's step back into
// what later steps reference, for a run that resumes another one: the
// status and the headers and body as recorded. What the record does not
// hold whole is never handed on as if it were the response: a header whose
// value holds a redaction marker is withheld, and a body that was clipped,
// holds a marker, lost invalid UTF-8 (U+FFFD) or cannot be told from its
// record's encoding (a JSON response recorded as a string) is unavailable
// — a reference to either fails its step before sending, with
// runrecord.ReasonResponseUnavailable. A body larger than the capture limit
// stays what it was: not captured.
func Restore(rec *runrecord.Response, limit int64) *Response {
	out := &Response{Status: rec.Status, Header: http.Header{}, Truncated: rec.Truncated, Limit: limit}
	for name, v := range rec.Headers {
		key := http.CanonicalHeaderKey(name)
		if hasMark(v) {
			if out.Withheld == nil {
				out.Withheld = map[string]bool{}
			}
			out.Withheld[key] = true
			continue
		}
		out.Header[key] = append(out.Header[key], v)
	}
	body := bytes.TrimSpace(rec.Body)
	switch {
	case rec.Truncated || len(body) == 0:
		return out
	case rec.BodyClipped:
		out.Unavailable = "it was clipped to the record's limit"
		return out
	case hasMark(string(body)):
		out.Unavailable = "it was redacted"
		return out
	}
	if body[0] == '"' {
		var text string
		if json.Unmarshal(body, &text) != nil {
			out.Unavailable = "its record does not read"
			return out
		}
		switch {
		case out.IsJSON():
			// A JSON body recorded as a string is either a JSON document
			// that is a string or a body that did not parse: the record
			// cannot tell which.
			out.Unavailable = "its record does not tell a JSON string from a body that did not parse"
		case strings.ContainsRune(text, '\uFFFD'):
			out.Unavailable = "it was not valid UTF-8"
		default:
			out.Body = []byte(text)
		}
		return out
	}
	if !out.IsJSON() || !json.Valid(body) {
		out.Unavailable = "its record does not read"
		return out
	}
	out.Body = body
	return out
}

func hasMark(s string) bool {
	for _, m := range redactionMarks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
