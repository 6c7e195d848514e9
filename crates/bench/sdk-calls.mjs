// Times `tools/call` of a server's `*echo` tool with the official TypeScript SDK client, for
// gateways our Rust bench cannot reach (the legacy HTTP+SSE transport). Prints one JSON line:
// p50/p99 in µs, calls/s, and how many calls came back as errors or with the wrong text.
//   node sdk-calls.mjs sse|http URL [CALLS] [CONCURRENCY]
// Run it from a directory where `npm install @modelcontextprotocol/sdk` was done.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [kind, url, calls = "500", concurrency = "1"] = process.argv.slice(2);
if (!url || !["sse", "http"].includes(kind)) {
  console.error("usage: node sdk-calls.mjs sse|http URL [CALLS] [CONCURRENCY]");
  process.exit(2);
}
const transport =
  kind === "sse" ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "switchboard-sdk-calls", version: "1" });
await client.connect(transport);
const { tools } = await client.listTools();
const tool = tools.find((t) => t.name.endsWith("echo"))?.name;
if (!tool) {
  console.error("no tool named *echo");
  process.exit(1);
}
const call = () => client.callTool({ name: tool, arguments: { text: "hello" } });
for (let i = 0; i < 100; i++) await call(); // warm-up
const total = Number(calls);
const latencies = [];
let next = 0;
let errors = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (next++ < total) {
      const t = performance.now();
      const r = await call();
      if (r.isError || r.content?.[0]?.text !== "hello") errors++;
      latencies.push(performance.now() - t);
    }
  }),
);
const elapsed = performance.now() - started;
latencies.sort((a, b) => a - b);
const at = (q) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] * 1000);
console.log(
  JSON.stringify({ tool, calls: latencies.length, errors, p50_us: at(0.5), p99_us: at(0.99), per_sec: Math.round((latencies.length / elapsed) * 1000) }),
);
await client.close();
