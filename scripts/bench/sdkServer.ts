// The comparison server: the official MCP TypeScript SDK in its stateless shape (a new McpServer
// and StreamableHTTPServerTransport per request, JSON responses) serving carecircle's own
// search_care_resources handler, answered the way carecircle answers it (JSON text + structuredContent).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { loadDirectory } from '../../src/directory/handler.js';
import { directoryTools } from '../../src/directory/tools.js';

const search = directoryTools(loadDirectory('http://127.0.0.1')).find((t) => t.name === 'search_care_resources');
if (!search) throw new Error('carecircle has no search_care_resources tool');
const tool = search;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function newServer(): McpServer {
  const server = new McpServer({ name: 'sdk-directory', version: '1.0.0' });
  server.registerTool(tool.name, { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: tool.annotations }, async (args) => {
    const result = await tool.handler(args, { requestId: 'sdk', clientIp: '127.0.0.1', protocolVersion: '2025-06-18' });
    return { content: [{ type: 'text', text: JSON.stringify(result.structured) }], structuredContent: result.structured };
  });
  return server;
}

const http = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  void (async () => {
    const body = await readJson(req);
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  })().catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});
http.keepAliveTimeout = 5_000;
http.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', urls: { mcp: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` } });
});
const stop = () => {
  http.close(() => process.exit(0));
  http.closeAllConnections();
};
process.on('message', (m) => m === 'stop' && stop());
process.on('disconnect', stop);
