/** The decorators whose misuse the Nest glue reports. */
export type Decorator = '@WithLock' | '@WithLease' | '@WhenLeader';

/** What each decorator names, and an example of one. */
const NAMES: Record<Decorator, string> = {
  '@WithLock': "a lock name: a non-empty string or a function of the method's arguments",
  '@WithLease': "a semaphore name: a non-empty string or a function of the method's arguments",
  '@WhenLeader': 'a leader group: a non-empty string such as "nightly-report"',
};

/** What the Nest glue's errors say (`WithLockUsageError`, `WhenLeaderUsageError`, `ZkLockModuleMissingError`), written once. */
export const nestMessages = {
  needsName: (decorator: Decorator, name: unknown): string =>
    `${decorator} needs ${NAMES[decorator]}, not ${typeof name === 'string' ? 'an empty string' : typeof name}.`,
  noSignal: (decorator: Decorator, call: string): string =>
    `${decorator} takes no signal option: a decorator cannot know which call to cancel. Use LockService.${call} with a signal instead.`,
  badOption: (decorator: Decorator, why: string): string => `${decorator}: ${why}`,
  notAMethod: (decorator: Decorator, method: string): string =>
    `${decorator} can only decorate a method, and ${method} is not one (a property, getter or setter). Put it on a method.`,
  generator: (decorator: Decorator, method: string): string =>
    `${decorator} cannot cover ${method}: it is a generator, whose body runs after the call returns, one step at a time. Lock inside it instead (LockService.withLock around the work of each step, or around collecting the results).`,
  streaming: (decorator: Decorator, method: string, kind: string): string =>
    `${decorator} cannot cover ${method}: it returned ${kind}, which is consumed after the method returned, when the lock is already released. Lock inside the producer instead (LockService.withLock around the work that fills it), or collect the values in the method and return them.`,
  keyFunctionThrew: (decorator: Decorator, method: string, error: unknown): string =>
    `the key function of ${decorator} on ${method} threw: ${(error as Error)?.message ?? String(error)}`,
  keyFunctionReturned: (decorator: Decorator, method: string, expected: string): string =>
    `the key function of ${decorator} on ${method} must return ${expected}`,
  moduleMissing: (decorator: Decorator, method: string, why: string): string =>
    `${decorator} on ${method} found no LockService to use: ${why}. Import ZkLockModule.forRoot({ connectionString }) ` +
    '(or forRootAsync) in your application module, and call the method on an instance Nest created, after the application has started. ' +
    'In a unit test, import ZkLockModule.forTesting(), or provide a mock beside the class ' +
    '({ provide: LockService, useValue: createLockServiceMock() }), or pass one to a constructor that keeps it in a field ' +
    '(new MyService(createLockServiceMock())).',
  /** Why a job cannot follow leadership (`LeaderJobError`). */
  leaderJob: {
    notCron: (method: string): string =>
      `@LeaderOnly on ${method}: it has no @Cron. Put @Cron(…, { name }) on it too, or use @WhenLeader for a method that is not a scheduled job.`,
    notRestartable: (method: string, kind: string): string =>
      `@LeaderOnly on ${method}: only @Cron jobs can follow leadership, and this is ${kind} (@nestjs/schedule keeps no way to restart one once cleared). ` +
      'Use @Cron with a seconds field instead (e.g. CronExpression.EVERY_10_SECONDS), or @WhenLeader on it (every instance then wakes each tick; only the leader runs it).',
    unnamed: (method: string): string =>
      `@LeaderOnly on ${method}: give its @Cron a name (@Cron(…, { name: 'report' })), by which the job is started and stopped in SchedulerRegistry.`,
    startsEverywhere: (method: string, option: string): string =>
      `@LeaderOnly on ${method}: @Cron's ${option} acts on every instance at start-up, leader or not. Remove it; the job starts when this instance gains leadership.`,
    unknownJob: (group: string, name: unknown): string =>
      `followLeadership("${group}") found no cron job named ${JSON.stringify(name)} in SchedulerRegistry. ` +
      'Add it first (schedulerRegistry.addCronJob(name, CronJob.from({ …, start: false }))), then follow it.',
  },
  /** Why no `LockService` was found (the `why` of `moduleMissing`). */
  noService: {
    noApplication: 'no application with ZkLockModule is running in this process',
    notProvided:
      'no running application provides its class with ZkLockModule (make it a provider or controller of a module that imports ZkLockModule, or call it from code that runs for one)',
    ambiguous:
      'several running applications provide its class, and this call runs for none of them (call it from a handler, a provider or a decorated method of one application)',
    mockWithoutWithLocks:
      'the LockService it found (a mock?) has no withLocks, which a key function returning several names needs',
    mockWithoutWithLease: 'the LockService it found (a mock?) has no withLease',
  },
} as const;

/**
 * What an HTTP or RPC caller is told of a lock error, by its `code`: what happened to the
 * request and whether a retry can help, in the caller's terms. Nothing of the service's
 * insides (lock names, the library's calls and options, ZooKeeper): the error's own message
 * says those, and goes to the log.
 */
const CALLER_MESSAGES: Readonly<Record<string, string>> = {
  LOCK_TIMEOUT: 'The resource this request needs is busy with another request. Retry later.',
  LOCK_ABORTED: 'The request stopped waiting for a resource it needs, which another request is using. Retry later.',
  LOCK_UPGRADE:
    'The request conflicts with itself over a resource it needs, so it was refused. Retrying it will not help.',
  LOCK_LOST:
    'The request lost its exclusive hold on a resource before it finished, so its work may be incomplete. Retry later.',
  CLIENT_CLOSED: 'This server instance is shutting down. Retry the request; another instance can take it.',
  LOCK_UNAVAILABLE: 'The service cannot coordinate access to the resource this request needs right now. Retry later.',
  STALE_FENCING_TOKEN:
    'Another request changed the resource after this one began, so its changes were refused and not saved. Retry the request.',
  FENCE_STORE: 'The service cannot reach the data this request needs right now. Retry later.',
};
const BY_STATUS: Readonly<Record<number, string>> = {
  423: CALLER_MESSAGES.LOCK_TIMEOUT,
  409: CALLER_MESSAGES.LOCK_UPGRADE,
  503: 'The service is unavailable right now. Retry later.',
};

/** The caller's message for a lock error of `code` answered with HTTP `status` (the same in RPC). */
export function callerMessage(code: string, status: number): string {
  return CALLER_MESSAGES[code] ?? BY_STATUS[status];
}

/** The log line of a lock error's answer: who was answered, with what, and the error's full message. */
export const answeredLine = (to: string, status: number, code: string, message: string): string =>
  `${to} answered ${status} (${code}): ${message}`;
