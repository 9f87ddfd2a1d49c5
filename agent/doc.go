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
//     for JSON with the workflow schema where the endpoint takes it,
//     retrying 429, 408, 5xx and lost connections with backoff that honours
//     Retry-After, within the agent's timeout (Retry);
//  4. takes the answer out of a code fence if it came in one, lints it
//     (Validate, the same call path as the workflows_validate tool) and, if
//     it does not validate, sends the linter's text — codes, positions,
//     the source line with a caret, did-you-mean — back for at most the
//     agent's repair rounds.
//
// A run ends succeeded with the valid answer, or failed with a stable
// inbox.Cause: model_unavailable, model_timeout, rate_limited,
// provider_error, context_length, refusal, output_truncated,
// invalid_output (with the diagnostics), attachment_unreadable. Tokens
// are the sum of every answer's usage, repair rounds included, and the cost
// is the catalog's price of them. Every request is recorded on the run
// (inbox.ModelCall: round, attempt, status, cause, wait), with the prompt's
// Version.
//
// Keys come from the environment or a key file named by the configuration
// (Flags, Load), never from records; they print as a redaction, and the
// runner logs no key, prompt or answer.
//
// The tests run against package standin, a local OpenAI-compatible server
// that stands in for the model.
package agent
