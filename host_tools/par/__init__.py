"""Par sheets: the exact mathematics of every wager of a pay table (combinations, probability,
pay, contribution to the return, house edge), the method beside each figure, and a seeded
cross-check through the firmware's own engine (docs/par.md; `shoectl par`).

    sheet(paytable, rules=None, *, sim_rounds=None, seed=1) -> dict
    render(sheet, fmt) -> str          fmt: "md", "json" or "html"
"""

from host_tools.par.sheet import sheet  # noqa: F401


def render(sheet_, fmt):
    """A par sheet dict as Markdown, JSON or a standalone HTML page (host_tools.par.rendering)."""
    from host_tools.par import rendering

    return rendering.render(sheet_, fmt)
