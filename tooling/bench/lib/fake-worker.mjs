// A worker that answers every request at once with a canned execute("1+1") result, on the far end of the
// supervisor's InMemoryChannel: our server and runtime with no Python behind them (the layers section).

/** What the worker answers to execute("1+1"), field for field. */
export const EXECUTE_RESULT = {
  status: 'ok',
  execution_count: 1,
  stdout: '',
  stderr: '',
  stdout_omitted_chars: 0,
  stderr_omitted_chars: 0,
  truncated: { stdout: false, stderr: false, result: false, displays: false },
  result: { kind: 'json', value: 2 },
  displays: [],
  displays_omitted: 0,
  error: null,
};

/** A RuntimeOptions.spawnWorker that starts one fake worker per call. */
export function fakeWorkerSpawner(supervisor) {
  return () => {
    const [near, far] = supervisor.InMemoryChannel.createLinkedPair();
    // The channel keeps every sent message for tests; a long loop must not.
    near.sent.push = () => 0;
    far.sent.push = () => 0;
    far.onmessage = (message) => {
      if (message.type === 'shutdown') far.close();
      if (message.type !== 'request') return;
      const result = message.op === 'execute' ? { ...EXECUTE_RESULT, execution_count: message.id } : {};
      far.send({ type: 'response', id: message.id, ok: true, result });
    };
    return new supervisor.ChannelWorker(near);
  };
}
