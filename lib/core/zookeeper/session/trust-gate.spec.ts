import { TrustGate } from './trust-gate.js';

// A lock handle subscribes as it is granted. A grant whose reply comes back while the
// session is already distrusted (at risk) must be lost at once: nothing will tell it later.
describe('TrustGate', () => {
  it('tells every subscriber once, on distrust', () => {
    const gate = new TrustGate();
    const heard: Error[] = [];
    gate.subscribe((reason) => heard.push(reason));
    const reason = new Error('at risk');
    gate.distrust(reason);
    gate.distrust(new Error('again'));
    expect(heard).toEqual([reason]);
    expect(gate.trusted).toBe(false);
  });

  it('tells a listener that subscribes while distrusted at once, and only once (later losses do not reach it again)', () => {
    const gate = new TrustGate();
    const reason = new Error('at risk');
    gate.distrust(reason);
    const heard: Error[] = [];
    const unsubscribe = gate.subscribe((r) => heard.push(r));
    expect(heard).toEqual([reason]);
    unsubscribe();
    gate.restore();
    gate.distrust(new Error('lost later'));
    expect(heard).toEqual([reason]);
  });

  it('after restore(), earlier subscribers stay told and new ones wait for the next distrust', () => {
    const gate = new TrustGate();
    const early: Error[] = [];
    gate.subscribe((r) => early.push(r));
    gate.distrust(new Error('first'));
    gate.restore();
    expect(gate.trusted).toBe(true);
    const late: Error[] = [];
    gate.subscribe((r) => late.push(r));
    expect(late).toEqual([]);
    const second = new Error('second');
    gate.distrust(second);
    expect({ early: early.map((e) => e.message), late }).toEqual({ early: ['first'], late: [second] });
  });

  it('an unsubscribed listener is not told', () => {
    const gate = new TrustGate();
    const heard: Error[] = [];
    gate.subscribe((r) => heard.push(r))();
    gate.distrust(new Error('at risk'));
    expect(heard).toEqual([]);
  });
});
