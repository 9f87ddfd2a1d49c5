package compile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kobana/workflow/internal/jsonpos"
	"github.com/kobana/workflow/lang"
)

// Where a string value stands in a step, for the rules that read its
// literal text.
type field uint8

const (
	inURL field = iota + 1
	inHeader
	inBody
	inForm
)

// hole stands for a placeholder in the literal text a rule reads: the
// rules see only what the author wrote, never what a reference becomes.
const hole = '\x00'

// literalText is s with each placeholder replaced by holes of the same
// length, so that offsets into it are offsets into s. A placeholder that
// does not parse (already an error) is a hole too, from its "${{" to its
// "}}" or the end.
func literalText(s string, t lang.Template) string {
	refs := t.Refs()
	if len(refs) == 0 && !strings.Contains(s, "${{") {
		return s
	}
	b := []byte(s)
	for _, r := range refs {
		for i := r.Span.Start; i < r.Span.End && i < len(b); i++ {
			b[i] = hole
		}
	}
	for i := 0; ; {
		j := strings.Index(string(b[i:]), "${{")
		if j < 0 {
			break
		}
		start := i + j
		end := len(b)
		if k := strings.Index(string(b[start:]), "}}"); k >= 0 {
			end = start + k + 2
		}
		for x := start; x < end; x++ {
			b[x] = hole
		}
		i = end
	}
	return string(b)
}

// keyPattern is a credential format recognisable by its shape.
type keyPattern struct {
	what string
	// hints are texts one of which every match contains: the expression
	// runs only on text that holds one.
	hints []string
	re    *regexp.Regexp
}

