package agent

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	workflow "github.com/kobana/workflow"
)

// Family is a family of model servers that take the same part of JSON
// Schema in response_format: the schema each is sent is derived from the
// one workflow.schema.json, keeping what the family takes (Schema).
type Family string

// Provider families.
const (
	// FamilyOpenAI takes the whole schema (non-strict structured outputs):
	// OpenAI, and OpenRouter and LiteLLM in front of a model that does.
	FamilyOpenAI Family = "openai"
	// FamilyAnthropic is Anthropic's OpenAI-compatible layer, which
	// ignores response_format: nothing is sent, the prompt asks for JSON.
	FamilyAnthropic Family = "anthropic"
	// FamilyGemini is Google's OpenAI-compatible endpoint: a JSON Schema
	// subset without not, propertyNames, const, allOf, pattern or a list
	// of types.
	FamilyGemini Family = "gemini"
	// FamilyVLLM is vLLM's guided decoding (xgrammar, llguidance):
	// everything but propertyNames (xgrammar) and not (llguidance).
	FamilyVLLM Family = "vllm"
	// FamilyLlamaCpp is llama.cpp's server, whose schema-to-grammar
	// converter takes patterns only anchored with ^…$ and without (?:
	// groups, and no schema that holds only a description.
	FamilyLlamaCpp Family = "llama.cpp"
	// FamilyOllama is Ollama, whose format converter has llama.cpp's limits
	// and answers 500 "invalid JSON schema in format" past them.
	FamilyOllama Family = "ollama"
	// FamilyPortable is for a server of unknown family: the schema every
	// family above takes.
	FamilyPortable Family = "portable"
)

// Families lists the provider families, in the order documented.
func Families() []Family {
	return []Family{FamilyOpenAI, FamilyAnthropic, FamilyGemini, FamilyVLLM, FamilyLlamaCpp, FamilyOllama, FamilyPortable}
}

func validFamily(f Family) bool { return slices.Contains(Families(), f) }

// DetectFamily is the family of an endpoint by its base URL, for an
// endpoint configured without one: the providers' own hosts, Ollama's
// port, else FamilyPortable.
func DetectFamily(baseURL string) Family {
	u, err := url.Parse(baseURL)
	if err != nil {
		return FamilyPortable
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "api.openai.com", host == "openrouter.ai":
		return FamilyOpenAI
	case host == "api.anthropic.com":
		return FamilyAnthropic
	case host == "generativelanguage.googleapis.com", strings.HasSuffix(host, "aiplatform.googleapis.com"):
		return FamilyGemini
	case u.Port() == "11434":
		return FamilyOllama
	}
	return FamilyPortable
}

// defaultFormat is the response format a family is asked with when the
// endpoint names none.
func (f Family) defaultFormat() string {
	if f == FamilyAnthropic {
		return FormatNone
	}
	return FormatJSONSchema
}

// schemaRules are the transformations a family's schema needs.
type schemaRules struct {
	// drop are keywords removed wherever they appear.
	drop []string
	// patterns: "keep", "anchored" (only ^…$ patterns without (?:), "none".
	patterns string
	// flatten inlines the leaf definitions (template, noPlaceholder) and
	// merges allOf into the schema that holds it.
	flatten bool
	// enumConst writes const as a one-value enum.
	enumConst bool
	// typeUnion writes a list of types as anyOf of one type each.
	typeUnion bool
	// noBareDescriptions replaces a schema that holds only a description
	// by the empty schema (any value), and drops a description-only
	// additionalProperties.
	noBareDescriptions bool
}

var familyRules = map[Family]schemaRules{
	FamilyOpenAI:   {},
	FamilyGemini:   {drop: []string{"not", "propertyNames", "examples", "default", "title"}, patterns: "none", flatten: true, enumConst: true, typeUnion: true},
	FamilyVLLM:     {drop: []string{"not", "propertyNames"}, patterns: "keep"},
	FamilyLlamaCpp: {drop: []string{"not", "propertyNames", "examples"}, patterns: "anchored", flatten: true, noBareDescriptions: true},
	FamilyOllama:   {drop: []string{"not", "propertyNames", "examples"}, patterns: "anchored", flatten: true, noBareDescriptions: true},
	FamilyPortable: {drop: []string{"not", "propertyNames", "examples", "default", "title"}, patterns: "none", flatten: true, enumConst: true, typeUnion: true, noBareDescriptions: true},
}

var (
	schemasMu sync.Mutex
	schemas   = map[Family]json.RawMessage{}
)

