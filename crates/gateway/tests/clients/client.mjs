// A scripted MCP client on the official TypeScript SDK (npm @modelcontextprotocol/sdk), for the
// gateway tests. Same plan format and output as client.py:
//
//   node client.mjs PLAN stdio COMMAND [ARGS...]
//   node client.mjs PLAN http URL [TOKEN]
//
// (Only this client takes the `sampling` and `sampled` steps.)
//
// The SDK is loaded from the directory in SWITCHBOARD_PEER_TS_SDK (installed by scripts/peers).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

const sdk = process.env.SWITCHBOARD_PEER_TS_SDK;
if (!sdk) {
  console.log(JSON.stringify({ error: "SWITCHBOARD_PEER_TS_SDK is not set; run scripts/peers" }));
  process.exit(1);
}
const load = (p) => import(pathToFileURL(join(sdk, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ToolListChangedNotificationSchema, CreateMessageRequestSchema } = await load("types.js");

const [planText, kind, ...rest] = process.argv.slice(2);
const plan = JSON.parse(planText);
let transport;
if (kind === "stdio") {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
} else if (kind === "http") {
  const headers = rest[1] ? { Authorization: `Bearer ${rest[1]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: { headers } });
} else {
  throw new Error(`unknown transport ${kind}`);
}

let changed = false;
let wake = null;
// A plan with a `sampling` step makes a client that can sample with tools (2025-11-25; without
// them when the step says `"tools": false`): it
// answers each sampling/createMessage with the step's next scripted result and keeps the
// requests for a `sampled` step to print.
const samples = plan.find((step) => step.op === "sampling");
const capabilities = samples ? { sampling: samples.tools === false ? {} : { tools: {} } } : {};
const client = new Client({ name: "switchboard-test-ts", version: "1.0.0" }, { capabilities });
const sampled = [];
if (samples) {
  const answers = [...samples.answers];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    sampled.push(request.params);
    const answer = answers.shift();
    if (!answer) throw new Error("no scripted sampling answer left");
    return answer;
  });
}
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changed = true;
  if (wake) wake();
});
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const textOf = (content) => content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

try {
  await client.connect(transport);
  for (const step of plan) {
    let out;
    switch (step.op) {
      case "list_tools": {
        const names = [];
        let cursor;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined);
          names.push(...page.tools.map((t) => t.name));
          cursor = page.nextCursor;
        } while (cursor);
        out = { tools: names };
        break;
      }
      case "call": {
        const r = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
        out = { is_error: Boolean(r.isError), text: textOf(r.content ?? []) };
        break;
      }
      case "read": {
        const r = await client.readResource({ uri: step.uri });
        out = { text: r.contents.map((c) => c.text ?? "").join("\n") };
        break;
      }
      case "list_resources":
        out = { uris: (await client.listResources()).resources.map((r) => r.uri) };
        break;
      case "list_prompts":
        out = { prompts: (await client.listPrompts()).prompts.map((p) => p.name) };
        break;
      case "prompt": {
        const r = await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} });
        out = { text: r.messages.map((m) => m.content?.text ?? "").join("\n") };
        break;
      }
      case "sampling":
        out = { sampling: samples.answers.length };
        break;
      case "sampled":
        out = { requests: sampled };
        break;
      case "pause":
        console.log(JSON.stringify({ paused: true }));
        await lines.next();
        continue;
      case "wait_tools_changed": {
        if (!changed) {
          await new Promise((resolve) => {
            wake = resolve;
            setTimeout(resolve, (step.timeout ?? 10) * 1000);
          });
        }
        out = { changed };
        changed = false;
        break;
      }
      default:
        throw new Error(`unknown op ${step.op}`);
    }
    console.log(JSON.stringify(out));
  }
  await client.close();
  process.exit(0);
} catch (e) {
  console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  process.exit(1);
}
