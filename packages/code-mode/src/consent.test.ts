import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ConsentGate,
  TOOL_POLICIES,
  consentQuestionText,
  consentSummary,
  policyFromAnnotations,
  resolveToolPolicy,
  type PolicyLayer,
  type PolicySettings,
  type PolicySubject,
  type ToolAnnotations,
  type ToolPolicy,
} from './consent.js';

const hint = fc.option(fc.boolean(), { nil: undefined });
const annotations = fc.option(fc.record({ readOnlyHint: hint, destructiveHint: hint, openWorldHint: hint, idempotentHint: hint }), { nil: undefined });
const policy = fc.constantFrom<ToolPolicy>(...TOOL_POLICIES);
const optionalPolicy = fc.option(policy, { nil: undefined });
const serverName = fc.constantFrom('github', 'fs', 'a');
const toolName = fc.constantFrom('create_issue', 'read-file', 'echo');
const settings: fc.Arbitrary<PolicySettings> = fc.record({
  default: optionalPolicy,
  servers: fc.option(fc.dictionary(serverName, fc.record({ default: optionalPolicy, tools: fc.option(fc.dictionary(toolName, policy), { nil: undefined }) })), { nil: undefined }),
});
const subject: fc.Arbitrary<PolicySubject> = fc.record({ server: fc.option(serverName, { nil: undefined }), tool: toolName, annotations });

function layer(source: 'command line' | 'servers file', value: PolicySettings): PolicyLayer {
  return { source, settings: value, describe: (path) => `${source}:${path.kind}` };
}

/** The rule, written out independently: read-only and not open-world runs; everything else asks. */
function expectedDefault(value: ToolAnnotations | undefined): ToolPolicy {
  const readOnly = value?.readOnlyHint ?? false;
  const openWorld = value?.openWorldHint ?? true;
  return readOnly && !openWorld ? 'run' : 'ask';
}

describe('policyFromAnnotations', () => {
  it('runs only what declares itself read-only and closed-world, with MCP defaults for what is undeclared', () => {
    fc.assert(
      fc.property(annotations, (value) => {
        const resolved = policyFromAnnotations(value);
        expect(resolved.policy).toBe(expectedDefault(value));
        expect(resolved.source).toBe('annotations');
        expect(resolved.reason.length).toBeGreaterThan(0);
      }),
    );
  });

  it('asks for a tool that declares nothing, naming what was undeclared', () => {
    const resolved = policyFromAnnotations(undefined);
    expect(resolved.policy).toBe('ask');
    expect(resolved.reason).toContain('does not declare itself read-only');
    expect(resolved.reason).toContain('undeclared');
    expect(policyFromAnnotations({ readOnlyHint: true }).policy).toBe('ask');
    expect(policyFromAnnotations({ readOnlyHint: true, openWorldHint: false }).policy).toBe('run');
    // destructiveHint false does not make a writing tool safe to run unasked.
    expect(policyFromAnnotations({ readOnlyHint: false, destructiveHint: false, openWorldHint: false }).policy).toBe('ask');
  });
});

describe('resolveToolPolicy', () => {
  it('is the annotations default when no layer sets anything', () => {
    fc.assert(
      fc.property(subject, (value) => {
        expect(resolveToolPolicy(value, [layer('command line', {}), layer('servers file', { servers: {} })])).toEqual(policyFromAnnotations(value.annotations));
      }),
    );
  });

  it('takes the first layer that sets the tool, and within it the most specific setting', () => {
    fc.assert(
      fc.property(subject, settings, settings, (value, first, second) => {
        const resolved = resolveToolPolicy(value, [layer('command line', first), layer('servers file', second)]);
        const specific = (layerSettings: PolicySettings): ToolPolicy | undefined => {
          const server = value.server === undefined ? undefined : layerSettings.servers?.[value.server];
          const tools = server?.tools;
          const byTool = tools !== undefined && Object.hasOwn(tools, value.tool) ? tools[value.tool] : undefined;
          return byTool ?? server?.default ?? layerSettings.default;
        };
        const expected = specific(first) ?? specific(second) ?? expectedDefault(value.annotations);
        expect(resolved.policy).toBe(expected);
        const source = specific(first) !== undefined ? 'command line' : specific(second) !== undefined ? 'servers file' : 'annotations';
        expect(resolved.source).toBe(source);
      }),
    );
  });

  it('matches a tool by its Python function name too, and ignores settings for other servers', () => {
    const file = layer('servers file', { servers: { fs: { tools: { read_file: 'run' } }, other: { default: 'refuse' } } });
    expect(resolveToolPolicy({ server: 'fs', tool: 'read-file', functionName: 'read_file' }, [file]).policy).toBe('run');
    expect(resolveToolPolicy({ server: 'fs', tool: 'write-file', functionName: 'write_file' }, [file]).policy).toBe('ask');
    // An inherited name is not a setting.
    expect(resolveToolPolicy({ server: 'fs', tool: 'constructor' }, [file]).policy).toBe('ask');
  });
});

