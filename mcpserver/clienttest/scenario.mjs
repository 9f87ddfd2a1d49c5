// What every official client checks against the Kobana MCP server: one
// scenario, run by v1.mjs (SDK 1.x, protocol 2025-11-25) and v2.mjs (client
// 2.x pinned to 2026-07-28). The Go test (clients_test.go) starts the
// server with the demo data of both products and runs the scripts; a
// script exits non-zero on the first failed check.

export function check(cond, what, got) {
  if (!cond) {
    const detail = got === undefined ? "" : `\n  got: ${JSON.stringify(got, null, 1).slice(0, 2000)}`;
    throw new Error(`check failed: ${what}${detail}`);
  }
}

export function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

// rpcError runs fn and returns the JSON-RPC error it rejects with.
async function rpcError(what, fn) {
  try {
    const r = await fn();
    throw new Error(`check failed: ${what} should have failed, got ${JSON.stringify(r).slice(0, 500)}`);
  } catch (e) {
    if (e.message?.startsWith("check failed")) throw e;
    return e;
  }
}

async function all(list, key) {
  const out = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : undefined);
    out.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

// exercise lists and calls tools, reads every resource kind, gets prompts
// and completes, as a client of the given era would.
export async function exercise(client, era) {
  const log = (...a) => console.log(`[${era}]`, ...a);

  // tools/list, then calls the client checks against each tool's cached
  // outputSchema.
  const tools = await all((p) => client.listTools(p), "tools");
  const names = tools.map((t) => t.name);
  for (const want of ["emails_get", "emails_delete", "billing_invoices_get", "billing_invoices_cancel"]) {
    check(names.includes(want), `tools/list has ${want}`, names);
  }
  for (const t of tools) {
    check(t.inputSchema?.type === "object", `${t.name}: inputSchema is an object schema`, t.inputSchema);
  }
  log(`tools/list: ${tools.length} tools`);

  const email = await client.callTool({ name: "emails_get", arguments: { id: "eml_inv_00" } });
  check(!email.isError, "emails_get eml_inv_00 succeeds", email);
  check(email.structuredContent?.id === "eml_inv_00", "emails_get returns the e-mail as structuredContent", email.structuredContent);

  const invoice = await client.callTool({ name: "billing_invoices_get", arguments: { id: "inv_1003" } });
  check(!invoice.isError && invoice.structuredContent?.id === "inv_1003", "billing_invoices_get inv_1003", invoice);

  // A tool error is a readable result, not a -32602 thrown by the client.
  const missing = await client.callTool({ name: "emails_get", arguments: { id: "eml_nope" } });
  check(missing.isError === true, "emails_get of an unknown id is an error result", missing);
  check(text(missing).startsWith("not_found: "), "the error code starts the text", text(missing));
  check(missing.structuredContent === undefined, "an error result has no structuredContent", missing);
  const badArgs = await client.callTool({ name: "billing_invoices_get", arguments: {} });
  check(badArgs.isError === true && text(badArgs).startsWith("invalid_arguments: "), "missing arguments are an invalid_arguments result", badArgs);
  log("tools/call: results and errors readable");

  // Resources: fixed ones, templates, text and blob reads, not found.
  const resources = await all((p) => client.listResources(p), "resources");
  const uris = resources.map((r) => r.uri);
  for (const want of ["kobana://inbox/models", "kobana://billing/organization"]) {
    check(uris.includes(want), `resources/list has ${want}`, uris);
  }
  const templates = await all((p) => client.listResourceTemplates(p), "resourceTemplates");
  const tpl = templates.map((t) => t.uriTemplate);
  for (const want of ["kobana://inbox/emails/{id}", "kobana://billing/invoices/{id}/pdf"]) {
    check(tpl.includes(want), `resources/templates/list has ${want}`, tpl);
  }
  const models = await client.readResource({ uri: "kobana://inbox/models" });
  check(models.contents?.[0]?.text && JSON.parse(models.contents[0].text), "kobana://inbox/models reads as JSON text", models);
  const read = await client.readResource({ uri: "kobana://inbox/emails/eml_inv_00" });
  check(JSON.parse(read.contents[0].text).id === "eml_inv_00", "an e-mail resource reads as JSON text", read);
  const pdf = await client.readResource({ uri: "kobana://billing/invoices/inv_1003/pdf" });
  const blob = pdf.contents?.[0]?.blob;
  check(typeof blob === "string" && Buffer.from(blob, "base64").subarray(0, 5).toString() === "%PDF-", "the invoice PDF reads as a base64 blob", pdf.contents?.[0]?.mimeType);
  check(pdf.contents[0].mimeType === "application/pdf", "the PDF says application/pdf", pdf.contents[0].mimeType);
  const notFound = await rpcError("reading an unknown e-mail", () => client.readResource({ uri: "kobana://inbox/emails/eml_nope" }));
  const wantCode = era === "2026-07-28" ? -32602 : -32002;
  check(notFound.code === wantCode, `resource not found is ${wantCode} on ${era}`, { code: notFound.code, message: notFound.message });
  log("resources: list, templates, text and blob reads, not found");

  // Prompts.
  const prompts = await all((p) => client.listPrompts(p), "prompts");
  const pnames = prompts.map((p) => p.name);
  for (const want of ["inbox_overview", "webhook_health", "customer_overview"]) {
    check(pnames.includes(want), `prompts/list has ${want}`, pnames);
  }
  const overview = await client.getPrompt({ name: "inbox_overview", arguments: { inbox_id: "ibx_invoices" } });
  check(overview.messages?.length > 0 && overview.messages[0].content?.type === "text", "inbox_overview builds messages", overview);
  const customer = await client.getPrompt({ name: "customer_overview", arguments: { customer_id: "cus_acme" } });
  check(customer.messages?.length > 0, "customer_overview builds messages", customer);
  const badPrompt = await rpcError("inbox_overview without inbox_id", () => client.getPrompt({ name: "inbox_overview", arguments: {} }));
  check(badPrompt.code === -32602, "a missing prompt argument is -32602", { code: badPrompt.code, message: badPrompt.message });
  log("prompts: list, get, missing argument");

  // Completions.
  const ids = await client.complete({ ref: { type: "ref/resource", uri: "kobana://inbox/emails/{id}" }, argument: { name: "id", value: "eml_inv" } });
  check(ids.completion.values.length > 0 && ids.completion.values.every((v) => v.startsWith("eml_inv")), "e-mail ids complete by prefix", ids.completion);
  const inboxes = await client.complete({ ref: { type: "ref/prompt", name: "inbox_overview" }, argument: { name: "inbox_id", value: "" } });
  check(inboxes.completion.values.includes("ibx_invoices"), "inbox_overview's inbox_id completes", inboxes.completion);
  const customers = await client.complete({ ref: { type: "ref/resource", uri: "kobana://billing/customers/{id}" }, argument: { name: "id", value: "cus_a" } });
  check(customers.completion.values.includes("cus_acme"), "customer ids complete", customers.completion);
  log("completion/complete: resource templates and prompt arguments");
}
