import { expect, it } from 'vitest';
import * as kit from './kit';

// The public surface is pinned (docs/ARCHITECTURE.md, "Conventions"): adding or removing an export is a deliberate change here.
it('exports exactly these names from @hookline/testing/kit', () => {
  expect(Object.keys(kit).sort()).toEqual([
    'FIXTURE_SECRET',
    'HEADER_NAMES',
    'RAW_FIXTURES',
    'RETRY_SCHEDULE_MS',
    'SERVICE_TIMEOUT_MS',
    'createDelivery',
    'createId',
    'createManualClock',
    'createPhoneNumber',
    'createServiceSimulator',
    'createSignedPayload',
    'createSignedRequest',
    'fixtures',
    'formatAttemptTable',
    'formatDuration',
    'formatSummary',
    'peekEnvelope',
    'serializeDelivery',
    'sign',
    'startServiceEmulator',
    'summarise',
    'systemClock',
    'toBytes',
  ]);
});