// Schema is the answer's JSON Schema as a family is sent it:
// workflow.schema.json without $schema and $id, transformed for the
// family (FamilyAnthropic gets FamilyOpenAI's, should it be asked). The
// linter, not the provider, is the authority: every schema here accepts
// at least what the linter accepts.
func Schema(f Family) json.RawMessage {
	if f == FamilyAnthropic || !validFamily(f) {
		f = FamilyOpenAI
	}
	schemasMu.Lock()
	defer schemasMu.Unlock()
	if s, ok := schemas[f]; ok {
		return s
	}
	var root map[string]any
	if err := json.Unmarshal(workflow.Schema, &root); err != nil {
		panic("workflow.schema.json does not decode: " + err.Error())
	}
	delete(root, "$schema")
	delete(root, "$id")
	r := familyRules[f]
	t := transformer{rules: r, defs: map[string]any{}}
	if defs, ok := root["$defs"].(map[string]any); ok {
		t.defs = defs
	}
	out := t.node(root).(map[string]any)
	if r.flatten {
		if defs, ok := out["$defs"].(map[string]any); ok {
			delete(defs, "template")
			delete(defs, "noPlaceholder")
		}
	}
	if r.noBareDescriptions {
		if ap, ok := out["additionalProperties"].(map[string]any); ok && len(ap) == 0 {
			delete(out, "additionalProperties")
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(fmt.Sprintf("the %s schema does not encode: %v", f, err))
	}
	schemas[f] = b
	return b
}

// transformer rewrites a schema by a family's rules.
type transformer struct {
	rules schemaRules
	defs  map[string]any
}

// leafDefs are the definitions flatten inlines: strings, not recursive.
var leafDefs = map[string]bool{"#/$defs/template": true, "#/$defs/noPlaceholder": true}

func (t *transformer) node(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return t.schema(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = t.node(e)
		}
		return out
	}
	return v
}

// schema transforms one schema object (or a map of them, such as
// properties and $defs, whose values are schemas: each is transformed).
func (t *transformer) schema(m map[string]any) map[string]any {
	r := t.rules
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case slices.Contains(r.drop, k):
			continue
		case k == "pattern":
			if p, _ := v.(string); !t.keepPattern(p) {
				continue
			}
			out[k] = v
		case k == "enum" || k == "required" || k == "const":
			out[k] = v // values, not schemas
		default:
			out[k] = t.node(v)
		}
	}
	if r.flatten {
		t.flattenInto(out)
	}
	if c, ok := out["const"]; ok && r.enumConst {
		delete(out, "const")
		out["enum"] = []any{c}
		if _, typed := out["type"]; !typed {
			if _, isString := c.(string); isString {
				out["type"] = "string"
			}
		}
	}
	if types, ok := out["type"].([]any); ok && r.typeUnion {
		delete(out, "type")
		var alts []any
		for _, ty := range types {
			alt := map[string]any{"type": ty}
			if ty != "null" {
				for _, k := range typeKeywords(ty) {
					if v, ok := out[k]; ok {
						alt[k] = v
						delete(out, k)
					}
				}
			}
			alts = append(alts, alt)
		}
		out["anyOf"] = alts
	}
	if r.noBareDescriptions {
		for _, k := range []string{"properties", "$defs"} {
			if props, ok := out[k].(map[string]any); ok {
				for name, p := range props {
					if pm, ok := p.(map[string]any); ok && bareDescription(pm) {
						props[name] = map[string]any{}
					}
				}
			}
		}
		if ap, ok := out["additionalProperties"].(map[string]any); ok && bareDescription(ap) {
			out["additionalProperties"] = map[string]any{}
		}
	}
	return out
}

// typeKeywords are the keywords that belong to one type of a list of
// types, moved with it into its anyOf branch.
func typeKeywords(ty any) []string {
	switch ty {
	case "array":
		return []string{"items", "maxItems", "minItems"}
	case "object":
		return []string{"properties", "required", "additionalProperties"}
	case "string":
		return []string{"pattern", "minLength", "maxLength"}
	}
	return nil
}

// bareDescription reports a schema that holds a description and nothing
// else: any value, which llama.cpp's converter does not take.
func bareDescription(m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	for k := range m {
		if k != "description" && k != "title" {
			return false
		}
	}
	return true
}

func (t *transformer) keepPattern(p string) bool {
	switch t.rules.patterns {
	case "none":
		return false
	case "anchored":
		return strings.HasPrefix(p, "^") && strings.HasSuffix(p, "$") && !strings.Contains(p, "(?")
	}
	return true
}

// flattenInto inlines a $ref to a leaf definition and merges allOf into
// m, keeping what m already says.
func (t *transformer) flattenInto(m map[string]any) {
	if ref, ok := m["$ref"].(string); ok && leafDefs[ref] {
		delete(m, "$ref")
		name := strings.TrimPrefix(ref, "#/$defs/")
		if def, ok := t.defs[name].(map[string]any); ok {
			mergeSchema(m, t.schema(def))
		}
	}
	all, ok := m["allOf"].([]any)
	if !ok {
		return
	}
	delete(m, "allOf")
	for _, a := range all {
		if am, ok := a.(map[string]any); ok {
			mergeSchema(m, am)
		}
	}
}

// mergeSchema adds to dst the keywords of src it does not have; two
// patterns cannot be merged, so a second one is dropped (the linter checks
// every rule anyway).
func mergeSchema(dst, src map[string]any) {
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, has := dst[k]; !has {
			dst[k] = src[k]
		}
	}
}
