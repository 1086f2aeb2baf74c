// The server room: a namespace and its sessions' MCP servers.
// What other rooms and the package's index use of it: they import the room through this file only.
export { DEFAULT_NAMESPACE, NAMESPACE_NAME, namespaceFilePath } from './namespace-files.js';
export { createIpythonMcpServer, createNamespace, namespaceOptionsOf } from './namespace.js';
export type { IpythonMcpServer, IpythonMcpServerOptions, Namespace, NamespaceOptions, NamespaceSession, NamespaceSettings } from './namespace.js';
export type { SandboxStatus } from './status-report.js';
// A connection's detached cells by request id: the transports feed it every client message (tools/detached/request-jobs.ts).
export { RequestJobs } from '../tools/index.js';
