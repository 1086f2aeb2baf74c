import {
  ConsentGate,
  resolveToolPolicy,
  type AskConsent,
  type ConsentQuestion,
  type PolicyLayer,
  type PolicySettingPath,
  type PolicySettings,
  type PolicySubject,
  type ResolvedPolicy,
} from '@ipython-mcp/code-mode';

/** The host's answer to an approval request: `true` (this call), `'session'` (this tool, from now on), `false`. */
export type ApprovalAnswer = boolean | 'session';

/** One nested call the host is asked to approve: the tool, its group (an MCP server's name) and its input. */
export interface ApprovalRequest extends ConsentQuestion {
  /** The nested call's id (`<run_code call id>:<n>`). */
  toolCallId?: string | undefined;
}

/** Asks the host (and through it the person) whether a nested call may run. */
export type ApproveToolCall = (request: ApprovalRequest) => ApprovalAnswer | PromiseLike<ApprovalAnswer>;

/** Consent for nested calls in the capability (see {@link CodeModeConsentOptions}). */
export interface CodeModeConsentOptions {
  /**
   * Policies that come before the tools' own: `default` for every tool, `servers[group]` for the tools of a group
   * (the `group` of {@link mcpToolDefinitions}), with per-tool entries by the tool's own name.
   */
  policies?: PolicySettings | undefined;
  /**
   * The host's approval callback: asked about every call whose policy is "ask" (an MCP tool that may change things
   * or reach outside, or an AI SDK tool whose `needsApproval` says so). Unset, such calls are refused: an MCP tool
   * with a refusal naming the setting, an AI SDK tool with {@link ToolApprovalRequiredError}.
   */
  approve?: ApproveToolCall | undefined;
}

/** An AI SDK tool without MCP annotations: the host wrote it, and the AI SDK runs it unless `needsApproval` says so. */
const HOST_TOOL: ResolvedPolicy = { policy: 'run', source: 'host', reason: "the host's own tool (its needsApproval decides per call)" };

function describeSetting(path: PolicySettingPath): string {
  if (path.kind === 'default') return 'consent.policies.default';
  if (path.kind === 'server') return `consent.policies.servers.${path.server}.default`;
  return `consent.policies.servers.${path.server}.tools.${path.tool}`;
}

/**
 * The capability's gate, on the same rule as `ipython-mcp code-mode`: a tool with MCP annotations (every tool of
 * {@link mcpToolDefinitions}, declared or not) gets the annotations' default, and the host's policies come first.
 * An AI SDK tool without annotations runs, as the AI SDK runs it, and its `needsApproval` is asked per call.
 */
export function capabilityConsentGate(options: CodeModeConsentOptions = {}): ConsentGate {
  const layers: PolicyLayer[] = [{ source: 'host', settings: options.policies ?? {}, describe: describeSetting }];
  return new ConsentGate({
    policyOf: (subject: PolicySubject) => {
      const resolved = resolveToolPolicy(subject, layers);
      return subject.annotations === undefined && resolved.source === 'annotations' ? HOST_TOOL : resolved;
    },
    howToAllow: (subject) =>
      `pass consent.approve to ipythonCodeMode to ask the person, or set consent.policies.servers.${subject.server ?? '<group>'}.tools.${subject.tool} to "run"`,
  });
}

/** The approval callback as the gate's `ask`: `true` is yes, `'session'` yes for the rest of the session, else no. */
export function askThroughApproval(approve: ApproveToolCall): AskConsent {
  return async (question) => {
    const answer = await approve(question);
    return { answer: answer === 'session' ? 'session' : answer === true ? 'yes' : 'no', by: "the host's approval callback" };
  };
}
