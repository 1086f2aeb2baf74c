import { describe, expect, it } from 'vitest';
import { oversize, WEBSOCKET_SAFE_BYTES } from './pending-request.js';

describe('oversize', () => {
  it('passes a request within the IPC limit', () => {
    expect(oversize(1, 'execute', { code: 'x'.repeat(1000) }, 4 * 1024 * 1024)).toBeUndefined();
  });

  it('refuses one over the IPC limit, naming it', () => {
    const refused = oversize(1, 'execute', { code: 'x'.repeat(5 * 1024 * 1024) }, 4 * 1024 * 1024);
    expect(refused?.code).toBe('message_too_large');
    expect(refused?.message).toMatch(/exceeds the 4194304-byte IPC limit/);
  });

  it('refuses one a Jupyter server would end the WebSocket for, whatever the IPC limit allows', () => {
    const refused = oversize(1, 'execute', { code: 'x'.repeat(9 * 1024 * 1024) }, 64 * 1024 * 1024);
    expect(refused?.code).toBe('message_too_large');
    expect(refused?.message).toContain(`${WEBSOCKET_SAFE_BYTES}-byte limit of a message to a Jupyter server`);
    expect(oversize(1, 'execute', { code: 'x'.repeat(7 * 1024 * 1024) }, 64 * 1024 * 1024)).toBeUndefined();
  });
});
