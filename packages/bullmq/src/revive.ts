import type { Job, Queue } from 'bullmq';

/**
 * Readies a dead letter for a fresh start, only while it is still in the failed set (1) or not (0):
 * drops its stalled count (BullMQ's retry resets the tries made and started, not this one, so a job
 * dead-lettered for stalling would fail again at its first stall) and, when ARGV[2] is given, writes
 * the new payload (a service replay brings the delivery again; it also mends a corrupt job).
 * KEYS: the failed set, the job hash. ARGV: the jobId, the payload (optional).
 */
const READY_DEAD_LETTER = `if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('HDEL', KEYS[2], 'stc')
if ARGV[2] then redis.call('HSET', KEYS[2], 'data', ARGV[2]) end
return 1`;

/**
 * Moves a dead letter back to the wait list with a fresh set of tries. False when the job is not
 * (or no longer) in the failed set: of two concurrent calls, one wins and the other answers false.
 * `data` replaces the stored payload (a revival by enqueue); `job` saves a fetch when the caller
 * already holds it.
 */
export async function retryDeadLetter(queue: Queue, jobId: string, options: { data?: string; job?: Job } = {}): Promise<boolean> {
  const client = await queue.backend.client;
  const args = [READY_DEAD_LETTER, 2, queue.keys.failed as string, queue.toKey(jobId), jobId];
  if (options.data !== undefined) args.push(options.data);
  if ((await client.runCommand('eval', args)) !== 1) return false;
  const job = options.job ?? (await queue.getJob(jobId));
  if (job === undefined || job === null) return false;
  try {
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  } catch (error) {
    // Another replay (or a removal) got there first: the job is no longer in the failed set.
    if (!(await job.isFailed().catch(() => false))) return false;
    throw error;
  }
}
