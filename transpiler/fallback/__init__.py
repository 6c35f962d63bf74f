"""Opt-in LLM fallback: ask for the smallest unit the rules reject; accept only what is proved."""
