import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const PYTHON = '/usr/bin/python3';

/** A Kazoo 2.8 client in a Python child process (Debian's python3-kazoo), driven by JSON lines. */
export class KazooClient {
  private readonly answers: Array<(line: string) => void> = [];
  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => this.answers.shift()?.(line));
  }

  static async start(connectionString: string): Promise<KazooClient> {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: install Debian's python3 and python3-kazoo`);
    const child = spawn(PYTHON, [join(__dirname, 'kazoo_worker.py'), connectionString], { stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const client = new KazooClient(child);
    const ready = await Promise.race([
      client.next(),
      new Promise<never>((_, reject) =>
        child.once('exit', (code) =>
          reject(
            new Error(
              `kazoo worker exited (${code}): ${stderr || 'is python3-kazoo installed? apt-get install -y python3-kazoo'}`,
            ),
          ),
        ),
      ),
    ]);
    if (!ready.ready) throw new Error(`kazoo worker did not start: ${stderr}`);
    return client;
  }

  async send(command: Record<string, unknown>): Promise<Record<string, any>> {
    const reply = this.next();
    this.child.stdin.write(JSON.stringify(command) + '\n');
    const answer = await reply;
    if (answer.error) throw new Error(`kazoo: ${answer.error}`);
    return answer;
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end(JSON.stringify({ op: 'quit' }) + '\n');
    await exited;
  }

  private next(): Promise<Record<string, any>> {
    return new Promise((resolve) => this.answers.push((line) => resolve(JSON.parse(line))));
  }
}
