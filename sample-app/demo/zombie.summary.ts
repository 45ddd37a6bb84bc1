import type { HttpResult } from './json-http.client.js';
import { formatTable } from './summary.table.js';
import type { Seat, SeatSale } from '../src/seats/seat.model.js';

/** What one round of the zombie scenario saw: a paused holder's sale, the next holders', and the seats after. */
export interface ZombieRun {
  readonly endpoint: string;
  /** The paused instance's answer, once resumed. */
  readonly zombie: HttpResult;
  /** The next holders' answers, sold while the zombie was stopped. */
  readonly sales: readonly HttpResult[];
  /** The show's seats in PostgreSQL after every sale. */
  readonly seats: readonly Seat[];
}

export interface ZombieSummary {
  readonly endpoint: string;
  readonly sales: number;
  /** Writes PostgreSQL took: the sales answered 201, and the zombie's if it holds a seat. */
  readonly landed: number;
  /** Writes PostgreSQL refused for a stale fencing token (409 STALE_FENCING_TOKEN). */
  readonly refused: number;
  /** Seats PostgreSQL shows as sold. */
  readonly sold: number;
  /** Customers answered 201 who hold no seat: their sale was overwritten. */
  readonly lost: number;
  /** Sales answered neither 201 nor 409 STALE_FENCING_TOKEN, besides the zombie's. */
  readonly failed: number;
  /** What became of the zombie's write. */
  readonly zombie: 'refused' | 'landed' | 'failed';
  /** The zombie's answer, as status and code (`409 STALE_FENCING_TOKEN`). */
  readonly zombieAnswer: string;
  /** The seat the zombie holds, when its write landed. */
  readonly zombieSeat?: Seat;
  /** The token of the first sale after the zombie's pause (the lowest of the 201s). */
  readonly nextToken?: string;
}

/** The zombie's customer name, by which its seat is found. */
export const ZOMBIE = 'zombie';

const codeOf = (answer: HttpResult): unknown => (answer.body as { code?: unknown } | undefined)?.code;
const isStale = (answer: HttpResult): boolean => answer.status === 409 && codeOf(answer) === 'STALE_FENCING_TOKEN';

/** Counts from PostgreSQL's rows, not only the answers: a write can land and still be answered with an error. */
export function summarizeZombie(run: ZombieRun): ZombieSummary {
  const holders = new Set(run.seats.flatMap((seat) => (seat.customer === null ? [] : [seat.customer])));
  const sold = run.sales.flatMap((a) => (a.status === 201 ? [a.body as SeatSale] : []));
  const confirmed = sold.map((sale) => sale.customer);
  const tokens = sold.map((sale) => BigInt(sale.fencingToken)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const zombieSeat = run.seats.find((seat) => seat.customer === ZOMBIE);
  const zombie = isStale(run.zombie) ? 'refused' : zombieSeat ? 'landed' : 'failed';
  return {
    endpoint: run.endpoint,
    sales: run.sales.length + 1,
    landed: confirmed.length + (zombieSeat ? 1 : 0),
    refused: [run.zombie, ...run.sales].filter(isStale).length,
    sold: holders.size,
    lost: confirmed.filter((customer) => !holders.has(customer)).length,
    failed: run.sales.length - confirmed.length,
    zombie,
    zombieAnswer: [run.zombie.status, codeOf(run.zombie) ?? JSON.stringify(run.zombie.body)].join(' '),
    zombieSeat,
    nextToken: tokens[0]?.toString(),
  };
}

export function zombieTable(summaries: readonly ZombieSummary[]): string {
  return formatTable(
    summaries.map((s) => ({
      write: s.endpoint,
      sales: String(s.sales),
      'writes landed': String(s.landed),
      'writes refused (409)': String(s.refused),
      'seats sold': String(s.sold),
      'sales lost': String(s.lost),
    })),
  );
}

/** The verdict on the fenced round: the zombie refused by PostgreSQL, nothing else refused, nothing lost. */
export function fencedVerdict(s: ZombieSummary): { ok: boolean; text: string } {
  const ok = s.zombie === 'refused' && s.refused === 1 && s.lost === 0 && s.failed === 0;
  if (ok)
    return {
      ok,
      text: `fenced: PostgreSQL refused the zombie's write (${s.zombieAnswer}): a newer holder had written; ${s.landed} sales landed, ${s.sold} seats sold, none lost.`,
    };
  return {
    ok,
    text: `FAILED: fenced: the zombie's write ${s.zombie} (answered ${s.zombieAnswer}); ${s.refused} refused, ${s.failed} other sales failed, ${s.lost} sales lost.`,
  };
}

/** What the unfenced control did: its zombie's write lands over a newer sale. */
export function unfencedVerdict(s: ZombieSummary): string {
  const seat = s.zombieSeat;
  if (s.zombie !== 'landed' || !seat)
    return `unfenced (control): the zombie's write ${s.zombie} this time (answered ${s.zombieAnswer}).`;
  return `unfenced (control): the zombie's write landed over a newer holder's sale: seat ${seat.seat} is the zombie's (token ${seat.fencingToken}; the next holder's was ${s.nextToken}), ${s.lost} sale${s.lost === 1 ? '' : 's'} confirmed with 201 lost (the customer holds no seat); the zombie was answered ${s.zombieAnswer}, after its write.`;
}
