"""Every firmware module, loaded at once: what the virtual board and the tests do before they
measure or shape the data heap, so that no bytecode the app loads lazily later (on first use)
comes out of the heap the app runs in.

    from shoe import modules
    modules.preload()          # imports every name in modules.names()

A device does not call this (its modules are frozen in flash, or loaded as needed from its file
system), so this module costs a board no RAM. The names are those of the files found in the
shoe package as it was loaded: the shipped set on the virtual board (nothing to keep in step).
"""

# modules preload() leaves alone: shoe.config and shoe.startup (App() loads them for its boot
# and drops them: preloaded, their bytes would be freed into the data heap just measured)
_NOT_PRELOADED = ("shoe.config", "shoe.startup")


def names():
    """The names of the firmware modules found in the shoe package as loaded (its files, .py or
    .mpy), but _NOT_PRELOADED. Empty where the package is frozen (no directory to list)."""
    import os
    import shoe

    out = []
    todo = [(shoe.__file__.rpartition("/")[0], "shoe")]
    while todo:
        path, pkg = todo.pop()
        try:
            entries = sorted(os.ilistdir(path))
        except (OSError, AttributeError):   # frozen, or CPython (no ilistdir)
            continue
        for entry in entries:
            name, kind = entry[0], entry[1]
            stem, _, ext = name.rpartition(".")
            if kind == 0x4000 and name != "__pycache__":   # a subpackage
                out.append(pkg + "." + name)
                todo.append((path + "/" + name, pkg + "." + name))
            elif ext in ("py", "mpy") and stem and stem != "__init__":
                if pkg + "." + stem not in _NOT_PRELOADED:
                    out.append(pkg + "." + stem)
    return out


def preload():
    """Import every module the app may load lazily (names())."""
    import gc

    for name in names():
        __import__(name)
        gc.collect()   # the loader's temporary blocks go before the next module is placed
