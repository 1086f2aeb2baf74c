// A bare SDK server over the SDK's own Streamable HTTP transport, for the HTTP floors: the SDK's Node wrapper in its
// JSON answer mode (its cheapest), on 127.0.0.1, one server per session, nothing of ours. `connectSession(transport)`
// makes a fresh SDK server for a new session and connects it. Prints `<label> ready on URL` to stderr like
// `ipython-mcp --http`; ends on SIGTERM.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { sdkFile } from './env.mjs';

export async function serveSdkHttp(label, connectSession, onExit = () => undefined) {
  const { StreamableHTTPServerTransport } = await import(pathToFileURL(sdkFile('dist/esm/server/streamableHttp.js')).href);
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    let transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, enableJsonResponse: true, onsessioninitialized: (id) => sessions.set(id, transport) });
      await connectSession(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  process.stderr.write(`${label} ready on http://127.0.0.1:${http.address().port}/mcp\n`);
  process.on('SIGTERM', () => {
    onExit();
    process.exit(0);
  });
}
