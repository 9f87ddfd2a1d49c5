package lsp

import "github.com/kobana/workflow/internal/secretnames"

// SecretNamesFile is the name of the workspace file that lists the secret
// names completion offers. It holds names only, in the format of every
// authoring tool (kobana plan -secrets-names reads the same): names
// separated by line breaks, commas or spaces, with "#" comment lines, or
// the keys of a JSON object of secrets. An entry that is not a name
// (NAME=value, say) is ignored with the rest of its line and reported by
// line number, never read as a value. The server looks for it in the
// document's directory and each parent up to the workspace root.
const SecretNamesFile = ".kobana-secrets"

// secretNames is the parsed content of a secret names file.
type secretNames struct {
	names []string
	// problems say which lines were ignored, by number, never quoting them
	// (a misplaced value must not reach a log).
	problems []string
}

func parseSecretNamesFile(data []byte) (any, error) {
	names, problems := secretnames.Parse(data)
	return &secretNames{names: names, problems: problems}, nil
}
