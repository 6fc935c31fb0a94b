import { packageBuild } from '../../tsup.config.base';

// Two entries: the whole package, and `kit` (everything but the vitest-based conformance suite).
export default packageBuild({ entry: ['src/index.ts', 'src/kit.ts'] });
