// The official TypeScript SDK 1.x (@modelcontextprotocol/sdk) on protocol
// 2025-11-25 over Streamable HTTP. Env: KOBANA_URL, KOBANA_TOKEN.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { check, exercise, text } from "./scenario.mjs";

const url = new URL(process.env.KOBANA_URL);
const headers = { Authorization: `Bearer ${process.env.KOBANA_TOKEN}` };

const client = new Client({ name: "kobana-clienttest-v1", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
check(client.getServerVersion()?.name === "kobana", "initialize names the server", client.getServerVersion());

await exercise(client, "2025-11-25");

// Inbox cannot ask a 2025 client to confirm: nothing runs, and the answer
// says why.
const del = await client.callTool({ name: "emails_delete", arguments: { id: "eml_inv_01" } });
check(del.isError === true && text(del).startsWith("confirmation_required: "), "emails_delete on 2025 answers confirmation_required", del);
const still = await client.callTool({ name: "emails_get", arguments: { id: "eml_inv_01" } });
check(!still.isError, "the e-mail is still there", still);
console.log("[2025-11-25] destructive tool: confirmation_required, nothing ran");

await client.close();
console.log("v1: ok");
