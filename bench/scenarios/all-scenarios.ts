import { capacityScenario } from './capacity.scenario.js';
import { drainScenario } from './drain.scenario.js';
import { handoffScenario } from './handoff.scenario.js';
import { heldLocksScenario } from './held-locks.scenario.js';
import { idleScenario } from './idle.scenario.js';
import { leasesScenario } from './leases.scenario.js';
import { manyLocksScenario } from './many-locks.scenario.js';
import { multiLockScenario } from './multi-lock.scenario.js';
import { readHeavyScenario } from './read-heavy.scenario.js';
import { reentrantScenario } from './reentrant.scenario.js';
import type { Scenario } from './scenario.js';
import { sessionsScenario } from './sessions.scenario.js';
import { uncontendedScenario } from './uncontended.scenario.js';

/** Every scenario, by number. */
export const SCENARIOS: readonly Scenario<any>[] = [
  uncontendedScenario,
  handoffScenario,
  drainScenario,
  manyLocksScenario,
  reentrantScenario,
  readHeavyScenario,
  multiLockScenario,
  leasesScenario,
  idleScenario,
  capacityScenario,
  sessionsScenario,
  heldLocksScenario,
];
