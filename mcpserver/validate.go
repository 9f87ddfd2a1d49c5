package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kobana/workflow/mcpserver/store"
)

// New checks every declaration before it serves anything: a product that
// the framework cannot serve as declared is refused with an error naming the
// product, the item and what is wrong.

// toolName is what MCP allows in a tool name (2025-11-25, "Tool names"):
// 1 to 128 ASCII letters, digits, '_', '-' and '.'.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// variableName is a resource template variable.
var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkProducts returns every problem of the products' declarations,
// joined, or nil.
func checkProducts(products []*Product) error {
	var errs []error
	report := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("mcpserver: "+format, args...))
	}
	tools := map[string]string{} // tool name → product
	names := map[string]bool{}
	for i, p := range products {
		if p == nil {
			report("product %d is nil", i)
			continue
		}
		if p.Name == "" {
			report("product %d has no Name", i)
		} else if names[p.Name] {
			report("product %s is declared twice", p.Name)
		}
		names[p.Name] = true
		if p.Policy.DeclineCode == "" {
			report("product %s: Policy.DeclineCode is required", p.Name)
		}
		for _, t := range p.Tools {
			prev, dup := tools[t.Name]
			switch {
			case !dup || t.Name == "":
				tools[t.Name] = p.Name
			case prev == p.Name:
				report("product %s: tool %s is declared twice", p.Name, t.Name)
			default:
				report("product %s: tool %s is also declared by product %s", p.Name, t.Name, prev)
			}
		}
	}
	var resources []Resource
	for _, p := range products {
		if p == nil {
			continue
		}
		for _, err := range checkProduct(p, tools) {
			report("product %s: %v", p.Name, err)
		}
		resources = append(resources, p.Resources...)
	}
	for _, err := range ambiguousResources(resources) {
		report("%v", err)
	}
	return errors.Join(errs...)
}

// checkProduct returns the problems of one product; tools holds every
// product's tool names.
func checkProduct(p *Product, tools map[string]string) []error {
	var errs []error
	report := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for i := range p.Tools {
		t := &p.Tools[i]
		switch {
		case t.err != nil:
			report("%v", t.err)
			continue
		case t.handler == nil:
			report("tool %q was not built with NewTool", t.Name)
			continue
		case !toolName.MatchString(t.Name):
			report("tool name %q: 1 to 128 letters, digits, '_', '-' or '.', as MCP tool names are", t.Name)
		}
		if strings.TrimSpace(t.Description) == "" {
			report("tool %s has no Description: models choose tools by it", t.Name)
		}
		if t.Access < Read || t.Access > Admin {
			report("tool %s: Access %d is none of Read, Write, Admin", t.Name, t.Access)
		}
		if t.Destructive && t.Access == Read {
			report("tool %s is Destructive yet its Access is Read: a tool that destroys writes", t.Name)
		}
	}
	templates := map[string][]string{} // template → its variables
	for _, r := range p.Resources {
		id := r.URI + r.Template
		switch {
		case r.URI != "" && r.Template != "":
			report("resource %s: set URI or Template, not both", id)
			continue
		case id == "":
			report("resource %q has neither URI nor Template", r.Name)
			continue
		}
		if r.Name == "" {
			report("resource %s has no Name (MCP requires one)", id)
		}
		if r.Read == nil {
			report("resource %s has no Read", id)
		}
		if _, ok := tools[r.Tool]; !ok {
			report("resource %s is read by tool %q, which no product declares", id, r.Tool)
		}
		if r.URI != "" {
			if err := checkURI(r.URI); err != nil {
				report("resource %s: %v", r.URI, err)
			}
			continue
		}
		vars, err := templateVariables(r.Template)
		if err != nil {
			report("resource template %s: %v", r.Template, err)
			continue
		}
		templates[r.Template] = vars
	}
	arguments := map[string]bool{}
	prompts := map[string]bool{}
	for _, pr := range p.Prompts {
		switch {
		case pr.Name == "":
			report("a prompt has no Name")
			continue
		case prompts[pr.Name]:
			report("prompt %s is declared twice", pr.Name)
		}
		prompts[pr.Name] = true
		if pr.Get == nil {
			report("prompt %s has no Get", pr.Name)
		}
		for _, t := range pr.Tools {
			if _, ok := tools[t]; !ok {
				report("prompt %s relies on tool %q, which no product declares", pr.Name, t)
			}
		}
		args := map[string]bool{}
		for _, a := range pr.Arguments {
			switch {
			case a.Name == "":
				report("prompt %s has an argument without a Name", pr.Name)
			case args[a.Name]:
				report("prompt %s declares argument %s twice", pr.Name, a.Name)
			}
			args[a.Name] = true
			arguments[a.Name] = true
		}
	}
	if ic := p.Completer; ic != nil {
		errs = append(errs, checkCompleter(ic, templates, arguments, tools)...)
	}
	return errs
}

