// The official TypeScript client 2.x (@modelcontextprotocol/client) pinned
// to protocol 2026-07-28 over Streamable HTTP, answering confirmations
// (input_required → elicitation/create). Env: KOBANA_URL, KOBANA_TOKEN.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { check, exercise, text } from "./scenario.mjs";

const url = new URL(process.env.KOBANA_URL);
const headers = { Authorization: `Bearer ${process.env.KOBANA_TOKEN}` };

const client = new Client(
  { name: "kobana-clienttest-v2", version: "2.0.0" },
  {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  },
);

// The user says yes to cancelling an invoice and no to anything else.
const asked = [];
client.setRequestHandler("elicitation/create", async (request) => {
  const p = request.params;
  asked.push(p.message);
  check(p.mode === undefined || p.mode === "form", "the confirmation is a form", p);
  check(p.requestedSchema?.properties?.confirm?.type === "boolean", "the form asks one yes/no question", p.requestedSchema);
  if (p.message.includes("billing_invoices_cancel")) {
    return { action: "accept", content: { confirm: true } };
  }
  return { action: "decline" };
});

await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));

await exercise(client, "2026-07-28");

// Confirmed: the invoice is cancelled, once.
const cancel = await client.callTool({ name: "billing_invoices_cancel", arguments: { id: "inv_1011", reason: "cliente pediu" } });
check(!cancel.isError, "billing_invoices_cancel runs after the user's yes", cancel);
check(cancel.structuredContent?.status === "cancelled", "the invoice is cancelled", cancel.structuredContent);
check(asked.length === 1 && asked[0].includes("inv_1011"), "the user was asked once, with the arguments", asked);
console.log("[2026-07-28] destructive tool confirmed and run");

// Declined: nothing changes.
const del = await client.callTool({ name: "emails_delete", arguments: { id: "eml_inv_01" } });
check(del.isError === true && text(del).startsWith("user_declined: "), "a declined emails_delete answers user_declined", del);
check(asked.length === 2, "the user was asked about emails_delete", asked);
const still = await client.callTool({ name: "emails_get", arguments: { id: "eml_inv_01" } });
check(!still.isError, "the e-mail is still there", still);
console.log("[2026-07-28] destructive tool declined, nothing ran");

await client.close();
console.log("v2: ok");
