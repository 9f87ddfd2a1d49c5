package lsp

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// SecretNamesFile is the name of the workspace file that lists the secret
// names completion offers, one per line ("#" starts a comment). It holds
// names only: a line that is not a name (NAME=value, say) is ignored and
// reported, never read as a value. The server looks for it in the
// document's directory and each parent up to the workspace root.
const SecretNamesFile = ".kobana-secrets"

// ParseSecretNames splits a list of secret names separated by commas or
// white space, such as the KOBANA_SECRETS an editor passes. It returns the
// names and the entries that are not names.
func ParseSecretNames(s string) (names, rejected []string) {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		if isSecretName(f) {
			names = append(names, f)
		} else {
			rejected = append(rejected, f)
		}
	}
	return names, rejected
}

// secretNames is the parsed content of a secret names file.
type secretNames struct {
	names []string
	// problems say which lines were ignored, by number, never quoting them
	// (a misplaced value must not reach a log).
	problems []string
}

func parseSecretNamesFile(data []byte) (any, error) {
	var out secretNames
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !isSecretName(line) {
			out.problems = append(out.problems, fmt.Sprintf("line %d is not a secret name (letters, digits, _ or -) and is ignored; the file lists names only, never values", n))
			continue
		}
		out.names = append(out.names, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return &out, nil
}

// isSecretName reports whether s can follow "secrets." in a reference.
func isSecretName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isWordByte(c) || c == '-') {
			return false
		}
	}
	return true
}
