import { createHash } from 'node:crypto';
import { inspect } from 'node:util';

import * as zookeeper from 'node-zookeeper-client';

import { InvalidOptionError } from '../../errors/errors.js';

/** ZooKeeper digest credentials, as given in the options. */
export interface ZkDigestCredentials {
  readonly username: string;
  readonly password: string;
}

const REDACTED = '[redacted]';

/**
 * Digest credentials for a session and the ACL they put on every node the library
 * creates: everything for these credentials, read for anyone. ZooKeeper checks a delete
 * against the parent's ACL, so lock directories and the root get it too: a client without
 * the credentials can list and read who holds a lock, but not delete, create, or change a
 * lock node. The password never leaves this object except to the ZooKeeper client: it is
 * redacted from JSON, `util.inspect` and string forms.
 */
export class ZkCredentials {
  readonly username: string;
  readonly #password: string;

  private constructor(username: string, password: string) {
    this.username = username;
    this.#password = password;
  }

  /** Validates `credentials` (undefined means no authentication). */
  static from(credentials: unknown): ZkCredentials | undefined {
    if (credentials === undefined) return undefined;
    const { username, password } = (credentials ?? {}) as Partial<ZkDigestCredentials>;
    if (typeof username !== 'string' || username === '' || username.includes(':')) {
      throw new InvalidOptionError('credentials.username', username, 'a non-empty string without ":"');
    }
    if (typeof password !== 'string' || password === '') {
      throw new InvalidOptionError('credentials.password', REDACTED, 'a non-empty string');
    }
    return new ZkCredentials(username, password);
  }

  /** What `addAuthInfo('digest', …)` sends. */
  authPayload(): Buffer {
    return Buffer.from(`${this.username}:${this.#password}`, 'utf8');
  }

  /** The ACL for nodes the library creates. */
  acl(): zookeeper.ACL[] {
    const digest = createHash('sha1').update(`${this.username}:${this.#password}`).digest('base64');
    return [
      new zookeeper.ACL(zookeeper.Permission.ALL, new zookeeper.Id('digest', `${this.username}:${digest}`)),
      new zookeeper.ACL(zookeeper.Permission.READ, new zookeeper.Id('world', 'anyone')),
    ];
  }

  toJSON(): object {
    return { username: this.username, password: REDACTED };
  }

  toString(): string {
    return `ZkCredentials(${this.username})`;
  }

  [inspect.custom](): object {
    return this.toJSON();
  }
}
