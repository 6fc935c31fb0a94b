import { packageBuild } from '../../tsup.config.base';

// The library entry and the `hookline` bin (its shebang line is kept by the build).
export default packageBuild({ entry: ['src/index.ts', 'src/bin.ts'] });
