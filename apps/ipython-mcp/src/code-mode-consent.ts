import {
  ConsentGate,
  TOOL_POLICIES,
  consentQuestionText,
  resolveToolPolicy,
  type ConsentAnswer,
  type ConsentQuestion,
  type PolicyLayer,
  type PolicySettingPath,
  type PolicySettings,
  type ToolPolicy,
} from '@ipython-mcp/code-mode';

/** The answers the person picks from, as the question's one field offers them. */
export const CONSENT_CHOICES = { yes: 'yes', no: 'no', session: 'yes for this tool for the rest of the session' } as const;

/** The form of the elicitation: one required choice. */
export const CONSENT_SCHEMA: { type: 'object'; properties: { answer: { type: 'string'; title: string; enum: string[] } }; required: string[] } = {
  type: 'object',
  properties: {
    answer: { type: 'string', title: 'Allow this call?', enum: [CONSENT_CHOICES.yes, CONSENT_CHOICES.no, CONSENT_CHOICES.session] },
  },
  required: ['answer'],
};

/** How long a question may wait for the person before it counts as "no". */
export const ASK_TIMEOUT_MS = 10 * 60_000;

/** The elicitation request's params (form mode) for one question. */
export function consentElicitation(question: ConsentQuestion): { mode: 'form'; message: string; requestedSchema: typeof CONSENT_SCHEMA } {
  return { mode: 'form', message: consentQuestionText(question), requestedSchema: CONSENT_SCHEMA };
}

/**
 * An elicitation result read as an answer: only an accepted "yes" (or the session yes) allows; anything else is no.
 * A decline or cancel is the client's "no" (headless clients answer so without asking anyone), said as such.
 */
export function consentAnswerOf(result: unknown, clientName: string | undefined): ConsentAnswer {
  const { action, content } = (typeof result === 'object' && result !== null ? result : {}) as { action?: unknown; content?: { answer?: unknown } };
  const client = clientName === undefined ? 'the MCP client' : `the MCP client "${clientName}"`;
  if (action === 'accept') {
    const by = `the person through ${client}`;
    if (content?.answer === CONSENT_CHOICES.yes) return { answer: 'yes', by };
    if (content?.answer === CONSENT_CHOICES.session) return { answer: 'session', by };
    if (content?.answer === CONSENT_CHOICES.no) return { answer: 'no', by };
    return { answer: 'no', by: `${client} (an answer that is none of the choices)`, dismissed: true };
  }
  const how = action === 'decline' ? 'it declined the question' : action === 'cancel' ? 'it dismissed the question without an answer' : 'it gave no answer';
  return { answer: 'no', by: `${client} (${how})`, dismissed: true };
}

/** Whether client capabilities include form elicitation (`elicitation: {}` or `elicitation: {form: {}}`). */
export function canElicitForm(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: unknown } | undefined)?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  // 2025-06-18 clients declare `{}`; 2025-11-25 and later name their modes.
  return modes.form !== undefined || modes.url === undefined;
}

/** Why a client that cannot ask is refused. */
export function cannotElicit(clientName: string | undefined): ConsentAnswer {
  const client = clientName === undefined ? 'the MCP client' : `the MCP client "${clientName}"`;
  return { answer: 'cannot-ask', why: `${client} cannot ask the person (it does not declare the elicitation capability)` };
}

/** A `--consent [SERVER[.TOOL]=]POLICY` that cannot be read; the command exits with code 2. */
export class ConsentFlagError extends Error {}

/**
 * The `--consent` flags as one layer of settings: `POLICY` for every tool, `SERVER=POLICY` for a server's tools,
 * `SERVER.TOOL=POLICY` for one tool (the first dot separates the server from the tool). A later flag for the same
 * target wins. Throws {@link ConsentFlagError} for a bad policy or a server the servers file does not have.
 */
export function consentFlags(flags: readonly string[], serverNames: readonly string[]): PolicySettings {
  const settings: { default?: ToolPolicy; servers: Record<string, { default?: ToolPolicy; tools: Record<string, ToolPolicy> }> } = { servers: {} };
  for (const flag of flags) {
    const equals = flag.lastIndexOf('=');
    const target = equals === -1 ? '' : flag.slice(0, equals);
    const policy = (equals === -1 ? flag : flag.slice(equals + 1)).trim();
    if (!(TOOL_POLICIES as readonly string[]).includes(policy)) {
      throw new ConsentFlagError(`--consent ${flag}: the policy must be run, ask or refuse (as POLICY, SERVER=POLICY or SERVER.TOOL=POLICY)`);
    }
    if (target === '') {
      settings.default = policy as ToolPolicy;
      continue;
    }
    const dot = target.indexOf('.');
    const server = dot === -1 ? target : target.slice(0, dot);
    if (!serverNames.includes(server)) {
      throw new ConsentFlagError(`--consent ${flag}: the servers file has no server "${server}" (it has ${serverNames.join(', ') || 'none'})`);
    }
    const entry = (settings.servers[server] ??= { tools: {} });
    if (dot === -1) entry.default = policy as ToolPolicy;
    else entry.tools[target.slice(dot + 1)] = policy as ToolPolicy;
  }
  return settings;
}

/** How a setting of the servers file is named in a reason. */
function fileSetting(path: PolicySettingPath): string {
  if (path.kind === 'default') return 'codeMode.consent in the servers file';
  if (path.kind === 'server') return `mcpServers.${path.server}.consent in the servers file`;
  return `mcpServers.${path.server}.consent.tools.${path.tool} in the servers file`;
}

/** How a `--consent` flag is named in a reason. */
function flagSetting(path: PolicySettingPath): string {
  if (path.kind === 'default') return '--consent POLICY';
  if (path.kind === 'server') return `--consent ${path.server}=POLICY`;
  return `--consent ${path.server}.${path.tool}=POLICY`;
}

/**
 * The consent gate of a Code Mode server: the command line's `--consent` first, then the servers file, then the
 * tools' annotations. A refusal of a tool that cannot be asked about names both ways to allow it.
 */
export function codeModeConsentGate(fileSettings: PolicySettings, flagSettings: PolicySettings): ConsentGate {
  const layers: PolicyLayer[] = [
    { source: 'command line', settings: flagSettings, describe: flagSetting },
    { source: 'servers file', settings: fileSettings, describe: fileSetting },
  ];
  return new ConsentGate({
    policyOf: (subject) => resolveToolPolicy(subject, layers),
    howToAllow: (subject) =>
      subject.server === undefined
        ? 'set "codeMode": {"consent": "run"} in the servers file'
        : `set "consent": {"tools": {"${subject.tool}": "run"}} (or "consent": "run" for the whole server) under mcpServers.${subject.server} in the servers file, ` +
          `or start the server with --consent ${subject.server}.${subject.tool}=run, or use an MCP client that supports elicitation`,
  });
}
