package agent

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox"
)

func providers() []string { return []string{"anthropic", "google", "openai"} }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var f Flags
	f.Register(fs)
	if err := fs.Parse([]string{"-model-base-url", "http://127.0.0.1:4000/v1", "-model-api-key-env", "LITELLM_KEY", "-model-response-format", "json_object"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(f, env(map[string]string{"LITELLM_KEY": " sk-litellm \n"}), providers())
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c.Endpoint("anthropic")
	if !ok || e.BaseURL != "http://127.0.0.1:4000/v1" || e.ResponseFormat != FormatJSONObject || e.apiKeyValue() != "sk-litellm" {
		t.Fatalf("endpoint %+v", e)
	}
	if _, ok := c.Endpoint("anything"); !ok {
		t.Error("-model-base-url does not serve every provider")
	}
	if c, err := Load(Flags{}, nil, providers()); err != nil || c.Configured() {
		t.Errorf("no flags: %+v, %v", c, err)
	}
	// Without a key variable: an endpoint that takes no key.
	c, err = Load(Flags{BaseURL: "http://127.0.0.1:11434/v1"}, env(nil), providers())
	if err != nil || c.Providers[AnyProvider].HasKey() || c.Providers[AnyProvider].ResponseFormat != FormatJSONSchema {
		t.Errorf("keyless: %+v, %v", c, err)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		f     Flags
		where string
		says  string
	}{
		{Flags{BaseURL: "x", ConfigFile: "y"}, "-agents-config", "not both"},
		{Flags{APIKeyEnv: "K"}, "-model-api-key-env", "needs -model-base-url"},
		{Flags{BaseURL: "ftp://host/v1"}, "-model-base-url", "http or https"},
		{Flags{BaseURL: "https:///v1"}, "-model-base-url", "no host"},
		{Flags{BaseURL: "https://user:pw@host/v1"}, "-model-base-url", "must not hold credentials"},
		{Flags{BaseURL: "https://host/v1?key=1"}, "-model-base-url", "query"},
		{Flags{BaseURL: "://"}, "-model-base-url", "not a URL"},
		{Flags{BaseURL: "https://host/v1", APIKeyEnv: "MISSING"}, "-model-api-key-env", "MISSING is not set"},
		{Flags{BaseURL: "https://host/v1", ResponseFormat: "xml"}, "-model-response-format", `"xml" is not a response format`},
		{Flags{BaseURL: "https://host/v1", Family: "mistral"}, "-model-family", `"mistral" is not a provider family; use openai, anthropic, gemini, vllm, llama.cpp, ollama, portable`},
		{Flags{Family: "vllm"}, "-model-response-format", "need -model-base-url"},
		{Flags{ConfigFile: "x.json", APIKeyEnv: "K"}, "-model-api-key-env", "give each provider its api_key_env"},
		{Flags{ConfigFile: filepath.Join(t.TempDir(), "missing.json")}, "-agents-config", "no such file"},
	} {
		_, err := Load(c.f, env(nil), providers())
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Where != c.where || !strings.Contains(ce.Msg, c.says) {
			t.Errorf("%+v: %v; want %s: …%s…", c.f, err, c.where, c.says)
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFile(t *testing.T) {
	keyFile := writeFile(t, "google.key", "AIza-google-key\n")
	path := writeFile(t, "agents.json", fmt.Sprintf(`{"providers": {
		"openai":    {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"},
		"anthropic": {"base_url": "https://api.anthropic.com/v1/", "api_key_env": "ANTHROPIC_API_KEY", "response_format": "none"},
		"google":    {"base_url": "https://generativelanguage.googleapis.com/v1beta/openai/", "api_key_file": %q, "file_inputs": false,
		              "models": {"gemini-2.5-flash": "gemini-2.5-flash-001"}}
	}}`, keyFile))
	c, err := Load(Flags{ConfigFile: path}, env(map[string]string{"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}), providers())
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Endpoint("openai"); e.apiKeyValue() != "sk-openai" || e.ResponseFormat != FormatJSONSchema || !e.acceptsFiles() {
		t.Errorf("openai %+v", e)
	}
	if e, _ := c.Endpoint("anthropic"); e.apiKeyValue() != "sk-ant" || e.ResponseFormat != FormatNone {
		t.Errorf("anthropic %+v", e)
	}
	if e, _ := c.Endpoint("google"); e.apiKeyValue() != "AIza-google-key" || e.acceptsFiles() || e.modelName("gemini-2.5-flash") != "gemini-2.5-flash-001" {
		t.Errorf("google %+v", e)
	}
	if _, ok := c.Endpoint("mistral"); ok {
		t.Error("a provider without an entry has an endpoint")
	}
	d := strings.Join(c.Describe(), "\n")
	for _, want := range []string{"anthropic → https://api.anthropic.com/v1/ (key from $ANTHROPIC_API_KEY, anthropic family, response format none)", "google → https://generativelanguage.googleapis.com/v1beta/openai/ (key from " + keyFile} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe lacks %q:\n%s", want, d)
		}
	}
	for _, k := range []string{"sk-openai", "sk-ant", "AIza-google-key"} {
		for _, s := range []string{d, fmt.Sprintf("%v %+v %#v", c, c, c)} {
			if strings.Contains(s, k) {
				t.Errorf("a key is printed: %s", s)
			}
		}
	}
	var log strings.Builder
	slog.New(slog.NewJSONHandler(&log, nil)).Info("config", "config", c, "endpoint", c.Providers["openai"])
	if strings.Contains(log.String(), "sk-openai") {
		t.Errorf("a key is logged: %s", log.String())
	}
}

func TestConfigFileErrors(t *testing.T) {
	for _, c := range []struct {
		json, where, says string
	}{
		{`{"providers": {}}`, "", `"providers" is empty`},
		{`{"providers": {"mistral": {"base_url": "https://x/v1"}}}`, ".providers.mistral", `unknown provider "mistral"`},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "api_key": "sk-inline"}}}`, "", `unknown field "api_key"`},
		{`{"providers": {"openai": {}}}`, ".providers.openai.base_url", "missing"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "api_key_env": "NOPE"}}}`, ".providers.openai.api_key_env", "NOPE is not set"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "api_key_file": "/nonexistent/key"}}}`, ".providers.openai.api_key_file", "no such file"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "api_key_env": "K", "api_key_file": "/k"}}}`, ".providers.openai", "not both"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "models": {"gpt-4.1-mini": " "}}}}`, ".providers.openai.models.gpt-4.1-mini", "empty model name"},
		{`{"providers": {"*": {"base_url": "https://x/v1"}}} {}`, "", "more than one JSON value"},
		{`[`, "", "not a valid agents configuration"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "rpm": -1}}}`, ".providers.openai.rpm", "-1 is negative"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "max_in_flight": -3}}}`, ".providers.openai.max_in_flight", "-3 is negative"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "tpm": 500}}}`, ".providers.openai.tpm", "cannot carry one agent call"},
		{`{"providers": {"openai": {"base_url": "https://x/v1", "rpm": "600"}}}`, "", "not a valid agents configuration"},
	} {
		path := writeFile(t, "agents.json", c.json)
		_, err := Load(Flags{ConfigFile: path}, env(map[string]string{"K": "k"}), providers())
		var ce *ConfigError
		where := path
		if c.where != "" {
			where += ": " + c.where[1:]
		}
		if !errors.As(err, &ce) || ce.Where != where || !strings.Contains(ce.Msg, c.says) {
			t.Errorf("%s: %v; want %s%s: …%s…", c.json, err, path, c.where, c.says)
		}
	}
	empty := writeFile(t, "empty.key", " \n")
	path := writeFile(t, "agents.json", fmt.Sprintf(`{"providers": {"openai": {"base_url": "https://x/v1", "api_key_file": %q}}}`, empty))
	if _, err := Load(Flags{ConfigFile: path}, nil, providers()); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty key file: %v", err)
	}
}

