import { describe, expect, it } from 'vitest';
import { describeAttemptError, networkErrorOf } from './attempt-answer';

// The reason an attempt got no answer, from the shapes fetch's failures come in on Node 20, 22 and 24.
describe('networkErrorOf', () => {
  it('reads the socket error inside undici\'s "fetch failed"', () => {
    const error = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), { code: 'ECONNREFUSED' }),
    });
    expect(networkErrorOf(error)).toEqual({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:3000' });
  });

  it("takes the addresses from the parts of happy eyeballs' AggregateError, whose own message is empty", () => {
    const parts = [new Error('connect ECONNREFUSED ::1:3000'), new Error('connect ECONNREFUSED 127.0.0.1:3000')];
    const error = new TypeError('fetch failed', { cause: Object.assign(new AggregateError(parts, ''), { code: 'ECONNREFUSED' }) });
    expect(networkErrorOf(error)).toEqual({
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED ::1:3000; connect ECONNREFUSED 127.0.0.1:3000',
    });
  });

  it('names a port fetch refuses, and keeps any other cause or error in its own words', () => {
    expect(networkErrorOf(new TypeError('fetch failed', { cause: new Error('bad port') }))).toEqual({
      code: 'BAD_PORT',
      message: 'bad port',
    });
    expect(networkErrorOf(new TypeError('fetch failed', { cause: new Error('something odd') }))).toEqual({
      code: 'NETWORK_ERROR',
      message: 'something odd',
    });
    expect(networkErrorOf(new Error('plain'))).toEqual({ code: 'NETWORK_ERROR', message: 'plain' });
  });
});

describe('describeAttemptError', () => {
  it('says what the code usually means, without repeating a code the message has', () => {
    expect(describeAttemptError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:3000' })).toBe(
      'connect ECONNREFUSED 127.0.0.1:3000 (nothing is listening there: is the app running, on that port?)',
    );
    expect(describeAttemptError({ code: 'UND_ERR_SOCKET', message: 'other side closed' })).toBe(
      'UND_ERR_SOCKET: other side closed (the connection closed before an answer came: did the app crash or close it?)',
    );
    expect(describeAttemptError({ code: 'TIMEOUT', message: 'no complete answer within 30000 ms' })).toMatch(
      /^no complete answer within 30000 ms \(the service counts it as failed and retries/,
    );
    expect(describeAttemptError({ code: 'EWHATEVER', message: 'odd' })).toBe('EWHATEVER: odd');
  });
});
