// Package secretnames reads a list of a workspace's secret names — never
// their values — in the one format every authoring tool accepts: the
// language server's .kobana-secrets file, its KOBANA_SECRETS environment
// variable and -secrets-names flag, kobana plan's -secrets-names and
// -secret, and the playground's secret names box.
//
// The format is one of two, told apart by the first character that is not
// white space:
//
//   - '{': a JSON object whose keys are the names, such as the secrets file
//     kobana run -secrets reads. Only the keys are kept; the values are
//     never looked at.
//   - anything else: text. Names are separated by line breaks, commas,
//     spaces or tabs; a line whose first character that is not white space
//     is '#' is a comment. An entry that is not a name is ignored together
//     with the rest of its line, since a value follows its name
//     (NAME=value, NAME = value, NAME: value): a value written where a name
//     belongs is never read as a name.
//
// A name is what a reference spells after "secrets." (lang.IsName): letters,
// digits, '_' and '-'. Parse is the entry point.
package secretnames

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kobana/workflow/lang"
)

// Parse reads a list of secret names (see the package doc). It returns the
// names, each once, in the order written (a JSON object's keys sorted), and
// the problems found, each saying where and why, never quoting the list: a
// value written where a name belongs must not reach a log.
func Parse(data []byte) (names, problems []string) {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		return parseJSON(trimmed)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, isSeparator) {
			if !lang.IsName(f) {
				problems = append(problems, fmt.Sprintf("line %d holds an entry that is not a secret name (letters, digits, _ or -): it and the rest of its line are ignored — the list holds names only, never values", n))
				break
			}
			if !seen[f] {
				seen[f] = true
				names = append(names, f)
			}
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("the list cannot be read: %v", err))
	}
	return names, problems
}

func isSeparator(r rune) bool {
	return r == ',' || r == ' ' || r == '\t'
}

func parseJSON(data []byte) (names, problems []string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		// The error may quote the text, values included.
		return nil, []string{"the JSON object does not parse: write an object whose keys are the secret names"}
	}
	for k := range obj {
		if lang.IsName(k) {
			names = append(names, k)
		} else {
			problems = append(problems, "a key of the JSON object is not a secret name (letters, digits, _ or -) and is ignored")
		}
	}
	slices.Sort(names)
	return names, problems
}
