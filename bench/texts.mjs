// Inputs shared by the bench scripts.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DATA = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data');

/** The rows of a TSV in ../shared/data after its header, each as its cells. */
export const tsv = (name) => readFileSync(join(DATA, name), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));

/**
 * `count` [text, label] rows for fine-tuning step timings: runs of consecutive sst2_train_2k
 * sentences joined until each text has at least 1.25 words a token (80 words for 64 tokens), so
 * it fills all `tokens` tokens. Every batch is then exactly [batch, tokens] on every system, whatever order each shuffles the rows into (with
 * single sentences each side's batches pad to a different longest sentence). The label is the
 * first sentence's.
 */
export function fullLengthTexts(count = 96, tokens = 64) {
  const least = Math.ceil(tokens * 1.25);
  const rows = tsv('sst2_train_2k.tsv');
  const out = [];
  for (let i = 0; i < rows.length && out.length < count;) {
    const words = [];
    const label = rows[i][1];
    while (i < rows.length && words.length < least) words.push(...rows[i++][0].split(' '));
    out.push([words.join(' '), label]);
  }
  return out;
}
