// @ts-check
/**
 * Jest's Node environment, which also fails a test file that leaves open anything that
 * keeps the process alive (a socket, a server, a child process; a timer still pending is
 * reported on stderr, not failed): every node, watch, timer and socket a test opens,
 * through the library or not, must be closed by the end of its file. Jest's `--detectOpenHandles` reports the same, but only in band
 * (one file at a time, which doubles the suite's time) and without failing the run.
 *
 * The resources alive when the file's environment is set up (the worker's own channel
 * to Jest) are the baseline; after the file's last hook, those beyond it get a moment to
 * finish closing (a socket's close is asynchronous), then the file fails, naming them.
 * To see where one was opened, run that file alone with `npx jest --detectOpenHandles <file>`.
 */
const { setTimeout: sleep } = require('node:timers/promises');
const { TestEnvironment } = require('jest-environment-node');

/** Resources that end on their own: reported, not failed (see `teardown`). */
const TIMERS = ['Timeout', 'Immediate'];

/** How long closing resources may take to go, after the file's last hook. */
const SETTLE_MS = 2000;

/** @returns {Map<string, number>} */
function activeResources() {
  const counts = new Map();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** @param {Map<string, number>} baseline @returns {string[]} */
function beyond(baseline) {
  const extra = [];
  for (const [type, count] of activeResources()) {
    const more = count - (baseline.get(type) ?? 0);
    if (more > 0) extra.push(`${more} × ${type}`);
  }
  return extra;
}

class OpenHandlesEnvironment extends TestEnvironment {
  /** @type {Map<string, number>} */
  baseline = new Map();

  /** @param {import('@jest/environment').JestEnvironmentConfig} config @param {import('@jest/environment').EnvironmentContext} context */
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    await super.setup();
    this.baseline = activeResources();
  }

  async teardown() {
    const until = Date.now() + SETTLE_MS;
    let left = beyond(this.baseline);
    while (left.length > 0 && Date.now() < until) {
      await sleep(25);
      left = beyond(this.baseline);
    }
    await super.teardown();
    const hint = `Close it in the file's hooks; run the file alone with --detectOpenHandles to see where it was opened.`;
    // A timer still pending is reported, as --detectOpenHandles does; anything else fails the file.
    const fatal = left.filter((what) => !TIMERS.some((timer) => what.endsWith(` ${timer}`)));
    if (fatal.length > 0)
      throw new Error(`${this.testPath} left open what keeps a process alive: ${left.join(', ')}. ${hint}`);
    if (left.length > 0) process.stderr.write(`${this.testPath} left a timer pending: ${left.join(', ')}. ${hint}\n`);
  }
}

module.exports = OpenHandlesEnvironment;
