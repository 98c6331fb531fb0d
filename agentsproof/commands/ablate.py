"""``agentsproof ablate EVAL``: which part of the skill earns its keep.

The eval's skill is cut into parts (:mod:`agentsproof.model.skillparts`: each ``##``
section of SKILL.md, each file or folder of the skill folder). One run then holds, on the
same cases and trials: the whole skill and no skill (the eval's own item, both arms) and,
per part, the skill without that part (one arm each). Each part gets the effect of
removing it, paired by case, with its interval and a verdict (:mod:`agentsproof.stats.ablation`).
When parts are removable, the smallest skill (all of them taken out) is written as a folder
beside the report and confirmed in a second run on the same cases: against the whole skill
(non-inferiority at the margin) and against no skill (its own delta and interval).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.model.items import EvalItem, SkillFile
from agentsproof.model.options import RunFlags
from agentsproof.model.results import ArmResult, ItemResult, RunResult, compute_grade
from agentsproof.model.skillparts import Part, cut, files_without, text_without


@dataclass
class Variant:
    """The item that runs the skill without ``removed`` (one arm)."""

    item: EvalItem
    removed: tuple[Part, ...]


@dataclass
class Ablation:
    """Everything the ablation report shows."""

    item: str
    skill: str
    margin: float
    parts: list[Part]
    effects: list[Any] = field(default_factory=list)
    whole: dict[str, Any] = field(default_factory=dict)
    smallest: dict[str, Any] | None = None
    reports: dict[str, str] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)


def variant(item: EvalItem, removed: tuple[Part, ...], suffix: str, label: str) -> EvalItem:
    """``item`` with its skill's ``removed`` parts taken out, running its with-arm only."""
    from agentsproof.model.skillfolder import item_prompt

    skill = item.skill
    assert skill is not None
    text = text_without(skill.text, removed)
    gone = files_without(removed)
    files = tuple((rel, p) for rel, p in skill.files if rel not in gone)
    prompt = text
    if skill.source_path is not None:
        from agentsproof.model.skillfolder import folder_files

        kept = {rel for rel, _p in files}
        exclude = tuple(f.path for f in folder_files(skill.source_path.parent) if f.rel not in kept) if skill.kind == "skill" else ()
        prompt = item_prompt(skill.kind, skill.source_path, text, exclude=exclude).system_prompt
    return dataclasses.replace(
        item,
        id=f"{item.id}~{suffix}",
        name=f"{item.name} {label}",
        system_prompt=prompt,
        source_sha256=hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest(),
        skill=SkillFile(skill.name, skill.kind, text, skill.source_path, files),
        with_skills=(),
        arms=("with",),
    )


def ablatable(items: list[EvalItem], path: Path) -> EvalItem:
    """The one item of the eval whose skill can be cut, carrying its skill as a file (a chat
    item's too); one clear line when there is none."""
    from agentsproof.core.inputs import MAX_ATTACHED_FILE_BYTES, display, read_regular
    from agentsproof.formats.eval_yaml.items import skill_file

    withskill = [it for it in items if it.kind in ("skill", "agent") and (it.skill is not None or Path(it.source_path).is_file())]
    if len(withskill) != 1:
        what = "no skill or agent file" if not withskill else f"{len(withskill)} skills (ablate takes an eval of one skill)"
        raise InputError(display(path), "skill", f"ablate needs one skill to cut into parts; this eval has {what}")
    item = withskill[0]
    if item.skill is None:
        source = Path(item.source_path)
        text = read_regular(source, source=display(source), field=None, max_bytes=MAX_ATTACHED_FILE_BYTES).decode("utf-8", "replace")
        item = dataclasses.replace(item, skill=skill_file(item.name, item.kind, text, source))
    return item


def plan_parts(item: EvalItem, path: Path) -> list[Part]:
    """The parts of the item's skill; one clear line when it has fewer than one."""
    from agentsproof.core.inputs import display

    assert item.skill is not None
    parts = cut(item.skill.text, item.skill.files)
    if not parts:
        raise InputError(display(path), "skill", f"{item.skill.name} has no '## ' sections and no other files: nothing to ablate")
    return parts


