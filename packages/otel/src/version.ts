import packageJson from '../package.json' with { type: 'json' };

/** The package version, reported as the instrumentation scope's version. */
export const version: string = packageJson.version;
