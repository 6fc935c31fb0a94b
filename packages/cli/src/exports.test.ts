import { expect, it } from 'vitest';
import * as cli from './index';

// The public surface is pinned (docs/ARCHITECTURE.md, "Conventions").
it('exports exactly these names from @hookline/cli', () => {
  expect(Object.keys(cli).sort()).toEqual(['EXIT', 'diagnoseSignature', 'run']);
});
