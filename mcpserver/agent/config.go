package agent

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// Response formats: how an endpoint is asked for JSON.
const (
	// FormatJSONSchema sends response_format {"type": "json_schema"} with
	// the workflow document's schema (workflow.schema.json).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject sends response_format {"type": "json_object"} (JSON
	// mode): any JSON object, the prompt says which.
	FormatJSONObject = "json_object"
	// FormatNone sends no response_format; the prompt alone asks for JSON.
	// For endpoints that reject or ignore the field.
	FormatNone = "none"
)

// AnyProvider is the Config.Providers key of the endpoint that serves the
// models of every provider without an entry of its own.
const AnyProvider = "*"

// Endpoint is an OpenAI-compatible API that serves models: OpenAI itself,
// Anthropic's or Google's compatible endpoints, or a vLLM, Ollama, LiteLLM
// or OpenRouter server.
type Endpoint struct {
	// BaseURL is the API's base, the URL that /chat/completions is appended
	// to, e.g. https://api.openai.com/v1.
	BaseURL string `json:"base_url"`
	// APIKeyEnv names the environment variable that holds the API key.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// APIKeyFile is a file that holds the API key (surrounding blanks are
	// ignored). At most one of APIKeyEnv and APIKeyFile; neither means the
	// endpoint takes no key (a local vLLM or Ollama).
	APIKeyFile string `json:"api_key_file,omitempty"`
	// ResponseFormat is FormatJSONSchema, FormatJSONObject or FormatNone;
	// empty means the family's (FormatNone for FamilyAnthropic, which
	// ignores the field, else FormatJSONSchema). When the provider refuses
	// it, a run falls back to JSON mode, then to none.
	ResponseFormat string `json:"response_format,omitempty"`
	// Family is the provider family, which decides the schema sent with
	// FormatJSONSchema (Schema); empty means DetectFamily of BaseURL.
	Family Family `json:"family,omitempty"`
	// FileInputs says whether the endpoint accepts file and image content
	// parts; nil means it does. An agent still sends a file only when its
	// model supports attachments and its settings allow it.
	FileInputs *bool `json:"file_inputs,omitempty"`
	// Models maps catalog model ids to the names this endpoint knows them
	// by (e.g. "claude-sonnet-4-5" → "anthropic/claude-sonnet-4.5" on
	// OpenRouter); a model not listed is sent under its catalog id.
	Models map[string]string `json:"models,omitempty"`
	// RPM is the most requests per minute sent to the endpoint, TPM the
	// most tokens (estimated before a call, corrected by its usage), and
	// MaxInFlight the most calls waiting for their answer — ceilings as
	// LiteLLM's router takes rpm and tpm per deployment; 0 sets none. They
	// hold for every agent and workspace using the endpoint together
	// (Config.Budget), within the limits the provider's answers announce.
	RPM         int `json:"rpm,omitempty"`
	TPM         int `json:"tpm,omitempty"`
	MaxInFlight int `json:"max_in_flight,omitempty"`

	// key is behind a pointer so that printing an Endpoint with fmt's
	// %v shows an address, never the key.
	key *apiKey
}

// acceptsFiles reports whether the endpoint takes file content parts.
func (e Endpoint) acceptsFiles() bool { return e.FileInputs == nil || *e.FileInputs }

// modelName is the name the endpoint knows a catalog model by.
func (e Endpoint) modelName(id string) string {
	if n, ok := e.Models[id]; ok {
		return n
	}
	return id
}

// ID names the endpoint — its base URL and key — for the budget, logs and
// metrics without the key (budget.EndpointID).
func (e Endpoint) ID() string { return budget.EndpointID(e.BaseURL, e.apiKeyValue()) }

// limits are the endpoint's configured ceilings.
func (e Endpoint) limits() budget.Limits {
	return budget.Limits{RequestsPerMinute: e.RPM, TokensPerMinute: e.TPM, InFlight: e.MaxInFlight}
}

// HasKey reports whether an API key was loaded for the endpoint.
func (e Endpoint) HasKey() bool { return e.key != nil }

