#!/usr/bin/env node
import { SETTING_DEFINITIONS, SettingsError, resolveSettings, type Settings } from '@ipython-mcp/mcp-server';
import { serveStdio } from '@ipython-mcp/mcp-server';
import { dirname, resolve } from 'node:path';
import { capabilityProblem, chooseInterpreter, createStderrLogger, managedEnvironmentDirectory, type LogLevel } from '@ipython-mcp/worker-supervisor';
import { UsageError, helpText, parseCommandLine } from './arguments.js';
import { codeModeCommand } from './code-mode-command.js';
import { doctorCommand } from './doctor-command.js';
import { serveHttpCommand, tokenFilePath } from './http-command.js';
import { doctorHttp } from './http-doctor.js';
import { interpreterProblem, stateDependencyProblem } from './interpreter-check.js';
import { doctorJupyter } from './jupyter-doctor.js';
import { jupyterServing } from './jupyter-serving.js';
import { startSandbox, type RunningSandbox } from './sandbox.js';
import { setupCommand } from './setup-command.js';
import { VERSION } from './version.js';

function fail(message: string): never {
  process.stderr.write(`ipython-mcp: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let commandLine;
  try {
    commandLine = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message} (see --help)`);
    throw error;
  }
  if (commandLine.command === 'help') {
    process.stdout.write(helpText(VERSION));
    return;
  }
  if (commandLine.command === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (commandLine.command === 'setup') {
    // An empty IPYTHON_MCP_PYTHON counts as unset, as it does when the server picks its interpreter.
    process.exitCode = setupCommand(commandLine.python || process.env.IPYTHON_MCP_PYTHON || undefined, commandLine.upgrade, commandLine.withPackages);
    return;
  }
  let settings;
  try {
    settings = resolveSettings(process.env, commandLine.settingFlags);
  } catch (error) {
    if (error instanceof SettingsError) fail(error.message);
    throw error;
  }
  if (commandLine.command === 'config') {
    process.stdout.write(`${JSON.stringify(effectiveSettings(settings, commandLine.settingFlags), null, 2)}\n`);
    return;
  }
  if (commandLine.command === 'doctor' && commandLine.url !== undefined) {
    process.exitCode = await doctorHttp(commandLine.url);
    return;
  }
  const jupyter = commandLine.jupyter;
  if (commandLine.command === 'doctor' && jupyter !== undefined) {
    process.exitCode = await doctorJupyter(jupyter);
    return;
  }
  const choice = chooseInterpreter(commandLine.python);
  if (commandLine.command === 'doctor') {
    process.exitCode = await doctorCommand(choice, settings, commandLine.sandbox.enabled);
    return;
  }
  if (jupyter !== undefined && commandLine.command === 'code-mode') {
    // run_code runs in the kernel: the local interpreter is not used.
    const logger = createStderrLogger(commandLine.logLevel as LogLevel);
    await codeModeCommand({ serversFile: commandLine.servers ?? '', python: choice.python, logger, fail, jupyter, consent: commandLine.consent });
    return;
  }
  if (jupyter !== undefined) {
    // The code runs in the kernel: the local interpreter is not used.
    await serveJupyter(commandLine, jupyter, settings, choice.python);
    return;
  }
  const badInterpreter = interpreterProblem(choice);
  if (badInterpreter !== undefined) fail(badInterpreter);
  const noDill = commandLine.command === 'code-mode' ? undefined : stateDependencyProblem(choice.python, settings.stateFile);
  if (noDill !== undefined) fail(noDill);
  const logger = createStderrLogger(commandLine.logLevel as LogLevel);
  if (commandLine.command === 'code-mode') {
    await codeModeCommand({ serversFile: commandLine.servers ?? '', python: choice.python, logger, fail, consent: commandLine.consent });
    return;
  }
  let sandbox: RunningSandbox | undefined;
  if (commandLine.sandbox.enabled) {
    // Never silently unsandboxed: an engine that cannot run ends the server here, before any worker starts.
    try {
      // The worker writes the --state snapshot itself (a temporary file beside it, then a rename): its directory too.
      const stateDirectory = settings.stateFile === null ? [] : [dirname(resolve(settings.stateFile))];
      // Over HTTP, no cell may read the bearer token that guards the server itself.
      const extraDenyRead = commandLine.http === undefined ? [] : [tokenFilePath()];
      sandbox = await startSandbox(commandLine.sandbox, { cwd: process.cwd(), runtimeDirectories: [dirname(managedEnvironmentDirectory()), ...stateDirectory], extraDenyRead });
    } catch (error) {
      fail((error as Error).message.split('\n')[0] ?? 'the sandbox engine cannot run here');
    }
  }
  const isolation = { launch: sandbox?.launch, sandbox: sandbox?.status, outputSpillParent: sandbox?.temporaryDirectory };
  if (commandLine.http !== undefined) {
    await serveHttpCommand({
      address: commandLine.http,
      allowRemote: commandLine.httpAllowRemote,
      request: commandLine.httpOptions,
      settings,
      python: choice.python,
      logger,
      version: VERSION,
      fail,
      isolation,
    });
    await sandbox?.close();
    process.exit(0);
  }
  const { instance, closed } = await serveStdio({ python: choice.python, settings, logger, version: VERSION, ...isolation });
  const where = sandbox ? `; sandbox: ${sandbox.status.engine}` : '';
  process.stderr.write(`ipython-mcp ${VERSION} ready on stdio (python: ${choice.python} [${choice.source}]; worker starting in the background${where})\n`);
  void instance;
  await closed;
  await sandbox?.close();
  process.exit(0);
}

