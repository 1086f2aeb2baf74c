// The transports room: stdio and Streamable HTTP.
// What other rooms and the package's index use of it: they import the room through this file only.
export { StdioEraRouter } from './era-stdio.js';
export type { StdioEra } from './era-stdio.js';
export { AllowedHostError, LOOPBACK_HOST_NAMES, canonicalHostName, isWildcardAddress } from './http-hosts.js';
export { HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_MS, isLoopbackHost, namespaceName, serveHttp } from './http.js';
export type { HttpServeOptions, HttpTls, IpythonMcpHttpServer, NamespaceBackend } from './http.js';
export { closeOnStdioEnd, serveStdio, stdioTransport } from './stdio.js';
