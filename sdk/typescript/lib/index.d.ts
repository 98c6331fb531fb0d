// Type declarations for agentsproof (hand-written; the implementation is lib/index.js).

export declare const DEFAULT_BASE_URL: string;
export declare const VERSION: string;

export type StepType = 'llm_call' | 'tool_call' | 'tool_result' | 'memory_read' | 'memory_write';

/** A step as logged with run.logStep(). Sent to the server in snake_case. */
export interface StepPayload {
  type: StepType;
  name?: string;
  input?: unknown;
  output?: unknown;
  latency_ms?: number;
  token_count?: number;
  cost_usd?: number;
}

/** What an `extract` function returns (both optional). */
export interface UsageInfo {
  token_count?: number;
  cost_usd?: number;
}

export interface TraceOptions<T = any> {
  /** Token count and cost from the step's output; wins over the automatic usage sniffing. */
  extract?: (output: Awaited<T>) => UsageInfo | null | undefined;
}

/** Called with every swallowed failure (run registration, a step, complete, ...). */
export type ErrorHandler = (error: unknown, context: { op: string; runId?: string; step?: number; goldenId?: string }) => void;

export interface ClientOptions {
  /** API key of the project (x-api-key). Default: env AGENTSPROOF_API_KEY. */
  apiKey?: string;
  /** Default: env AGENTSPROOF_BASE_URL, then http://127.0.0.1:8787/api. */
  baseUrl?: string;
  /** Receives the failures the SDK swallows so that the agent never breaks. */
  onError?: ErrorHandler;
  /** Timeout of run registration and of each step request (ms, default 10000). */
  requestTimeoutMs?: number;
  /**
   * The longest complete() takes, whatever the server does (ms, default 30000); also the
   * timeout of the proof-suite requests. Past it the run is spooled and complete() rejects.
   */
  completeTimeoutMs?: number;
  /** How long complete() waits for pending steps before sending what is left itself (ms, default 10000). */
  flushTimeoutMs?: number;
  /** Steps in flight per run; further ones wait and are sent by complete() (default 1000). */
  maxPendingSteps?: number;
  /**
   * Where complete() writes a run the server could not take (Node only), for `agentsproof sync`.
   * Default: env AGENTSPROOF_SPOOL_DIR, else $XDG_STATE_HOME/agentsproof/spool, else ~/.local/state/agentsproof/spool.
   */
  spoolDir?: string;
  /**
   * At construction, upload in the background the runs spooled earlier for this base URL
   * (at most 50 runs, 60 s, stopping at the first the server cannot take; each file locked
   * as `agentsproof sync` locks it). Never keeps the process alive. Default true (Node only).
   */
  resendSpooled?: boolean;
  /**
   * Prices for the automatic cost of sniffed LLM responses: model name (or prefix of a dated
   * snapshot name) -> [USD per 1M input tokens, USD per 1M output tokens].
   */
  prices?: Prices;
}

export type Prices = Record<string, readonly [number, number]> | Map<string, readonly [number, number]>;

export interface RunOptions {
  /** Your project identifier. */
  projectSlug: string;
  /** The initial input or prompt (optional when goldenId is given). */
  input?: unknown;
  /** Human-readable label shown in the run list. */
  label?: string;
  /** Your own id for this run (default: a random 12-character id). */
  clientRunId?: string;
  /** An existing Golden: its input, goal, expectedOutput and grading context are the defaults. */
  goldenId?: string;
  /** What this run should accomplish (drives goal_completion). */
  goal?: string;
  /** Reference output (drives output_quality). */
  expectedOutput?: unknown;
  /** Step-by-step description of a correct execution. */
  expectedBehavior?: string;
  /** Checklist evaluated one-for-one in criteria_results. */
  successCriteria?: string[];
  /** must_call:<name>, must_not_call:<name>, max_steps:<n>, min_steps:<n>, or free text. */
  traceAssertions?: string[];
  /** Known bad outcomes; penalised when observed. */
  failureModes?: string[];
  /** Arbitrary key/value pairs for filtering and grouping. */
  metadata?: Record<string, unknown>;
}

export interface RunInternalOptions extends RunOptions, Omit<ClientOptions, 'apiKey' | 'baseUrl'> {
  apiKey?: string;
  baseUrl?: string;
}

export interface RunResult {
  runId: string;
  publicUrl: string;
}

