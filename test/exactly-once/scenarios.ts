// The three scenarios, run against each shared store by redis.test.ts and postgres.test.ts.
import { expect } from 'vitest';
import { type createRecords, deliver, newDeliveryId, pool, signedDelivery, sleep, type ReceiverProcess } from './harness';

type Records = Awaited<ReturnType<typeof createRecords>>;
const isOk = (status: number) => status >= 200 && status < 300;

/**
 * `count` deliveries, each posted 3 times at once to 3 different processes, each copy retried on any
 * non-2xx; the handler fails on attempt 1 of a random 20%. Every delivery must be handled exactly
 * once, and no copy may get a 2xx before the handler's run is recorded.
 */
export async function exactlyOnceUnderConcurrency(receivers: ReceiverProcess[], records: Records, count = 1_000) {
  const ports = () => receivers.map((r) => r.port);
  const ids = Array.from({ length: count }, newDeliveryId);
  const failFirst = new Set(ids.filter(() => Math.random() < 0.2));
  const statuses = new Map<number, number>();
  const premature: string[] = [];
  await pool(ids, 50, async (id, index) => {
    const delivery = signedDelivery(id, { failFirst: failFirst.has(id), note: 'Grüße — ✓' });
    await Promise.all(
      [0, 1, 2].map((copy) =>
        deliver(ports, index + copy, delivery, async (status) => {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          // 2xx means "durably done": the run must already be in the table.
          if (isOk(status) && (await records.runsOf(id)) < 1) premature.push(id);
        }),
      ),
    );
  });

  const runs = await records.of(ids);
  expect(premature).toEqual([]);
  expect(runs.size).toBe(count);
  const twice = [...runs.values()].filter((r) => r.runs !== 1);
  if (twice.length > 0) {
    const about = new Set(twice.map((r) => (r as { delivery_id?: string }).delivery_id));
    const lines = receivers.flatMap((r) => r.lines.filter((l) => about.has(l.deliveryId as string) || about.has(l.started as string)));
    console.error('runs twice:', JSON.stringify(twice), '\nreceiver lines:', JSON.stringify(lines));
  }
  expect(twice).toEqual([]);
  expect(ids.every((id) => runs.has(id))).toBe(true);
  // A failing first attempt answers 500 once and the next attempt (store attempt 2) succeeds.
  expect(statuses.get(500) ?? 0).toBe(failFirst.size);
  expect([...failFirst].every((id) => runs.get(id)!.attempt === 2)).toBe(true);
  expect([...statuses.keys()].sort()).toEqual([200, 409, 500].filter((s) => statuses.has(s)));
  return { statuses, failFirst: failFirst.size };
}

/**
 * A process is SIGKILLed while its handler runs: the lease stays until it expires (other processes
 * answer 409 meanwhile), then the next attempt runs the handler and the delivery completes once.
 */
export async function crashMidHandler(victim: ReceiverProcess, survivors: ReceiverProcess[], records: Records) {
  const id = newDeliveryId();
  const delivery = signedDelivery(id, { hangFirst: true });
  let early: string | undefined;
  void fetch(`http://127.0.0.1:${victim.port}/webhooks`, { method: 'POST', body: delivery.body, headers: delivery.headers }).then(
    async (response) => {
      early = `${response.status} ${await response.text()}`;
    },
    () => {},
  );
  await victim
    .waitForLine((line) => line.started === id)
    .catch((error: Error) => {
      throw new Error(`${error.message}; the victim answered: ${early ?? 'nothing yet'}`);
    });
  victim.child.kill('SIGKILL');
  const statuses: number[] = [];
  await deliver(
    () => survivors.map((r) => r.port),
    0,
    delivery,
    (status) => void statuses.push(status),
  );
  expect(statuses[0]).toBe(409); // the dead process's lease was still live
  expect(statuses.at(-1)).toBe(200);
  expect((await records.of([id])).get(id)).toMatchObject({ delivery_id: id, runs: 1, attempt: 2 });
}

/**
 * The store goes away mid-run: claims answer 503 and no handler runs while it is away; once it is
 * back, every delivery completes exactly once. One sender per delivery, as the service sends it, a
 * new delivery every few milliseconds. The proof that no handler runs: deliveries first sent while
 * the store is away have no recorded run when it comes back (a timing-free check).
 */
export async function storeOutage(
  receivers: ReceiverProcess[],
  records: Records,
  breakStore: () => Promise<void>,
  restoreStore: () => Promise<void>,
  count = 300,
) {
  const ports = () => receivers.map((r) => r.port);
  const ids = Array.from({ length: count }, newDeliveryId);
  let succeeded = 0;
  // Cast, so TypeScript does not narrow it to 'before': runOutage() changes it while the loop awaits.
  let phase = 'before' as 'before' | 'breaking' | 'away' | 'back';
  const sentWhileAway: string[] = [];
  const awayStatuses = new Map<number, number>();
  let outage: Promise<void> | undefined;
  const runOutage = async () => {
    phase = 'breaking';
    await breakStore();
    phase = 'away';
    await sleep(800);
    // Nothing sent while the store was away has run, however slow the machine is.
    expect(sentWhileAway.length).toBeGreaterThan(5);
    expect(await records.count(sentWhileAway)).toBe(0);
    phase = 'back';
    await restoreStore();
  };
  const premature: string[] = [];
  const sends: Promise<void>[] = [];
  for (const [index, id] of ids.entries()) {
    if (phase === 'away') sentWhileAway.push(id);
    const away = phase === 'away';
    const delivery = signedDelivery(id, { n: index });
    sends.push(
      deliver(ports, index, delivery, async (status) => {
        if (away && phase === 'away') awayStatuses.set(status, (awayStatuses.get(status) ?? 0) + 1);
        if (isOk(status)) {
          if ((await records.runsOf(id)) < 1) premature.push(id);
          if (++succeeded === Math.floor(count / 3)) outage = runOutage();
        }
      }),
    );
    await sleep(8); // a steady stream, so the outage lands mid-run
  }
  await Promise.all(sends);
  await outage;
  expect(phase).toBe('back');
  // Deliveries first sent while the store was away were answered 503 until it came back.
  expect([...awayStatuses.keys()]).toEqual([503]);
  const runs = await records.of(ids);
  expect(premature).toEqual([]);
  expect(runs.size).toBe(count);
  expect([...runs.values()].filter((r) => r.runs !== 1)).toEqual([]);
  return { answered503WhileAway: awayStatuses.get(503) };
}
