import type { Answer } from './concurrent.load.js';
import type { PartnerStats } from './payment-partner.stub.js';
import { firstFailure, formatTable, timingColumns, timingsOf } from './summary.table.js';

export interface PaymentsRun {
  readonly endpoint: string;
  readonly answers: readonly Answer[];
  /** What the partner counted during the run. */
  readonly partner: PartnerStats;
}

export interface PaymentsSummary {
  readonly endpoint: string;
  readonly requests: number;
  /** Charges confirmed to customers (201). */
  readonly charged: number;
  readonly failed: number;
  readonly failure?: string;
  readonly partner: PartnerStats;
  readonly waits: number[];
  readonly holds: number[];
}

export function summarizePayments(run: PaymentsRun): PaymentsSummary {
  const charged = run.answers.filter((a) => a.status === 201).length;
  return {
    endpoint: run.endpoint,
    requests: run.answers.length,
    charged,
    failed: run.answers.length - charged,
    failure: firstFailure(run.answers),
    partner: run.partner,
    ...timingsOf(run.answers),
  };
}

export function paymentsTable(summaries: readonly PaymentsSummary[]): string {
  return formatTable(
    summaries.map((s) => ({
      endpoint: s.endpoint,
      charges: String(s.requests),
      charged: String(s.charged),
      'not 201': String(s.failed),
      'partner peak/limit': `${s.partner.peak}/${s.partner.maxConcurrent}`,
      'partner 429s': String(s.partner.overloads),
      ...timingColumns(s),
    })),
  );
}
