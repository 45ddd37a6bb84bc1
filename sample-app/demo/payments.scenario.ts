import { loadAll, pace, type DemoContext, type ScenarioReport } from './demo.scenario.js';
import type { PaymentPartnerStub } from './payment-partner.stub.js';
import { paymentsTable, summarizePayments, type PaymentsSummary } from './payments.summary.js';

/**
 * Payments (`@WithLease('payment-partner', { maxLeases: 3 })`): charges round-robin over the
 * instances, more at once than the partner admits, through the leased endpoint and then
 * through the unlimited control. The partner counts what reaches it.
 */
export async function runPayments(context: DemoContext, partner: PaymentPartnerStub): Promise<ScenarioReport> {
  const charges = context.short ? 9 : 120;
  const leased = await pay(context, partner, charges, 'leased', '');
  const unlimited = await pay(context, partner, charges, 'unlimited', '/unlimited');
  const limit = partner.maxConcurrent;
  const ok = leased.failed === 0 && leased.partner.peak <= limit && leased.partner.overloads === 0;
  const lines = [
    ok
      ? `payments: ${leased.charged} charged, at most ${leased.partner.peak} at the partner at once (its limit is ${limit}), none refused.`
      : `FAILED: payments under the lease: ${leased.failed} not charged (e.g. ${leased.failure ?? '-'}); up to ${leased.partner.peak} at the partner at once, ${leased.partner.overloads} refused (limit ${limit}).`,
    unlimited.partner.overloads > 0
      ? `payments unlimited (control): up to ${unlimited.partner.peak} at the partner at once (its limit is ${limit}): ${unlimited.partner.overloads} refused with 429, ${unlimited.failed} customers answered 503.`
      : `payments unlimited (control): the partner refused nothing this time; at most ${unlimited.partner.peak} charges overlapped (run without --short for more load).`,
  ];
  return {
    title: `Payments (@WithLease, maxLeases ${limit}): ${charges} charges round-robin over the instances, ${pace(context, charges)}, to a partner that refuses more than ${limit} at once.`,
    table: paymentsTable([leased, unlimited]),
    lines,
    ok,
  };
}

async function pay(
  context: DemoContext,
  partner: PaymentPartnerStub,
  charges: number,
  endpoint: 'leased' | 'unlimited',
  path: string,
): Promise<PaymentsSummary> {
  partner.reset();
  const answers = await loadAll(context, `payments ${endpoint}`, charges, (i) => ({
    path: `/payments${path}`,
    body: { customer: `customer-${i + 1}`, amountCents: 4500 },
  }));
  return summarizePayments({
    endpoint: endpoint === 'leased' ? 'leased' : 'unlimited (control)',
    answers,
    partner: partner.stats(),
  });
}
