// RFC 8785 (JCS) canonical JSON, enough for log entries, which hold no floating-point numbers:
// object keys sorted by UTF-16 code units (what Array.prototype.sort compares), strings as
// JSON.stringify writes them (RFC 8785 defines its string form by that very function), no
// white space.

export function canonicalize(value) {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isSafeInteger(value)) {
        throw new Error(`not an integer a log entry may hold: ${value}`);
      }
      return String(value);
    case 'object':
      if (Array.isArray(value)) return `[${value.map(canonicalize).join(',')}]`;
      return `{${Object.keys(value)
        .filter((key) => value[key] !== undefined)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${canonicalize(value[key])}`)
        .join(',')}}`;
    default:
      throw new Error(`a ${typeof value} has no JSON form`);
  }
}
