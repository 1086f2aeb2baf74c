import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/mcp-server, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/mcp-server public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'AllowedHostError',
      'DEFAULT_NAMESPACE',
      'DynamicCatalog',
      'HTTP_HEADERS_TIMEOUT_MS',
      'HTTP_KEEP_ALIVE_MS',
      'LOOPBACK_HOST_NAMES',
      'MAX_TIMEOUT_SECONDS',
      'NAMESPACE_NAME',
      'NOTEBOOK_TOOL_NAME',
      'NotebookToolError',
      'SETTING_DEFINITIONS',
      'STABLE_TOOLS',
      'STABLE_TOOL_NAMES',
      'SettingsError',
      'StdioEraRouter',
      'canonicalHostName',
      'closeOnStdioEnd',
      'createIpythonMcpServer',
      'createNamespace',
      'defaultSettings',
      'findStableTool',
      'isLoopbackHost',
      'isWildcardAddress',
      'namespaceFilePath',
      'namespaceName',
      'notebookTools',
      'resolveSettings',
      'runtimeOptionsFromSettings',
      'serveHttp',
      'serveStdio',
      'stdioTransport',
    ]);
  });
});
