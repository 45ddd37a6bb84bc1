import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Real applications under test/fixtures/, each with its own package.json, lockfile and
 * node_modules, running the library the way users get it: built, packed with `npm pack`,
 * installed from the tarball. Everything slow is cached by content hash:
 *
 * - the tarball, packed from a fresh copy of the repository (whose `prepack` builds it), and
 *   dist/ (unpacked from it) for the suites that load the build in place, by a hash of what goes into them
 *   (lib/ sources, package.json, README, build scripts and configs, the TypeScript
 *   version), under node_modules/.cache;
 * - a fixture's node_modules, by a stamp recording the hash of its package.json and lockfile
 *   (`npm ci` when they change or node_modules is missing) and of the tarball installed
 *   into it (`npm install --no-save <tarball>` when the library changes, or when the
 *   installed copy no longer matches what was installed).
 *
 * Packing and unpacking run under a lock shared across Jest workers: dist/ is emptied
 * before the tarball's is unpacked into it, other suites (test/package/dual-format.spec.ts)
 * load from it, and the tarball cache is shared.
 */

const REPO = join(__dirname, '..', '..');
const CACHE = join(REPO, 'node_modules', '.cache', 'nestjs-zk-lock-tests');
const NPM_QUIET = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

export interface FixtureSpec {
  /** Directory name under test/fixtures/. */
  readonly name: string;
  readonly dir: string;
  /** Output module format of the fixture's TypeScript (swc `module.type`). */
  readonly module: 'commonjs' | 'es6';
}

export const FIXTURES = {
  nest11Cjs: fixture('nest11-cjs', 'commonjs'),
  nest12Esm: fixture('nest12-esm', 'es6'),
} as const;

function fixture(name: string, module: FixtureSpec['module']): FixtureSpec {
  return { name, dir: join(REPO, 'test', 'fixtures', name), module };
}

// ---------------------------------------------------------------------------------------
// Build and pack, once per content of the sources.

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full, keep));
    else if (keep(full)) out.push(full);
  }
  return out.sort();
}

function hashFiles(files: string[]): string {
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(`${relative(REPO, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

/** A hash of everything the build and `npm pack` read. */
function sourceHash(): string {
  const sources = filesUnder(join(REPO, 'lib'), (file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
  const docs = filesUnder(join(REPO, 'docs'), (file) => /\.(md|svg)$/.test(file));
  const extra = [
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts/build.mjs',
    'node_modules/typescript/package.json',
  ];
  return hashFiles([...sources, ...docs, ...extra.map((file) => join(REPO, file)).filter(existsSync)]);
}

const distHash = (): string =>
  existsSync(join(REPO, 'dist')) ? hashFiles(filesUnder(join(REPO, 'dist'), () => true)) : 'none';

function run(command: string, args: string[], cwd: string, timeoutMs = 240_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: childEnv() },
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(`\`${command} ${args.join(' ')}\` in ${cwd} failed: ${error.message}\n${stdout}\n${stderr}`),
          );
        else resolve(stdout);
      },
    );
  });
}

/** The test process's environment minus what `npm test` and Jest add for themselves. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_(package|lifecycle)_|npm_config_(local_)?prefix$|NODE_OPTIONS$|INIT_CWD$)/i.test(key)) env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs `fn` holding a lock shared by every process (a directory created atomically). */
async function withFileLock<T>(name: string, fn: () => Promise<T>, timeoutMs = 300_000): Promise<T> {
  const path = join(CACHE, `${name}.lock`);
  mkdirSync(CACHE, { recursive: true });
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (lockHolderGone(path)) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for the lock ${path}`);
      await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { recursive: true, force: true });
  }
}

function lockHolderGone(path: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(path, 'pid'), 'utf8'));
  } catch {
    // Between mkdir and writing the pid, or a holder that died right there.
    try {
      return Date.now() - statSync(path).mtimeMs > 10_000;
    } catch {
      return true;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

const DIST_STAMP = join(CACHE, 'dist.json');

/**
 * dist/ built from the current sources, for the suites that load the build in place: the
 * packed tarball's dist/ (so the sources are built once, by `prepack`), unpacked only when
 * dist/ is not already that build.
 */
export async function ensureBuilt(): Promise<void> {
  const { tarball } = await packedLibrary();
  await withFileLock('build', async () => {
    const source = sourceHash();
    try {
      const stamp = JSON.parse(readFileSync(DIST_STAMP, 'utf8')) as { source: string; dist: string };
      if (stamp.source === source && stamp.dist === distHash()) return;
    } catch {
      // no stamp yet
    }
    rmSync(DIST_STAMP, { force: true });
    const staging = join(CACHE, `unpack-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging);
    await run('tar', ['xzf', tarball, '-C', staging, 'package/dist'], REPO);
    rmSync(join(REPO, 'dist'), { recursive: true, force: true });
    renameSync(join(staging, 'package', 'dist'), join(REPO, 'dist'));
    rmSync(staging, { recursive: true, force: true });
    writeFileSync(DIST_STAMP, JSON.stringify({ source, dist: distHash() }));
  });
}

