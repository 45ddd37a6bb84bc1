import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const JAVA_DIR = '/usr/share/java';
/** Debian's Curator 5 (libcurator-recipes-java) and what it needs; slf4j-nop keeps the worker's stdout to answers. */
const JARS = [
  'curator-recipes',
  'curator-framework',
  'curator-client',
  'zookeeper',
  'zookeeper-jute',
  'guava',
  'slf4j-api',
  'slf4j-nop',
];

export type CuratorLockKind = 'mutex' | 'read' | 'write';

/**
 * An Apache Curator 5 client in a Java child process (CuratorWorker.java, run from source
 * by Java 17), driven by tab-separated command lines. Each lock lives in a named slot with
 * a thread of its own (Curator's locks belong to the thread that took them), so a blocked
 * acquire in one slot does not hold up the others: `send` resolves with the answer to its
 * own request, whenever it comes.
 */
export class CuratorClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: Record<string, any>) => void>();
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const answer = JSON.parse(line) as Record<string, any>;
      this.waiting.get(answer.id)?.(answer);
      this.waiting.delete(answer.id);
    });
    this.exited = new Promise((resolve) => child.once('exit', resolve));
  }

  static classpath(): string {
    const jars = JARS.map((jar) => join(JAVA_DIR, `${jar}.jar`));
    const missing = jars.filter((jar) => !existsSync(jar));
    if (missing.length > 0)
      throw new Error(`Curator's jars are missing (${missing.join(', ')}): apt-get install -y libcurator-recipes-java`);
    return jars.join(':');
  }

  static async start(connectionString: string): Promise<CuratorClient> {
    const child = spawn(
      'java',
      ['-cp', CuratorClient.classpath(), join(__dirname, 'CuratorWorker.java'), connectionString],
      { stdio: 'pipe' },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const client = new CuratorClient(child);
    const ready = client.answerTo(0);
    const ended = client.exited.then((code) => {
      throw new Error(`Curator worker exited (${code}): ${stderr}`);
    });
    await Promise.race([ready, ended]);
    ended.catch(() => undefined);
    return client;
  }

  /** One command; rejects with the worker's error (a Java exception's text). */
  async send(op: string, ...args: Array<string | number>): Promise<Record<string, any>> {
    const id = this.nextId++;
    const answer = this.answerTo(id);
    this.child.stdin.write([id, op, ...args].join('\t') + '\n');
    const reply = await answer;
    if (reply.error) throw new Error(`curator ${op} ${args.join(' ')}: ${reply.error}`);
    return reply;
  }

  /** An `InterProcessMutex` (`mutex`) or `InterProcessReadWriteLock` (`rw`) on `path`, kept in `slot`. */
  async lock(slot: string, type: 'mutex' | 'rw', path: string): Promise<void> {
    await this.send(type, slot, path);
  }

  /** Resolves once acquired (`true`), or `false` after `timeoutMs` (`-1`: no limit). */
  async acquire(slot: string, kind: CuratorLockKind, timeoutMs = -1): Promise<boolean> {
    return (await this.send('acquire', slot, kind, timeoutMs)).acquired as boolean;
  }

  async release(slot: string, kind: CuratorLockKind): Promise<void> {
    await this.send('release', slot, kind);
  }

  async stop(): Promise<void> {
    this.child.stdin.end(`${this.nextId++}\tquit\n`);
    await this.exited;
  }

  private answerTo(id: number): Promise<Record<string, any>> {
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }
}
