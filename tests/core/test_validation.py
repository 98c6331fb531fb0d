"""core/validation: a pydantic or YAML error as the (field, message) of the one line a user
sees; an eval file read strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentsproof.core.errors import InputError
from agentsproof.core.validation import FieldError, format_validation_error, read_yaml, yaml_problem


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Regex(_Strict):
    type: Literal["regex"]
    pattern: str


class _Contains(_Strict):
    type: Literal["contains"]
    words: list[str]

    @field_validator("words")
    @classmethod
    def _no_empty_word(cls, v: list[str]) -> list[str]:
        if "" in v:
            raise ValueError("a word may not be empty")
        return v

    @model_validator(mode="after")
    def _not_empty(self) -> _Contains:
        if not self.words:
            raise FieldError("words[0]", "give at least one word")  # relative to this model
        return self


class _Eval(_Strict):
    name: str
    trials: int = 1
    graders: list[Annotated[_Regex | _Contains, Field(discriminator="type")]] = []


TAGS = ("regex", "contains")


def _error(data: object) -> tuple[str, str]:
    with pytest.raises(ValidationError) as err:
        _Eval.model_validate(data)
    return format_validation_error(err.value, TAGS)


def test_a_missing_field() -> None:
    assert _error({}) == ("name", "required field is missing")


def test_an_unknown_key_is_reported_before_what_it_causes() -> None:
    # "nmae" is both an unknown key and the reason "name" is missing: the unknown key explains
    assert _error({"nmae": "x"}) == ("nmae", "unknown key")


def test_a_wrong_type_keeps_pydantics_message() -> None:
    field, msg = _error({"name": "x", "trials": "many"})
    assert field == "trials" and "valid integer" in msg


def test_the_union_tag_is_dropped_from_the_path() -> None:
    field, msg = _error({"name": "x", "graders": [{"type": "regex", "pattern": "a"}, {"type": "regex"}]})
    assert (field, msg) == ("graders[1].pattern", "required field is missing")


def test_an_unknown_or_missing_type_lists_the_types() -> None:
    assert _error({"name": "x", "graders": [{"type": "regx"}]}) == ("graders[0].type", "unknown grader type 'regx'; use one of 'regex', 'contains'")
    assert _error({"name": "x", "graders": [{"pattern": "a"}]}) == ("graders[0].type", "required field is missing; use one of 'regex', 'contains'")


def test_a_field_error_names_its_own_field_below_the_models() -> None:
    assert _error({"name": "x", "graders": [{"type": "contains", "words": []}]}) == ("graders[0].words[0]", "give at least one word")


def test_a_value_error_loses_pydantics_prefix() -> None:
    assert _error({"name": "x", "graders": [{"type": "contains", "words": [""]}]}) == ("graders[0].words", "a word may not be empty")


def test_an_error_at_the_top_level() -> None:
    assert _error(["not", "a", "mapping"])[0] == "(top level)"


def test_yaml_problem_names_the_line() -> None:
    with pytest.raises(yaml.YAMLError) as err:
        yaml.safe_load("a: 1\nb: : 2\n")
    assert yaml_problem(err.value) == ("line 2", "mapping values are not allowed here")
    assert yaml_problem(yaml.YAMLError("no mark here\nsecond line")) == ("YAML", "no mark here")


def test_read_yaml(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text("name: x\ntrials: 2\n")
    assert read_yaml(tmp_path / "eval.yaml") == {"name": "x", "trials": 2}
    with pytest.raises(InputError, match=r"missing.yaml: file not found$"):
        read_yaml(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="is a directory, expected an eval.yaml file$"):
        read_yaml(tmp_path)
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="not found"):  # a dangling link is read (and refused) as a file
        read_yaml(tmp_path / "dangling.yaml")
