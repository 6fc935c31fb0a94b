// The command line, callable from code
export { run, EXIT } from './run';
export type { CliIo } from './io';

// The signature diagnosis behind `hookline verify`
export { diagnoseSignature, type SignatureDiagnosis, type SignatureCause } from './diagnose-signature';