describe('ConsentGate', () => {
  const gate = (policies: Record<string, ToolPolicy>): ConsentGate =>
    new ConsentGate({
      policyOf: (value) => ({ policy: policies[value.tool] ?? 'ask', source: 'servers file', reason: 'test' }),
      howToAllow: (value) => `set mcpServers.${value.server}.consent to "run"`,
    });

  it('allows a run tool synchronously, refuses a refuse tool, and refuses an ask tool when it cannot ask', () => {
    const g = gate({ read: 'run', rm: 'refuse', write: 'ask' });
    expect(g.decide({ server: 'fs', tool: 'read' }, 'read', {}, undefined, undefined)).toEqual({ allowed: true, decision: 'allowed by policy' });
    const refused = g.decide({ server: 'fs', tool: 'rm' }, 'rm', {}, undefined, undefined);
    expect(refused).toMatchObject({ allowed: false, decision: 'refused by policy' });
    const unasked = g.decide({ server: 'fs', tool: 'write' }, 'write', {}, undefined, undefined);
    expect(unasked).toMatchObject({ allowed: false, decision: 'refused: cannot ask' });
    expect((unasked as { message: string }).message).toContain('set mcpServers.fs.consent to "run"');
  });

  it('asks, and remembers "yes for the rest of the session" per tool only', async () => {
    const g = gate({});
    const asked: string[] = [];
    const answers = ['session', 'no'] as const;
    const ask = async (question: { toolName: string }) => {
      asked.push(question.toolName);
      return { answer: answers[asked.length - 1] ?? 'yes', by: 'the test client' } as const;
    };
    expect(await g.decide({ server: 'fs', tool: 'write' }, 'write', {}, ask, undefined)).toEqual({ allowed: true, decision: 'allowed for the session' });
    expect(await g.decide({ server: 'fs', tool: 'write' }, 'write', {}, ask, undefined)).toEqual({ allowed: true, decision: 'allowed for the session' });
    const no = await g.decide({ server: 'fs', tool: 'move' }, 'move', {}, ask, undefined);
    expect(no).toMatchObject({ allowed: false, decision: 'refused by the person' });
    expect((no as { message: string }).message).toContain('refused by the test client');
    expect(await g.decide({ server: 'fs', tool: 'move' }, 'move', {}, ask, undefined)).toEqual({ allowed: true, decision: 'asked and allowed' });
    expect(asked).toEqual(['write', 'move', 'move']);
  });
});

describe('the words', () => {
  it('bounds the arguments in the question', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 5000 }), (value) => {
        const text = consentQuestionText({ server: 'fs', toolName: 'write', functionName: 'write', input: { value }, reason: 'r' });
        expect(text.length).toBeLessThan(1000);
        expect(text).toContain('the tool "write" of the MCP server "fs"');
      }),
    );
  });

  it('summarises decisions per tool with counts', () => {
    expect(consentSummary([])).toBe('');
    const line = consentSummary([
      { label: 'fs.read', decision: 'allowed by policy' },
      { label: 'fs.read', decision: 'allowed by policy' },
      { label: 'fs.rm', decision: 'refused by the person' },
    ]);
    expect(line).toBe('Tool calls from this code: fs.read: allowed by policy ×2; fs.rm: refused by the person.');
  });
});
