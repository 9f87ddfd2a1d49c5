package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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

// ParseSecretNames reads a list of secret names: one per line with "#"
// comments (the language server's .kobana-secrets), or separated by commas
// or spaces (KOBANA_SECRETS), or the keys of a JSON object of secrets (the
// file kobana run -secrets reads — its values are never kept). It returns
// the names and the problems found, which never quote a line: a value
// written where a name belongs must not reach a log.
func ParseSecretNames(data []byte) (names, problems []string) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return nil, []string{"the JSON object of secrets does not parse"}
		}
		for k := range obj {
			if IsSecretName(k) {
				names = append(names, k)
			} else {
				problems = append(problems, "a key of the JSON object is not a secret name (letters, digits, _ or -) and is ignored")
			}
		}
		return names, problems
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			if IsSecretName(f) {
				names = append(names, f)
			} else {
				problems = append(problems, fmt.Sprintf("line %d holds an entry that is not a secret name (letters, digits, _ or -); it is ignored — the list holds names only, never values", n))
			}
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, err.Error())
	}
	return names, problems
}

// IsSecretName reports whether s can follow "secrets." in a reference.
func IsSecretName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
