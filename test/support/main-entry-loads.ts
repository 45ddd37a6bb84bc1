import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The files matching `pattern` that loading the package's main entry point (from source,
 * in a fresh process) brings in: an optional peer must not be among them.
 */
export function filesLoadedByMainEntry(pattern: RegExp): string[] {
  return filesLoadedByEntry('./lib/index.ts', pattern);
}

/** The files matching `pattern` that loading `entry` (a source file of this repository, in a fresh process) brings in. */
export function filesLoadedByEntry(entry: string, pattern: RegExp): string[] {
  const script = `require(${JSON.stringify(entry)}); process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((file) => new RegExp(${JSON.stringify(pattern.source)}).test(file))))`;
  const output = execFileSync(process.execPath, ['-r', './scripts/ts-register.cjs', '-e', script], {
    cwd: join(__dirname, '..', '..'),
    encoding: 'utf8',
  });
  return JSON.parse(output) as string[];
}
