import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipythonCodeMode, mcpToolDefinitions, type ApprovalAnswer, type ApprovalRequest, type IPythonCodeMode } from '../src/index.js';
import { isAlive, only, runScript, survivors, testPython } from './harness.js';

const SERVER = fileURLToPath(new URL('./fixtures/weather-mcp-server.mjs', import.meta.url));

let client: Client;
let transport: StdioClientTransport;
let codeMode: IPythonCodeMode;
let serverPid: number;
/** What the host's approval callback was asked, and what it answers next (yes when nothing is queued). */
const approvals: ApprovalRequest[] = [];
const answers: ApprovalAnswer[] = [];

beforeAll(async () => {
  transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: 'pipe' });
  client = new Client({ name: 'code-mode-tests', version: '1.0.0' });
  await client.connect(transport);
  serverPid = transport.pid ?? 0;
  codeMode = await ipythonCodeMode({
    definitions: await mcpToolDefinitions(client, { group: 'weather' }),
    kernelOptions: { python: testPython() },
    // The fixture's tools declare nothing, so MCP's defaults apply: each call from code asks the host first.
    consent: {
      approve: (request) => {
        approvals.push(request);
        return answers.shift() ?? true;
      },
    },
  });
});

afterAll(async () => {
  const pids = [...(codeMode?.codeMode.kernel?.workerPids() ?? []), serverPid];
  await codeMode?.close();
  await client?.close();
  expect(await survivors(pids)).toEqual([]);
});

describe('tools from a real stdio MCP server', () => {
  it('are kernel functions, renamed when their names are not identifiers', async () => {
    expect(isAlive(serverPid)).toBe(true);
    expect(codeMode.codeMode.functions.map((fn) => [fn.toolName, fn.pythonName])).toEqual([
      ['get-weather', 'get_weather'],
      ['weather.alerts', 'weather_alerts'],
    ]);
    expect(codeMode.runCode.description).toContain(
      "def get_weather(*, city: str, unit_system: Literal['metric', 'imperial'] = 'metric') -> Any:",
    );
    // The description has the summary; the Args section (with the renamed parameter) is help()'s.
    expect(codeMode.runCode.description).not.toContain('Sent as');
    const run = await runScript(codeMode.tools, [
      [
        {
          code:
            "paris = get_weather(city='Paris', unit_system='imperial')\n" +
            "try:\n    get_weather(city='Atlantis')\nexcept ToolCallError as error:\n    print(error)\n" +
            "import pydoc\n" +
            "assert 'unit_system: Sent as \"unit-system\".' in pydoc.render_doc(get_weather)\n" +
            "[paris['city'], paris['temperature'], paris['unitSystem'], paris['pid'], weather_alerts(city='Oslo')]",
        },
      ],
    ]);
    expect(only(run, 0)).toEqual({
      type: 'json',
      value: { output: 'no weather station in Atlantis\n', result: ['Paris', 69.8, 'imperial', serverPid, 'no alerts for Oslo'] },
    });
    const metadata = (run.result.steps[0]?.toolResults[0]?.output as { metadata: { toolCalls: Array<{ toolName: string; input: unknown }> } })
      .metadata;
    expect(metadata.toolCalls.map((call) => [call.toolName, call.input])).toEqual([
      ['get-weather', { city: 'Paris', 'unit-system': 'imperial' }],
      ['get-weather', { city: 'Atlantis' }],
      ['weather.alerts', { city: 'Oslo' }],
    ]);
  });
});

describe('consent for MCP tools called from code', () => {
  const call = async (code: string): Promise<unknown> => only(await runScript(codeMode.tools, [[{ code }]]), 0);

  it('asks the host about a tool that declares nothing, naming its server, tool and arguments', async () => {
    approvals.length = 0;
    await call("get_weather(city='Oslo')");
    expect(approvals).toEqual([expect.objectContaining({ server: 'weather', toolName: 'get-weather', functionName: 'get_weather', input: { city: 'Oslo' } })]);
    expect(approvals[0]?.reason).toContain('does not declare itself read-only');
  });

  it('a refusal raises ToolCallError naming who refused; "session" allows the tool from then on', async () => {
    approvals.length = 0;
    answers.push(false, 'session');
    const refused = await call("try:\n    get_weather(city='Oslo')\nexcept ToolCallError as error:\n    out = str(error)\nout");
    expect(refused).toEqual({ type: 'json', value: 'the tool "get-weather" of the MCP server "weather" was refused by the host\'s approval callback when asked; nothing ran' });
    const allowed = await call("[get_weather(city='Oslo')['city'], get_weather(city='Rome')['city']]");
    expect(allowed).toEqual({ type: 'json', value: ['Oslo', 'Rome'] });
    expect(approvals).toHaveLength(2);
  });
});