// apiKeyValue is the endpoint's key; "" when it takes none.
func (e Endpoint) apiKeyValue() string {
	if e.key == nil {
		return ""
	}
	return string(*e.key)
}

func newKey(s string) *apiKey { k := apiKey(s); return &k }

// apiKey is a credential. It prints as a redaction in every format and log
// value, so a key that reaches a log line or an error by mistake does not
// leak.
type apiKey string

func (apiKey) String() string               { return "[redacted api key]" }
func (apiKey) GoString() string             { return "[redacted api key]" }
func (apiKey) LogValue() slog.Value         { return slog.StringValue("[redacted api key]") }
func (apiKey) MarshalText() ([]byte, error) { return []byte("[redacted api key]"), nil }

// Config says where the models of each provider of the catalog are called.
// The zero Config has no endpoint: every agent run fails with
// CauseModelUnavailable.
type Config struct {
	// Providers maps a catalog provider ("openai", "anthropic", "google")
	// or AnyProvider to its endpoint.
	Providers map[string]Endpoint `json:"providers"`
}

// Endpoint returns the endpoint that serves a provider's models: its own
// entry, else the AnyProvider entry.
func (c Config) Endpoint(provider string) (Endpoint, bool) {
	if e, ok := c.Providers[provider]; ok {
		return e, true
	}
	e, ok := c.Providers[AnyProvider]
	return e, ok
}

// Budget returns a budget.Budget with each endpoint's ceilings (RPM, TPM,
// MaxInFlight): the one a Runner's calls share.
func (c Config) Budget(opts budget.Options) *budget.Budget {
	b := budget.New(opts)
	for _, e := range c.Providers {
		b.SetLimits(e.ID(), e.limits())
	}
	return b
}

// Configured reports whether any endpoint is configured.
func (c Config) Configured() bool { return len(c.Providers) > 0 }

// Describe lists the configured endpoints for people, one per line
// ("anthropic → https://api.anthropic.com/v1/ (key from ANTHROPIC_API_KEY,
// response format none)"); never a key.
func (c Config) Describe() []string {
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		e := c.Providers[n]
		key := "no key"
		switch {
		case e.APIKeyEnv != "":
			key = "key from $" + e.APIKeyEnv
		case e.APIKeyFile != "":
			key = "key from " + e.APIKeyFile
		}
		label := n
		if n == AnyProvider {
			label = "every model"
		}
		out = append(out, fmt.Sprintf("%s → %s (%s, %s family, response format %s)", label, e.BaseURL, key, e.Family, e.ResponseFormat))
	}
	return out
}

// Flags are the command-line flags that configure the model endpoints, the
// same for `kobana serve` and `kobana demo`.
type Flags struct {
	// BaseURL (-model-base-url) sends every model to one endpoint.
	BaseURL string
	// APIKeyEnv (-model-api-key-env) names the variable holding its key.
	APIKeyEnv string
	// ResponseFormat (-model-response-format) is how that endpoint is asked
	// for JSON; empty means its family's.
	ResponseFormat string
	// Family (-model-family) is that endpoint's provider family; empty
	// means detected from its URL.
	Family string
	// ConfigFile (-agents-config) is a JSON file mapping each provider to
	// its endpoint (see Config).
	ConfigFile string
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.BaseURL, "model-base-url", "", "send every agent's model to this OpenAI-compatible endpoint, e.g. http://127.0.0.1:4000/v1 (LiteLLM, OpenRouter, vLLM, Ollama)")
	fs.StringVar(&f.APIKeyEnv, "model-api-key-env", "", "environment variable holding the API key of -model-base-url (omit for endpoints without keys)")
	fs.StringVar(&f.ResponseFormat, "model-response-format", "", "how -model-base-url is asked for JSON: json_schema, json_object or none (default: its family's; a refused format falls back to the next)")
	fs.StringVar(&f.Family, "model-family", "", "the provider family of -model-base-url, which decides the schema it is sent: "+familyList()+" (default: detected from the URL, else portable)")
	fs.StringVar(&f.ConfigFile, "agents-config", "", "JSON file mapping each model provider to its endpoint and key variable (see docs/agents.md)")
}