export interface PackedLibrary {
  readonly tarball: string;
  /** sha256 of the tarball. */
  readonly sha256: string;
  /** What this call did: `built and packed`, or `cached`. */
  readonly work: string;
}

let packed: Promise<PackedLibrary> | undefined;

/**
 * A copy of the repository as a fresh clone of it would be: the files git tracks (and new
 * ones it does not ignore, so that uncommitted work is what gets tested), no dist/, and
 * the repository's node_modules linked in (nothing installed over the network).
 */
function freshCheckout(dir: string): string {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of files.split('\0').filter(Boolean)) {
    if (existsSync(join(REPO, file))) cpSync(join(REPO, file), join(dir, file)); // a deleted one is gone from a clone too
  }
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/**
 * The tarball `npm pack` makes of the current sources, packed from a fresh copy of the
 * repository (see `freshCheckout`): its own `prepack` builds dist/, as for a user packing a
 * clone or npm installing from git. Packed once per content of the sources.
 */
export function packedLibrary(): Promise<PackedLibrary> {
  packed ??= withFileLock('build', async () => {
    const source = sourceHash();
    const tarball = join(CACHE, `nestjs-zk-lock-${source.slice(0, 16)}.tgz`);
    let work = 'cached';
    if (!existsSync(tarball)) {
      const staging = join(CACHE, `pack-${process.pid}`);
      rmSync(staging, { recursive: true, force: true });
      const checkout = freshCheckout(join(staging, 'checkout'));
      const [report] = JSON.parse(
        await run('npm', ['pack', '--json', '--pack-destination', staging, '--loglevel=error'], checkout),
      ) as Array<{ filename: string; files: Array<{ path: string }> }>;
      const files = report.files.map((file) => file.path);
      for (const needed of [
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
        'dist/cjs/package.json',
        'dist/esm/index.js',
        'dist/esm/index.d.ts',
        'dist/esm/package.json',
        'package.json',
      ]) {
        if (!files.includes(needed)) throw new Error(`npm pack left out ${needed}; it packed: ${files.join(', ')}`);
      }
      for (const old of readdirSync(CACHE).filter((file) => file.endsWith('.tgz'))) rmSync(join(CACHE, old));
      renameSync(join(staging, report.filename), tarball);
      rmSync(staging, { recursive: true, force: true });
      work = 'built and packed';
    }
    return { tarball, sha256: sha256(readFileSync(tarball)), work };
  });
  return packed;
}

// ---------------------------------------------------------------------------------------
// Fixture install and compile.

interface InstallStamp {
  /** Hash of the fixture's package.json and package-lock.json that `npm ci` installed. */
  readonly lockfile: string;
  /** sha256 of the library tarball installed on top, if any. */
  readonly library: string | null;
  /** Hash of the installed node_modules/nestjs-zk-lock, to notice hand edits. */
  readonly installed?: string;
}

export interface PreparedFixture {
  /** What was done to node_modules: `npm ci`, the tarball install, or nothing. */
  readonly install: string[];
  readonly installMs: number;
}

