import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// The runtime exports of @ipython-mcp/session-journal, pinned: adding or removing one is a deliberate change of public API (update
// this list, the package README and a changeset together). Type-only exports are checked by the compiler.
describe('@ipython-mcp/session-journal public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'DEFAULT_JOURNAL_MAX_BYTES',
      'SessionJournal',
      'codeCell',
      'codePointIndex',
      'markdownCell',
      'notebookMetadata',
      'outputsOfExecuteResult',
      'pythonCall',
      'pythonLiteral',
      'pythonString',
      'ranCode',
      'replacedNote',
      'stoppedCells',
      'stoppedNote',
      'toMimeBundle',
    ]);
  });
});