// TestCatalogProviders checks the catalog's providers are the ones the
// documentation configures.
func TestCatalogProviders(t *testing.T) {
	got := CatalogProviders()
	for _, m := range inbox.Models() {
		found := false
		for _, p := range got {
			found = found || p == m.Provider
		}
		if !found {
			t.Errorf("provider %s of %s is missing", m.Provider, m.ID)
		}
	}
}

// TestFamilies: an endpoint's family is the one configured, else the one
// its URL names, else portable; Anthropic's is asked with no format.
func TestFamilies(t *testing.T) {
	for base, want := range map[string]Family{
		"https://api.openai.com/v1":                                FamilyOpenAI,
		"https://openrouter.ai/api/v1":                             FamilyOpenAI,
		"https://api.anthropic.com/v1/":                            FamilyAnthropic,
		"https://generativelanguage.googleapis.com/v1beta/openai/": FamilyGemini,
		"http://127.0.0.1:11434/v1":                                FamilyOllama,
		"http://127.0.0.1:8000/v1":                                 FamilyPortable,
	} {
		c, err := Load(Flags{BaseURL: base}, func(string) string { return "" }, CatalogProviders())
		if err != nil {
			t.Fatal(err)
		}
		e, _ := c.Endpoint("openai")
		if e.Family != want {
			t.Errorf("%s: family %s, want %s", base, e.Family, want)
		}
		wantFormat := FormatJSONSchema
		if want == FamilyAnthropic {
			wantFormat = FormatNone
		}
		if e.ResponseFormat != wantFormat {
			t.Errorf("%s: response format %s, want %s", base, e.ResponseFormat, wantFormat)
		}
	}
	c, err := Load(Flags{BaseURL: "http://10.0.0.5:8000/v1", Family: "vllm", ResponseFormat: "json_object"}, nil, CatalogProviders())
	if e, _ := c.Endpoint("openai"); err != nil || e.Family != FamilyVLLM || e.ResponseFormat != FormatJSONObject {
		t.Errorf("configured family and format: %+v %v", e, err)
	}
}
