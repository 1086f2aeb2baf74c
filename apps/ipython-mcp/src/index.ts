// Any new export here becomes public API of the ipython-mcp package (library use of the server).
export { createIpythonMcpServer, serveStdio } from '@ipython-mcp/mcp-server';
export type { IpythonMcpServer, IpythonMcpServerOptions } from '@ipython-mcp/mcp-server';
export { resolveSettings } from '@ipython-mcp/mcp-server';
export type { Settings } from '@ipython-mcp/mcp-server';
