/** A uuid as Curator's "protection" writes it (UUID.randomUUID().toString()). */
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** Each `format/mode`'s node names, as Kazoo and Curator name theirs. */
export const NODE_NAME: Readonly<Record<string, RegExp>> = {
  'kazoo/write': /^[0-9a-f]{32}__lock__\d{10}$/,
  'kazoo/read': /^[0-9a-f]{32}__rlock__\d{10}$/,
  'curator-mutex/write': new RegExp(`^_c_${UUID}-lock-\\d{10}$`),
  'curator-rw/write': new RegExp(`^_c_${UUID}-__WRIT__\\d{10}$`),
  'curator-rw/read': new RegExp(`^_c_${UUID}-__READ__\\d{10}$`),
};

/** A kept hold's marker in a lock's directory (see lib/core/port/kept-hold.ts): ephemeral, or left persistent by a holder that closed. */
export const KEPT_HOLD_MARKER = /^kept-hold-[0-9a-f]{32}(-lock-!__WRIT__!__lock__-0000000000)?$/;

/** A directory's children without kept holds' markers: its lock nodes (and strangers). */
export const withoutMarkers = (children: readonly string[] | null): string[] =>
  (children ?? []).filter((child) => !KEPT_HOLD_MARKER.test(child));
