import { packageBuild } from '../../tsup.config.base';

// The root, `kit` (the same names under its older subpath) and `conformance` (the vitest-based suites).
export default packageBuild({ entry: { index: 'src/index.ts', kit: 'src/kit.ts', conformance: 'src/conformance/index.ts' } });
