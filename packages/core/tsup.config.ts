import { packageBuild } from '../../tsup.config.base';

export default packageBuild({ entry: ['src/index.ts', 'src/adapter.ts'] });
