// Package standin is a local OpenAI-compatible Chat Completions server that
// stands in for a model where none can be reached: the agent runner's tests
// and `kobana demo`. It is not a model and does not pretend to be one: it
// answers each request with a Reply its Responder picks (scripted answers,
// provider errors, Retry-After, refusals, truncated answers, a request that
// never returns), and it keeps every request it received, body and headers,
// so tests can check what a real provider would have been sent.
//
// A Server may reproduce one provider's documented behaviour (Provider:
// OpenAI, Anthropic, Gemini, VLLM, VLLMLLGuidance, VLLMLegacy, LlamaCpp,
// Ollama): the response_format it refuses and how it writes its errors
// (ErrorFor, GeminiRateLimited); and replies can be what servers send but
// no model writes: an event stream, an HTML page, a body without end, no
// usage, an answer in a tool call, a 401 quoting the key (EchoKey).
//
// A Server may also answer after a Latency (a model taking 2 s or 10 s to
// write) and enforce a provider's rate limit (Limit, RateLimit: requests
// and tokens per window, OpenAI's x-ratelimit-* headers on every answer,
// 429 with retry-after past it) — the behaviour the providers document,
// not their numbers.
//
// Entry points: New (a Server, an http.Handler serving POST
// /chat/completions and /v1/chat/completions), Server.Start (listen on
// loopback), Server.Requests (what was received), and the Responders
// Sequence, Always and Match. Usage counts are an estimate, EstimateTokens:
// one token per four bytes of message text and of file data, rounded up —
// a stand-in for a provider's tokenizer, the same for every request.
package standin
