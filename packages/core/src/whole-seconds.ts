/**
 * A wait's delay in whole seconds, for a queue that counts delays in seconds (SQS's `DelaySeconds`,
 * Cloudflare Queues' `delaySeconds`): rounded down or up at random, in proportion to the fraction, so
 * a 1.3 s wait is 1 s seven times in ten and 2 s three times.
 *
 * Why not round up: a worker's wait for a busy resource carries jitter (0.5 to 1.5 times its backoff)
 * so that jobs that collided once come back apart. Rounded up, every wait under a second becomes the
 * same second and the colliding jobs come back together, collide again and back off further each time;
 * 20 jobs of one resource on SQS took over 30 s that way. Rounded at random, the mean is the wait asked
 * for and the spread survives.
 *
 * @example
 * message.retry({ delaySeconds: waitInWholeSeconds(result.delayMs) });
 */
export function waitInWholeSeconds(delayMs: number, random: () => number = Math.random): number {
  const seconds = Math.max(0, delayMs) / 1000;
  const whole = Math.floor(seconds);
  return random() < seconds - whole ? whole + 1 : whole;
}
