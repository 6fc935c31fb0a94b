import packageJson from '../package.json' with { type: 'json' };

/** The package version, printed by `hookline --version`. */
export const version: string = packageJson.version;
