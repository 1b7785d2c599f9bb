"""The names of uqeval's column roles, settings and options, and how each front end spells them: one table.

Every column role and every setting has one canonical spelling (the Python keyword, the settings key) and
documented aliases; the command line spells a name ``--NAME`` (``-`` for ``_``) unless :data:`CLI_FLAGS`
gives its flag. :mod:`uqeval.vocabulary` reads names through these tables, and
:func:`uqeval.errors.option` spells them in messages, so a message names the flag the command line has.

Ground floor: imports nothing of uqeval.
"""

from __future__ import annotations

#: Column roles: canonical name -> its aliases. The canonical name is the Python keyword and the settings
#: file's ``[columns]`` key; the command line's flag is ``--y`` for ``y_true`` (:data:`CLI_FLAGS`) and
#: ``--NAME`` for the others, and every alias is a flag too (``--target``, ``--sample-weight``).
ROLES: dict[str, tuple[str, ...]] = {
    "y_true": ("y", "target"),
    "mean": ("y_pred",),
    "std": ("sigma",),
    "var": ("variance",),
    "lower": (),
    "upper": (),
    "quantiles": (),
    "samples": (),
    "proba": ("y_proba",),
    "logits": (),
    "by": (),
    "weights": ("sample_weight",),
}

#: Settings whose command-line flag or usual name differs from the settings key: canonical -> aliases
SETTINGS: dict[str, tuple[str, ...]] = {
    "class_bins": ("bins",),
    "thresholds": ("threshold",),
}

#: Options of one command that are not settings (the resampling of ``compare``, the permutation tests of
#: ``compare`` and ``ucc``): canonical (the Python keyword) -> aliases (the command line's words)
OPTIONS: dict[str, tuple[str, ...]] = {
    "n_boot": ("bootstrap",),
    "n_permutations": ("permutations", "permutation_test"),
}

#: The command line's main flag where it is not ``--NAME``: the flag people type (``--y``); the
#: canonical name is an alias flag there (``--y-true``).
CLI_FLAGS: dict[str, str] = {
    "y_true": "--y",
    "class_bins": "--bins",
    "thresholds": "--threshold",
    "n_boot": "--bootstrap",
    "n_permutations": "--permutations",
}

#: Roles the loader names apart that the front ends take under another role's name: a classifier's labels
#: are its ``y_true`` (``--y``)
ROLE_AS: dict[str, str] = {"label": "y_true"}


def _alias_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for canonical, aliases in (*ROLES.items(), *SETTINGS.items(), *OPTIONS.items()):
        for alias in aliases:
            table[alias] = canonical
    return table


#: alias -> canonical name, for roles and settings alike
ALIASES: dict[str, str] = _alias_table()


def canonical(name: str) -> str:
    """The canonical spelling of a role or setting ``name`` (``name`` itself if it is not an alias)."""
    return ALIASES.get(name, name)


def keyword(name: str) -> str:
    """The Python keyword of the role, setting or option ``name`` (``label`` and ``y`` -> ``y_true``)."""
    return canonical(ROLE_AS.get(name, name))


def cli_flag(name: str) -> str:
    """The command line's main flag of ``name`` (``--y`` for ``y_true`` and ``label``, ``--bins``)."""
    name = keyword(name)
    return CLI_FLAGS.get(name, "--" + name.replace("_", "-"))


def names_of(name: str) -> tuple[str, ...]:
    """Every spelling of the role or setting ``name`` (canonical first)."""
    name = canonical(name)
    return (name, *ROLES.get(name, SETTINGS.get(name, OPTIONS.get(name, ()))))


def cli_flags(name: str) -> tuple[str, ...]:
    """The command-line flags of the role or setting ``name``: its main flag first, then every other spelling
    (``("--y", "--y-true", "--target")``)."""
    others = ["--" + n.replace("_", "-") for n in names_of(name)]
    return tuple(dict.fromkeys([cli_flag(name), *others]))