export declare class AgentsProofError extends Error {
  constructor(message: string, info?: { status?: number | null; code?: string; body?: unknown; cause?: unknown });
  name: 'AgentsProofError';
  /** HTTP status of the failed request, or null when the server was not reached. */
  status: number | null;
  /** 'unauthorized' (401/403) | 'http_error' | 'unreachable' | 'timeout' | 'bad_response' | 'bad_request' | 'queue_full' */
  code: string;
  /** The server's response body, when there was one. */
  body?: unknown;
  /** Set by complete() when it kept the run on disk: the spool file (null if it could not be written). */
  spooled?: string | null;
}

export declare class AgentRun {
  constructor(opts: RunInternalOptions);
  /** The client-side id of this run (sent as clientRunId). */
  runId: string;
  /** Every step logged so far, as sent (snake_case). */
  steps: Array<StepPayload & { step_index: number; created_at: string }>;
  startedAt: number;
  /** The server's id of the run once registered; null before, or if registration failed. */
  readonly remoteRunId: string | null;
  /** The public report URL once complete() has succeeded. */
  readonly publicUrl: string | null;
  readonly elapsedMs: number;
  /** Steps queued or in flight. */
  readonly pendingSteps: number;
  /** Resolves to the server's run id once registration has finished (null if it failed). */
  getRemoteId(): Promise<string | null>;
  /** Log a step; returns at once, sends in the background in order. Never rejects. */
  logStep(payload: StepPayload): Promise<void>;
  /** Run fn (sync or async) and log it as a step. Returns fn's result; fn's own error is re-thrown. */
  trace<T>(type: StepType, name: string, fn: () => T, input?: unknown, options?: TraceOptions<T>): Promise<Awaited<T>>;
  /** Wait at most timeoutMs (default flushTimeoutMs) for the steps logged so far. */
  flush(timeoutMs?: number): Promise<{ pending: number; dropped: number }>;
  /**
   * Finish the run (after waiting, bounded, for pending steps) and trigger grading.
   * Rejects with AgentsProofError when the run could not be registered or completed
   * (wrong API key: status 401, code 'unauthorized').
   */
  complete(output: unknown): Promise<{ publicUrl: string }>;
}

export interface GoldenCase {
  id: string;
  name: string;
  input: unknown;
  goal?: string;
  expectedOutput?: unknown;
  expectedBehavior?: string;
  successCriteria?: string[];
  traceAssertions?: string[];
  failureModes?: string[];
  customGraderIds?: string[];
  [key: string]: unknown;
}

export interface ProofSuiteHandlerContext {
  /** The golden of this case (camelCase fields). */
  golden: GoldenCase;
  proofRunId: string;
  /** Start the traced run of this case; defaults come from the golden. */
  startRun: (options?: Partial<RunOptions>) => AgentRun;
}

export interface RunProofSuiteOptions {
  projectSlug: string;
  suiteSlug: string;
  /** Called once per approved golden; may be sync or async. A case passes when it does not throw. */
  handler: (input: any, ctx: ProofSuiteHandlerContext) => unknown;
}

export interface ProofSuiteResult {
  proofRunId?: string;
  passedCases: number;
  failedCases: number;
  overallScore: number | null;
  publicUrl: string;
  [key: string]: unknown;
}

/** One spooled run the client tried to re-send at its start. */
export interface ResendResult {
  file: string;
  ok: boolean;
  message: string;
  runId?: string;
  publicUrl?: string | null;
}

export declare class AgentsProof {
  constructor(options?: ClientOptions);
  readonly apiKey: string;
  readonly baseUrl: string;
  onError?: ErrorHandler;
  prices?: Prices;
  /** The background re-send started by the constructor (`[]` with resendSpooled: false); never rejects, does not keep the process alive. */
  readonly resent: Promise<ResendResult[]>;
  /** Start a traced run. Returns at once; never throws because of the server. */
  startRun(options: RunOptions): AgentRun;
  /** Run approved goldens locally against your agent; rejects with AgentsProofError if the suite cannot be loaded or completed. */
  runProofSuite(options: RunProofSuiteOptions): Promise<ProofSuiteResult>;
}

/** Token count (and cost, when derivable) from an OpenAI- or Anthropic-shaped response's `usage`; {} when unknown. */
export declare function sniffUsage(output: unknown, prices?: Prices): UsageInfo;
/** JSON text of any value; never throws. */
export declare function safeStringify(value: unknown, note?: (kind: string, text: string) => void): string;
/** Convenience wrapper for tracing an LLM call. */
export declare function traceLlm<T>(run: AgentRun, name: string, fn: () => T, input?: unknown, options?: TraceOptions<T>): Promise<Awaited<T>>;
/** Convenience wrapper for tracing a tool call. */
export declare function traceTool<T>(run: AgentRun, name: string, fn: () => T, input?: unknown, options?: TraceOptions<T>): Promise<Awaited<T>>;
