"""``agentsproof ablate EVAL``: which part of the skill earns its keep.

The eval's skill is cut into parts (:mod:`agentsproof.model.skillparts`: each ``##``
section of SKILL.md, each file or folder of the skill folder). One run then holds, on the
same cases and trials: the whole skill and no skill (the eval's own item, both arms) and,
per part, the skill without that part (one arm each). Each part gets the effect of
removing it, paired by case, with its interval and a verdict (:mod:`agentsproof.stats.ablation`).
When parts are removable, the smallest skill (all of them taken out) is written as a folder
beside the report and confirmed on the same cases and trials (its own arm when two or more
parts are taken out): against the whole skill (non-inferiority at the margin) and against
no skill (its own delta and interval). ``--adaptive`` runs the arms in rounds and stops each
part's arm once its verdict is settled (:mod:`agentsproof.commands.ablate_rounds`).
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
from agentsproof.model.results import RunResult
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
    reports: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    """The ablation section: what the reports show (``settings.ablation`` of the run's JSON)."""


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


def run_ablation(path: Path, cfg: RunFlags, margin: float) -> tuple[RunResult | None, dict[str, Path], Ablation | None]:
    """The ablation of the eval at ``path``: its arms run (in rounds with ``--adaptive``:
    :mod:`agentsproof.commands.ablate_rounds`), then one run report holding every arm and
    the ablation as its ``settings.ablation`` section (sealed, signed with ``--sign``, and
    re-derived by ``agentsproof verify``), and the ablation's own three files."""
    from agentsproof.commands.ablate_rounds import remaining, run_rounds, spent_words
    from agentsproof.commands.plan import adaptive_defaults, item_request, per_item_trials, plan_run, run_settings
    from agentsproof.commands.run import execute, lint_gate, load_file

    if not 0 < margin < 1:
        raise InputError("command line", "--margin", f"{margin} is not between 0 and 1")
    if cfg.baseline == "none":
        raise InputError("command line", "--baseline", "ablate compares the parts with the whole skill and with no skill; drop --baseline none")
    if cfg.aa:
        raise InputError("command line", "--aa", "an A/A run has no skill to cut; run it with eval")
    cfg = adaptive_defaults(cfg)
    loaded = load_file(Path(path), "eval", item_request(cfg))
    lint_gate(loaded, Path(path))
    item = ablatable(list(loaded.items), Path(path))
    parts = plan_parts(item, Path(path))
    variants = [Variant(variant(item, (p,), f"without-{p.id}", f"without {p.title}"), (p,)) for p in parts]
    settings = run_settings(cfg, trials=cfg.trials_per_item)
    stem = f"{loaded.name}-ablate"
    if cfg.plan:
        print(f"ablate {item.name}: {len(parts)} parts, {len(parts) + 2} arms (whole skill, no skill, the skill without each part)")
        for p in parts:
            print(f"  {p.id:<44} {p.kind:<8} {p.tokens:>7,} tokens  {p.title}")
        execute(plan_run("eval", loaded.plugin, [item, *[v.item for v in variants]], cfg, stem, settings))
        return None, {}, None
    (item,) = per_item_trials([item], cfg)  # the cap: trials per arm
    base = cfg.replace(trials_per_item=None, adaptive=False)
    rounds = run_rounds(
        loaded.plugin, item, [(p.id, v.item, p.tokens) for p, v in zip(parts, variants, strict=True)], cfg.replace(trials_per_item=None), settings, stem, margin
    )
    if rounds.run is None:
        return None, {}, None
    spec = _spec(item, parts, variants, rounds, margin, cfg.adaptive)
    from agentsproof.stats.ablation_looks import derive

    first = derive(spec, rounds.run.items)
    removable = tuple(p for p in parts if p.id in first["removable"])
    items = [
        dataclasses.replace(item, trials=max(spec["trials"].values())),
        *[dataclasses.replace(v.item, trials=spec["trials"][p.id]) for p, v in zip(parts, variants, strict=True) if spec["trials"][p.id]],
    ]  # a part's arm an interrupt kept from its first trial is left out (its numbers: none)
    folder = rounds.targets["json"].parent / f"{loaded.name}-smallest-skill"
    left = remaining(base, rounds)  # one --max-calls / --max-cost for the rounds and the smallest skill's arm
    if left is None and len(removable) > 1 and not rounds.run.incomplete:
        rounds.run.incomplete, rounds.run.incomplete_reason = True, spent_words(base, rounds)
    if rounds.run.incomplete:  # interrupted: no new arm now (--resume goes on), the parts' numbers on the trials run
        removable = ()
    if len(removable) > 1:
        small = dataclasses.replace(variant(item, removable, "smallest", "smallest skill"), trials=items[0].trials)
        items.append(small)
        spec["smallest"] = {"item": small.id, "trials": small.trials, "measured_in": "the same run, on the same cases and trials as the whole skill"}
    elif removable:
        pid = removable[0].id
        spec["smallest"] = {
            "item": variants[parts.index(removable[0])].item.id,
            "trials": spec["trials"][pid],
            "measured_in": "the part's own arm (one part removed)",
        }
    if removable:
        spec["smallest"].update(
            removed=[p.id for p in removable],
            tokens_saved=sum(p.tokens for p in removable),
            tokens_kept=sum(p.tokens for p in parts) - sum(p.tokens for p in removable),
            folder=str(_write_smallest(item, removable, folder)),
        )
    ab = Ablation(item.name, item.skill.name if item.skill else item.name, margin, parts)

    def attach(run: RunResult) -> None:
        ab.data = section(spec, run, ab, rounds)
        run.settings["ablation"] = ab.data
        if rounds.run is not None and rounds.run.incomplete:
            run.incomplete, run.incomplete_reason = True, rounds.run.incomplete_reason or "the ablation's arms were interrupted; --resume goes on"

    recorded = dataclasses.replace(settings, adaptive=adaptive_rule(rounds.looks)) if cfg.adaptive else settings
    final = (left or base).replace(resume=True)
    run, written = execute(plan_run("eval", loaded.plugin, items, final, stem, recorded, after=attach))
    if run is None:
        return None, {}, None
    from agentsproof.commands.proof import sign_report
    from agentsproof.report.ablation import write_ablation

    own = {**ab.data, "manifest": run.manifest, "run_report": written["json"].name}
    paths = write_ablation(own, written["json"].parent, f"{loaded.name}-ablation")
    sign_report(paths, cfg.sign)
    ab.reports = {k: str(v) for k, v in paths.items()}
    return run, {**written, **{f"ablation-{k}": v for k, v in paths.items()}}, ab


def adaptive_rule(looks: list[int]) -> dict[str, Any]:
    """What the run's settings record of ``ablate --adaptive``'s stopping rule."""
    return {
        "alpha": 0.05,
        "looks": looks,
        "correction": "Bonferroni over the planned looks, Holm across the parts (one family per claim)",
        "interval": "each part's effect of removal at level 1 - alpha/looks at its last look",
        "stops": "a part's arm: needed; removable (needed unreachable by the cap); unclear for good (projected to the cap, neither claim reachable); "
        "the whole skill and no skill run while any part does",
    }


def _spec(item: EvalItem, parts: list[Part], variants: list[Variant], rounds: Any, margin: float, adaptive: bool) -> dict[str, Any]:
    """How the ablation's arms ran: what :func:`agentsproof.stats.ablation_looks.derive` needs."""
    run = rounds.run
    ran = {p.id: min(rounds.trials[p.id], completed(run, v.item.id)) for p, v in zip(parts, variants, strict=True)}
    if run.incomplete:  # interrupted: the counts every arm finished (the whole skill's too)
        top = completed(run, item.id)
        ran = {k: max(0, min(n, top)) for k, n in ran.items()}
    return {
        "whole_item": item.id,
        "margin": margin,
        "alpha": 0.05,
        "looks": rounds.looks,
        "cap": rounds.cap,
        "adaptive": adaptive,
        "trials": ran,
        "parts": [
            {
                "id": p.id,
                "kind": p.kind,
                "title": p.title,
                "tokens": p.tokens,
                "files": list(p.files),
                "item": v.item.id,
                "trials": ran[p.id],
                "stop": rounds.stops.get(p.id),
            }
            for p, v in zip(parts, variants, strict=True)
        ],
        "smallest": None,
    }


def completed(run: RunResult, item_id: str) -> int:
    """The trials per arm an item finished in ``run``: every index below it in every arm it ran."""
    it = next(i for i in run.items if i.id == item_id)
    arms = [a for a in (it.with_arm, it.without_arm) if a.trials]
    n = 0
    while arms and all(any(t.index == n for t in a.trials) for a in arms):
        n += 1
    return n


def section(spec: dict[str, Any], run: RunResult, ab: Ablation, rounds: Any) -> dict[str, Any]:
    """The ablation as the run report's ``settings.ablation`` (and the ablation files): ``spec`` with
    every number derived from ``run``'s trials (:func:`agentsproof.stats.ablation_looks.derive`)."""
    from agentsproof.stats.ablation_looks import derive, effects

    by_id = {it.id: it for it in run.items}
    ab.effects = effects(spec, by_id)
    got = derive(spec, by_id)
    questions = {p["question"] for p in got["parts"]}
    words = {"cases": "Intervals answer (a): the effect on these cases.", "tasks": "Intervals answer (b): the effect on tasks like these."}
    fixed = rounds.cap * (2 + len(spec["parts"])) + (rounds.cap if len(got["removable"]) > 1 else 0)
    small = spec["smallest"]
    return {
        "schema": "agentsproof-ablation/2",
        "item": ab.item,
        "skill": ab.skill,
        **{k: v for k, v in spec.items() if k not in ("parts", "smallest")},
        "level": 1 - spec["alpha"] / len(spec["looks"]),
        "question": sorted(questions)[0] if len(questions) == 1 else sorted(questions),
        "question_words": " ".join(words.get(q, q) for q in sorted(questions)),
        "whole": {**got["whole"], "tokens": sum(p.tokens for p in ab.parts)},
        "parts": got["parts"],
        "removable": got["removable"],
        "smallest": {**small, **got["smallest"]} if small and got["smallest"] else None,
        "calls": {**got["calls"], "fixed_trials": fixed},
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
