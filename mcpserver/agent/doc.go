// Package agent is the Inbox's agent runner: a real model reads an e-mail
// and answers with {"result": …, "workflow": [steps]}, and the platform's
// own linter keeps the answer honest before anything runs.
//
// Runner implements inbox.AgentRunner. One run:
//
//  1. finds the agent's model in the catalog and the endpoint its provider
//     is configured with (Config);
//  2. writes the prompt (package prompt: the agent's instructions and
//     skills, the platform's rules, the secret names, the e-mail with its
//     attachments as metadata) and, when the agent allows it and the model
//     supports attachments, attaches PDF and image attachments as file
//     inputs within the agent's byte cap, streamed from the stored message
//     into the request;
//  3. calls Chat Completions through the official OpenAI Go SDK, asking
//     for JSON with the answer's schema as the endpoint's provider family
//     takes it (Schema, derived from workflow.schema.json per Family), and
//     falling back to JSON mode, then to none, when the provider refuses
//     it; retrying 429, 408, 5xx and lost connections with backoff that
//     honours Retry-After and Gemini's retryDelay, within the agent's
//     timeout (Retry); reading every provider's error shape (Gemini's
//     array, vLLM's flat body) and classifying it by its wording; refusing
//     a 200 that is not a completion and an answer past MaxResponseBytes;
//  4. reads the answer from the content or a tool call, keeps thinking
//     written before it (<think>…</think>, reasoning_content) apart, takes
//     it out of a code fence if it came in one, lints it with the
//     workspace's secret names and the run's policy (ValidateWith, the
//     lint.Bytes call the workflows_validate tool makes too) and, if it
//     does not validate or is empty, sends the linter's text — codes,
//     positions, the source line with a caret, did-you-mean — back for at
//     most the agent's repair rounds, never as an empty assistant turn.
//
// A run ends succeeded with the valid answer, or failed with a stable
// inbox.Cause: model_unavailable, model_timeout, rate_limited,
// provider_error, context_length, refusal, output_truncated,
// invalid_output (with the diagnostics), attachment_unreadable. Tokens
// are the sum of every answer's usage, repair rounds included, and the cost
// is the catalog's price of them (cached input at its cached rate; a run
// whose answers reported no usage says so). Every request is recorded on
// the run (inbox.ModelCall: round, attempt, status, cause, wait, response
// format), with the prompt's Version. A failure that may pass (an outage,
// a rate or quota, a timeout) is marked Transient, for the pipeline's
// retry schedule.
//
// With a Budget (package budget; Config.Budget applies each endpoint's
// rpm, tpm and max_in_flight), every request waits for its endpoint to
// admit it, for the e-mail's workspace, and reports the answer's status,
// rate-limit headers and usage back; a rate-limited retry then waits in
// the budget, where a 429 pauses the whole endpoint. The SDK's own retries
// are off: each request is the runner's, and recorded.
//
// Keys come from the environment or a key file named by the configuration
// (Flags, Load), never from records; they print as a redaction, the runner
// logs no key, prompt or answer, and a key the provider echoes back is
// redacted from every text of the result before it leaves RunAgent.
//
// The tests run against package standin, a local OpenAI-compatible server
// that stands in for the model.
package agent
