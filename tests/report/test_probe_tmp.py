from conftest import Rule, make_plugin, run_cli, simple_eval
import shutil

def test_probe(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello there", system_contains="SKILLMARK", judge=False))
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "SKILLMARK greet.\n", "eval": simple_eval(trials=3)}})
    code, out, err = run_cli(["eval", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", tmp_path / "out"])
    print(out); print(err)
    shutil.copytree(tmp_path / "out", "/tmp/i46probe/out", dirs_exist_ok=True)
    code, out, err = run_cli(["eval", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", tmp_path / "out", "--plan"])
    print(out); print(err)
