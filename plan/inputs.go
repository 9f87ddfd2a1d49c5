package plan

import (
	"fmt"

	"github.com/kobana/workflow/internal/secretnames"
	"github.com/kobana/workflow/internal/sidecar"
)

// ParseResponses reads example responses in the forms the language server
// reads beside a workflow W.json (W.responses.json, W.run.json) — the same
// reader (internal/sidecar):
//
//	{"0": {"status": 201, "headers": {…}, "body": {…}}, …}   by step index
//	[{"status": 201, …}, null, …]                            one per step, null for none
//	{"steps": [{"index": 0, "response": {…}}, …]}            a run record (kobana run -record)
//
// An example without a status is taken to have the status its step
// expects (200 when it expects any 2xx).
func ParseResponses(data []byte) (map[int]*Response, error) {
	rs, err := sidecar.ParseResponses(data)
	if err != nil {
		return nil, fmt.Errorf("example responses: %w", err)
	}
	return rs, checkResponses(rs)
}

func checkResponses(rs map[int]*Response) error {
	for i, r := range rs {
		if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
			return fmt.Errorf("example responses: step %d: status %d is not an HTTP status (100-599)", i, r.Status)
		}
	}
	return nil
}

// ParseSecretNames reads a list of secret names in the format every
// authoring tool reads (the language server's .kobana-secrets and
// KOBANA_SECRETS, kobana plan's -secrets-names, the playground): names
// separated by line breaks, commas or spaces, with "#" comment lines, or the
// keys of a JSON object of secrets (the file kobana run -secrets reads — its
// values are never looked at). An entry that is not a name is ignored with
// the rest of its line, so a value written after its name is never read as
// a name. It returns the names, each once, and the problems found, which
// never quote the list.
func ParseSecretNames(data []byte) (names, problems []string) {
	return secretnames.Parse(data)
}
