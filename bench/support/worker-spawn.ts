import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { ImplName } from '../workers/impl.protocol.js';
import { buildCuratorWorker, type CuratorBuild } from './curator-build.js';
import type { WorkerSpawn } from './worker-channel.js';

const ROOT = join(__dirname, '..', '..');
const PYTHON = '/usr/bin/python3';

/**
 * How to start each implementation's worker process. The Curator worker is compiled on
 * first use (once per run) and its classes deleted by `dispose`.
 */
export class WorkerSpawns {
  private curator: Promise<CuratorBuild> | undefined;

  /** `warmupMs`: how long the Curator and Node workers run their recipes before their ready line (JIT). */
  constructor(private readonly warmupMs: number) {}

  async spawn(impl: ImplName, slot: number, connectionString: string, base: string): Promise<WorkerSpawn> {
    const label = `${impl}#${slot + 1}`;
    if (impl === 'kazoo') {
      if (!existsSync(PYTHON))
        throw new Error(
          `${PYTHON} is missing: install Debian's python3 and python3-kazoo (apt-get install -y python3-kazoo)`,
        );
      return {
        label,
        command: PYTHON,
        args: [join(ROOT, 'bench', 'kazoo', 'kazoo_bench.worker.py'), connectionString, base],
        cwd: ROOT,
      };
    }
    if (impl === 'curator') {
      this.curator ??= buildCuratorWorker();
      const { classpath, mainClass } = await this.curator;
      // The JVM's defaults (JIT, collector, heap), as a Curator application gets them.
      const args = ['-cp', classpath, mainClass, connectionString, base, String(this.warmupMs)];
      return { label, command: 'java', args, cwd: ROOT, readyTimeoutMs: 60_000 + 3 * this.warmupMs };
    }
    return {
      label,
      command: process.execPath,
      // No --expose-gc: a forced collection drops the JIT's work (scenario 4's heap is measured in a probe process).
      args: [
        '--no-flush-bytecode',
        '-r',
        join(ROOT, 'scripts', 'ts-register.cjs'),
        join(ROOT, 'bench', 'workers', 'impl.worker.ts'),
        impl,
        connectionString,
        base,
        String(this.warmupMs),
      ],
      cwd: ROOT,
      readyTimeoutMs: 30_000 + 3 * this.warmupMs,
    };
  }

  async dispose(): Promise<void> {
    const built = this.curator;
    this.curator = undefined;
    (await built?.catch(() => undefined))?.dispose();
  }
}
