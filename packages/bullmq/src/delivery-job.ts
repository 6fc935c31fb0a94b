// A job hash whose `data` is not JSON (written by hand, by another client, or cut short) makes
// BullMQ's Job.fromJSON throw. In a worker that happens right after the job was moved to active and
// locked, before any processor runs: the error only reaches the worker's 'error' event, nobody renews
// the lock, the stalled checker moves the job back to wait once it expires, and the next worker
// throws again, for ever (the stalled limit is checked by the processor step, which it never
// reaches). The same throw breaks listing the failed set and fetching the job. These classes build
// such a job with a marker instead of its data, so the worker can dead-letter it with a reason and
// the queue can list and replay it. BullMQ offers its `Job` getter for exactly this kind of subclass.
import { Job, type JobJson, type JobProgress, Queue, Worker } from 'bullmq';

/** What `Job.fromJSON` takes as its queue (BullMQ does not export the type by name). */
type JobQueue = Parameters<typeof Job.fromJSON>[0];

const UNREADABLE = Symbol('hookline.unreadableJobData');

/** Why the job's stored data could not be read (it is not JSON), or undefined for a readable job. */
export function unreadableData(job: Job): string | undefined {
  const data = job.data as { [UNREADABLE]?: string } | null | undefined;
  return typeof data === 'object' && data !== null ? data[UNREADABLE] : undefined;
}

/** A BullMQ `Job` that reads a job whose data is not JSON instead of throwing (see `unreadableData`). */
export class DeliveryJob<
  DataType = unknown,
  ReturnType = unknown,
  NameType extends string = string,
  ProgressType extends JobProgress = JobProgress,
> extends Job<DataType, ReturnType, NameType, ProgressType> {
  static override fromJSON<T = unknown, R = unknown, N extends string = string>(
    queue: JobQueue,
    json: JobJson,
    jobId?: string,
  ): Job<T, R, N> {
    try {
      return Job.fromJSON<T, R, N>(queue, json, jobId);
    } catch (error) {
      const job = Job.fromJSON<T, R, N>(queue, { ...json, data: '{}' }, jobId);
      const why = error instanceof Error ? error.message : String(error);
      job.data = { [UNREADABLE]: `its data is not JSON (${why})` } as T;
      return job;
    }
  }
}

/** BullMQ's `Queue`, reading jobs as `DeliveryJob`s: listing the failed set survives a corrupt job. */
export class DeliveryQueueClient extends Queue {
  protected override get Job(): typeof Job {
    return DeliveryJob;
  }
}

/** BullMQ's `Worker`, reading jobs as `DeliveryJob`s: a corrupt job reaches the processor. */
export class DeliveryWorker extends Worker {
  protected override get Job(): typeof Job {
    return DeliveryJob;
  }
}
