"""State deltas: what changed between two application states (codec types), as a short list of
operations the journal writes instead of the whole snapshot.

    ops = diff(old, new)          # [] if equal; values in ops are private copies of `new`'s
    st = apply(st, ops)           # st (a private copy) now equals new; returns the new root
    c = copy(obj)                 # a private deep copy (what the journal keeps)

An operation is a list:
    [path, value]        set   (path = [] replaces the whole state)
    [path, suffix, 1]    extend: a list, str or bytes grew at its end (a dealt card appends two
                         hex digits to the tracker: 2 bytes instead of the whole string)
    [path]               delete a dict key
`path` is a list of dict keys and list indexes. Equal subtrees are skipped by one `==` (C code
in MicroPython), so the cost is proportional to what changed, not to the state's size.
"""


def copy(x):
    t = type(x)
    if t is dict:
        return {k: copy(v) for k, v in x.items()}
    if t is list:
        return [copy(v) for v in x]
    if t is tuple:
        return tuple(copy(v) for v in x)
    if t is bytearray:
        return bytes(x)
    return x  # str, bytes, int, float, bool, None: immutable


def _same(a, b):
    return type(a) is type(b) and a == b


def diff(old, new):
    ops = []
    if old is None:
        ops.append([[], copy(new)])
    else:
        _diff(old, new, [], ops)
    return ops


def _diff(a, b, path, ops):
    if _same(a, b):
        return
    ta, tb = type(a), type(b)
    if ta is dict and tb is dict:
        for k in b:
            if k in a:
                if not _same(a[k], b[k]):
                    _diff(a[k], b[k], path + [k], ops)
            else:
                ops.append([path + [k], copy(b[k])])
        for k in a:
            if k not in b:
                ops.append([path + [k]])
        return
    if ta is tb and (ta is list or ta is str or ta is bytes):
        n = len(a)
        if len(b) > n and _same(b[:n], a):
            ops.append([path, copy(b[n:]), 1])
            return
        if ta is list and len(b) == n and n:
            k = 0
            for i in range(n):
                if not _same(a[i], b[i]):
                    k += 1
            if 2 * k <= n:  # a few items changed: recurse into those
                for i in range(n):
                    if not _same(a[i], b[i]):
                        _diff(a[i], b[i], path + [i], ops)
                return
    ops.append([path, copy(b)])


def apply(st, ops):
    """Apply decoded or fresh ops to the private state `st`; returns the (possibly new) root.
    Raises (KeyError, IndexError, TypeError, ValueError) if they do not fit `st`."""
    for op in ops:
        path = op[0]
        if not path:
            if len(op) != 2:
                raise ValueError("delta")
            st = op[1]
            continue
        node = st
        for k in path[:-1]:
            node = node[k]
        k = path[-1]
        if len(op) == 1:
            del node[k]
        elif len(op) == 3:
            cur = node[k]
            if type(cur) is list:
                cur.extend(op[1])
            else:
                node[k] = cur + op[1]
        else:
            node[k] = op[1]
    return st
