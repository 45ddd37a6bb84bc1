import { idParts, LogTail } from '../support/chaos-log';
import { MS } from './chaos-rig';

interface Inside {
  readonly process: string;
  readonly loop: string;
  /** When a long section is due to end. */
  readonly longUntil?: bigint;
}

/**
 * What the chaos log says now, read as it grows: the sections each worker process is
 * inside, whether it is connected, and how many grants each loop has completed.
 */
export class LogState {
  private readonly tail: LogTail;
  /** Section -> who is inside it, from its `enter` to its `done`/`abandon` (or its process's death). */
  private readonly inside = new Map<string, Inside>();
  readonly connected = new Map<string, boolean>();
  readonly lastDisconnect = new Map<string, bigint>();
  /** Loop (`<worker>/<loop>`) -> when it released (its `exit` lines). */
  readonly completed = new Map<string, bigint[]>();
  /** Section -> how it ended: done or abandon. */
  readonly endings = new Map<string, string>();

  constructor(path: string) {
    this.tail = new LogTail(path);
  }

  update(): this {
    for (const line of this.tail.read()) {
      const [kind, id, , t, ...details] = line.split(' ');
      if (kind === '#') continue;
      if (kind === 'enter') {
        const long = details.find((d) => d.startsWith('long='));
        const { process, loop } = idParts(id);
        this.inside.set(id, { process, loop, longUntil: long ? BigInt(t) + BigInt(long.slice(5)) * MS : undefined });
      } else if (kind === 'done' || kind === 'abandon') {
        this.inside.delete(id);
        this.endings.set(id, kind);
      } else if (kind === 'killed') {
        for (const [section, { process }] of this.inside) if (process === id) this.inside.delete(section);
      } else if (kind === 'exit') {
        const { loop } = idParts(id);
        this.completed.set(loop, [...(this.completed.get(loop) ?? []), BigInt(t)]);
      } else if (kind === 'connected') {
        this.connected.set(id, true);
      } else if (kind === 'disconnected' || kind === 'session-lost') {
        this.connected.set(id, false);
        this.lastDisconnect.set(id, BigInt(t));
      }
    }
    return this;
  }

  /** The section of the single lock that `process` is inside, if any. */
  lockSection(process: string): { section: string; longUntil?: bigint } | undefined {
    for (const [section, inside] of this.inside) {
      if (inside.process === process && inside.loop.endsWith('/lock')) return { section, longUntil: inside.longUntil };
    }
    return undefined;
  }

  /** How many loops of `process` are inside a section that lasts until `until` or later. */
  loopsInsideUntil(process: string, until: bigint): number {
    const loops = [...this.inside.values()].filter(
      (inside) => inside.process === process && inside.longUntil !== undefined && inside.longUntil >= until,
    );
    return new Set(loops.map((inside) => inside.loop)).size;
  }

  /** The sections `process` is inside, of any loop. */
  sectionsOf(process: string): string[] {
    return [...this.inside].filter(([, inside]) => inside.process === process).map(([section]) => section);
  }
}
