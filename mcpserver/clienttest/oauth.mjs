// The official TypeScript SDK's OAuth client (@modelcontextprotocol/sdk's
// client auth module) against the Kobana server: discovery from the 401
// (protected-resource metadata, authorization-server metadata), dynamic
// registration, PKCE, the browser step (the Go test drives Chromium to the
// URL this prints), the code exchange and a refresh; then the client 2.x
// pinned to 2026-07-28 lists, reads a resource and runs a confirmed
// destructive tool of each product with the access token. Env: KOBANA_URL.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { check, text } from "./scenario.mjs";

const url = new URL(process.env.KOBANA_URL);

// The redirect URI: a loopback listener, as native hosts use.
let delivered;
const callback = new Promise((resolve) => (delivered = resolve));
const listener = http.createServer((req, res) => {
  const u = new URL(req.url, "http://127.0.0.1");
  if (u.pathname !== "/callback") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "text/html" }).end('<!doctype html><title>done</title><p id="done">kobana-clienttest: signed in</p>');
  delivered(Object.fromEntries(u.searchParams));
});
await new Promise((r) => listener.listen(0, "127.0.0.1", r));
const redirectUrl = `http://127.0.0.1:${listener.address().port}/callback`;

class Provider {
  constructor() {
    this.saved = {};
  }
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "kobana-clienttest (TypeScript SDK)",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "native",
    };
  }
  state() {
    this.saved.state = randomUUID();
    return this.saved.state;
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(c) {
    this.saved.client = c;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(t) {
    this.saved.tokens = t;
  }
  redirectToAuthorization(u) {
    this.saved.authorizationUrl = u;
    console.log("AUTHORIZE " + u.href);
  }
  saveCodeVerifier(v) {
    this.saved.verifier = v;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

const provider = new Provider();

// 1. Connect without a token: the SDK discovers, registers, and sends the
// person to the authorization page.
const first = new V1Transport(url, { authProvider: provider });
let refused = false;
try {
  await new V1Client({ name: "kobana-clienttest-oauth", version: "1.0.0" }).connect(first);
} catch (e) {
  refused = e instanceof UnauthorizedError;
  if (!refused) throw e;
}
check(refused, "the first connection asks for authorization", null);
const au = provider.saved.authorizationUrl;
check(au.searchParams.get("code_challenge_method") === "S256", "PKCE S256", au.href);
check(au.searchParams.get("resource") === url.href, "the resource indicator is the MCP URL", au.href);
check(provider.saved.client?.client_id?.startsWith("cli_"), "the client registered dynamically", provider.saved.client);

// 2. The browser comes back with the code (the Go test drove it).
const back = await callback;
check(back.code && !back.error, "the authorization response carries a code", back);
check(back.state === provider.saved.state, "the state comes back", back);
check(back.iss === url.origin, "the response names the issuer (RFC 9207)", back);
await first.finishAuth(back.code);
const firstTokens = provider.saved.tokens;
check(firstTokens?.access_token?.startsWith("kbo_at_") && firstTokens.refresh_token, "tokens from the code exchange", firstTokens);
console.log("[oauth] signed in, scopes: " + firstTokens.scope);

// 3. The 2025-11-25 SDK connects with the token.
const v1 = new V1Client({ name: "kobana-clienttest-oauth", version: "1.0.0" });
await v1.connect(new V1Transport(url, { authProvider: provider }));
const v1tools = await v1.listTools();
check(v1tools.tools.some((t) => t.name === "emails_list") && v1tools.tools.some((t) => t.name === "billing_invoices_list"), "2025-11-25: both products' tools", v1tools.tools.map((t) => t.name));
await v1.close();

// 4. Refresh: a new pair; the old access token is refused with a challenge
// that names the metadata.
check((await auth(provider, { serverUrl: url })) === "AUTHORIZED", "refresh", null);
const tokens = provider.saved.tokens;
check(tokens.access_token !== firstTokens.access_token && tokens.refresh_token !== firstTokens.refresh_token, "the refresh rotated both tokens", tokens);
const old = await fetch(url, {
  method: "POST",
  headers: { Authorization: `Bearer ${firstTokens.access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } }),
});
check(old.status === 401 && /error="invalid_token"/.test(old.headers.get("www-authenticate")) && /resource_metadata="/.test(old.headers.get("www-authenticate")), "the access token of before the refresh is refused", [old.status, old.headers.get("www-authenticate")]);
console.log("[oauth] refreshed; the old access token is refused");

// 5. The client 2.x on 2026-07-28 with the refreshed token: list, read,
// and a confirmed destructive tool of each product.
const client = new Client({ name: "kobana-clienttest-oauth-v2", version: "2.0.0" }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
const asked = [];
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { confirm: true } };
});
await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${tokens.access_token}` } } }));
const tools = await client.listTools();
check(tools.tools.some((t) => t.name === "emails_delete") && tools.tools.some((t) => t.name === "billing_invoices_cancel"), "2026-07-28: both products' tools", tools.tools.map((t) => t.name));
const read = await client.readResource({ uri: "kobana://inbox/emails/eml_inv_00" });
check(read.contents?.[0]?.text?.includes("eml_inv_00"), "2026-07-28: a resource is read", read);
const cancel = await client.callTool({ name: "billing_invoices_cancel", arguments: { id: "inv_1011", reason: "cliente pediu" } });
check(!cancel.isError && cancel.structuredContent?.status === "cancelled", "2026-07-28: billing_invoices_cancel runs after the user's yes", cancel);
const del = await client.callTool({ name: "emails_delete", arguments: { id: "eml_inv_01" } });
check(!del.isError, "2026-07-28: emails_delete runs after the user's yes", del);
const gone = await client.callTool({ name: "emails_get", arguments: { id: "eml_inv_01" } });
check(gone.isError && text(gone).startsWith("not_found"), "the e-mail is gone", gone);
check(asked.length === 2, "each destructive tool was confirmed once", asked);
await client.close();
listener.close();
console.log("oauth: ok");
