import { execFile } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Runs a test worker (TypeScript, in a separate Node process) and parses its JSON output. */
export function runWorker<T>(worker: string, args: unknown, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-r', join(ROOT, 'scripts', 'ts-register.cjs'), join(ROOT, 'test', 'workers', worker), JSON.stringify(args)],
      { cwd: ROOT, timeout: timeoutMs },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`${worker} failed: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout) as T);
      },
    );
  });
}
