/**
 * An error as one line: its class, its code when it has one, its message, as node writes its own
 * (`Error [ECONNREFUSED]: connect ECONNREFUSED 127.0.0.1:6379`). A database driver's error carries
 * dozens of fields (a pg error: severity, position, routine, file, line…) and console.error prints
 * them all with the stack, twenty lines per failed delivery; the class, the code and the message say
 * what failed and are what one searches for.
 */
export function errorLine(error: unknown): string {
  if (!(error instanceof Error)) return oneLine(typeof error === 'string' ? error : describe(error));
  const code = (error as { code?: unknown }).code;
  const tag = typeof code === 'string' || typeof code === 'number' ? ` [${code}]` : '';
  return oneLine(`${className(error)}${tag}: ${messageOf(error)}`);
}

/** The constructor's name: pg's DatabaseError calls itself `error` in `.name`, its class is what says what it is. */
function className(error: Error): string {
  const constructorName = (error.constructor as { name?: unknown } | undefined)?.name;
  return typeof constructorName === 'string' && constructorName !== '' ? constructorName : error.name || 'Error';
}

/** The message, or for an AggregateError without one (node's connect to both `::1` and `127.0.0.1`), its errors' messages. */
function messageOf(error: Error): string {
  if (error.message !== '') return error.message;
  const inner = (error as { errors?: unknown }).errors;
  if (!Array.isArray(inner) || inner.length === 0) return '(no message)';
  return inner.map((each: unknown) => (each instanceof Error ? each.message : String(each))).join('; ');
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
