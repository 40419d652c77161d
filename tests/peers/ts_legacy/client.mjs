// A legacy (initialize-era) client: the official TypeScript SDK's 1.x line.
//
//     node tests/peers/ts_legacy/client.mjs CMD...        (a stdio server)
//     node tests/peers/ts_legacy/client.mjs --http URL    (Streamable HTTP)
//
// It talks to the everything example the 2025-11-25 way and prints one JSON object of
// what it saw (tests/test_interop_legacy.py reads it).  Its dependency is installed by
// that test (npm ci, from package-lock.json).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const report = { logs: [], updated: [], progress: [] };
let aborting = null; // the call the elicitation handler cancels instead of answering

const client = new Client(
  { name: "ts-legacy-client", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  report.elicit_message = request.params.message;
  if (aborting !== null) aborting.abort("the client changed its mind");
  return { action: "accept", content: { name: "Ada" } };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: "assistant",
  content: { type: "text", text: "Paris" },
  model: "m",
}));
client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
  report.logs.push(note.params.level);
});
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
  report.updated.push(note.params.uri);
});

const request = client.request.bind(client); // to see the negotiated version, on any transport
client.request = async (req, schema, options) => {
  const result = await request(req, schema, options);
  if (req.method === "initialize") report.version = result.protocolVersion;
  return result;
};

const transport =
  argv[0] === "--http"
    ? new StreamableHTTPClientTransport(new URL(argv[1]))
    : new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: "inherit" });

const watchdog = setTimeout(() => {
  console.error("ts_legacy_client: timed out");
  process.exit(2);
}, 60000);

await client.connect(transport);
report.server = client.getServerVersion().name;
report.capabilities = Object.keys(client.getServerCapabilities()).sort();
report.tools = (await client.listTools()).tools.length;
// The SDK runs notification handlers a microtask later than it settles a response, so
// progress sent right before its result can reach the handler after the call ended (and
// is dropped as "unknown token"): the progress is read off the transport instead.
const deliver = transport.onmessage;
transport.onmessage = (message, extra) => {
  if (message.method === "notifications/progress") report.progress.push(message.params.progress);
  deliver(message, extra);
};
client.onerror = () => {}; // that late progress, reported as an error: expected
await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
  onprogress: () => {},
});
const elicited = await client.callTool({ name: "test_input_required_result_elicitation" });
report.elicited = elicited.content[0].text;
const sampled = await client.callTool({ name: "test_input_required_result_sampling" });
report.sampled = sampled.content[0].text;
// cancellation: the SDK sends notifications/cancelled on abort; the session goes on
aborting = new AbortController();
try {
  await client.callTool({ name: "test_input_required_result_elicitation" }, undefined, {
    signal: aborting.signal,
  });
  report.cancelled = "answered";
} catch (e) {
  report.cancelled = aborting.signal.aborted ? "aborted" : String(e);
}
aborting = null;
await client.setLoggingLevel("info");
await client.callTool({ name: "test_logging_tool" });
await client.ping();
const uri = "test://watched-resource";
await client.subscribeResource({ uri });
await client.callTool({ name: "test_trigger_resource_update" });
for (let i = 0; i < 50 && report.updated.length === 0; i++) {
  await new Promise((r) => setTimeout(r, 20)); // over HTTP it comes on the GET stream
}
await client.unsubscribeResource({ uri });
await client.callTool({ name: "test_trigger_resource_update" });
await client.ping();
await new Promise((r) => setTimeout(r, 100)); // a second update, had it been sent, is in
report.read = (await client.readResource({ uri })).contents[0].uri;
// SEP-1699: over HTTP the server closes the call's stream, the SDK resumes it
const reconnected = await client.callTool({ name: "test_reconnection" });
report.reconnected = reconnected.content[0].text;
const plain = await client.callTool({ name: "test_simple_text" });
report.result_keys = Object.keys(plain).sort();
await client.close();
clearTimeout(watchdog);
console.log(JSON.stringify(report));
