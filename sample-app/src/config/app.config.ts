import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Injection token of the sample app's settings. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** The sample app's settings, read once from the environment at start-up. */
export interface AppConfig {
  /** ZooKeeper, `host:port[,host:port…]` (ZK_CONNECT, required). */
  readonly zkConnect: string;
  /** HTTP port (PORT, default 3000; 0 picks a free one). */
  readonly port: number;
  /** Address to listen on (HOST, default 127.0.0.1). */
  readonly host: string;
  /** The shared "remote" store: one JSON file per show (STORE_DIR). */
  readonly storeDir: string;
  /** Artificial latency of each store read and write (STORE_DELAY_MS, default 4). */
  readonly storeDelayMs: number;
  /** This instance's name, shown in lock identities and reservations (INSTANCE). */
  readonly instance: string;
  /** The payment partner's base URL (PARTNER_URL); without it, payments answer 502. */
  readonly partnerUrl: string | undefined;
  /** PostgreSQL for the fenced seat sales (DATABASE_URL); without it, they answer 503. */
  readonly databaseUrl: string | undefined;
  /**
   * Whether a fenced seat sale may ask to be paused between its read and its write
   * (DEMO_PAUSE=1): the demo's way to make a zombie. Never in production.
   */
  readonly pauseAllowed: boolean;
}

export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  if (!env.ZK_CONNECT)
    throw new Error('ZK_CONNECT is not set: give the ZooKeeper connection string, e.g. ZK_CONNECT=127.0.0.1:2181.');
  return {
    zkConnect: env.ZK_CONNECT,
    port: whole('PORT', env.PORT, 3000),
    host: env.HOST || '127.0.0.1',
    storeDir: env.STORE_DIR || join(tmpdir(), 'zk-lock-sample-shows'),
    storeDelayMs: whole('STORE_DELAY_MS', env.STORE_DELAY_MS, 4),
    instance: env.INSTANCE || `${hostname()}:${process.pid}`,
    partnerUrl: env.PARTNER_URL || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    pauseAllowed: env.DEMO_PAUSE === '1',
  };
}

function whole(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 0) throw new Error(`${name}=${value} is not a whole number >= 0.`);
  return number;
}
