// The job-row changes pg-boss has no API for. What they rely on, in pg-boss 10's own SQL:
// - its fetch counts a retry only for a row that was started before (`retry_count = CASE WHEN
//   started_on IS NOT NULL THEN retry_count + 1 …`), so a row put back with `started_on` NULL runs
//   again with the same retry_count: no try spent;
// - its maintenance archives a row that is still waiting (`state < 'active'`) once `keep_until` has
//   passed, and `keep_until` is set once, at send (`start_after` + the retention, 14 days by default).
//   A row put back to run later gets a `keep_until` at least as far past its new `start_after` as the
//   send gave it (`keep_until - created_on`), or an old dead letter, replayed, would be archived by
//   the next maintenance instead of run.

/** `keep_until` for a row due at `startAfter` (an SQL expression): never sooner than it was. */
function keepUntil(startAfter: string): string {
  return `GREATEST(keep_until, ${startAfter} + (keep_until - created_on))`;
}

/**
 * Puts an active job back in the queue, due in `$3` milliseconds, without spending a try; answers
 * its id, or no row when the job is not active (any more). `$1` the queue name, `$2` the job id.
 * `schema` is pg-boss's schema, quoted. A job that had failed a try before waits as `retry`.
 */
export function waitSql(schema: string): string {
  const startAfter = `now() + $3 * interval '1 millisecond'`;
  return `UPDATE ${schema}.job
             SET state = (CASE WHEN retry_count > 0 THEN 'retry' ELSE 'created' END)::${schema}.job_state,
                 started_on = NULL, start_after = ${startAfter}, keep_until = ${keepUntil(startAfter)}
           WHERE name = $1 AND id = $2 AND state = 'active'
       RETURNING id`;
}

/**
 * Starts failed jobs (dead letters) over: a fresh set of tries, due now, with the payload `data` (an
 * SQL parameter holding JSON text) when given. (pg-boss's own retry() gives a failed job one more try
 * only.) `schema` is pg-boss's schema, quoted; `$1` the queue name; `filter` narrows the rows (`AND id = $2`). Answers the ids restarted.
 */
export function restartSql(schema: string, filter: string, attempts: number, data?: string): string {
  return `UPDATE ${schema}.job
             SET state = 'created', retry_count = 0, retry_limit = ${attempts - 1}, started_on = NULL, completed_on = NULL,
                 start_after = now(), keep_until = ${keepUntil('now()')}, output = NULL${data === undefined ? '' : `, data = ${data}::jsonb`}
           WHERE name = $1 AND state = 'failed' ${filter}
       RETURNING id`;
}
