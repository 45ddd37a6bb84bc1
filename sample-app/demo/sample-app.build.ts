import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { BUILT_MAIN, ROOT } from './sample-app.paths.js';

const INPUTS = ['sample-app/src', 'lib', 'sample-app/tsconfig.app.json', 'tsconfig.json', 'nest-cli.json'];

/** Runs `nest build` unless the build is newer than every input. Returns whether it built. */
export function buildIfNeeded(log: (line: string) => void): boolean {
  if (existsSync(BUILT_MAIN) && statSync(BUILT_MAIN).mtimeMs >= newestInput()) return false;
  log('building the sample app (nest build)…');
  try {
    execFileSync(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build'], {
      cwd: ROOT,
      stdio: ['ignore', 2, 2],
    });
  } catch {
    throw new Error('`nest build` of the sample app failed: its errors are above.');
  }
  return true;
}

function newestInput(): number {
  return Math.max(...INPUTS.map((input) => newest(join(ROOT, input))));
}

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newest(join(path, entry))));
}
