import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { PARTNER_MAX_CONCURRENT } from '../src/payments/payment.model.js';

export interface PartnerStubSettings {
  /** Charges in flight it accepts at once; one more is refused with 429. Default: the app's contract. */
  readonly maxConcurrent?: number;
  /** How long an accepted charge takes. Default 25 ms. */
  readonly latencyMs?: number;
  /** Default 0: a free port. */
  readonly port?: number;
}

/** What the partner saw since it started (or since `reset()`). */
export interface PartnerStats {
  /** Charges received. */
  readonly calls: number;
  readonly charged: number;
  /** Charges refused with 429 because more than `maxConcurrent` were in flight. */
  readonly overloads: number;
  /** The most charges in flight at once, counted over every caller. */
  readonly peak: number;
  readonly maxConcurrent: number;
}

/**
 * A payment partner that, like many, admits a fixed number of concurrent calls per
 * merchant: it counts the charges in flight from all the app's instances together and
 * refuses one above `maxConcurrent` with 429. One HTTP server (in the demo's or the test's
 * process), so its count is exact. `POST /charges` charges; `GET /stats` reports.
 */
export class PaymentPartnerStub {
  readonly maxConcurrent: number;
  private readonly latencyMs: number;
  private inFlight = 0;
  private counts = { calls: 0, charged: 0, overloads: 0, peak: 0 };

  private constructor(
    private readonly server: Server,
    settings: PartnerStubSettings,
  ) {
    this.maxConcurrent = settings.maxConcurrent ?? PARTNER_MAX_CONCURRENT;
    this.latencyMs = settings.latencyMs ?? 25;
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      this.handle(request, response).catch((error: Error) => reply(response, 400, { error: error.message }));
    });
  }

  static async start(settings: PartnerStubSettings = {}): Promise<PaymentPartnerStub> {
    const stub = new PaymentPartnerStub(createServer(), settings);
    stub.server.listen(settings.port ?? 0, '127.0.0.1');
    await once(stub.server, 'listening');
    return stub;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stats(): PartnerStats {
    return { ...this.counts, maxConcurrent: this.maxConcurrent };
  }

  /** Starts counting afresh (between two runs of a demo). */
  reset(): void {
    this.counts = { calls: 0, charged: 0, overloads: 0, peak: 0 };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections(); // the instances' keep-alive connections
    this.server.close();
    await once(this.server, 'close');
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method === 'GET' && request.url === '/stats') return reply(response, 200, this.stats());
    if (request.method !== 'POST' || request.url !== '/charges')
      return reply(response, 404, { error: 'POST /charges or GET /stats' });
    const { customer = 'unknown' } = JSON.parse((await bodyOf(request)) || '{}') as { customer?: string };
    // In flight from here to the answer: the caller holds its lease longer than that.
    this.counts.calls++;
    this.counts.peak = Math.max(this.counts.peak, ++this.inFlight);
    const overloaded = this.inFlight > this.maxConcurrent;
    if (!overloaded) await sleep(this.latencyMs);
    this.inFlight--; // before answering: the caller may release its lease as soon as it reads the answer
    if (overloaded) {
      this.counts.overloads++;
      return reply(response, 429, { error: `more than ${this.maxConcurrent} charges in flight` });
    }
    reply(response, 201, { chargeId: `ch_${++this.counts.charged}`, customer });
  }
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request.setEncoding('utf8')) text += chunk;
  return text;
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

// Run by hand: `node -r ./scripts/ts-register.cjs sample-app/demo/payment-partner.stub.ts`
// (PARTNER_PORT, default a free port), then give the instances PARTNER_URL.
if (require.main === module) {
  void PaymentPartnerStub.start({ port: Number(process.env.PARTNER_PORT ?? 0) }).then((stub) =>
    process.stdout.write(`partner ${stub.url}\n`),
  );
}
