"""Figures with every model overlaid, built one model at a time: the key figures of ``uqeval report``.

:class:`Overlays` keeps one Axes per key kind (:data:`KEY_KINDS` of :data:`uqeval.plots.kinds.OVERLAY_KINDS`; quantile files' calibration
curve and PIT histogram on one of their own: :func:`overlay_key`) and draws each model's series on it as the model is scored (:func:`uqeval.plots.kinds.build_figures` with ``ax``, ``series`` and
``color``), so a report never holds more than one prediction in memory. A kind whose figure for some model comes back as a figure of its own (not
drawn on the shared Axes, e.g. a several-panel variant) is drawn again as that model's own figure, its name
in the title, and returned to the caller.
The UCC overlay draws every model's curve at the end (:func:`uqeval.plots.ucc.plot_ucc` colours the models in
their order); its summary is returned for the report's ``ucc`` metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..config import Settings
from ..errors import InputError
from ..predictions import Prediction
from .kinds import (
    KIND_TITLES,
    OVERLAY_KINDS,
    PLOT_KINDS,
    PlotBundle,
    applicable_kinds,
    build_figures,
    ucc_result,
)

__all__ = ["KEY_KINDS", "KEY_OPT_IN", "Overlays", "overlay_key", "overlay_kinds"]

#: The report's key figures (issue 28): the kinds a reader compares models on first. Other kinds of
#: :data:`OVERLAY_KINDS` (sharpness, rejection, adversarial, ...) stay in each file's own figures, so the
#: summary's figures stay few.
KEY_KINDS: tuple[str, ...] = (
    "calibration",
    "reliability",
    "pit",
    "rank_histogram",
    "ucc",
    "coverage",
    "spread_skill",
)

#: Opt-in overlay kinds that the report's key figures draw without ``--diagnostics``: cheap, and their metric
#: is a headline one (``spread_skill.ratio``).
KEY_OPT_IN: tuple[str, ...] = ("spread_skill",)


def overlay_kinds(
    pred: Prediction, settings: Settings, metrics: Mapping[str, Any] | None = None
) -> list[str]:
    """The key kinds (:data:`KEY_KINDS`, those of :data:`OVERLAY_KINDS`) that apply to ``pred`` under
    ``settings`` (plus those of :data:`KEY_OPT_IN` that apply with the diagnostics turned on), in
    :data:`PLOT_KINDS` order."""
    on = set(applicable_kinds(pred, settings, metrics))
    opt_in = set(applicable_kinds(pred, replace(settings, diagnostics=True), metrics)) & set(KEY_OPT_IN)
    return [k for k in PLOT_KINDS if k in OVERLAY_KINDS and k in KEY_KINDS and k in on | opt_in]


#: Kinds whose figure for quantile predictions has other axes than for the other representations (the
#: calibration curve and the PIT histogram at the levels the file carries): those series get an overlay of
#: their own, ``kind/quantile levels``.
_QUANTILE_MODE = ("calibration", "pit")


def overlay_key(kind: str, pred: Prediction) -> str:
    """The overlay a series of ``kind`` joins: series share an Axes only where their axes mean the same (a
    classifier's reliability diagram, accuracy against confidence, is not a regression one)."""
    from ..catalogue.core import CLASSIFICATION

    if kind in _QUANTILE_MODE and pred.quantile_keys() is not None:
        return f"{kind}/quantile levels"
    if kind == "reliability" and pred.kind in CLASSIFICATION:
        return f"{kind}/classifiers"
    return kind


class Overlays:
    """One figure per overlay kind, every model a labelled series in a fixed colour: its position among the
    models drawn on some overlay, as :func:`uqeval.plots.ucc.plot_ucc` colours the UCCs (a model whose UCC
    could not be computed shifts the UCC colours of those after it)."""

    def __init__(self) -> None:
        self._axes: dict[str, Any] = {}
        self._names: dict[str, list[str]] = {}
        self._ucc: list[dict[str, Any]] = []
        self._n = 0

    def _ax(self, key: str) -> Any:
        if key not in self._axes:
            from .common import new_figure

            self._axes[key] = new_figure()[1]
        return self._axes[key]

    def add(
        self,
        pred: Prediction,
        metrics: Mapping[str, Any] | None,
        settings: Settings,
        name: str,
        info: Mapping[str, Any] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> tuple[list[str], PlotBundle]:
        """Draw ``pred`` (model ``name``) on the overlay of each of ``kinds`` (default :func:`overlay_kinds`).

        Returns the kinds drawn on an overlay and a :class:`PlotBundle` with the figures this model got
        alone instead (a kind that makes a figure of its own), its UCC summary and notes (a kind that could
        not be drawn for this data is skipped with a note, as ``uqeval report`` did for each file)."""
        # the colour slot of the models drawn on an overlay so far: plot_ucc colours its models by their
        # position, so a model with no overlay at all (points, classifiers) takes no slot
        from .style import model_color  # model i has one colour in every figure

        color = model_color(self._n)
        wanted = overlay_kinds(pred, settings, metrics) if kinds is None else list(kinds)
        drawn: list[str] = []
        alone = PlotBundle()
        for kind in wanted:
            if kind == "ucc":
                try:
                    res = ucc_result(pred, settings, name, info)
                except InputError as exc:
                    alone.notes.append(f"UCC skipped: {exc}")
                    continue
                alone.ucc = res["summary"]
                alone.notes.extend(res["notes"])
                self._ucc.append(res["model"])
                self._names.setdefault(kind, []).append(name)
                drawn.append(kind)
                continue
            key = overlay_key(kind, pred)
            ax = self._ax(key)
            try:
                bundle = build_figures(pred, metrics, settings, kinds=[kind], ax=ax, series=name, color=color)
            except InputError as exc:
                alone.notes.append(f"{kind}: figure left out: {exc}")
                continue
            alone.notes.extend(bundle.notes)
            fig = bundle.figures.get(kind)
            if fig is None:
                continue
            if fig is ax.figure:
                self._names.setdefault(key, []).append(name)
                drawn.append(kind)
            else:  # a figure of its own (several panels): this model's, drawn again with its name in the title
                fig.clear()
                own = build_figures(pred, metrics, settings, kinds=[kind], name=name)
                alone.figures.update(own.figures)
        self._n += bool(drawn)
        return drawn, alone

    def figures(self) -> dict[str, tuple[Any, list[str], str]]:
        """``{key: (figure, model names, title)}`` of every overlay with at least one series, in :data:`PLOT_KINDS`
        order; the key is the kind, or ``kind/variant`` (:func:`overlay_key`); one legend entry per label (each
        model draws its reference lines again)."""
        out: dict[str, tuple[Any, list[str], str]] = {}
        for key in sorted(self._names, key=lambda k: (PLOT_KINDS.index(k.split("/")[0]), k)):
            kind, _, variant = key.partition("/")
            names = self._names[key]
            title = f"{KIND_TITLES[kind]} ({variant})" if variant else KIND_TITLES[kind]
            if kind == "ucc":
                from .ucc import plot_ucc

                out[key] = (plot_ucc(self._ucc, title=title), list(names), title)
                continue
            from .common import legend_once

            ax = self._axes[key]
            legend_once(ax, outside=kind == "pit")  # the bars fill the axes: the legend goes below (issue 39)
            if variant:
                ax.set_title(title, fontsize=ax.title.get_fontsize())
            out[key] = (ax.figure, list(names), title)
        return out
