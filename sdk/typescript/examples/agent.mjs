// A tiny agent instrumented with agentsproof: a few traced steps, then a proof suite.
// It needs no LLM account: the "model" below is a stand-in that returns an
// OpenAI-shaped response, so you can see token counts picked up automatically.
//
//   agentsproof serve                                   # terminal 1 (http://127.0.0.1:8787)
//   export AGENTSPROOF_API_KEY=$(agentsproof keys create --project demo | tail -n 1)
//   agentsproof golden import examples/goldens.jsonl --project demo --suite capitals --approve
//   node examples/agent.mjs
//
// Env: AGENTSPROOF_API_KEY (required), AGENTSPROOF_BASE_URL (default
// http://127.0.0.1:8787/api), AGENTSPROOF_PROJECT (default demo), AGENTSPROOF_SUITE
// (default capitals).
import { AgentsProof } from 'agentsproof';

const project = process.env.AGENTSPROOF_PROJECT || 'demo';
const suite = process.env.AGENTSPROOF_SUITE || 'capitals';

const ap = new AgentsProof({
  apiKey: process.env.AGENTSPROOF_API_KEY,
  // baseUrl: 'http://127.0.0.1:8787/api',   // the default (or env AGENTSPROOF_BASE_URL)
  onError: (err, ctx) => console.warn(`[agentsproof] ${ctx.op}: ${err.message}`),
});

// --- the agent's parts: a fake chat model and a real-looking tool -----------------------
const CAPITALS = { france: 'Paris', japan: 'Tokyo', italy: 'Rome', kenya: 'Nairobi' };

async function chatModel(prompt) {
  // stands in for `await openai.chat.completions.create(...)`
  const country = Object.keys(CAPITALS).find((c) => prompt.toLowerCase().includes(c)) ?? 'unknown';
  return {
    choices: [{ message: { role: 'assistant', content: JSON.stringify({ tool: 'lookup_capital', country }) } }],
    usage: { prompt_tokens: 12 + prompt.length, completion_tokens: 9, total_tokens: 21 + prompt.length },
  };
}

function lookupCapital(country) {
  // a synchronous tool: trace() takes sync and async functions alike
  return CAPITALS[country] ?? null;
}

// --- the agent, instrumented: every step goes through run.trace --------------------------
async function answer(run, question) {
  const plan = await run.trace('llm_call', 'planner', () => chatModel(question), { question });
  const { country } = JSON.parse(plan.choices[0].message.content);
  const capital = await run.trace('tool_call', 'lookup_capital', () => lookupCapital(country), { country });
  run.logStep({ type: 'memory_write', name: 'remember', input: { country }, output: capital });
  return capital ? `The capital of ${country[0].toUpperCase()}${country.slice(1)} is ${capital}.` : "I don't know.";
}

// 1. One traced run with its own definition of "good".
const run = ap.startRun({
  projectSlug: project,
  label: 'Example: capital of Italy',
  input: { question: 'What is the capital of Italy?' },
  goal: 'Answer with the capital city, using the lookup tool',
  expectedOutput: 'Rome',
  successCriteria: ['Names Rome', 'Answers in one sentence'],
  traceAssertions: ['must_call:lookup_capital', 'max_steps:4'],
  failureModes: ['names the wrong city'],
  metadata: { example: true },
});
const text = await answer(run, 'What is the capital of Italy?');
const { publicUrl } = await run.complete({ answer: text });
console.log(`run report:   ${publicUrl}`);

// 2. A proof suite: every approved golden of the suite through the same agent.
try {
  const result = await ap.runProofSuite({
    projectSlug: project,
    suiteSlug: suite,
    async handler(input, ctx) {
      const caseRun = ctx.startRun(); // input, goal and criteria come from the golden
      const reply = await answer(caseRun, input.question);
      await caseRun.complete({ answer: reply });
    },
  });
  console.log(`proof suite:  ${result.passedCases} passed, ${result.failedCases} failed -> ${result.publicUrl}`);
} catch (err) {
  if (err.status === 404) {
    console.log(`proof suite "${suite}" not found: agentsproof golden import examples/goldens.jsonl --project ${project} --suite ${suite} --approve`);
  } else {
    throw err;
  }
}