// Set reports whether any flag asks for a model endpoint.
func (f Flags) Set() bool { return f.BaseURL != "" || f.ConfigFile != "" || f.APIKeyEnv != "" }

// ConfigError is a configuration that cannot be used; it names the flag,
// file or field at fault.
type ConfigError struct {
	// Where names the flag, or the file and field, e.g.
	// "agents.json: providers.openai.base_url".
	Where string
	Msg   string
}

func (e *ConfigError) Error() string { return e.Where + ": " + e.Msg }

// Load builds the Config the flags ask for, reading API keys through getenv
// (os.Getenv when nil) and key files from disk. providers are the catalog's
// provider names, which -agents-config may use besides AnyProvider. No flag
// set gives the zero Config.
func Load(f Flags, getenv func(string) string, providers []string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch {
	case f.BaseURL != "" && f.ConfigFile != "":
		return Config{}, &ConfigError{"-agents-config", "use either -model-base-url or -agents-config, not both"}
	case f.ConfigFile != "":
		if f.APIKeyEnv != "" {
			return Config{}, &ConfigError{"-model-api-key-env", "goes with -model-base-url; with -agents-config, give each provider its api_key_env"}
		}
		if f.ResponseFormat != "" {
			return Config{}, &ConfigError{"-model-response-format", "goes with -model-base-url; with -agents-config, give each provider its response_format"}
		}
		if f.Family != "" {
			return Config{}, &ConfigError{"-model-family", "goes with -model-base-url; with -agents-config, give each provider its family"}
		}
		return loadFile(f.ConfigFile, getenv, providers)
	case f.BaseURL != "":
		e := Endpoint{BaseURL: f.BaseURL, APIKeyEnv: f.APIKeyEnv, ResponseFormat: f.ResponseFormat, Family: Family(f.Family)}
		if err := e.check(getenv, "-model-base-url", "-model-api-key-env", "-model-response-format", "-model-family"); err != nil {
			return Config{}, err
		}
		return Config{Providers: map[string]Endpoint{AnyProvider: e}}, nil
	case f.APIKeyEnv != "":
		return Config{}, &ConfigError{"-model-api-key-env", "needs -model-base-url"}
	case f.ResponseFormat != "" || f.Family != "":
		return Config{}, &ConfigError{"-model-response-format", "-model-response-format and -model-family need -model-base-url"}
	}
	return Config{}, nil
}

func loadFile(path string, getenv func(string) string, providers []string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, &ConfigError{"-agents-config", err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return Config{}, &ConfigError{path, "not a valid agents configuration: " + err.Error()}
	}
	if dec.More() {
		return Config{}, &ConfigError{path, "holds more than one JSON value"}
	}
	if len(c.Providers) == 0 {
		return Config{}, &ConfigError{path, `"providers" is empty: name at least one provider (` + strings.Join(append(slices.Clone(providers), AnyProvider), ", ") + `)`}
	}
	known := append(slices.Clone(providers), AnyProvider)
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		at := fmt.Sprintf("%s: providers.%s", path, n)
		if !slices.Contains(known, n) {
			return Config{}, &ConfigError{at, fmt.Sprintf("unknown provider %q; the catalog's providers are %s (or %q for every other)", n, strings.Join(providers, ", "), AnyProvider)}
		}
		e := c.Providers[n]
		if err := e.check(getenv, at+".base_url", at+".api_key_env", at+".response_format", at+".family"); err != nil {
			return Config{}, err
		}
		if e.APIKeyFile != "" {
			if e.APIKeyEnv != "" {
				return Config{}, &ConfigError{at, "give api_key_env or api_key_file, not both"}
			}
			kb, err := os.ReadFile(e.APIKeyFile)
			if err != nil {
				return Config{}, &ConfigError{at + ".api_key_file", err.Error()}
			}
			k := strings.TrimSpace(string(kb))
			if k == "" {
				return Config{}, &ConfigError{at + ".api_key_file", e.APIKeyFile + " is empty"}
			}
			if strings.ContainsAny(k, "\r\n") {
				return Config{}, &ConfigError{at + ".api_key_file", e.APIKeyFile + " holds more than one line; it must hold the key alone"}
			}
			e.key = newKey(k)
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"rpm", e.RPM}, {"tpm", e.TPM}, {"max_in_flight", e.MaxInFlight}} {
			if f.v < 0 {
				return Config{}, &ConfigError{at + "." + f.name, fmt.Sprintf("%d is negative; give the ceiling as a positive number, or leave it out for none", f.v)}
			}
		}
		if e.TPM > 0 && e.TPM < minTPM {
			return Config{}, &ConfigError{at + ".tpm", fmt.Sprintf("%d tokens a minute cannot carry one agent call (a prompt is about %d tokens); give at least %d, or leave it out", e.TPM, minTPM/2, minTPM)}
		}
		for id, name := range e.Models {
			if strings.TrimSpace(name) == "" {
				return Config{}, &ConfigError{at + ".models." + id, "empty model name"}
			}
		}
		c.Providers[n] = e
	}
	return c, nil
}

