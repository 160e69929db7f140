// A session of the TypeScript SDK's client with `bgjob mcp`: BGJOB is the
// command line of the server (a JSON array), and the report on stdout (one
// JSON object) holds what the client received, for the Go test
// (e2e/mcpclients_test.go) to judge.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { toolViolations } from "./gemini.mjs";

const [command, ...args] = JSON.parse(process.env.BGJOB);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "sdk-e2e", version: "1" });
await client.connect(transport);

const report = {};
const { tools } = await client.listTools();
report.tools = tools;
report.violations = toolViolations(tools);

// The SDK client checks structuredContent against each tool's output
// schema, so every call below is checked that way too.
const start = await client.callTool({ name: "job_start", arguments: { command: "seq 1 30", wait_sec: 0 } });
report.start = start;
const id = start.structuredContent.id;
report.wait = await client.callTool({ name: "job_wait", arguments: { ids: [id], timeout_sec: 60 } });
report.refused = await client.callTool({ name: "job_wait", arguments: { ids: [id], until_output: "^\\d+$", timeout_sec: 5 } });
report.matched = await client.callTool({ name: "job_wait", arguments: { ids: [id], until_output: "^[0-9]+5$", timeout_sec: 60 } });
// A job that ends between calls is told at the next call, in events
// (which the SDK client checks against the output schema as well).
const build = await client.callTool({ name: "job_start", arguments: { command: "sleep 0.3; exit 3", name: "build", wait_sec: 0 } });
report.build = build.structuredContent.id;
for (let i = 0; i < 150; i++) {
  const r = await client.callTool({ name: "job_list", arguments: {} });
  if (r.structuredContent?.events?.length) {
    report.digest = r;
    break;
  }
  await new Promise((done) => setTimeout(done, 200));
}
await client.close();
console.log(JSON.stringify(report));
