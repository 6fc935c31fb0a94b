// `@hookline/testing/kit`: the same names as the package root, kept for code that imports this subpath
// (before the conformance suites moved to `@hookline/testing/conformance`, only the kit was free of vitest).
export * from './index';
