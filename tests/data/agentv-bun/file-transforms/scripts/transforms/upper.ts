// A text transform in the form of agentv's xlsx-to-csv.ts (default export of (output, context)).
export default function transform(output: unknown, context: { vars?: Record<string, unknown> }): string {
  return `TRANSFORMED[${String(context.vars?.input ?? '')}]: ${String(output).toUpperCase()}`;
}