// keyPatterns are credential formats with a prefix of their own. Each
// expression's first group is the credential; it must not follow a letter
// or digit.
var keyPatterns = []keyPattern{
	{"an API key in the sk-… format (OpenAI, Anthropic and others)", []string{"sk-"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])(sk-(?:proj-|ant-(?:api\d\d-)?|svcacct-)?[A-Za-z0-9_-]{20,})`)},
	{"a Stripe secret key", []string{"_live_", "_test_"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})`)},
	{"an AWS access key id", []string{"AKIA", "ASIA"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])(A(?:KIA|SIA)[0-9A-Z]{16})(?:$|[^A-Za-z0-9])`)},
	{"a GitHub token", []string{"gh", "github_pat_"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])((?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}))`)},
	{"a GitLab token", []string{"glpat-"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])(glpat-[A-Za-z0-9_-]{20,})`)},
	{"a Slack token", []string{"xox"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])(xox[abposr]-[A-Za-z0-9-]{10,})`)},
	{"a Google API key", []string{"AIza"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])(AIza[0-9A-Za-z_-]{35})`)},
	{"a JSON Web Token", []string{"eyJ"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)},
	{"a private key", []string{"PRIVATE KEY"}, regexp.MustCompile(`(-----BEGIN [A-Z ]*PRIVATE KEY-----)`)},
	{"a Slack webhook URL (the URL is the credential)", []string{"hooks.slack.com/"}, regexp.MustCompile(`(hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{16,})`)},
	{"a Discord webhook URL (the URL is the credential)", []string{"/api/webhooks/"}, regexp.MustCompile(`(discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{16,})`)},
}

// authSchemes are the Authorization schemes whose credential follows the
// scheme's name.
var authSchemes = []string{"bearer", "basic", "token", "bot", "apikey", "api-key", "digest", "sso-key"}

// authCredential finds the credential of an Authorization value written
// "Scheme credential": the scheme and the credential's range.
func authCredential(v string) (scheme string, start, end int, ok bool) {
	i := 0
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	j := i
	for j < len(v) && v[j] != ' ' && v[j] != '\t' {
		j++
	}
	k := j
	for k < len(v) && (v[k] == ' ' || v[k] == '\t') {
		k++
	}
	if k == j || k == len(v) {
		return "", 0, 0, false
	}
	known := false
	for _, s := range authSchemes {
		known = known || strings.EqualFold(v[i:j], s)
	}
	if !known {
		return "", 0, 0, false
	}
	e := k
	for e < len(v) && v[e] != ' ' && v[e] != '\t' {
		e++
	}
	return v[i:j], k, e, true
}

// credentialHeaders are header names whose value is a credential.
var credentialHeaders = []string{
	"authorization", "x-api-key", "api-key", "apikey", "x-apikey", "x-auth-token", "x-access-token",
	"private-token", "x-token", "x-secret", "x-goog-api-key", "ocp-apim-subscription-key", "x-functions-key",
}

// passwordNames and tokenNames are field and query parameter names
// (lower case, - as _) whose value is a credential: any literal value for
// a password, a long mixed one for a token or key.
var (
	passwordNames = []string{"password", "passwd", "pwd", "passphrase"}
	tokenNames    = []string{"secret", "client_secret", "api_key", "apikey", "access_token", "auth_token", "refresh_token", "token", "private_key", "secret_key", "access_key"}
)

// sensitiveName says whether a field name holds a password ("password"),
// another credential ("token"), or neither ("").
func sensitiveName(name string) string {
	if !strings.ContainsAny(name, "pPsStTkK") {
		return "" // every name listed holds one of these letters
	}
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	match := func(list []string) bool {
		for _, w := range list {
			if n == w || strings.HasSuffix(n, "_"+w) {
				return true
			}
		}
		return false
	}
	switch {
	case n == "":
		return ""
	case match(passwordNames):
		return "password"
	case match(tokenNames):
		return "token"
	}
	return ""
}

// looksLikeToken says whether a literal value reads like a generated
// credential rather than a word: long, with letters and digits.
func looksLikeToken(s string) bool {
	if len(s) < 12 || strings.ContainsRune(s, hole) || strings.ContainsAny(s, " \t") {
		return false
	}
	letter, digit := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter = letter || ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
		digit = digit || ('0' <= c && c <= '9')
	}
	return letter && digit
}

// literalCredential reports, for a field value without placeholders in its
// credential, whether a sensitive name makes it one.
func literalCredential(kind, value string) bool {
	v := strings.TrimSpace(value)
	if v == "" || strings.ContainsRune(v, hole) {
		return false
	}
	if kind == "password" {
		return true
	}
	return looksLikeToken(v)
}

// scanLiterals reports a credential or file content written literally in a
// string value of a step: what the author wrote, outside its placeholders.
// Agents never see secret values or attachment bytes, so such text is
// either a credential copied from the e-mail (or made up) or a file
// fabricated in base64; either way it must not be sent. At most one such
// diagnostic per value.
func (sc *stepCompiler) scanLiterals(v *jsonpos.Value, ptr string, t lang.Template, where field, name string) {
	if v.Kind != jsonpos.String || len(v.Text) < 4 || sc.flagged[v.Start] {
		return
	}
	literal := len(v.Text)
	for _, r := range t.Refs() {
		literal -= r.Span.End - r.Span.Start
	}
	if literal < 8 && (literal < 1 || sensitiveName(name) != "password") {
		return // every rule reads at least 8 written characters, but a password's
	}
	lit := literalText(v.Text, t)
	report := func(code string, start, end int, format string, args ...any) {
		if sc.flagged == nil {
			sc.flagged = map[int]bool{}
		}
		sc.flagged[v.Start] = true
		sc.add(SeverityError, code, ptr, jsonpos.SourceOffset(sc.doc, v, start), jsonpos.SourceOffset(sc.doc, v, end), "", format, args...)
	}
	const never = "; reference a workspace secret instead, such as %s: an agent never writes a credential, and the platform does not send one it wrote"
	switch where {
	case inHeader:
		if strings.EqualFold(name, "authorization") {
			if scheme, cs, ce, ok := authCredential(lit); ok && ce-cs >= 8 && !strings.ContainsRune(lit[cs:ce], hole) {
				report(CodeCredentialLiteral, cs, ce, "header %s holds a %s credential written literally"+never, name, scheme, fmt.Sprintf(`"%s ${{secrets.NAME}}"`, scheme))
				return
			}
		}
		for _, h := range credentialHeaders {
			if strings.EqualFold(name, h) && literalCredential("token", lit) {
				report(CodeCredentialLiteral, 0, len(lit), "header %s holds a credential written literally"+never, name, `"${{secrets.NAME}}"`)
				return
			}
		}
	case inBody, inForm:
		if kind := sensitiveName(name); kind != "" && literalCredential(kind, lit) {
			what := "field"
			if where == inBody {
				what = "key"
			}
			report(CodeCredentialLiteral, 0, len(lit), "%s %q holds a %s written literally"+never, what, name, kind, `"${{secrets.NAME}}"`)
			return
		}
	case inURL:
		if s, e, ok := urlPassword(lit); ok {
			report(CodeCredentialLiteral, s, e, "the url holds a password written literally (user:password@host)"+never, "https://${{secrets.USER}}:${{secrets.PASSWORD}}@host/… or a header")
			return
		}
		if s, e, param, ok := queryCredential(lit); ok {
			report(CodeCredentialLiteral, s, e, "query parameter %q holds a credential written literally"+never, param, "?"+param+"=${{secrets.NAME}}")
			return
		}
	}
	for _, kp := range keyPatterns {
		if !containsAny(lit, kp.hints) {
			continue
		}
		if m := kp.re.FindStringSubmatchIndex(lit); m != nil {
			report(CodeCredentialLiteral, m[2], m[3], "the text holds %s written literally"+never, kp.what, `${{secrets.NAME}}`)
			return
		}
	}
	if s, e, what, ok := fileContent(lit); ok {
		report(CodeFileLiteral, s, e, "the text holds %s written literally (%d characters): an agent never sees an attachment's bytes, so file content it writes is made up; reference the file instead, ${{email.attachments.N}} as a form field's whole value or ${{email.attachments.N.base64}} in text", what, e-s)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// urlPassword finds the password of a literal user:password@ in a URL.
func urlPassword(lit string) (start, end int, ok bool) {
	i := strings.Index(lit, "://")
	if i < 0 {
		return 0, 0, false
	}
	as := i + 3
	ae := len(lit)
	if j := strings.IndexAny(lit[as:], "/?#"); j >= 0 {
		ae = as + j
	}
	at := strings.LastIndexByte(lit[as:ae], '@')
	if at < 0 {
		return 0, 0, false
	}
	user := lit[as : as+at]
	c := strings.IndexByte(user, ':')
	if c < 0 {
		return 0, 0, false
	}
	pw := user[c+1:]
	if pw == "" || strings.ContainsRune(pw, hole) {
		return 0, 0, false
	}
	return as + c + 1, as + at, true
}

// queryCredential finds a query parameter with a sensitive name and a
// literal credential value.
func queryCredential(lit string) (start, end int, param string, ok bool) {
	q := strings.IndexByte(lit, '?')
	if q < 0 {
		return 0, 0, "", false
	}
	pos := q + 1
	rest := lit[pos:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	for _, pair := range strings.Split(rest, "&") {
		name, value, found := strings.Cut(pair, "=")
		if found && !strings.ContainsRune(name, hole) {
			if kind := sensitiveName(name); kind != "" && literalCredential(kind, value) {
				vs := pos + len(name) + 1
				return vs, vs + len(value), name, true
			}
		}
		pos += len(pair) + 1
	}
	return 0, 0, "", false
}

// MinFileLiteral is the length of a base64 run from which literal text is
// taken for file content, whatever it starts with.
const MinFileLiteral = 512

var (
	base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{64,}={0,2}`)
	dataURL   = regexp.MustCompile(`data:[A-Za-z]+/[A-Za-z0-9.+-]+(?:;[A-Za-z0-9=._-]+)*;base64,[A-Za-z0-9+/]{16,}={0,2}`)
)