/**
 * Makes the fixture's node_modules match its lockfile plus the packed library, and
 * compiles its TypeScript (src/ to dist/) with swc: CommonJS or ES modules, legacy
 * decorators with metadata, as `nest build` or `tsc` would for such an application.
 */
export async function prepareFixture(spec: FixtureSpec, library: PackedLibrary): Promise<PreparedFixture> {
  const started = Date.now();
  const install = await withFileLock(`fixture-${spec.name}`, () => installFixture(spec, library));
  const installMs = Date.now() - started;
  await compileFixture(spec);
  return { install, installMs };
}

/** `prepareFixture` with the packed library of the current sources, logging what it took. */
export async function preparePackedFixture(spec: FixtureSpec): Promise<void> {
  const library = await packedLibrary();
  const prepared = await prepareFixture(spec, library);
  console.info(
    `${spec.name}: library ${library.work}; node_modules: ${prepared.install.join(' + ') || 'cached'} (${prepared.installMs} ms)`,
  );
}

async function installFixture(spec: FixtureSpec, library: PackedLibrary): Promise<string[]> {
  const stampFile = join(spec.dir, 'node_modules', '.fixture-install.json');
  const lockfile = hashFiles([join(spec.dir, 'package.json'), join(spec.dir, 'package-lock.json')]);
  const installed = join(spec.dir, 'node_modules', 'nestjs-zk-lock');
  const installedHash = (): string =>
    existsSync(join(installed, 'package.json')) ? hashFiles(filesUnder(installed, () => true)) : 'none';
  let stamp: InstallStamp | undefined;
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as InstallStamp;
  } catch {
    // not installed by this helper yet
  }
  const done: string[] = [];
  if (stamp?.lockfile !== lockfile) {
    await run('npm', ['ci', ...NPM_QUIET], spec.dir);
    stamp = { lockfile, library: null };
    writeFileSync(stampFile, JSON.stringify(stamp));
    done.push('npm ci');
  }
  if (stamp.library !== library.sha256 || stamp.installed !== installedHash()) {
    // What `npm install nestjs-zk-lock` does, minus writing the dependency into the
    // committed package.json and lockfile: the tarball and its own dependencies, with the
    // peer dependencies (@nestjs/*, rxjs, reflect-metadata) met by the fixture's.
    // npm leaves an installed copy alone when the tarball's path and integrity match, hand
    // edits included: remove it first.
    rmSync(installed, { recursive: true, force: true });
    await run('npm', ['install', '--no-save', ...NPM_QUIET, library.tarball], spec.dir);
    writeFileSync(stampFile, JSON.stringify({ ...stamp, library: library.sha256, installed: installedHash() }));
    done.push('npm install --no-save <tarball>');
  }
  if (lstatSync(installed).isSymbolicLink()) {
    throw new Error(
      `${spec.name}/node_modules/nestjs-zk-lock is a symlink: the library must be installed from the tarball`,
    );
  }
  return done;
}

/** The sources both fixtures share (one source, type-checked by each against its own Nest). */
const SHARED_SRC = join(REPO, 'test', 'fixtures', 'app-src');

/**
 * Fills the fixture's src/ (generated, not committed) with the shared sources and its own
 * (`own/`: what must differ, such as how a CommonJS or an ESM module finds its packages).
 * Writes only what changed, so that two suites preparing one fixture at once agree.
 */
export function assembleSources(spec: FixtureSpec): void {
  const src = join(spec.dir, 'src');
  mkdirSync(src, { recursive: true });
  const wanted = new Map<string, string>();
  for (const dir of [SHARED_SRC, join(spec.dir, 'own')]) {
    for (const name of readdirSync(dir).filter((file) => file.endsWith('.ts'))) {
      if (wanted.has(name)) throw new Error(`${spec.name}: own/${name} would replace the shared app-src/${name}`);
      wanted.set(name, readFileSync(join(dir, name), 'utf8'));
    }
  }
  for (const name of readdirSync(src)) if (!wanted.has(name)) rmSync(join(src, name), { force: true });
  for (const [name, text] of wanted) {
    const path = join(src, name);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writeFileSync(path, text);
  }
}

