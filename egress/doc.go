// Package egress is the policy of where a workflow's requests may go: the
// hosts each workspace secret may be sent to (its destinations) and the
// hosts an agent's workflows may reach at all (its egress list). It sits
// below the compiler, so that one function, Policy.Check, decides both
// before a run — the linter, the dry run and the language server, when a
// step's host is written literally — and at send time, when the executor
// has the URL after substitution and knows which secrets the request
// carries.
//
// A destination is a host pattern (Parse): "erp.example.com" (that host,
// any port), "erp.example.com:8443" (that host and port), "*.example.com"
// (any host below example.com, not example.com itself), "[2001:db8::1]"
// or "192.0.2.7" (an address), or "*" (any host). Host names compare in
// lower case and in their ASCII (punycode) form, without a trailing dot.
//
// A secret without destinations is unbound: it may go wherever the
// egress list lets requests go. A secret whose value is an http or https
// URL is bound to that URL's host by default (BindURL), since a webhook
// URL has one place it belongs. The Inbox keeps each secret's
// destinations beside its sealed value; package inbox reads them into a
// Policy.
//
// Entry points: Parse and ParseList (patterns), Destinations.Allows,
// Policy.Check (the check), TargetOf and ParseTarget (the host a request
// goes to), BindURL.
package egress