// checkURI accepts an absolute URI with a scheme.
func checkURI(u string) error {
	parsed, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("not a URI: %v", err)
	}
	if parsed.Scheme == "" {
		return errors.New("not an absolute URI (no scheme)")
	}
	if strings.ContainsAny(u, "{}") {
		return errors.New("braces belong in a Template, not a URI")
	}
	return nil
}

// templateVariables returns the variables of a template whose every
// variable is a whole path segment, {name}, each named once.
func templateVariables(tpl string) ([]string, error) {
	if err := checkURI(strings.NewReplacer("{", "", "}", "").Replace(tpl)); err != nil {
		return nil, err
	}
	var vars []string
	for _, seg := range strings.Split(tpl, "/") {
		if !strings.ContainsAny(seg, "{}") {
			continue
		}
		name, ok := strings.CutPrefix(seg, "{")
		if ok {
			name, ok = strings.CutSuffix(name, "}")
		}
		switch {
		case !ok || strings.ContainsAny(name, "{}"):
			return nil, fmt.Errorf("segment %q: a variable must be a whole path segment, {name}", seg)
		case !variableName.MatchString(name):
			return nil, fmt.Errorf("variable {%s}: names are letters, digits and '_' (RFC 6570 operators are not served)", name)
		case slices.Contains(vars, name):
			return nil, fmt.Errorf("variable {%s} appears twice", name)
		}
		vars = append(vars, name)
	}
	if len(vars) == 0 {
		return nil, errors.New("no {variable}: declare it as a URI")
	}
	return vars, nil
}

// ambiguousResources reports resources declared twice, and pairs that
// match the same URIs (the same literal segments in the same places): a
// read could not tell which one it is for.
func ambiguousResources(resources []Resource) []error {
	shapes := map[string]string{}
	var errs []error
	for _, r := range resources {
		id := r.URI + r.Template
		if id == "" {
			continue
		}
		segs := strings.Split(id, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				segs[i] = "{}"
			}
		}
		shape := strings.Join(segs, "/")
		switch prev, ok := shapes[shape]; {
		case !ok:
			shapes[shape] = id
		case prev == id:
			errs = append(errs, fmt.Errorf("resource %s is declared twice", id))
		default:
			errs = append(errs, fmt.Errorf("resources %s and %s match the same URIs", prev, id))
		}
	}
	return errs
}

// checkCompleter checks an IDCompleter against the product it completes
// for: each template it knows is one of the product's with an {id}, each
// argument one of its prompts', each source's tool declared.
func checkCompleter(ic *IDCompleter, templates map[string][]string, arguments map[string]bool, tools map[string]string) []error {
	var errs []error
	report := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if ic.Records == nil || ic.Owner == nil {
		report("Completer: Records and Owner are required")
	}
	source := func(what string, src IDSource) {
		if src.Kind == "" {
			report("Completer: %s: IDSource has no Kind", what)
		}
		if _, ok := tools[src.Tool]; !ok {
			report("Completer: %s: IDSource tool %q is declared by no product", what, src.Tool)
		}
	}
	for _, tpl := range sortedKeys(ic.Templates) {
		vars, ok := templates[tpl]
		switch {
		case !ok:
			report("Completer: template %s is no resource template of this product", tpl)
		case !slices.Contains(vars, "id"):
			report("Completer: template %s has no {id} variable (it has %s): IDCompleter completes {id}", tpl, "{"+strings.Join(vars, "}, {")+"}")
		}
		source("template "+tpl, ic.Templates[tpl])
	}
	for _, arg := range sortedKeys(ic.Prompts) {
		if !arguments[arg] {
			report("Completer: argument %q is an argument of none of this product's prompts", arg)
		}
		source("argument "+arg, ic.Prompts[arg])
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}

// checkRoles copies a role table (nil means the default one), refusing
// access levels that do not exist.
func checkRoles(roles map[store.Role]Access) (map[store.Role]Access, error) {
	if roles == nil {
		return DefaultRoles(), nil
	}
	out := maps.Clone(roles)
	for role, a := range out {
		if a < Read || a > Admin {
			return nil, fmt.Errorf("mcpserver: Options.Roles: role %q has Access %d, none of Read, Write, Admin", role, a)
		}
	}
	return out, nil
}

// ---- The arguments of a call ----

// validate checks raw arguments against the input schema.
// The error names the argument in the caller's terms (tags[].name), not
// the schema's (/properties/tags/items/properties/name).
func (t *Tool) validate(args json.RawMessage) error {
	var v any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &v); err != nil {
			return err
		}
	}
	if err := t.input.Validate(v); err != nil {
		return errors.New(clipValues(argumentProblem(err.Error())))
	}
	return nil
}