def _arm(run: RunResult, item_id: str) -> tuple[ItemResult, ArmResult]:
    for it in run.items:
        if it.id == item_id:
            return it, it.with_arm
    raise KeyError(item_id)


def _cases(item: ItemResult, first: ArmResult, second: ArmResult) -> list[tuple[list[float], list[float]]]:
    from agentsproof.stats.cases import by_case

    return [(a, b) for _name, a, b, _err in by_case(item, (first, second))]


def run_ablation(path: Path, cfg: RunFlags, margin: float) -> tuple[RunResult | None, dict[str, Path], Ablation | None]:
    """The ablation of the eval at ``path``: its runs, their reports and the ablation's own."""
    from agentsproof.commands.plan import item_request, plan_run, run_settings
    from agentsproof.commands.run import execute, lint_gate, load_file
    from agentsproof.stats.ablation import decide, non_inferior, part_effect

    if not 0 < margin < 1:
        raise InputError("command line", "--margin", f"{margin} is not between 0 and 1")
    if cfg.baseline == "none":
        raise InputError("command line", "--baseline", "ablate compares the parts with the whole skill and with no skill; drop --baseline none")
    if cfg.aa:
        raise InputError("command line", "--aa", "an A/A run has no skill to cut; run it with eval")
    loaded = load_file(Path(path), "eval", item_request(cfg))
    lint_gate(loaded, Path(path))
    item = ablatable(list(loaded.items), Path(path))
    parts = plan_parts(item, Path(path))
    variants = [Variant(variant(item, (p,), f"without-{p.id}", f"without {p.title}"), (p,)) for p in parts]
    settings = run_settings(cfg, trials=cfg.trials_per_item)
    if cfg.plan:
        print(f"ablate {item.name}: {len(parts)} parts, {len(parts) + 2} arms (whole skill, no skill, the skill without each part)")
        for p in parts:
            print(f"  {p.id:<44} {p.kind:<8} {p.tokens:>7,} tokens  {p.title}")
    run, written = execute(plan_run("eval", loaded.plugin, [item, *[v.item for v in variants]], cfg, f"{loaded.name}-ablate", settings))
    if run is None:
        return None, {}, None
    whole_item, whole_arm = _arm(run, item.id)
    ab = Ablation(item.name, item.skill.name if item.skill else item.name, margin, parts)
    effects = []
    for v in variants:
        _it, arm = _arm(run, v.item.id)
        (p,) = v.removed
        effects.append(part_effect(p.id, _cases(whole_item, arm, whole_arm), p.tokens, margin))
    decide(effects)
    ab.effects = effects
    ab.whole = {
        "delta": whole_item.delta,
        "grade": whole_item.grade,
        "interval": (whole_item.stats or {}).get("delta_ci"),
        "with_mean": whole_arm.mean_score,
        "without_mean": whole_item.without_arm.mean_score,
        "tokens": sum(p.tokens for p in parts),
    }
    removable = tuple(p for p, e in zip(parts, effects, strict=True) if e.verdict == "removable")
    calls = [run]
    if removable:
        small_run: RunResult = run
        if len(removable) == 1:
            small_item = _arm(run, variants[parts.index(removable[0])].item.id)[0]
        else:
            small = variant(item, removable, "smallest", "smallest skill")
            second, more = execute(plan_run("eval", loaded.plugin, [small], cfg, f"{loaded.name}-ablate-smallest", settings))
            assert second is not None
            small_run = second
            calls.append(second)
            written = {**written, **{f"smallest-{k}": v for k, v in more.items()}}
            small_item = second.items[0]
        small_arm = small_item.with_arm
        vs_whole = non_inferior(_cases(whole_item, small_arm, whole_arm), margin)
        vs_none = _cases(whole_item, small_arm, whole_item.without_arm)
        from agentsproof.stats.cases import delta_interval, mean_case_delta

        d = mean_case_delta(vs_none)
        ci = delta_interval([c for c in vs_none if c[0] and c[1]]) if d is not None else None
        ab.smallest = {
            "removed": [p.id for p in removable],
            "tokens_saved": sum(p.tokens for p in removable),
            "tokens_kept": sum(p.tokens for p in parts) - sum(p.tokens for p in removable),
            "vs_whole": vs_whole,
            "vs_none": {
                "delta": d,
                "interval": ci,
                "grade": compute_grade(d) if d is not None else None,
                "grade_low": compute_grade(ci[0]) if ci else None,
                "grade_high": compute_grade(ci[1]) if ci else None,
            },
            "together_not_removable": len(removable) > 1 and not vs_whole["non_inferior"],
            "measured_in": "the first run (one part removed)" if small_run is run else "a second run on the same cases",
        }
        folder = _write_smallest(item, removable, written["json"].parent / f"{loaded.name}-smallest-skill")
        ab.smallest["folder"] = str(folder)
    ab.calls = {"trials": sum(len(a.trials) for r in calls for it in r.items for a in (it.with_arm, it.without_arm))}
    from agentsproof.report.ablation import write_ablation

    paths = write_ablation(as_dict(ab), written["json"].parent, f"{loaded.name}-ablation")
    ab.reports = {k: str(v) for k, v in paths.items()}
    return run, {**written, **{f"ablation-{k}": v for k, v in paths.items()}}, ab