/**
 * Serves namespaces from Jupyter kernels (stdio, or --http with a kernel per named namespace under --kernel-name).
 * Every kernel ipython-mcp started is shut down before the process exits.
 */
async function serveJupyter(commandLine: ReturnType<typeof parseCommandLine>, jupyter: NonNullable<ReturnType<typeof parseCommandLine>['jupyter']>, settings: Settings, python: string): Promise<void> {
  const logger = createStderrLogger(commandLine.logLevel as LogLevel);
  // The kernel side guards the kernel's machine with the server's own memory limit and grace (docs/jupyter.md).
  const serving = await jupyterServing(jupyter, logger, { memoryLimitMb: settings.memoryLimitMb, graceMs: settings.interruptionGraceSeconds * 1000 });
  const main = serving.main;
  // What needs a capability the kernel backend lacks is refused before anything is served (no kernel is touched yet).
  const problem = capabilityProblem(main.backend, { state: settings.stateFile !== null, sandbox: false });
  if (problem !== undefined) {
    await serving.close();
    fail(problem.replace('--state', '--state (IPYTHON_MCP_STATE_FILE)'));
  }
  if (commandLine.http !== undefined) {
    try {
      await serveHttpCommand({
        address: commandLine.http,
        allowRemote: commandLine.httpAllowRemote,
        request: commandLine.httpOptions,
        settings,
        python,
        logger,
        version: VERSION,
        fail,
        backendFor: (namespace) => serving.backendFor(namespace),
      });
    } finally {
      await serving.close();
    }
    process.exit(0);
  }
  const { closed } = await serveStdio({
    python,
    settings,
    logger,
    version: VERSION,
    backend: main.backend,
    backendStatus: main.status,
    warmStandby: main.warmStandby,
    documents: main.documents,
  });
  process.stderr.write(`ipython-mcp ${VERSION} ready on stdio (Jupyter kernel at ${jupyter.url}; attaching in the background)\n`);
  try {
    await closed;
  } finally {
    await serving.close();
  }
  process.exit(0);
}

/** Every setting by its environment variable: the value in force and where it came from. */
function effectiveSettings(settings: Settings, flags: Record<string, string>): Record<string, { value: unknown; source: string }> {
  const effective: Record<string, { value: unknown; source: string }> = {};
  for (const definition of SETTING_DEFINITIONS) {
    const source = flags[definition.flag] !== undefined ? 'flag' : process.env[definition.env] !== undefined ? 'env' : 'default';
    effective[definition.env] = { value: settings[definition.key], source };
  }
  return effective;
}

main().catch((error: unknown) => {
  process.stderr.write(`ipython-mcp: fatal: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
