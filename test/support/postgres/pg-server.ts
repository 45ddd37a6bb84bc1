import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { installDebianPackage } from '../debian-package';
import { freePort } from '../free-port';

/** Debian's PostgreSQL (`apt-get install postgresql`; `.ci/run` installs it, and `start()` as root). */
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const INSTALL_HINT =
  "install Debian's postgresql package (`sudo apt-get install -y postgresql`), set PG_BIN to a PostgreSQL's bin folder, or give a server: PG_TEST_URL for the tests, DATABASE_URL for the demo.";

/** The OS user to run as: initdb and postgres refuse root, so as root the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * A throwaway PostgreSQL server for the tests, never the machine's own cluster: initdb
 * into a temporary folder, listening on a free loopback port (its Unix socket in that
 * folder too), with fsync off, superuser `postgres` and trust auth. `destroy()` stops it
 * and deletes the folder.
 */
export class PgServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'zk-lock-pg-'));
  private process: ChildProcess | undefined;
  private port = 0;

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  async start(): Promise<void> {
    if (!existsSync(join(BIN, 'initdb')))
      installDebianPackage('postgresql', join(BIN, 'initdb'), `No PostgreSQL in ${BIN}: ${INSTALL_HINT}`);
    const user = runAs();
    if (user) chownSync(this.dir, user.uid, user.gid);
    const data = join(this.dir, 'data');
    execFileSync(
      join(BIN, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--no-locale'],
      {
        ...user,
        cwd: this.dir,
        stdio: 'ignore',
      },
    );
    this.port = await freePort();
    const log = openSync(join(this.dir, 'server.log'), 'a');
    if (user) chownSync(join(this.dir, 'server.log'), user.uid, user.gid);
    const settings = {
      listen_addresses: '127.0.0.1',
      port: String(this.port),
      unix_socket_directories: this.dir,
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      max_connections: '200',
    };
    const args = ['-D', data, ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`])];
    this.process = spawn(join(BIN, 'postgres'), args, { ...user, cwd: this.dir, stdio: ['ignore', log, log] });
    closeSync(log);
    const child = this.process;
    child.once('exit', () => {
      if (this.process === child) this.process = undefined;
    });
    await this.waitReady();
  }

  private async waitReady(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (!this.process) throw new Error(`PostgreSQL exited at start; see ${this.dir}/server.log`);
      try {
        execFileSync(join(BIN, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres']);
        return;
      } catch {
        if (Date.now() > until)
          throw new Error(`PostgreSQL not ready after ${timeoutMs} ms; see ${this.dir}/server.log`);
        await sleep(50);
      }
    }
  }

  /** Stops the server (a fast shutdown: SIGINT) and deletes its folder. */
  async destroy(): Promise<void> {
    const child = this.process;
    if (child) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGINT');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
