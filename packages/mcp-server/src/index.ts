// Any new export here becomes public API of @ipython-mcp/mcp-server.
export { DynamicCatalog } from './tools/index.js';
export type { DiscoverResult, Registration } from './tools/index.js';
export { createIpythonMcpServer, createNamespace } from './server/index.js';
export type { IpythonMcpServer, IpythonMcpServerOptions, Namespace, NamespaceOptions, NamespaceSession, NamespaceSettings } from './server/index.js';
export type { SandboxStatus } from './server/index.js';
export type { DocumentResources } from './resources/index.js';
export { DEFAULT_NAMESPACE, NAMESPACE_NAME, namespaceFilePath } from './server/index.js';
export { HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_MS, isLoopbackHost, namespaceName, serveHttp } from './transports/index.js';
export type { HttpServeOptions, HttpTls, IpythonMcpHttpServer, NamespaceBackend } from './transports/index.js';
export { AllowedHostError, LOOPBACK_HOST_NAMES, canonicalHostName, isWildcardAddress } from './transports/index.js';
export { STABLE_TOOLS, STABLE_TOOL_NAMES, findStableTool } from './tools/index.js';
export type { CatalogEffect, StableToolDefinition, StableToolName } from './tools/index.js';
export { closeOnStdioEnd, serveStdio, stdioTransport } from './transports/index.js';
export { StdioEraRouter } from './transports/index.js';
export type { StdioEra } from './transports/index.js';
export { MAX_TIMEOUT_SECONDS, SETTING_DEFINITIONS, SettingsError, defaultSettings, resolveSettings, runtimeOptionsFromSettings } from './settings/index.js';
export type { SettingDefinition, SettingKind, Settings } from './settings/index.js';
