import { describe, expect, it } from 'vitest';
import { JupyterSettingError, jupyterRequest } from './jupyter-request.js';

const url = 'http://127.0.0.1:8888/';

describe('jupyterRequest', () => {
  it('is undefined without a URL or kernel flag (the local worker)', () => {
    expect(jupyterRequest({}, {})).toBeUndefined();
  });

  it('reads each way to name the kernel, the URL from the flag or the env, the token from the env only', () => {
    expect(jupyterRequest({ jupyter: url, kernel: 'abc' }, { JUPYTER_TOKEN: 't1' })).toEqual({ url, token: 't1', target: { kernelId: 'abc' }, notebookCells: true, choose: false });
    expect(jupyterRequest({ notebook: 'a/b.ipynb' }, { IPYTHON_MCP_JUPYTER_URL: url, IPYTHON_MCP_JUPYTER_TOKEN: 't2', JUPYTER_TOKEN: 't1' })).toEqual({
      url,
      token: 't2',
      target: { notebookPath: 'a/b.ipynb' },
      notebookCells: true,
      choose: false,
    });
    expect(jupyterRequest({ jupyter: 'https://box/user/ana', 'kernel-name': 'python3' }, {})).toEqual({
      url: 'https://box/user/ana',
      token: '',
      target: { kernelName: 'python3' },
      notebookCells: true,
      choose: false,
    });
  });

  it('takes --jupyter URL alone: a kernel of the default kernelspec, the notebook chosen in the conversation', () => {
    const choosing = { url, token: '', target: { kernelName: '' }, notebookCells: true, choose: true };
    expect(jupyterRequest({ jupyter: url }, {})).toEqual(choosing);
    expect(jupyterRequest({}, { IPYTHON_MCP_JUPYTER_URL: url })).toEqual(choosing);
  });

  it('reads --notebook-cells (flag over env; default on)', () => {
    expect(jupyterRequest({ jupyter: url, notebook: 'a.ipynb', 'notebook-cells': 'off' }, { IPYTHON_MCP_NOTEBOOK_CELLS: 'on' })?.notebookCells).toBe(false);
    expect(jupyterRequest({ jupyter: url, notebook: 'a.ipynb' }, { IPYTHON_MCP_NOTEBOOK_CELLS: 'off' })?.notebookCells).toBe(false);
    expect(jupyterRequest({ jupyter: url, notebook: 'a.ipynb' }, {})?.notebookCells).toBe(true);
  });

  it.each([
    [{ kernel: 'abc' }, {}, '--kernel needs --jupyter URL'],
    [{ jupyter: url, kernel: 'a', notebook: 'b' }, {}, '--kernel and --notebook cannot be combined'],
    [{ jupyter: url, kernel: ' ' }, {}, '--kernel needs a value'],
    [{ jupyter: 'not a url', kernel: 'a' }, {}, '--jupyter is not a URL'],
    [{ jupyter: 'ws://h/', kernel: 'a' }, {}, '--jupyter must be an http:// or https:// URL'],
    [{ jupyter: `${url}?token=s3cret`, kernel: 'a' }, {}, 'must not carry a token'],
    [{ jupyter: 'http://me:s3cret@h/', kernel: 'a' }, {}, 'must not carry a token'],
    [{ jupyter: url, notebook: 'a', 'notebook-cells': 'maybe' }, {}, '--notebook-cells must be on or off'],
    [{ jupyter: url, notebook: 'a' }, { IPYTHON_MCP_NOTEBOOK_CELLS: 'yes' }, 'IPYTHON_MCP_NOTEBOOK_CELLS must be on or off'],
    [{ 'notebook-cells': 'off' }, {}, '--notebook-cells needs --jupyter URL and --notebook PATH'],
  ])('%j %j is refused: %s', (values, env, message) => {
    let error: unknown;
    try {
      jupyterRequest(values, env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(JupyterSettingError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toContain('s3cret');
  });
});
