import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldTraceback } from './traceback-fold.js';

const SITE = '/venv/lib/python3.11/site-packages';
// IPython's text for `df['nope']` (pandas 3), banner and colours removed, shortened to its structure.
const KEY_ERROR = [
  `File ${SITE}/pandas/core/indexes/base.py:3816, in Index.get_loc(self, key)`,
  '   3815 try:',
  '-> 3816     return self._engine.get_loc(casted_key)',
  '   3817 except KeyError as err:',
  '',
  'File pandas/_libs/index.pyx:172, in pandas._libs.index.IndexEngine.get_loc()',
  "--> 172 'Could not get source, probably due dynamically evaluated source code.'",
  'File pandas/_libs/index.pyx:201, in pandas._libs.index.IndexEngine.get_loc()',
  "--> 201 'Could not get source, probably due dynamically evaluated source code.'",
  'File pandas/_libs/hashtable_class_helper.pxi:7726, in pandas._libs.hashtable.PyObjectHashTable.get_item()',
  "-> 7726 'Could not get source, probably due dynamically evaluated source code.'",
  'File pandas/_libs/hashtable_class_helper.pxi:7734, in pandas._libs.hashtable.PyObjectHashTable.get_item()',
  "-> 7734 'Could not get source, probably due dynamically evaluated source code.'",
  "KeyError: 'nope'",
  '',
  'The above exception was the direct cause of the following exception:',
  '',
  'KeyError                                  Traceback (most recent call last)',
  'Cell In[6], line 1',
  "----> 1 df['nope']",
  '',
  `File ${SITE}/pandas/core/frame.py:4330, in DataFrame.__getitem__(self, key)`,
  '   4329         return self._getitem_multilevel(key)',
  '-> 4330     indexer = self.columns.get_loc(key)',
  '',
  `File ${SITE}/pandas/core/indexes/base.py:3823, in Index.get_loc(self, key)`,
  '-> 3823     raise KeyError(key) from err',
  '',
  "KeyError: 'nope'",
].join('\n');

describe('foldTraceback', () => {
  it('keeps the cell, the exception lines and the chain; library frames become one line, long runs fold', () => {
    expect(foldTraceback(KEY_ERROR).split('\n')).toEqual([
      'pandas/core/indexes/base.py:3816 in get_loc',
      '... 3 more library frames ...',
      'pandas/_libs/hashtable_class_helper.pxi:7734 in get_item',
      "KeyError: 'nope'",
      '',
      'The above exception was the direct cause of the following exception:',
      '',
      'KeyError                                  Traceback (most recent call last)',
      'Cell In[6], line 1',
      "----> 1 df['nope']",
      '',
      'pandas/core/frame.py:4330 in __getitem__',
      'pandas/core/indexes/base.py:3823 in get_loc',
      "KeyError: 'nope'",
    ]);
  });

  it('keeps frames of user files and of configured library paths whole; the stdlib and frozen modules fold', () => {
    const traceback = [
      'Cell In[2], line 1',
      '----> 1 run()',
      '',
      'File /home/me/project/tasks.py:3, in run()',
      '----> 3 json.loads(text)',
      '',
      `File ${SITE}/mylib/core.py:9, in helper()`,
      '----> 9 raise ValueError("x")',
      '',
      'File /usr/lib/python3.11/json/__init__.py:346, in loads(s)',
      '--> 346     return _default_decoder.decode(s)',
      '',
      'File <frozen importlib._bootstrap>:1176, in _find_and_load(name, import_)',
      '',
      'ValueError: x',
    ].join('\n');
    expect(foldTraceback(traceback, [`${SITE}/mylib`]).split('\n')).toEqual([
      'Cell In[2], line 1',
      '----> 1 run()',
      '',
      'File /home/me/project/tasks.py:3, in run()',
      '----> 3 json.loads(text)',
      '',
      `File ${SITE}/mylib/core.py:9, in helper()`,
      '----> 9 raise ValueError("x")',
      '',
      'json/__init__.py:346 in loads',
      '<frozen importlib._bootstrap>:1176 in _find_and_load',
      'ValueError: x',
    ]);
  });

  it('returns a traceback without library frames unchanged (the same string)', () => {
    const plain = 'Cell In[6], line 1\n----> 1 1/0\n\nZeroDivisionError: division by zero';
    expect(foldTraceback(plain)).toBe(plain);
  });

  it('never drops a line that is not part of a frame, whatever the text', () => {
    const line = fc.oneof(
      fc.constantFrom('', 'Cell In[1], line 1', '----> 1 f()', `File ${SITE}/a/b.py:1, in f()`, '-> 1 x', 'File x.pyx:2, in g()', 'ValueError: boom', 'The above exception was the direct cause of the following exception:'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const folded = foldTraceback(lines.join('\n')).split('\n');
        for (const kept of lines.filter((text) => /^[A-Z][A-Za-z]*(Error|Exception): /.test(text) || text.startsWith('The above exception'))) {
          expect(folded).toContain(kept);
        }
      }),
    );
  });
});
