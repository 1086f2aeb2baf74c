/**
 * Consent for nested calls: which calls from code run at once, which wait for the person's yes, which never run.
 * Both products (the `ipython-mcp code-mode` server and the AI SDK capability) resolve a tool's policy here, so the
 * same tool gets the same answer in both (decision record: docs/decisions/0019-consent.md).
 */

/** What happens to a nested call of a tool: it runs, it waits for the person's yes, or it never runs. */
export type ToolPolicy = 'run' | 'ask' | 'refuse';

/** The policies, in the order the settings list them. */
export const TOOL_POLICIES: readonly ToolPolicy[] = ['run', 'ask', 'refuse'];

/** What an MCP server declares about a tool (`Tool.annotations`); every hint is optional. */
export interface ToolAnnotations {
  /** The tool changes nothing. MCP's default: false. */
  readOnlyHint?: boolean | undefined;
  /** A change it makes may destroy something (meaningful only when not read-only). MCP's default: true. */
  destructiveHint?: boolean | undefined;
  /** The tool reaches beyond a closed world (the network, other people's systems). MCP's default: true. */
  openWorldHint?: boolean | undefined;
  /** Calling it twice with the same arguments does no more than once. MCP's default: false. */
  idempotentHint?: boolean | undefined;
}

/** Where a tool's policy came from. */
export type PolicySource = 'annotations' | 'servers file' | 'command line' | 'host';

/** A tool's policy with where it came from and why, in words a person reads in a refusal or a question. */
export interface ResolvedPolicy {
  policy: ToolPolicy;
  source: PolicySource;
  /** Why: the hints read, or the setting that chose it (`mcpServers.github.consent.tools.create_issue`). */
  reason: string;
}

/**
 * The default from a tool's annotations, with MCP's defaults for what it leaves out (readOnlyHint false,
 * destructiveHint true, openWorldHint true): a tool that declares itself read-only and not open-world runs; every
 * other tool (one that may change something, or reaches outside the machine, or says nothing) asks.
 */
export function policyFromAnnotations(annotations: ToolAnnotations | undefined): ResolvedPolicy {
  const readOnly = annotations?.readOnlyHint === true;
  const openWorld = annotations?.openWorldHint !== false;
  if (readOnly && !openWorld) return { policy: 'run', source: 'annotations', reason: 'it declares itself read-only and not open-world' };
  const why: string[] = [];
  if (!readOnly) {
    const destructive = annotations?.destructiveHint !== false;
    why.push(annotations?.readOnlyHint === undefined ? 'it does not declare itself read-only' : 'it may change things');
    if (destructive) why.push(annotations?.destructiveHint === undefined ? 'may be destructive (undeclared)' : 'declares itself destructive');
  }
  if (openWorld) why.push(annotations?.openWorldHint === undefined ? 'may reach outside this machine (openWorldHint undeclared)' : 'reaches outside this machine');
  return { policy: 'ask', source: 'annotations', reason: why.join(', ') };
}

/** Policies one layer of settings sets: for every tool, per server, per tool of a server. */
export interface PolicySettings {
  /** For every tool this layer covers. */
  default?: ToolPolicy | undefined;
  /** Per server (the key in `mcpServers`), with its own default and per-tool policies. */
  servers?: Readonly<Record<string, ServerPolicySettings>> | undefined;
}

/** One server's policies in a layer. */
export interface ServerPolicySettings {
  default?: ToolPolicy | undefined;
  /** By the tool's own name (as the server lists it) or its Python function name. */
  tools?: Readonly<Record<string, ToolPolicy>> | undefined;
}

/** A layer of settings with its source, for the reason a refusal names. */
export interface PolicyLayer {
  source: Exclude<PolicySource, 'annotations'>;
  settings: PolicySettings;
  /** How a setting of this layer is named to the person: `(path) => text`, e.g. `--consent github.create_issue=ask`. */
  describe: (setting: PolicySettingPath) => string;
}

/** Which setting of a layer chose a policy. */
export type PolicySettingPath = { kind: 'default' } | { kind: 'server'; server: string } | { kind: 'tool'; server: string; tool: string };

/** The tool whose policy is looked up. */
export interface PolicySubject {
  /** The group the tool belongs to (the MCP server's name); undefined for a tool of no server. */
  server?: string | undefined;
  /** The tool's own name. */
  tool: string;
  /** Its Python function name, which settings may use instead. */
  functionName?: string | undefined;
  annotations?: ToolAnnotations | undefined;
}

