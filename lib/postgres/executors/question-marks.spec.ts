import { InvalidOptionError } from '../../core/errors/errors';
import { toQuestionMarks } from './question-marks';

describe('toQuestionMarks: PostgreSQL $n placeholders in Knex', () => {
  it.each([
    ['a placeholder each', 'SELECT $1, $2', [1, 2], 'SELECT ?, ?', [1, 2]],
    ['out of order, and used twice', 'SELECT $2 + $1 + $2', ['a', 'b'], 'SELECT ? + ? + ?', ['b', 'a', 'b']],
    ['$10 is the tenth', 'SELECT $10', [...Array(9).fill(0), 'ten'], 'SELECT ?', ['ten']],
    ['a cast after it', 'VALUES ($1, $2::bigint)', ['r', '7'], 'VALUES (?, ?::bigint)', ['r', '7']],
    ["in a literal: not one ('' inside)", "SELECT 'it''s $1', $1", [5], "SELECT 'it''s $1', ?", [5]],
    ["in an E'' literal with \\' inside", "SELECT E'a\\'$1', $1", [5], "SELECT E'a\\'$1', ?", [5]],
    ['in a quoted name', 'SELECT 1 AS "$1", $1', [5], 'SELECT 1 AS "$1", ?', [5]],
    ['in dollar quotes', 'SELECT $$ $1 $$, $q$ $1 $q$, $1', [5], 'SELECT $$ $1 $$, $q$ $1 $q$, ?', [5]],
    ['in comments', 'SELECT /* $1 */ $1 -- $2', [5], 'SELECT /* $1 */ ? -- $2', [5]],
    ['part of a name', 'SELECT x$1 FROM t$2 WHERE a = $1', [5], 'SELECT x$1 FROM t$2 WHERE a = ?', [5]],
    [
      'a ? of the SQL: escaped, also in a literal',
      "SELECT j ? 'k', '?' WHERE a = $1",
      [5],
      "SELECT j \\? 'k', '\\?' WHERE a = ?",
      [5],
    ],
    ['none', 'SELECT 1', [], 'SELECT 1', []],
  ])('%s', (_, text, values, sql, bindings) => {
    expect(toQuestionMarks(text, values)).toEqual({ sql, bindings });
  });

  it.each([
    ['a $n without its value', 'SELECT $1, $2', [1], 'values'],
    ['$0', 'SELECT $0', [1], 'values'],
    ['a backslash before a ?', "SELECT E'\\?'", [], 'text'],
    ['a backslash before a ? outside literals', 'SELECT \\?', [], 'text'],
  ])('refuses %s', (_, text, values, option) => {
    expect(() => toQuestionMarks(text, values)).toThrow(InvalidOptionError);
    expect(() => toQuestionMarks(text, values)).toThrow(expect.objectContaining({ option }));
  });
});
