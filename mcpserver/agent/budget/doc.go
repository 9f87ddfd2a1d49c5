// Package budget admits model calls to their endpoints: as many, as fast,
// as each endpoint allows, shared by every agent and workspace of a
// process.
//
// An endpoint is a base URL and an API key, named by EndpointID without
// the key. A Budget keeps, per endpoint:
//
//   - the configured ceilings (Limits: requests and tokens per minute,
//     paced evenly; calls in flight);
//   - what the provider's answers say (ParseHeaders): OpenAI's and Azure's
//     x-ratelimit-limit|remaining|reset-requests|tokens, Anthropic's
//     anthropic-ratelimit-*; a limit sets the rate (a minute's worth), the
//     remaining — less the calls admitted after the answered one — caps
//     what may go now;
//   - a pause: a 429, 503 or 529 stops the whole endpoint for the wait it
//     asks (retry-after-ms, retry-after, the reset of an exhausted limit) or
//     a growing backoff, after which it starts again from empty, at its
//     rate;
//   - the calls waiting, a queue per workspace, admitted a workspace at a
//     time in turn, so that one workspace with thousands queued does not
//     hold up another's first call.
//
// Until an endpoint with no configured rate has answered once, one call at
// a time is sent to find out its limits. A call's tokens are estimated
// before it is sent and corrected by the usage its answer reports.
//
// Acquire waits for admission (ctx ends it, and the call leaves the queue);
// the Lease it returns ends with Done (the answer's status, headers and
// usage) or Cancel (not sent). Close refuses the calls still waiting and
// lets the admitted ones finish. An Observer sees each endpoint's calls in
// flight and waiting and every answer that slowed it, for metrics.
package budget
