// Types for pack-packages.mjs (a plain Node script, also imported by test/packaging).

/** A package.json as far as packing cares. */
export interface PackageManifest {
  name: string;
  version: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/** One publishable package under packages/. */
export interface WorkspacePackage {
  folder: string;
  dir: string;
  name: string;
  manifest: PackageManifest;
}

/** A package with the tarball `pnpm pack` made of it. */
export interface PackedPackage extends WorkspacePackage {
  tarball: string;
}

export const ROOT: string;
export function listPackages(root?: string): WorkspacePackage[];
export function manifestTargets(manifest: PackageManifest): string[];
export function missingBuildFiles(pkg: WorkspacePackage): string[];
export function packPackage(pkg: WorkspacePackage, destination: string): Promise<string>;
export function packAll(destination: string, packages?: WorkspacePackage[]): Promise<PackedPackage[]>;
export const DEVELOPMENT_PACKAGES: string[];
export function withDependencies<T extends WorkspacePackage>(packages: T[], names: string[]): T[];
export function installCommands(packed: PackedPackage[], names: string[]): string[];
