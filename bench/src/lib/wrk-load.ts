/**
 * Fresh signed deliveries for wrk: every request a new deliveryId (so a real claim and completion in a
 * store), signed here before the round, so that the load generator only sends. wrk's Lua reads the ids
 * and signatures from a file and builds each request from the body's two halves around the id.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_SECRET, benchDeliveryId, deliveryTemplate } from './payloads';
import { luaString, runWrk, type WrkResult } from './wrk';

/**
 * Deliveries signed per second of a round: above what any server answers on the machines this suite
 * has run on (under 40,000/s), so a round never runs out. One that does would repeat ids (duplicates,
 * not claims), so it fails instead.
 */
const DELIVERIES_PER_SECOND = 80_000;

function writeScript(dir: string, count: number, url: URL): string {
  const { before, after } = deliveryTemplate('message.inbound', 1024);
  const salt = randomBytes(4).toString('hex'); // no two rounds send the same id
  const lines: string[] = [];
  // Every id has the same length, so every body the same number of bytes.
  const bodyBytes = Buffer.byteLength(before + benchDeliveryId(0, salt) + after);
  for (let i = 0; i < count; i++) {
    const deliveryId = benchDeliveryId(i, salt);
    lines.push(
      `${deliveryId} ${createHmac('sha256', BENCH_SECRET)
        .update(before + deliveryId + after)
        .digest('hex')}`,
    );
  }
  const ids = join(dir, 'deliveries.txt');
  writeFileSync(ids, `${lines.join('\n')}\n`);
  const script = join(dir, 'fresh.lua');
  writeFileSync(
    script,
    `local before, after = ${luaString(before)}, ${luaString(after)}
local ids, signatures, count, threads = {}, {}, 0, {}
sent, total = 0, 0 -- globals, so that done() can read them from each thread
-- Read in init(), which only the sending thread runs, not the main one.
init = function()
  for line in io.lines(${luaString(ids)}) do
    count = count + 1
    ids[count], signatures[count] = line:match("(%S+) (%S+)")
  end
  total = count
end
-- The request written out, not built by wrk.format (a headers table walked and a table of lines
-- joined for every request): one concatenation, so wrk spends less of the CPU the servers share.
local head = ${luaString(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\ncontent-type: application/json\r\nx-service-event: message.inbound\r\ncontent-length: ${bodyBytes}\r\nx-service-delivery-id: `)}
request = function()
  sent = sent + 1
  local i = (sent - 1) % count + 1
  local id = ids[i]
  return head .. id .. "\\r\\nx-service-signature: " .. signatures[i] .. "\\r\\n\\r\\n" .. before .. id .. after
end
setup = function(thread)
  table.insert(threads, thread)
end
done = function()
  local fresh, built = 0, 0
  for _, thread in ipairs(threads) do
    fresh = fresh + thread:get("total")
    built = built + thread:get("sent")
  end
  io.write(string.format("fresh deliveries: %d, requests built: %d\\n", fresh, built))
end
`,
  );
  return script;
}

/** One wrk round of fresh 1 KB deliveries against `port`'s /webhooks; `beforeRun` is called once they are signed. */
export async function runFreshWrk(port: number, seconds: number, connections: number, beforeRun: () => void): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hookline-wrk-'));
  try {
    const url = new URL(`http://127.0.0.1:${port}/webhooks`);
    const script = writeScript(dir, Math.ceil(seconds * DELIVERIES_PER_SECOND), url);
    beforeRun();
    const result = await runWrk({ url: url.href, script, seconds, connections });
    const [, fresh, built] = /fresh deliveries: (\d+), requests built: (\d+)/.exec(result.output) ?? [];
    if (fresh === undefined || Number(built) > Number(fresh)) {
      throw new Error(`wrk sent more requests than there were fresh deliveries (${built} of ${fresh}): raise DELIVERIES_PER_SECOND`);
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