/**
 * A tool's policy: the first layer (in the order given: command line, then servers file) that sets it wins, and
 * within a layer the most specific setting (the tool's, its server's, the layer's default). With no setting, the
 * annotations decide ({@link policyFromAnnotations}).
 */
export function resolveToolPolicy(subject: PolicySubject, layers: readonly PolicyLayer[]): ResolvedPolicy {
  for (const layer of layers) {
    const found = settingOf(subject, layer.settings);
    if (found !== undefined) return { policy: found.policy, source: layer.source, reason: `set by ${layer.describe(found.path)}` };
  }
  return policyFromAnnotations(subject.annotations);
}

function settingOf(subject: PolicySubject, settings: PolicySettings): { policy: ToolPolicy; path: PolicySettingPath } | undefined {
  const server = subject.server === undefined ? undefined : settings.servers?.[subject.server];
  if (server !== undefined && subject.server !== undefined) {
    const tools = server.tools ?? {};
    for (const name of [subject.tool, subject.functionName]) {
      if (name !== undefined && Object.hasOwn(tools, name)) {
        return { policy: tools[name] as ToolPolicy, path: { kind: 'tool', server: subject.server, tool: name } };
      }
    }
    if (server.default !== undefined) return { policy: server.default, path: { kind: 'server', server: subject.server } };
  }
  if (settings.default !== undefined) return { policy: settings.default, path: { kind: 'default' } };
  return undefined;
}

/** What became of a nested call at the consent gate, as the journal and run_code's summary name it. */
export type ConsentDecision =
  | 'allowed by policy'
  | 'asked and allowed'
  | 'allowed for the session'
  | 'refused by policy'
  | 'refused by the person'
  | 'refused by the client'
  | 'refused: cannot ask';

/** The question put to the person about one nested call. */
export interface ConsentQuestion {
  server: string | undefined;
  toolName: string;
  functionName: string;
  input: Record<string, unknown>;
  /** Why the tool asks (its policy's reason). */
  reason: string;
}

/**
 * The person's answer: yes for this call, no, yes for this tool for the rest of the session; or `cannot-ask` with
 * why (the client has no way to ask), which refuses the call. `by` names who answered; `dismissed`: the client
 * answered "no" without the person choosing (a decline or cancel, as headless clients do).
 */
export type ConsentAnswer =
  | { answer: 'yes' | 'no' | 'session'; by?: string | undefined; dismissed?: boolean | undefined }
  | { answer: 'cannot-ask'; why: string };

/** Asks the person about one nested call; rejects only when the run_code call itself ends. */
export type AskConsent = (question: ConsentQuestion, signal: AbortSignal | undefined) => Promise<ConsentAnswer>;

/** The outcome the gate hands the nested call: go ahead, or the ToolCallError message the code sees. */
export type GateOutcome = { allowed: true; decision: ConsentDecision } | { allowed: false; decision: ConsentDecision; message: string };

/** The settings a refusal of a tool that cannot be asked about names, so the person knows what to change. */
export interface ConsentGateOptions {
  /** The policy of a tool; called once per tool and kept. */
  policyOf: (subject: PolicySubject) => ResolvedPolicy;
  /** How to allow a tool without asking, named in refusals (`"consent": "run"` in the servers file, say). */
  howToAllow: (subject: PolicySubject) => string;
}

const ALLOWED_BY_POLICY: GateOutcome = { allowed: true, decision: 'allowed by policy' };

/**
 * The consent gate of one session: every tool's policy, kept per tool, and the tools the person allowed for the
 * rest of the session. The `run` path is a map lookup, so a call the policy allows costs next to nothing.
 */
export class ConsentGate {
  /** By subject object: Code Mode keeps one subject per tool, so the common lookup builds no key. */
  private resolved = new WeakMap<PolicySubject, ResolvedPolicy>();
  private readonly policies = new Map<string, ResolvedPolicy>();
  private readonly allowedForSession = new Set<string>();

  constructor(private readonly options: ConsentGateOptions) {}

  /** The policy of a tool (resolved once). */
  policy(subject: PolicySubject): ResolvedPolicy {
    const known = this.resolved.get(subject);
    if (known !== undefined) return known;
    const key = subjectKey(subject);
    let resolved = this.policies.get(key);
    if (resolved === undefined) {
      resolved = this.options.policyOf(subject);
      this.policies.set(key, resolved);
    }
    this.resolved.set(subject, resolved);
    return resolved;
  }

