"""Harbor task folders (Terminal-Bench 2.0, SkillsBench): ``task.toml`` + ``instruction.md``, run as they are."""
