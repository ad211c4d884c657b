"""The config engine: training configs in every dialect (DESIGN.md, "Config dialects").

Rooms, and the Python API other tools call (nothing is imported here, so `tools.configs.eras`
stays light for `rlpilot stack`):
- `eras`: the `Dialect` names and which installed versions speak which.
- `dialects`: the keys of each dialect, every rename and removal between eras, and
  `key_for(dialect, intent)` for the playbook's knobs ("learning_rate", "group_size", ...).
- `detect`: `detect_dialect(data)`, `detect_file(data, path)`; `Installed` / `installed_stack`.
- `document`: reading a config (`load`, one-line `BadInput` errors), walking and editing it.
- `lint`: `check_config(path, dialect=None, installed=None)`, `check_data(...)` (`config check`).
- `edit`: `set_keys(path, changes, ...)`, `restore(path)`, `write_config` (`config set/restore`).
- `migrate`: `migrate(path, to, output=None, ...)` (`config migrate`).
- `tune`: `tune(path, profile, reward, eval_path, apply, ...)` (`config tune`).
"""