// fileMagic are the base64 forms of the first bytes of common document
// formats.
var fileMagic = []struct{ prefix, what string }{
	{"JVBERi0", "a PDF document"},
	{"iVBORw0KGgo", "a PNG image"},
	{"/9j/", "a JPEG image"},
	{"R0lGOD", "a GIF image"},
	{"UEsDB", "a ZIP archive (or an Office document)"},
	{"UklGR", "a RIFF file (WebP, WAV)"},
	{"0M8R4KGxGuE", "an old Office document"},
}

// fileContent finds base64 file content in literal text: a data: URL, a
// run that starts like a known document format, or any run of at least
// MinFileLiteral base64 characters with upper and lower case letters and
// digits.
func fileContent(lit string) (start, end int, what string, ok bool) {
	if strings.Contains(lit, ";base64,") {
		if m := dataURL.FindStringIndex(lit); m != nil {
			return m[0], m[1], "a data: URL", true
		}
	}
	if !hasBase64Run(lit, 64) {
		return 0, 0, "", false
	}
	for _, m := range base64Run.FindAllStringIndex(lit, -1) {
		run := lit[m[0]:m[1]]
		for _, fm := range fileMagic {
			if strings.HasPrefix(run, fm.prefix) {
				return m[0], m[1], fm.what, true
			}
		}
		if len(run) >= MinFileLiteral && mixedBase64(run) {
			return m[0], m[1], "file content in base64", true
		}
	}
	return 0, 0, "", false
}

// hasBase64Run reports whether s holds n base64 characters in a row.
func hasBase64Run(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-' {
			if run++; run >= n {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

func mixedBase64(s string) bool {
	upper, lower, digit := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		upper = upper || 'A' <= c && c <= 'Z'
		lower = lower || 'a' <= c && c <= 'z'
		digit = digit || '0' <= c && c <= '9'
	}
	return upper && lower && digit
}
