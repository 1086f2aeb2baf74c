// A real JupyterHub for the tests, at its defaults where a user meets it: jupyterhub from the test .venv
// (python/pyproject.toml's test extra), configurable-http-proxy from this package's devDependencies (the hub starts
// it), a local spawner (SimpleLocalProcessSpawner: the user's single-user server is a process on loopback), every
// port chosen free at start, a scratch directory of its own. Nothing is set on the hub for ipython-mcp: no
// JUPYTERHUB_ALLOW_TOKEN_IN_URL, no Spawner environment. What a test needs beyond a user's view is only its own
// hooks: restart the proxy, restart the hub (its servers keep running: cleanup_servers off, as an admin who wants
// restarts without losing kernels sets it), and stop everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPids, isAlive, survivors, testPython } from '@ipython-mcp/test-support';
import { stablePort, tokenRest, type RunningJupyter } from './jupyter-harness.js';

/** The configurable-http-proxy this package installs (devDependencies). */
function proxyCommand(): string {
  const bin = new URL('../node_modules/.bin/configurable-http-proxy', import.meta.url).pathname;
  if (!existsSync(bin)) throw new Error('configurable-http-proxy is not installed: run pnpm install (apps/ipython-mcp devDependencies)');
  return bin;
}

/** A running hub with one user whose default server is up. */
export interface RunningHub {
  /** The hub's public URL (the proxy's), e.g. `http://127.0.0.1:PORT/`. */
  readonly url: string;
  /** The user whose servers the tests use. */
  readonly user: string;
  /**
   * The user's default server as ipython-mcp sees it: `URL/user/NAME/` and a token of the user's with the scope
   * `access:servers!user=NAME` (the REST API's way; /hub/token issues the same kind).
   */
  readonly server: RunningJupyter;
  /** Starts a named server (`/user/NAME/SERVER/`) and returns it, with the same token. */
  namedServer(name: string): Promise<RunningJupyter>;
  /** A token of the user's with these scopes (the REST API: POST /hub/api/users/NAME/tokens). */
  userToken(scopes: string[]): Promise<string>;
  /** Kills the proxy (SIGKILL); the hub starts it again and restores its routes. Resolves once the server answers through it. */
  restartProxy(): Promise<{ downMs: number }>;
  /** Stops the hub (SIGTERM) and starts it again; the user's servers and the proxy keep running. */
  restartHub(): Promise<void>;
  /** Every process the hub started (proxy, servers, kernels), recursively. */
  descendants(): number[];
  /** The hub's log, for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of childPids(queue.shift() as number)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The configurable-http-proxy processes listening for their API on `apiPort` (the proxy outlives a hub restart). */
function proxiesOn(apiPort: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const at = args.indexOf('--api-port');
      if (args.some((arg) => arg.includes('configurable-http-proxy')) && at >= 0 && args[at + 1] === String(apiPort)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, boundMs: number, log: () => string): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`JupyterHub: ${what} within ${boundMs} ms:\n${log().slice(-6000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Starts JupyterHub with a local spawner on loopback, creates the user, starts their default server and issues a
 * token for it; `stop()` ends the hub, its proxy and every server and kernel.
 */
export async function startHub(user = 'alice'): Promise<RunningHub> {
  // Free ports are picked, then let go until the hub and its proxy bind them: another test's process may take one
  // meanwhile (a kernel's ZMQ port). Such a start fails fast; it is tried once more with new ports.
  try {
    return await startHubOnce(user);
  } catch (error) {
    if (!/api_request to proxy failed|Address already in use|EADDRINUSE/.test(String(error))) throw error;
    return startHubOnce(user);
  }
}

async function startHubOnce(user: string): Promise<RunningHub> {
  const scratch = mkdtempSync(join(tmpdir(), 'ipython-mcp-hub-'));
  // Below the ephemeral range: the proxy and the hub come back on these ports in the restart tests.
  const [publicPort, hubPort, apiPort] = [await stablePort(), await stablePort(), await stablePort()];
  const adminToken = randomBytes(24).toString('hex');
  const proxyToken = randomBytes(24).toString('hex');
  const python = testPython();
  const homes = join(scratch, 'home');
  mkdirSync(homes, { recursive: true });
  const config = [
    `c.JupyterHub.ip = '127.0.0.1'`,
    `c.JupyterHub.port = ${publicPort}`,
    `c.JupyterHub.hub_ip = '127.0.0.1'`,
    `c.JupyterHub.hub_port = ${hubPort}`,
    `c.JupyterHub.db_url = 'sqlite:///${join(scratch, 'hub.sqlite')}'`,
    `c.JupyterHub.cookie_secret_file = '${join(scratch, 'cookie_secret')}'`,
    `c.JupyterHub.pid_file = '${join(scratch, 'hub.pid')}'`,
    `c.JupyterHub.allow_named_servers = True`,
    // A hub restart keeps the servers and the proxy running (an admin's choice; the default stops them).
    `c.JupyterHub.cleanup_servers = False`,
    `c.JupyterHub.cleanup_proxy = False`,
    `c.JupyterHub.authenticator_class = 'dummy'`,
    `c.Authenticator.allowed_users = {'${user}'}`,
    `c.JupyterHub.spawner_class = 'simple'`,
    `c.SimpleLocalProcessSpawner.home_dir_template = '${homes}/{username}'`,
    `c.Spawner.cmd = ['${python}', '-m', 'jupyterhub.singleuser']`,
    `c.Spawner.args = ['--allow-root']`,
    `c.Spawner.http_timeout = 180`,
    `c.Spawner.start_timeout = 180`,
    `c.ConfigurableHTTPProxy.command = ['${proxyCommand()}']`,
    `c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:${apiPort}'`,
    `c.ConfigurableHTTPProxy.auth_token = '${proxyToken}'`,
    `c.ConfigurableHTTPProxy.pid_file = '${join(scratch, 'proxy.pid')}'`,
    `c.ConfigurableHTTPProxy.check_running_interval = 1`,
    // The tests' own admin: a service whose token creates the user, starts servers and issues the user's tokens.
    `c.JupyterHub.services = [{'name': 'test-admin', 'api_token': '${adminToken}'}]`,
    `c.JupyterHub.load_roles = [{'name': 'test-admin', 'scopes': ['admin:users', 'admin:servers', 'tokens'], 'services': ['test-admin']}]`,
  ].join('\n');
  writeFileSync(join(scratch, 'jupyterhub_config.py'), config);
  let hub: ChildProcess;
  let log = '';
  const launch = (): void => {
    hub = spawn(python, ['-m', 'jupyterhub', '-f', join(scratch, 'jupyterhub_config.py')], {
      cwd: scratch,
      env: { ...process.env, JUPYTER_TOKEN: '', PYTHONUNBUFFERED: '1', HOME: scratch, JUPYTER_CONFIG_DIR: join(scratch, 'jupyter-config') },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    hub.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-60_000);
    });
  };
  const url = `http://127.0.0.1:${publicPort}/`;
  const hubApi = tokenRest(`${url}hub/api/`, adminToken, 15_000);
  const stop = async (): Promise<void> => {
    const proxies = proxiesOn(apiPort);
    const everyone = [...new Set([hub.pid as number, ...descendantsOf(hub.pid as number), ...proxies, ...proxies.flatMap(descendantsOf)])];
    // The servers may have been re-parented by a hub restart: every process of the user's servers has the scratch
    // directory in its environment (its home); the proxy is found by its api port.
    for (const pid of serversOf(scratch)) everyone.push(pid, ...descendantsOf(pid));
    for (const pid of everyone) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    for (const pid of await survivors(everyone, 8_000)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await survivors(everyone, 3_000);
    rmSync(scratch, { recursive: true, force: true });
  };
  const ready = (): Promise<true> =>
    until(
      'the hub did not answer',
      async () => {
        if (hub.exitCode !== null) throw new Error(`jupyterhub exited (${hub.exitCode}):\n${log}`);
        return (await hubApi('GET', '')).status === 200 ? true : undefined;
      },
      90_000,
      () => log,
    );
  const serverUp = (path: string, token: string): Promise<true> =>
    until(
      `the server ${path} did not answer through the proxy`,
      async () => {
        const response = await fetch(`${url}${path}api/kernelspecs`, { headers: { Authorization: `token ${token}` }, signal: AbortSignal.timeout(5_000) });
        await response.text();
        return response.status === 200 ? true : undefined;
      },
      // A loaded machine (the suite runs beside other work) starts a server in tens of seconds.
      180_000,
      () => log,
    );
  const userToken = async (scopes: string[]): Promise<string> => {
    const made = await hubApi('POST', `users/${user}/tokens`, { scopes, note: 'ipython-mcp test', expires_in: 3600 });
    if (made.status !== 201 && made.status !== 200) throw new Error(`JupyterHub would not issue a token (HTTP ${made.status}): ${JSON.stringify(made.body)}`);
    return made.body.token as string;
  };
  const serverAt = (path: string, token: string): RunningJupyter => {
    const serverUrl = `${url}${path}`;
    const rest = tokenRest(serverUrl, token, 15_000);
    return {
      kind: 'jupyterlab',
      url: serverUrl,
      token,
      rootDir: join(homes, user),
      runtimeDir: join(homes, user, '.local/share/jupyter/runtime'),
      get pid() {
        return hub.pid as number;
      },
      restart: () => Promise.reject(new Error('a hub server is restarted through the hub')),
      rest,
      stderr: () => log,
      descendants: () => descendantsOf(hub.pid as number),
      stop,
    };
  };
  launch();
  try {
    await ready();
    const created = await hubApi('POST', `users/${user}`);
    if (created.status !== 201 && created.status !== 409) throw new Error(`JupyterHub would not create ${user} (HTTP ${created.status})`);
    const spawned = await hubApi('POST', `users/${user}/server`);
    if (spawned.status !== 201 && spawned.status !== 202) throw new Error(`JupyterHub would not start ${user}'s server (HTTP ${spawned.status}): ${JSON.stringify(spawned.body)}`);
    const token = await userToken([`access:servers!user=${user}`]);
    await serverUp(`user/${user}/`, token);
    const server = serverAt(`user/${user}/`, token);
    return {
      url,
      user,
      server,
      userToken,
      async namedServer(name: string): Promise<RunningJupyter> {
        const started = await hubApi('POST', `users/${user}/servers/${name}`, {});
        if (started.status !== 201 && started.status !== 202) throw new Error(`JupyterHub would not start ${user}/${name} (HTTP ${started.status})`);
        await serverUp(`user/${user}/${name}/`, token);
        return serverAt(`user/${user}/${name}/`, token);
      },
      async restartProxy(): Promise<{ downMs: number }> {
        const proxies = proxiesOn(apiPort).filter((pid) => isAlive(pid));
        if (proxies.length === 0) throw new Error(`no configurable-http-proxy found:\n${log.slice(-4000)}`);
        const killedAt = Date.now();
        for (const pid of proxies) process.kill(pid, 'SIGKILL');
        await survivors(proxies, 5_000);
        await serverUp(`user/${user}/`, token);
        return { downMs: Date.now() - killedAt };
      },
      async restartHub(): Promise<void> {
        const pid = hub.pid as number;
        const exited = new Promise<void>((resolve) => hub.once('exit', () => resolve()));
        process.kill(pid, 'SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
        if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        launch();
        await ready();
        await serverUp(`user/${user}/`, token);
      },
      descendants: () => descendantsOf(hub.pid as number),
      log: () => log,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Processes whose environment names the hub's scratch directory (the user's servers and their kernels). */
function serversOf(scratch: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').includes(`HOME=${scratch}/home/`)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