// minTPM is the smallest tokens-per-minute ceiling taken: two agent calls'
// worth.
const minTPM = 8000

// check validates the endpoint and loads its key from the environment.
func (e *Endpoint) check(getenv func(string) string, urlAt, keyAt, formatAt, familyAt string) error {
	u, err := url.Parse(e.BaseURL)
	switch {
	case e.BaseURL == "":
		return &ConfigError{urlAt, "missing: the endpoint's base URL, e.g. https://api.openai.com/v1"}
	case err != nil:
		return &ConfigError{urlAt, fmt.Sprintf("%q is not a URL: %v", e.BaseURL, err)}
	case u.Scheme != "http" && u.Scheme != "https":
		return &ConfigError{urlAt, fmt.Sprintf("%q must be an http or https URL", e.BaseURL)}
	case u.Host == "":
		return &ConfigError{urlAt, fmt.Sprintf("%q has no host", e.BaseURL)}
	case u.User != nil:
		return &ConfigError{urlAt, "must not hold credentials (user:password@); put the key in an environment variable or a key file"}
	case u.RawQuery != "" || u.Fragment != "":
		return &ConfigError{urlAt, fmt.Sprintf("%q must not have a query or fragment", e.BaseURL)}
	}
	switch {
	case e.Family == "":
		e.Family = DetectFamily(e.BaseURL)
	case !validFamily(e.Family):
		return &ConfigError{familyAt, fmt.Sprintf("%q is not a provider family; use %s", e.Family, familyList())}
	}
	switch e.ResponseFormat {
	case "":
		e.ResponseFormat = e.Family.defaultFormat()
	case FormatJSONSchema, FormatJSONObject, FormatNone:
	default:
		return &ConfigError{formatAt, fmt.Sprintf("%q is not a response format; use %s, %s or %s", e.ResponseFormat, FormatJSONSchema, FormatJSONObject, FormatNone)}
	}
	if e.APIKeyEnv != "" {
		k := strings.TrimSpace(getenv(e.APIKeyEnv))
		if k == "" {
			return &ConfigError{keyAt, fmt.Sprintf("the environment variable %s is not set or empty", e.APIKeyEnv)}
		}
		if strings.ContainsAny(k, "\r\n") {
			return &ConfigError{keyAt, fmt.Sprintf("the environment variable %s holds more than one line", e.APIKeyEnv)}
		}
		e.key = newKey(k)
	}
	return nil
}

func familyList() string {
	var names []string
	for _, f := range Families() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// CatalogProviders are the providers of the model catalog, sorted: the
// names -agents-config may use besides AnyProvider.
func CatalogProviders() []string {
	var out []string
	for _, m := range inbox.Models() {
		if !slices.Contains(out, m.Provider) {
			out = append(out, m.Provider)
		}
	}
	sort.Strings(out)
	return out
}

// family is the endpoint's provider family, detected when not set.
func (e Endpoint) family() Family {
	if e.Family == "" {
		return DetectFamily(e.BaseURL)
	}
	return e.Family
}
