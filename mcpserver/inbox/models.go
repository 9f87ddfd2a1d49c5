package inbox

// Model is an LLM an agent can run on, with its prices.
type Model struct {
	ID                 string  `json:"id"`
	Provider           string  `json:"provider"`
	Name               string  `json:"name"`
	ContextTokens      int     `json:"context_tokens"`
	InputUSDPerMTok    float64 `json:"input_usd_per_million_tokens"`
	OutputUSDPerMTok   float64 `json:"output_usd_per_million_tokens"`
	SupportsAttachment bool    `json:"supports_attachments"`
}

// Models is the catalog of models agents can run on.
var Models = []Model{
	{ID: "claude-sonnet-4-5", Provider: "anthropic", Name: "Claude Sonnet 4.5", ContextTokens: 200000, InputUSDPerMTok: 3, OutputUSDPerMTok: 15, SupportsAttachment: true},
	{ID: "claude-haiku-4-5", Provider: "anthropic", Name: "Claude Haiku 4.5", ContextTokens: 200000, InputUSDPerMTok: 1, OutputUSDPerMTok: 5, SupportsAttachment: true},
	{ID: "gpt-4.1-mini", Provider: "openai", Name: "GPT-4.1 mini", ContextTokens: 1000000, InputUSDPerMTok: 0.4, OutputUSDPerMTok: 1.6, SupportsAttachment: true},
	{ID: "gemini-2.5-flash", Provider: "google", Name: "Gemini 2.5 Flash", ContextTokens: 1000000, InputUSDPerMTok: 0.3, OutputUSDPerMTok: 2.5, SupportsAttachment: true},
}

func modelByID(id string) (Model, bool) {
	for _, m := range Models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// cost is what a run with these tokens costs on the model.
func cost(model string, t Tokens) float64 {
	m, ok := modelByID(model)
	if !ok {
		return 0
	}
	c := float64(t.Input)*m.InputUSDPerMTok/1e6 + float64(t.Output)*m.OutputUSDPerMTok/1e6
	return float64(int64(c*1e6+0.5)) / 1e6
}
