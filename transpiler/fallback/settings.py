"""The LLM fallback's settings: `[tool.cutile-transpile.llm]` in ./pyproject.toml, then the flags.

Only the *name* of the environment variable that holds the API key is configured; the key is read when a
request is sent and is never written anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# key -> (type, check, what it must be)
FIELDS = {
    "base_url": (str, lambda v: v.startswith(("http://", "https://")), "an http:// or https:// URL"),
    "model": (str, lambda v: bool(v.strip()), "a model name"),
    "api_key_env": (str, lambda v: v == "" or v.replace("_", "a").isalnum(), "the name of an environment variable"),
    "timeout_s": ((int, float), lambda v: 0 < v <= 3600, "seconds in (0, 3600]"),
    "retries": (int, lambda v: 0 <= v <= 10, "an integer from 0 to 10"),
    "backoff_s": ((int, float), lambda v: 0 <= v <= 60, "seconds in [0, 60]"),
    "max_response_bytes": (int, lambda v: 1024 <= v <= 16 * 2**20, "bytes from 1024 to 16 MiB"),
    "budget": (int, lambda v: 0 <= v <= 10000, "an integer from 0 to 10000 (requests per run)"),
    "json_mode": (bool, lambda v: True, "true or false"),
}


class SettingsError(ValueError):
    pass


def load(pyproject: Path, overrides: dict) -> dict:
    """The merged settings (flags win over the file); raises SettingsError naming the bad key."""
    values: dict = {}
    if pyproject.is_file():
        try:
            doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise SettingsError(f"{pyproject}: cannot be read as TOML: {e}") from None
        section = doc.get("tool", {}).get("cutile-transpile", {}).get("llm", {})
        if not isinstance(section, dict):
            raise SettingsError(f"{pyproject}: `tool.cutile-transpile.llm` must be a table")
        for key, v in section.items():
            if key in ("api_key", "key", "token"):
                raise SettingsError(f"{pyproject}: `tool.cutile-transpile.llm.{key}`: never write the key in a file; "
                                    "set `api_key_env` to the name of the environment variable that holds it")
            if key not in FIELDS:
                raise SettingsError(f"{pyproject}: unknown key `tool.cutile-transpile.llm.{key}` (known: "
                                    f"{', '.join(FIELDS)})")
            values[key] = v
    values.update({k: v for k, v in overrides.items() if v is not None})
    for key, v in values.items():
        typ, ok, what = FIELDS[key]
        if isinstance(v, bool) and typ is not bool or not isinstance(v, typ) or not ok(v):
            raise SettingsError(f"`llm.{key}` must be {what}, not {v!r}")
    return values


def llm_settings(values: dict):
    """LLMSettings from merged values; SettingsError when the endpoint or model is missing."""
    from .client import LLMSettings
    missing = [k for k in ("base_url", "model") if not values.get(k)]
    if missing:
        raise SettingsError(f"--llm-fallback needs {' and '.join(missing)}: set them in [tool.cutile-transpile.llm] "
                            f"of ./pyproject.toml or pass {' '.join('--llm-' + k.replace('_', '-') for k in missing)}")
    return LLMSettings(**{k: (float(v) if k in ("timeout_s", "backoff_s") else v) for k, v in values.items()})
