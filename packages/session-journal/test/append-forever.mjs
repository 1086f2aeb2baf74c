// Appends cells as fast as the journal takes them until killed (the crash-safety test SIGKILLs it mid-write).
import { SessionJournal, codeCell } from '../dist/index.js';

const journal = new SessionJournal({ path: process.argv[2], maxBytes: 64 * 1024 * 1024, minWriteIntervalMs: 0 });
let index = 0;
function burst() {
  for (let count = 0; count < 20; count += 1) {
    index += 1;
    journal.append(codeCell(`value_${index} = ${index}`, [{ output_type: 'stream', name: 'stdout', text: `${'x'.repeat(2000)}\n` }], index));
  }
  process.stdout.write(`${index}\n`);
  setTimeout(burst, 5);
}
burst();