async function compileFixture(spec: FixtureSpec): Promise<void> {
  assembleSources(spec);
  const src = join(spec.dir, 'src');
  const out = join(spec.dir, 'dist');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const { transformFile } = await import('@swc/core');
  for (const file of readdirSync(src).filter((name) => name.endsWith('.ts'))) {
    const { code } = await transformFile(join(src, file), {
      swcrc: false,
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
        keepClassNames: true,
      },
      module: { type: spec.module },
    });
    writeFileSync(join(out, file.replace(/\.ts$/, '.js')), code);
  }
}

/**
 * Type-checks the fixture's sources with the repository's TypeScript against the fixture's
 * node_modules: its Nest's types and the typings the tarball ships (CommonJS or ESM ones,
 * picked by the package's `exports`). Resolves with tsc's output; rejects on errors.
 */
export function typecheckFixture(spec: FixtureSpec): Promise<string> {
  assembleSources(spec);
  return run(
    process.execPath,
    [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(spec.dir, 'tsconfig.json')],
    spec.dir,
    60_000,
  );
}

// ---------------------------------------------------------------------------------------
// The application process.

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A fixture application started with `node dist/main.js`; reads its output line by line. */
export class FixtureApp {
  private readonly lines: string[] = [];
  private readonly listeners = new Set<() => void>();
  private output = '';
  private exit: Exit | undefined;
  readonly exited: Promise<Exit>;
  port = 0;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    let partial = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      this.lines.push(...parts);
      this.notify();
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
    });
    this.exited = new Promise((resolve) => {
      const ended = (exit: Exit): void => {
        this.exit ??= exit;
        this.notify();
        resolve(this.exit);
      };
      child.once('exit', (code, signal) => ended({ code, signal }));
      child.once('error', (error) => {
        this.output += `\n[could not run: ${error.message}]\n`;
        if (child.pid === undefined) ended({ code: null, signal: null });
      });
    });
  }

  /** Starts the application (PORT=0: a free port) and waits for its `listening <port>` line. */
  static async start(spec: FixtureSpec, env: Record<string, string>, timeoutMs = 30_000): Promise<FixtureApp> {
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: spec.dir,
      env: childEnv({ PORT: '0', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const app = new FixtureApp(spec.name, child);
    try {
      const line = await app.waitForLine(/^listening \d+$/, 0, timeoutMs);
      app.port = Number(line.split(' ')[1]);
      return app;
    } catch (error) {
      await app.kill();
      throw error;
    }
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Everything the application printed (stdout and stderr), for failure messages. */
  get log(): string {
    return this.output;
  }

  /** A position in the output: pass it to `waitForLine` to wait for a line printed after now. */
  mark(): number {
    return this.lines.length;
  }

  /** Waits for the `count`-th line matching `pattern` printed after position `since`. */
  async waitForLine(pattern: RegExp | string, since: number, timeoutMs = 10_000, count = 1): Promise<string> {
    const matches = (line: string): boolean => (typeof pattern === 'string' ? line === pattern : pattern.test(line));
    const found = (): string | undefined => this.lines.slice(since).filter(matches)[count - 1];
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const line = found();
        if (line !== undefined || this.exit) {
          this.listeners.delete(check);
          clearTimeout(timer);
          if (line !== undefined) resolve(line);
          else
            reject(
              new Error(
                `${this.name} exited (${JSON.stringify(this.exit)}) before printing ${pattern}. Output:\n${this.output}`,
              ),
            );
        }
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(
            `${this.name} printed no ${count > 1 ? `${count} lines` : 'line'} ${pattern} within ${timeoutMs} ms. Output:\n${this.output}`,
          ),
        );
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /**
   * Sends `signal` and waits for the process to end. If it does not end within
   * `timeoutMs`, kills it and rejects: something kept it alive after shutdown.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<Exit> {
    if (this.exit) return this.exit;
    this.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const result = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (result === 'late') {
      await this.kill();
      throw new Error(`${this.name} did not exit within ${timeoutMs} ms of ${signal}. Output:\n${this.output}`);
    }
    return result;
  }

  /** Ends the process at once if it still runs (clean-up after a failed test). */
  async kill(): Promise<void> {
    if (this.exit || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
