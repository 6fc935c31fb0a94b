import { packageBuild } from '../../tsup.config.base';

// The adapter, and `local` (a Function URL stand-in on node:http for trying a function locally).
export default packageBuild({ entry: { index: 'src/index.ts', local: 'src/local.ts' } });
