"""The interpreter's one error, in a module of its own: what only lists reference cases (the verdict cache's
key, verify/verdicts.py) imports it without numpy's and ml_dtypes' start-up cost."""


class InterpretError(Exception):
    """The interpreter cannot run this IR (an op or attribute it does not know, an access out of bounds, a
    value it cannot represent): never a guess."""