// argumentProblem rewrites a jsonschema-go validation message
// ("validating root: validating /properties/id: pattern: …") to name the
// argument ("argument id: pattern: …").
func argumentProblem(msg string) string {
	const prefix = "validating "
	i := strings.LastIndex(msg, prefix)
	if i < 0 {
		return msg
	}
	where, reason, ok := strings.Cut(msg[i+len(prefix):], ": ")
	if !ok {
		return msg
	}
	if where == "root" {
		if names, ok := strings.CutPrefix(reason, "required: missing properties: "); ok {
			return "missing required argument(s) " + names
		}
		if names, ok := strings.CutPrefix(reason, "unexpected additional properties "); ok {
			return "unknown argument(s) " + names + "; the tool's input schema lists the arguments it takes"
		}
		return reason
	}
	var path strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(where, "/"), "/") {
		switch seg {
		case "properties":
			if path.Len() > 0 {
				path.WriteByte('.')
			}
			continue
		case "items":
			path.WriteString("[]")
			continue
		case "additionalProperties":
			path.WriteString("{}")
			continue
		}
		path.WriteString(seg)
	}
	return "argument " + strings.TrimPrefix(path.String(), ".") + ": " + reason
}

// quoted is a Go-quoted string in a validation message: how jsonschema-go
// shows the value it judged (and an unknown argument's name).
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// rationals are the numbers jsonschema-go writes as fractions or with six
// decimals ("99/1 is greater than 5.000000").
var (
	wholeFraction = regexp.MustCompile(`\b(-?\d+)/1\b`)
	wholeDecimal  = regexp.MustCompile(`\b(-?\d+)\.000000\b`)
)

// Bounds of what a validation message shows of the values it names.
const (
	maxShownValue   = 32  // bytes of a long string value
	maxProblemBytes = 600 // bytes of the whole message
)

// clipValues shortens the values a validation message quotes, so that an
// argument of several megabytes is named by its rule and its size, never
// sent back whole: "argument id: maxLength: "XXXX…" (3145728 bytes)
// contains 3145728 Unicode code points, more than 10".
func clipValues(msg string) string {
	msg = quoted.ReplaceAllStringFunc(msg, func(q string) string {
		s, err := strconv.Unquote(q)
		if err != nil {
			s = q[1 : len(q)-1]
		}
		// Decided on the value, not on its quoted form: 20 NULs quote to
		// 80 bytes and are 20 long.
		if len(s) <= maxShownValue {
			return q
		}
		return strconv.Quote(prefix(s, maxShownValue)+"…") + fmt.Sprintf(" (%d bytes)", len(s))
	})
	msg = wholeDecimal.ReplaceAllString(wholeFraction.ReplaceAllString(msg, "$1"), "$1")
	if len(msg) > maxProblemBytes {
		// An unquoted value (enum's): keep the argument and the rule, at
		// both ends, and say how much was left out between them.
		head, tail := maxProblemBytes/6, maxProblemBytes/3
		for head > 0 && !utf8.RuneStart(msg[head]) {
			head--
		}
		from := len(msg) - tail
		for from < len(msg) && !utf8.RuneStart(msg[from]) {
			from++
		}
		msg = fmt.Sprintf("%s… (%d bytes left out) …%s", msg[:head], from-head, msg[from:])
	}
	return msg
}

// prefix is the longest start of s of at most n bytes that ends on a rune
// boundary; a byte of s that is not UTF-8 counts as a rune of its own.
func prefix(s string, n int) string {
	end := 0
	for end < len(s) {
		_, size := utf8.DecodeRuneInString(s[end:])
		if end+size > n {
			break
		}
		end += size
	}
	return s[:end]
}
