/** What `npm run soak` runs; every figure can be set on the command line. */
export interface SoakOptions {
  /** Lock cycles in all, over every client and worker. */
  readonly cycles: number;
  /** Lock clients (each its own ZkLockBackend, ZooKeeper session and ReentrantLocker). */
  readonly clients: number;
  /** Concurrent cycle loops per client. */
  readonly workersPerClient: number;
  /** Measurements: one before the first cycle, then one every cycles / checkpoints cycles. */
  readonly checkpoints: number;
  /** One client's connection is dropped every this many cycles (round robin over clients). */
  readonly reconnectEvery: number;
  /** Checkpoints (after the initial one) left out of the growth check: caches and JIT fill up first. */
  readonly warmupCheckpoints: number;
  /** Seed of the operation mix, so a failing run can be replayed. */
  readonly seed: number;
  /** Print one JSON line with every figure at the end (for the Jest spec). */
  readonly json: boolean;
  readonly help: boolean;
}

export const DEFAULTS: SoakOptions = {
  cycles: 100_000,
  clients: 4,
  workersPerClient: 3,
  checkpoints: 20,
  reconnectEvery: 200,
  warmupCheckpoints: 4,
  seed: 1,
  json: false,
  help: false,
};

/** `--short`: the CI-sized run (see test/soak/short-soak.spec.ts). */
export const SHORT: Partial<SoakOptions> = {
  cycles: 10_000,
  checkpoints: 12,
  warmupCheckpoints: 3,
  reconnectEvery: 100,
};

export const USAGE = `npm run soak -- [--short] [--cycles N] [--clients N] [--workers N] [--checkpoints N]
                [--reconnect-every N] [--warmup N] [--seed N] [--json]
Runs lock cycles against its own ZooKeeper with forced reconnects and fails (exit 1) when
heap, server watches, timers/handles or the library's own counts grow with the cycles.
Run node with --expose-gc (the npm script does). Defaults: ${JSON.stringify(DEFAULTS)}.`;

const FLAGS: Record<string, keyof SoakOptions> = {
  '--cycles': 'cycles',
  '--clients': 'clients',
  '--workers': 'workersPerClient',
  '--checkpoints': 'checkpoints',
  '--reconnect-every': 'reconnectEvery',
  '--warmup': 'warmupCheckpoints',
  '--seed': 'seed',
};

export function parseSoakArgs(argv: readonly string[]): SoakOptions {
  let options: Record<string, unknown> = { ...DEFAULTS };
  const explicit: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--short') options = { ...options, ...SHORT };
    else if (arg === '--json') explicit.json = true;
    else if (arg === '--help' || arg === '-h') explicit.help = true;
    else if (FLAGS[arg]) {
      const value = Number(argv[++i]);
      if (!Number.isSafeInteger(value) || value < 0)
        throw new Error(`${arg} needs a whole number >= 0, got ${argv[i]}`);
      explicit[FLAGS[arg]] = value;
    } else throw new Error(`unknown argument ${arg}\n${USAGE}`);
  }
  // Explicit flags win over --short, wherever they stand.
  const resolved = { ...options, ...explicit } as unknown as SoakOptions;
  if (resolved.checkpoints < resolved.warmupCheckpoints + 6)
    throw new Error('need at least 6 checkpoints after warm-up to see a trend');
  if (resolved.cycles < resolved.checkpoints || resolved.clients < 1 || resolved.workersPerClient < 1)
    throw new Error('cycles >= checkpoints, and at least one client and worker');
  return resolved;
}
