// A legacy (initialize-era) server: the official TypeScript SDK's 1.x line.
//
//     node tests/peers/ts_legacy/server.mjs               (stdio)
//     node tests/peers/ts_legacy/server.mjs --http PORT   (Streamable HTTP on 127.0.0.1, /mcp)
//
// Tools: echo (progress and a log message), ask (an elicitation on the call's stream),
// sample (a sampling request on the call's stream), roots (a roots/list request that
// belongs to no call: over HTTP it goes on the session's GET stream), slow (waits for
// its cancellation; `cancelled` then says whether it came), bump (resources/updated for
// the subscribed resources).  tests/test_interop_legacy_client.py drives it.  (A tool
// without an input schema gets only the request's `extra`.)
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const text = (value) => ({ content: [{ type: "text", text: String(value) }] });

function makeServer() {
  const server = new McpServer(
    { name: "ts-legacy-peer", version: "1.0.0" },
    { capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } } },
  );
  const subscribed = new Set();
  let cancelled = false;

  server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text: t }, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: 1, total: 1 },
      });
    }
    await extra.sendNotification({
      method: "notifications/message",
      params: { level: "info", data: `echoing ${t}` },
    });
    return text(t);
  });
  server.registerTool("ask", {}, async (extra) => {
    const answer = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: {
          message: "Your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        },
      },
      ElicitResultSchema,
    );
    return text(answer.action === "accept" ? `hello ${answer.content.name}` : answer.action);
  });
  server.registerTool("sample", {}, async (extra) => {
    const answer = await extra.sendRequest(
      {
        method: "sampling/createMessage",
        params: {
          messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }],
          maxTokens: 10,
        },
      },
      CreateMessageResultSchema,
    );
    return text(answer.content.text);
  });
  server.registerTool("roots", {}, async () => {
    const listed = await server.server.listRoots();
    return text(listed.roots.map((root) => root.uri).join(", ") || "no roots");
  });
  server.registerTool("slow", {}, async (extra) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 5000);
      extra.signal.addEventListener("abort", () => {
        cancelled = true;
        clearTimeout(timer);
        resolve();
      });
    });
    return text("slow done");
  });
  server.registerTool("cancelled", {}, async () => text(cancelled));
  server.registerTool("bump", {}, async () => {
    for (const uri of subscribed) await server.server.sendResourceUpdated({ uri });
    return text([...subscribed].join(", "));
  });
  server.registerResource("counter", "test://counter", {}, async (uri) => ({
    contents: [{ uri: uri.href, text: "1" }],
  }));
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  return server;
}

async function serveHttp(port) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id === undefined ? undefined : sessions.get(id);
    if (transport === undefined && req.method === "POST" && body?.method === "initialize") {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await makeServer().connect(transport);
    }
    if (transport === undefined) {
      res.writeHead(id === undefined ? 400 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: No valid session ID provided" } }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(port, "127.0.0.1");
}

if (process.argv[2] === "--http") {
  await serveHttp(Number(process.argv[3]));
} else {
  await makeServer().connect(new StdioServerTransport());
}
