"""Jinja templates of the pages, kept in Python so they ship without package-data.

Rendered with autoescape on: every value from users or agents is escaped. Styles and
charts are inline (CSS, SVG); nothing is loaded from elsewhere."""

from __future__ import annotations

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}AgentsProof{% endblock %} · AgentsProof</title>
<link rel="icon" href="data:,">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.6em 1.2em}header a{color:#fff;margin-right:1.2em;text-decoration:none}
main{max-width:1100px;margin:1em auto;padding:0 1em}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid #dde1e7;padding:.35em .5em;text-align:left;vertical-align:top}
th{background:#eef1f5}pre{background:#fff;border:1px solid #dde1e7;padding:.6em;white-space:pre-wrap;word-break:break-word;max-height:30em;overflow:auto;margin:.2em 0}
.pass{color:#0a7a32;font-weight:600}.fail{color:#b3261e;font-weight:600}.muted{color:#68707d}
.card{background:#fff;border:1px solid #dde1e7;padding:.8em;margin:.6em 0}
form.filters input,form.filters select{margin-right:.6em}
.bar{display:inline-block;height:.7em;background:#3a6ea5}.badge{padding:.05em .4em;border-radius:.3em;background:#e4e7ec}
</style></head><body>
<header><a href="/"><b>AgentsProof</b></a><a href="/results">CLI results</a><a href="/api/docs">API</a></header>
<main>{% block main %}{% endblock %}</main></body></html>"""

PROJECTS = """{% extends "base.html" %}{% block title %}Projects{% endblock %}{% block main %}
<h1>Projects</h1>
{% if not projects %}<p class="muted">No project yet. Create a key: <code>agentsproof keys create --project SLUG</code>.</p>{% else %}
<table><tr><th>Project</th><th>Runs</th><th>Goldens</th><th>Proof runs</th></tr>
{% for p in projects %}<tr><td><a href="/projects/{{ p.slug|urlencode }}/runs">{{ p.slug }}</a></td><td>{{ p.runs }}</td>
<td><a href="/projects/{{ p.slug|urlencode }}/goldens">{{ p.goldens }}</a></td><td><a href="/projects/{{ p.slug|urlencode }}/proof-runs">{{ p.proof_runs }}</a></td></tr>{% endfor %}
</table>{% endif %}{% endblock %}"""

RUNS = """{% extends "base.html" %}{% block title %}Runs of {{ project }}{% endblock %}{% block main %}
<h1>Runs of {{ project }}</h1>
<p><a href="/projects/{{ project|urlencode }}/goldens">Goldens</a> · <a href="/projects/{{ project|urlencode }}/proof-runs">Proof runs</a></p>
<form class="filters" method="get">
<label>Label <input name="label" value="{{ f.label }}"></label>
<label>Metadata <input name="meta" placeholder="key=value" value="{{ f.meta }}"></label>
<label>Golden <input name="golden" value="{{ f.golden }}"></label>
<label>From <input type="date" name="since" value="{{ f.since }}"></label>
<label>To <input type="date" name="until" value="{{ f.until }}"></label>
<button type="submit">Filter</button> <a href="?">clear</a></form>
{% if error %}<p class="fail">{{ error }}</p>{% endif %}
<p class="muted">{{ total }} run(s){% if pages > 1 %}, page {{ page }} of {{ pages }}{% endif %}</p>
<table id="runs"><tr><th>Started</th><th>Label</th><th>Golden</th><th>Metadata</th><th>Status</th><th>Score</th></tr>
{% for r in runs %}<tr class="run-row"><td>{{ r.created_at }}</td>
<td>{% if r.public_id %}<a href="/r/{{ r.public_id }}">{{ r.label or r.id }}</a>{% else %}{{ r.label or r.id }}{% endif %}</td>
<td>{{ r.golden_id or "" }}</td><td class="muted">{{ r.meta }}</td><td>{{ r.status }}{% if r.grade_status %} · {{ r.grade_status }}{% endif %}</td>
<td>{% if r.score is not none %}{{ "%.2f"|format(r.score) }}{% endif %}</td></tr>{% endfor %}</table>
<p>{% if page > 1 %}<a rel="prev" href="?{{ qs }}&page={{ page - 1 }}">← newer</a>{% endif %}
{% if page < pages %} <a rel="next" href="?{{ qs }}&page={{ page + 1 }}">older →</a>{% endif %}</p>
{% endblock %}"""

REPORT = """{% extends "base.html" %}{% block title %}Run {{ run.label or run.runId }}{% endblock %}{% block main %}
<h1>Run report: {{ run.label or run.runId }}</h1>
<p class="muted">Started {{ run.created_at }}{% if run.completed_at %} · completed {{ run.completed_at }}{% endif %}
{% if run.goldenId %} · golden {{ run.goldenId }}{% endif %}</p>
{% set g = run.grade %}
<div class="card" id="grade">{% if not g %}<b>Not graded yet</b> (the run is {{ run.status }}).
{% elif g.status == "done" %}<b>Overall score: <span id="overall">{{ "%.2f"|format(g.overall_score) }}</span></b>
<span class="muted">(weighted {{ "%.2f"|format(g.weighted_score) }}{% if g.penalty %}, penalty −{{ "%.2f"|format(g.penalty) }}{% endif %})</span>
{% elif g.status == "errored" %}<b class="fail">Grading errored</b> (attempt {{ g.attempts }}, will be retried): {{ g.error }}
{% else %}<b>Grading {{ g.status }}…</b>{% endif %}</div>
<h2>Input</h2><pre id="input">{{ run.input|pretty }}</pre>
<h2>Goal</h2><p id="goal">{{ run.goal or "(none given)" }}</p>
{% if run.expected_output is not none %}<h2>Expected output</h2><pre>{{ run.expected_output|pretty }}</pre>{% endif %}
{% if g and g.status == "done" %}
<h2>Axes</h2><table id="axes"><tr><th>Axis</th><th>Weight</th><th>Score</th><th>Reasoning</th></tr>
{% for name, a in g.axes.items() %}<tr><td>{{ name|replace("_", " ") }}</td><td>{{ "%.0f"|format(a.weight * 100) }} %</td>
<td>{% if a.score is not none %}<svg width="80" height="10" role="img" aria-label="{{ a.score }}"><rect width="80" height="10" fill="#e4e7ec"/><rect width="{{ (a.score * 80)|round(1) }}" height="10" fill="#3a6ea5"/></svg> {{ "%.2f"|format(a.score) }}{% else %}n/a{% endif %}</td>
<td>{{ a.reasoning }}</td></tr>{% endfor %}</table>
<h2>Criteria</h2>{% if g.criteria_results %}<ul id="criteria">{% for c in g.criteria_results %}
<li><span class="{{ 'pass' if c.passed else 'fail' }}">{{ "✓" if c.passed else "✗" }}</span> {{ c.criterion }}{% if c.inferred %} <span class="badge">inferred</span>{% endif %} <span class="muted">{{ c.reasoning }}</span></li>{% endfor %}</ul>
{% else %}<p class="muted">No criteria (give success_criteria or a goal).</p>{% endif %}
{% if g.assertion_results %}<h2>Trace assertions</h2><ul id="assertions">{% for a in g.assertion_results %}
<li><span class="{{ 'pass' if a.passed else 'fail' }}">{{ "✓" if a.passed else "✗" }}</span> <code>{{ a.assertion }}</code> <span class="muted">{{ a.detail }}</span></li>{% endfor %}</ul>{% endif %}
{% if g.failure_modes_observed %}<h2>Failure modes observed</h2><ul>{% for m in g.failure_modes_observed %}<li class="fail">{{ m }}</li>{% endfor %}</ul>{% endif %}
{% endif %}
<h2>Steps ({{ run.steps|length }})</h2>
{% set maxlat = (run.steps|map(attribute="latency_ms")|select|max) if run.steps|map(attribute="latency_ms")|select|list else 0 %}
<table id="steps"><tr><th>#</th><th>Type</th><th>Name</th><th>Latency</th><th>Tokens</th><th>Cost</th><th>Input / output</th></tr>
{% for s in run.steps %}<tr class="step"><td>{{ s.step_index }}</td><td>{{ s.type }}</td><td>{{ s.name or "" }}</td>
<td>{% if s.latency_ms is not none %}<svg width="60" height="8"><rect width="{{ ((s.latency_ms / maxlat * 60) if maxlat else 0)|round(1) }}" height="8" fill="#3a6ea5"/></svg> {{ "%.0f"|format(s.latency_ms) }} ms{% endif %}</td>
<td>{{ s.token_count if s.token_count is not none else "" }}</td><td>{% if s.cost_usd is not none %}${{ "%.4f"|format(s.cost_usd) }}{% endif %}</td>
<td><details><summary>show</summary><pre>{{ s.input|pretty }}</pre><pre>{{ s.output|pretty }}</pre></details></td></tr>{% endfor %}</table>
<h2>Output</h2><pre id="output">{{ run.output|pretty }}</pre>
{% endblock %}"""

PROOF_RUNS = """{% extends "base.html" %}{% block title %}Proof runs of {{ project }}{% endblock %}{% block main %}
<h1>Proof runs of {{ project }}</h1>
<table id="proof-runs"><tr><th>Started</th><th>Suite</th><th>Status</th><th>Passed</th><th>Failed</th><th>Score</th></tr>
{% for p in proof_runs %}<tr><td><a href="/p/{{ p.public_id }}">{{ p.created_at }}</a></td><td>{{ p.suite_slug }}</td><td>{{ p.status }}</td>
<td>{{ p.passed_cases if p.passed_cases is not none else "" }}</td><td>{{ p.failed_cases if p.failed_cases is not none else "" }}</td>
<td>{% if p.overall_score is not none %}{{ "%.2f"|format(p.overall_score) }}{% endif %}</td></tr>{% endfor %}</table>{% endblock %}"""

PROOF_REPORT = """{% extends "base.html" %}{% block title %}Proof run {{ pr.suite_slug }}{% endblock %}{% block main %}
<h1>Proof run: suite {{ pr.suite_slug }}</h1>
<p class="muted">Started {{ pr.created_at }} · {{ pr.status }}</p>
<div class="card"><b>{{ pr.passed_cases or 0 }} passed, {{ pr.failed_cases or 0 }} failed</b>
{% if pr.overall_score is not none %} · overall score <b id="overall">{{ "%.2f"|format(pr.overall_score) }}</b>{% endif %}</div>
<table id="cases"><tr><th>Golden</th><th>Result</th><th>Score</th><th>Run</th><th>Failure</th></tr>
{% for c in cases %}<tr><td>{{ c.golden_name }}</td><td class="{{ 'pass' if c.passed else 'fail' }}">{{ "passed" if c.passed else "failed" }}</td>
<td>{{ "%.2f"|format(c.score) }}</td><td>{% if c.public_id %}<a href="/r/{{ c.public_id }}">report</a>{% endif %}</td><td>{{ c.failure_summary or "" }}</td></tr>{% endfor %}</table>
{% endblock %}"""

GOLDENS = """{% extends "base.html" %}{% block title %}Goldens of {{ project }}{% endblock %}{% block main %}
<h1>Goldens of {{ project }}</h1>
{% if error %}<p class="fail" id="error">{{ error }}</p>{% endif %}
<table id="goldens"><tr><th>Name</th><th>Suite</th><th>State</th><th>Goal</th><th></th></tr>
{% for g in goldens %}<tr><td><a href="/projects/{{ project|urlencode }}/goldens/{{ g.id|urlencode }}">{{ g.name }}</a></td><td>{{ g.suite or "" }}</td>
<td>{{ "approved" if g.approved else "draft" }}</td><td>{{ g.goal or "" }}</td>
<td>{% if not g.approved %}<form method="post" action="/projects/{{ project|urlencode }}/goldens/{{ g.id|urlencode }}/approve"><button>Approve</button></form>{% endif %}</td></tr>{% endfor %}</table>
<h2>New golden</h2>{% with g=None %}{% include "golden_form.html" %}{% endwith %}
<h2>Import JSONL</h2><form method="post" id="import-form" action="/projects/{{ project|urlencode }}/goldens/import">
<p><label>Suite <input name="suite" required></label> <label><input type="checkbox" name="approve" value="1"> approve</label></p>
<textarea name="jsonl" rows="5" cols="100" placeholder='{"name": "...", "input": "...", "goal": "..."}'></textarea><p><button>Import</button></p></form>
{% endblock %}"""

GOLDEN_FORM = """<form method="post" class="card" id="golden-form" action="/projects/{{ project|urlencode }}/goldens{% if g %}/{{ g.id|urlencode }}{% endif %}">
<p><label>Name <input name="name" value="{{ g.name if g else '' }}" size="40"></label> <label>Suite <input name="suite" value="{{ g.suite if g and g.suite else '' }}"></label>
<label><input type="checkbox" name="approved" value="1" {% if g and g.approved %}checked{% endif %}> approved</label></p>
<p><label>Input (JSON or text)<br><textarea name="input" rows="3" cols="100">{{ g.input|pretty if g else '' }}</textarea></label></p>
<p><label>Goal<br><textarea name="goal" rows="2" cols="100">{{ g.goal or '' if g else '' }}</textarea></label></p>
<p><label>Expected output (JSON or text)<br><textarea name="expected_output" rows="2" cols="100">{{ g.expected_output|pretty if g and g.expected_output is not none else '' }}</textarea></label></p>
<p><label>Expected behaviour<br><textarea name="expected_behavior" rows="2" cols="100">{{ g.expected_behavior or '' if g else '' }}</textarea></label></p>
{% for field in ["success_criteria", "trace_assertions", "failure_modes"] %}
<p><label>{{ field|replace("_", " ")|capitalize }} (one per line)<br><textarea name="{{ field }}" rows="3" cols="100">{{ (g[field]|join("\\n")) if g else '' }}</textarea></label></p>{% endfor %}
<p><button type="submit">Save</button></p></form>"""

GOLDEN_EDIT = """{% extends "base.html" %}{% block title %}Golden {{ g.name }}{% endblock %}{% block main %}
<h1>Golden: {{ g.name }}</h1><p class="muted">id {{ g.id }} · <a href="/projects/{{ project|urlencode }}/goldens">all goldens</a></p>
{% if error %}<p class="fail" id="error">{{ error }}</p>{% endif %}
{% include "golden_form.html" %}{% endblock %}"""

RESULTS = """{% extends "base.html" %}{% block title %}CLI results{% endblock %}{% block main %}
<h1>CLI results</h1>
<p class="muted">Reports of <code>agentsproof eval</code>, <code>eval-all</code> and <code>tc-eval</code>, added with <code>agentsproof push RESULTS.json</code> or <code>serve --runs-dir</code>.</p>
<table id="reports"><tr><th>Created</th><th>Command</th><th>Plugin</th><th>Model</th><th>Verdict</th><th>Items</th><th>Avg delta</th></tr>
{% for r in reports %}<tr><td>{{ r.created_at }}</td><td>{{ r.command }}</td><td>{{ r.plugin }}</td><td>{{ r.model }}</td>
<td class="{{ 'pass' if r.verdict == 'PASS' else 'fail' }}">{{ r.verdict }}</td><td>{{ r.items }}</td><td>{{ r.avg_delta }}</td></tr>{% endfor %}</table>
<h2>Trends per skill</h2>
{% for t in trends %}<div class="card trend"><b>{{ t.name }}</b> <span class="muted">{{ t.id }} · {{ t.points|length }} run(s)</span><br>
{{ t.svg }}</div>{% else %}<p class="muted">No results pushed yet.</p>{% endfor %}
{% endblock %}"""

API_DOCS = """{% extends "base.html" %}{% block title %}API{% endblock %}{% block main %}
<h1>{{ title }} <span class="muted">API {{ version }}</span></h1>
<p class="muted">Every route below <code>/api</code> needs the header <code>x-api-key</code> (from <code>agentsproof keys create</code>),
except <code>/api/health</code>. The OpenAPI document: <a href="/api/openapi.json">/api/openapi.json</a>.</p>
<h2>Routes</h2>
<table id="routes"><tr><th>Method</th><th>Path</th><th>Summary</th></tr>
{% for op in ops %}<tr><td><b>{{ op.method }}</b></td><td><a href="#{{ op.anchor }}"><code>{{ op.path }}</code></a></td><td>{{ op.summary }}</td></tr>{% endfor %}</table>
{% for op in ops %}<div class="card op" id="{{ op.anchor }}"><h3><b>{{ op.method }}</b> <code>{{ op.path }}</code></h3>
{% if op.description %}<pre>{{ op.description }}</pre>{% endif %}
{% if op.params %}<table><tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th></tr>
{% for p in op.params %}<tr><td><code>{{ p.name }}</code></td><td>{{ p.where }}</td><td>{{ p.type }}</td><td>{{ "yes" if p.required else "" }}</td></tr>{% endfor %}</table>{% endif %}
{% if op.body %}<p>Body: {{ op.body }}</p>{% endif %}
<p>Answers: {% for r in op.responses %}<span class="badge">{{ r.status }}</span> {{ r.text }}{% if not loop.last %} · {% endif %}{% endfor %}</p></div>{% endfor %}
<h2>Schemas</h2>
{% for s in schemas %}<div class="card schema" id="schema-{{ s.name }}"><h3>{{ s.name }}</h3>{% if s.description %}<p>{{ s.description }}</p>{% endif %}
<table><tr><th>Field</th><th>Type</th><th>Required</th><th>Constraints</th></tr>
{% for f in s.fields %}<tr><td><code>{{ f.name }}</code></td><td>{{ f.type }}</td><td>{{ "yes" if f.required else "" }}</td><td>{{ f.constraints }}</td></tr>{% endfor %}
</table></div>{% endfor %}
{% endblock %}"""

NOT_FOUND = """{% extends "base.html" %}{% block title %}Not found{% endblock %}{% block main %}<h1>Not found</h1><p>{{ message }}</p>{% endblock %}"""

TEMPLATES = {
    "base.html": BASE,
    "projects.html": PROJECTS,
    "runs.html": RUNS,
    "report.html": REPORT,
    "proof_runs.html": PROOF_RUNS,
    "proof_report.html": PROOF_REPORT,
    "goldens.html": GOLDENS,
    "golden_form.html": GOLDEN_FORM,
    "golden_edit.html": GOLDEN_EDIT,
    "results.html": RESULTS,
    "not_found.html": NOT_FOUND,
    "api_docs.html": API_DOCS,
}
