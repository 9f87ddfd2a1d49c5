package inbox

import "math"

// Model is an LLM an agent can run on, with its prices.
type Model struct {
	ID               string  `json:"id"`
	Provider         string  `json:"provider"`
	Name             string  `json:"name"`
	ContextTokens    int     `json:"context_tokens"`
	InputUSDPerMTok  float64 `json:"input_usd_per_million_tokens"`
	OutputUSDPerMTok float64 `json:"output_usd_per_million_tokens"`
	// CachedInputUSDPerMTok is the price of input tokens read from the
	// provider's prompt cache; 0 when the catalog has none (they are then
	// priced as input).
	CachedInputUSDPerMTok float64 `json:"cached_input_usd_per_million_tokens,omitempty"`
	SupportsAttachment    bool    `json:"supports_attachments"`
}

// models is the catalog; Models returns a copy so callers cannot change it.
var models = []Model{
	{ID: "claude-sonnet-4-5", Provider: "anthropic", Name: "Claude Sonnet 4.5", ContextTokens: 200000, InputUSDPerMTok: 3, OutputUSDPerMTok: 15, CachedInputUSDPerMTok: 0.3, SupportsAttachment: true},
	{ID: "claude-haiku-4-5", Provider: "anthropic", Name: "Claude Haiku 4.5", ContextTokens: 200000, InputUSDPerMTok: 1, OutputUSDPerMTok: 5, CachedInputUSDPerMTok: 0.1, SupportsAttachment: true},
	{ID: "gpt-4.1-mini", Provider: "openai", Name: "GPT-4.1 mini", ContextTokens: 1000000, InputUSDPerMTok: 0.4, OutputUSDPerMTok: 1.6, CachedInputUSDPerMTok: 0.1, SupportsAttachment: true},
	{ID: "gemini-2.5-flash", Provider: "google", Name: "Gemini 2.5 Flash", ContextTokens: 1000000, InputUSDPerMTok: 0.3, OutputUSDPerMTok: 2.5, SupportsAttachment: true},
}

// Models returns the catalog of models agents can run on, in a fixed order.
func Models() []Model {
	out := make([]Model, len(models))
	copy(out, models)
	return out
}

// ModelIDs returns the ids of the catalog, in its order.
func ModelIDs() []string {
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	return ids
}

// ModelByID finds a model of the catalog.
func ModelByID(id string) (Model, bool) {
	for _, m := range models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Cost is what a run with these tokens costs on a model of the catalog, in
// USD rounded to millionths (0 for a model not in the catalog): cached
// input tokens at the cached rate where the catalog has one, the rest of
// the input and the output at theirs.
func Cost(model string, t Tokens) float64 {
	m, ok := ModelByID(model)
	if !ok {
		return 0
	}
	cached := min(max(t.Cached, 0), t.Input)
	cachedRate := m.CachedInputUSDPerMTok
	if cachedRate == 0 {
		cachedRate = m.InputUSDPerMTok
	}
	return RoundUSD(float64(t.Input-cached)*m.InputUSDPerMTok/1e6 + float64(cached)*cachedRate/1e6 + float64(t.Output)*m.OutputUSDPerMTok/1e6)
}

// RoundUSD rounds an amount of USD to millionths, the precision costs are
// recorded and summed in.
func RoundUSD(f float64) float64 { return math.Round(f*1e6) / 1e6 }
