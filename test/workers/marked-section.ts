import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A worker's critical section that shows an overlap: it claims an exclusive marker file
 * (creation fails with EEXIST while another holder is inside), runs `record`, then does a
 * slow read-modify-write of the shared counter file (a lost update if two are inside).
 * Resolves whether the marker was already claimed: an overlap.
 */
export async function markedSection(marker: string, counter: string, record: () => void): Promise<boolean> {
  let fd: number | undefined;
  try {
    fd = openSync(marker, 'wx');
  } catch {
    // another holder is inside
  }
  record();
  const value = Number(readFileSync(counter, 'utf8'));
  await sleep(1);
  writeFileSync(counter, String(value + 1));
  if (fd === undefined) return true;
  closeSync(fd);
  unlinkSync(marker);
  return false;
}
