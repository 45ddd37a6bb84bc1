import { createInterface } from 'node:readline/promises';

import type { ZkLockBackend } from '../core/zookeeper/zk-lock-backend.js';
import type { CliRequest } from './args.js';
import { historyText, json, listingJson, membersText, queueText } from './output.js';
import { partitions } from './partitions.js';
import { revoke } from './revoke.js';
import { jobRecordName, readJobState } from '../core/port/job-record.js';

/** What a command prints, and its exit code. */
export interface CliResult {
  readonly out: string;
  readonly code: number;
}

/** One lock's listing by its exact name (`locks()` matches a prefix). */
async function listingOf(backend: ZkLockBackend, name: string) {
  return (await backend.locks(name)).find((listing) => listing.name === name);
}

export async function runCommand(
  backend: ZkLockBackend,
  request: CliRequest,
  ask: (question: string) => Promise<boolean>,
): Promise<CliResult> {
  const { command, target, json: asJson } = request;
  switch (command) {
    case 'list': {
      const listings = await backend.locks(target ?? '');
      if (asJson) return { out: json(listings.map(listingJson)), code: 0 };
      return {
        out:
          listings.length === 0
            ? `No locks under ${request.root}${target ? ` starting with "${target}"` : ''}.`
            : listings.map((l) => queueText(l)).join('\n\n'),
        code: 0,
      };
    }
    case 'show': {
      const listing = await listingOf(backend, target!);
      if (asJson) return { out: json(listing ? listingJson(listing) : null), code: 0 };
      return {
        out: listing ? queueText(listing) : `"${target}" is free: no holder, no waiter, no run recorded.`,
        code: 0,
      };
    }
    case 'history': {
      const state = readJobState(await backend.readRecord(jobRecordName(target!)));
      if (!asJson) return { out: historyText(target!, state), code: 0 };
      const at = (ms: number): string => new Date(ms).toISOString();
      const runs = state.runs.map((run) => ({ ...run, startedAt: at(run.startedAt), endedAt: at(run.endedAt) }));
      return {
        out: json({ name: target, keptUntil: state.holdUntil === null ? null : at(state.holdUntil), runs }),
        code: 0,
      };
    }
    case 'members': {
      const members = await backend.groupMembers(target!);
      return { out: asJson ? json({ group: target, members }) : membersText(target!, members), code: 0 };
    }
    case 'partitions':
      return partitions(backend, target!, asJson);
    case 'revoke':
      return revoke(backend, target!, asJson);
    case 'release': {
      const listing = await listingOf(backend, target!);
      const holders = listing?.holders ?? [];
      if (holders.length === 0)
        return { out: asJson ? json({ name: target, deleted: [] }) : `Nobody holds "${target}".`, code: 1 };
      const who = holders.map((h) => `${h.identity ?? '?'} (${h.sessionId ?? 'session ?'})`).join(', ');
      const question = `Delete the node(s) of ${who}, holding "${target}"? The next waiter gets the lock at once, and a holder still running is NOT told. [y/N] `;
      if (!request.yes && !(await ask(question))) return { out: 'Not confirmed: nothing deleted.', code: 4 };
      const deleted = await backend.forceRelease(target!);
      return {
        out: asJson
          ? json({ name: target, deleted })
          : `Deleted ${deleted.length} holder node(s) of "${target}": ${deleted.join(', ') || 'none (released meanwhile)'}.`,
        code: 0,
      };
    }
    default:
      return { out: '', code: 0 };
  }
}

/** Asks on the terminal; without one (a pipe, a script), the answer is no: pass --yes. */
export async function askOnTerminal(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}