def as_dict(ab: Ablation) -> dict[str, Any]:
    """The ablation as the plain mapping the reports show (and the JSON report holds)."""
    by_id = {p.id: p for p in ab.parts}
    questions = {e.question for e in ab.effects}
    words = {"cases": "Intervals answer (a): the effect on these cases.", "tasks": "Intervals answer (b): the effect on tasks like these."}
    return {
        "schema": "agentsproof-ablation/1",
        "item": ab.item,
        "skill": ab.skill,
        "margin": ab.margin,
        "question": sorted(questions)[0] if len(questions) == 1 else sorted(questions),
        "question_words": " ".join(words.get(q, q) for q in sorted(questions)),
        "whole": ab.whole,
        "parts": [
            {
                "id": e.part,
                "kind": by_id[e.part].kind,
                "title": by_id[e.part].title,
                "tokens": e.tokens,
                "files": list(by_id[e.part].files),
                "effect": e.effect,
                "interval": list(e.interval) if e.interval else None,
                "cases": e.cases,
                "per_1k_tokens": e.per_1k_tokens,
                "p_needed": e.p_needed,
                "p_removable": e.p_removable,
                "p_needed_adjusted": e.p_needed_adjusted,
                "p_removable_adjusted": e.p_removable_adjusted,
                "verdict": e.verdict,
            }
            for e in ab.effects
        ],
        "smallest": ab.smallest,
        "calls": ab.calls,
    }


def run_ablation_all(directory: Path, cfg: RunFlags, margin: float) -> list[tuple[Path, Ablation | InputError, RunResult | None, dict[str, Path]]]:
    """``ablate DIR`` and ``eval-all DIR --ablate``: the ablation of every eval file below
    ``directory`` (eval-all's discovery), one after another; a file that cannot be ablated
    (no skill, no part, does not load) is kept with its one-line reason and the others run."""
    from agentsproof.formats.layout import plugin_evals

    done: list[tuple[Path, Ablation | InputError, RunResult | None, dict[str, Path]]] = []
    for path in plugin_evals(directory):
        try:
            run, written, ab = run_ablation(path, cfg, margin)
        except InputError as err:
            done.append((path, err, None, {}))
            continue
        if ab is not None:
            done.append((path, ab, run, written))
    return done


def _write_smallest(item: EvalItem, removed: tuple[Part, ...], folder: Path) -> Path:
    """The smallest skill as a folder: SKILL.md without the removed sections, the files kept."""
    from agentsproof.core.safepath import copy_file, write_file

    skill = item.skill
    assert skill is not None
    name = skill.source_path.name if skill.source_path else "SKILL.md"
    folder.mkdir(parents=True, exist_ok=True)
    write_file(folder, name, text_without(skill.text, removed).encode("utf-8"))
    gone = files_without(removed)
    for rel, src in skill.files:
        if rel not in gone:
            copy_file(src, folder, rel, cap=64 << 20)
    return folder