  /** Forgets the resolved policies (the tool list changed); allowances for the session stay. */
  reset(): void {
    this.policies.clear();
    this.resolved = new WeakMap();
  }

  /** Whether the person allowed this tool for the rest of the session. */
  isAllowedForSession(subject: PolicySubject): boolean {
    return this.allowedForSession.has(subjectKey(subject));
  }

  /**
   * Decides one nested call: by policy, or by asking through `ask` (undefined: this caller cannot ask). Never
   * throws for a refusal: the outcome carries the message the code's ToolCallError shows.
   */
  decide(subject: PolicySubject, functionName: string, input: Record<string, unknown>, ask: AskConsent | undefined, signal: AbortSignal | undefined): GateOutcome | Promise<GateOutcome> {
    const resolved = this.policy(subject);
    if (resolved.policy === 'run') return ALLOWED_BY_POLICY;
    const named = toolLabel(subject);
    if (resolved.policy === 'refuse') {
      return { allowed: false, decision: 'refused by policy', message: `${named} is refused by the consent policy (${resolved.reason}); nothing ran` };
    }
    if (this.allowedForSession.has(subjectKey(subject))) return { allowed: true, decision: 'allowed for the session' };
    if (ask === undefined) return this.cannotAsk(subject, 'this caller has no way to ask the person');
    const question: ConsentQuestion = { server: subject.server, toolName: subject.tool, functionName, input, reason: resolved.reason };
    return ask(question, signal).then((answer): GateOutcome => {
      if (answer.answer === 'cannot-ask') return this.cannotAsk(subject, answer.why);
      if (answer.answer === 'no') {
        const decision = answer.dismissed === true ? 'refused by the client' : 'refused by the person';
        return { allowed: false, decision, message: `${named} was refused by ${answer.by ?? 'the person'} when asked; nothing ran` };
      }
      if (answer.answer === 'session') this.allowedForSession.add(subjectKey(subject));
      return { allowed: true, decision: answer.answer === 'session' ? 'allowed for the session' : 'asked and allowed' };
    });
  }

  private cannotAsk(subject: PolicySubject, why: string): GateOutcome {
    return {
      allowed: false,
      decision: 'refused: cannot ask',
      message:
        `${toolLabel(subject)} needs the person's yes (its policy is "ask"), and ${why}; nothing ran. ` +
        `To let it run without asking, ${this.options.howToAllow(subject)}`,
    };
  }
}

/** `the tool "create_issue" of the MCP server "github"`, or `the tool "x"` for a tool of no server. */
export function toolLabel(subject: Pick<PolicySubject, 'server' | 'tool'>): string {
  return subject.server === undefined ? `the tool "${subject.tool}"` : `the tool "${subject.tool}" of the MCP server "${subject.server}"`;
}

function subjectKey(subject: PolicySubject): string {
  return `${subject.server ?? ''}\u0000${subject.tool}`;
}

const MAX_ARGUMENT_CHARS = 600;

/**
 * The question's text for the person: the server, the tool, why it asks, and the arguments as JSON, cut to
 * 600 characters with the count of what was cut.
 */
export function consentQuestionText(question: ConsentQuestion): string {
  let text: string;
  try {
    text = JSON.stringify(question.input) ?? '{}';
  } catch {
    text = '(arguments with no JSON form)';
  }
  const cut = text.length > MAX_ARGUMENT_CHARS ? `${text.slice(0, MAX_ARGUMENT_CHARS)}… (${text.length - MAX_ARGUMENT_CHARS} more characters)` : text;
  return `Code Mode: code wants to call ${toolLabel({ server: question.server, tool: question.toolName })} (${question.reason}) with arguments ${cut}. Allow it?`;
}

/** Counts of decisions per tool, in first-call order: the run_code summary line. */
export function consentSummary(records: ReadonlyArray<{ label: string; decision: ConsentDecision | undefined }>): string {
  const counts = new Map<string, number>();
  for (const record of records) {
    if (record.decision === undefined) continue;
    const key = `${record.label}: ${record.decision}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  if (counts.size === 0) return '';
  const parts = [...counts].map(([key, count]) => (count === 1 ? key : `${key} ×${count}`));
  return `Tool calls from this code: ${parts.join('; ')}.`;
}
