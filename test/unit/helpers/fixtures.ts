import * as fs from 'node:fs';
import * as path from 'node:path';

/** The shared, real transcripts (provenance in their PROVENANCE.tsv): beside the repository, or where this machine keeps them. */
export function transcriptFixtures(): string {
  const candidates = [
    process.env.RECOLLECT_FIXTURES,
    path.resolve(__dirname, '../../../../shared/fixtures/transcripts'),
    '/work/shared/fixtures/transcripts',
  ].filter((c): c is string => !!c);
  const found = candidates.find((c) => fs.existsSync(path.join(c, 'PROVENANCE.tsv')));
  if (!found) throw new Error(`transcript fixtures not found; looked in ${candidates.join(', ')} (set RECOLLECT_FIXTURES)`);
  return found;
}
