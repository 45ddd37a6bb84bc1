import { InvalidOptionError } from '../../core/errors/errors.js';
import { fenceMessages } from '../../core/errors/messages.js';

/**
 * What PostgreSQL reads as one piece, in the order tried: comments, string literals (E'…'
 * with backslash escapes, '…', $tag$…$tag$), quoted identifiers, words (a `$` inside one,
 * as in `x$1`, is part of the name), then a numbered placeholder `$n`, a `?`, a backslash.
 */
const PIECES =
  /(--[^\n]*|\/\*[\s\S]*?\*\/|\b[eE]'(?:[^'\\]|\\[\s\S]|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|\$([A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$[\s\S]*?\$\2\$|[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*)|\$(\d+)|(\\(?=\?))|\?/g;

/**
 * `text` in Knex's placeholders: each `$n` that PostgreSQL would read as a parameter
 * (not one inside a literal, a quoted name, a comment or a name like `x$1`) becomes a `?`,
 * and the bindings list `values[n - 1]` in the order of the `?`s (a `$2` used twice binds
 * twice). Every `?` of the text itself (a jsonb operator, one inside a literal) is escaped
 * as `\?`, which Knex sends as a `?`. A backslash right before a `?` cannot pass through
 * Knex unchanged, and a `$n` without its value would fail on the server: both refused.
 */
export function toQuestionMarks(text: string, values: readonly unknown[]): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const sql = text.replace(PIECES, (piece: string, kept?: string, _tag?: string, n?: string, backslash?: string) => {
    if (kept !== undefined) {
      if (/\\\?/.test(kept)) throw new InvalidOptionError('text', text, fenceMessages.knexBackslash);
      return kept.replace(/\?/g, '\\?');
    }
    if (backslash !== undefined) throw new InvalidOptionError('text', text, fenceMessages.knexBackslash);
    if (n === undefined) return '\\?';
    const index = Number(n) - 1;
    if (!(index >= 0 && index < values.length))
      throw new InvalidOptionError('values', values, fenceMessages.knexParameter(piece));
    bindings.push(values[index]);
    return '?';
  });
  return { sql, bindings };
}
