// Any new export here becomes public API of @ipython-mcp/mcp-server.
export { DynamicCatalog } from './dynamic-catalog.js';
export type { DiscoverResult, Registration } from './dynamic-catalog.js';
export { createIpythonMcpServer, createNamespace } from './namespace.js';
export type { IpythonMcpServer, IpythonMcpServerOptions, Namespace, NamespaceOptions, NamespaceSession, NamespaceSettings } from './namespace.js';
export type { SandboxStatus } from './status-report.js';
export type { DocumentResources } from './document-resources.js';
export { DEFAULT_NAMESPACE, NAMESPACE_NAME, namespaceFilePath } from './namespace-files.js';
export { HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_MS, isLoopbackHost, namespaceName, serveHttp } from './http.js';
export type { HttpServeOptions, HttpTls, IpythonMcpHttpServer, NamespaceBackend } from './http.js';
export { AllowedHostError, LOOPBACK_HOST_NAMES, canonicalHostName, isWildcardAddress } from './http-hosts.js';
export { STABLE_TOOLS, STABLE_TOOL_NAMES, findStableTool } from './stable-tools.js';
export type { CatalogEffect, StableToolDefinition, StableToolName } from './stable-tools.js';
export { closeOnStdioEnd, serveStdio, stdioTransport } from './stdio.js';
export { StdioEraRouter } from './era-stdio.js';
export type { StdioEra } from './era-stdio.js';
export { MAX_TIMEOUT_SECONDS, SETTING_DEFINITIONS, SettingsError, defaultSettings, resolveSettings, runtimeOptionsFromSettings } from './settings.js';
export type { SettingDefinition, SettingKind, Settings } from './settings.js';
