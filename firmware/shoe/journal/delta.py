"""State deltas: what changed between two application states (codec types), as a short list of
operations the journal writes instead of the whole snapshot.

    ops = diff(old, new)          # [] if equal; values in ops are private copies of `new`'s
    st = apply(st, ops)           # st (a private copy) now equals new; returns the new root
    c = copy(obj)                 # a private deep copy (what the journal keeps)

The operations and their paths: docs/journal.md "State deltas".
"""


def _step(d, k):
    """The path step for key k of dict d (k present): its rank among the keys (no allocation)."""
    if type(k) is not str:
        return [k]
    i = 0
    for x in d:
        if type(x) is not str:
            return k
        if x < k:
            i += 1
    return i


def _key(node, step, cache):
    if type(node) is dict:
        if type(step) is int:
            e = cache.get(id(node))
            if e is None or e[0] is not node or len(e[1]) != len(node):
                if len(cache) > 8:
                    cache.clear()
                e = (node, sorted(node))
                cache[id(node)] = e
            return e[1][step]
        if type(step) is list:
            return step[0]
    return step


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
    elif not _same(old, new):
        _diff(old, new, [], ops)
    return ops


def _diff(a, b, path, ops):
    """a and b differ (the caller compared them)."""
    ta, tb = type(a), type(b)
    if ta is dict and tb is dict:
        gone = []
        for k in a:
            if k not in b:
                gone.append(k)
        for k in b:  # changes first, while a's keys are what the reader has too
            if k in a:
                v = a[k]
                w = b[k]
                if type(v) is not type(w) or v != w:
                    _diff(v, w, path + [_step(a, k)], ops)
        for k in gone:  # deletions by name (indexes shift as keys go)
            ops.append([path + [k if type(k) is str else [k]]])
        for k in b:
            if k not in a:
                ops.append([path + [k if type(k) is str else [k]], copy(b[k])])
        return
    if ta is tb and (ta is list or ta is str or ta is bytes):
        n = len(a)
        if len(b) > n and _same(b[:n], a):
            ops.append([path, copy(b[n:]), 1])
            return
        if ta is not list and len(b) == n and n > 8:  # e.g. a bitmask in hex: splice
            i = 0
            while a[i] == b[i]:
                i += 1
            j = n
            while a[j - 1] == b[j - 1]:
                j -= 1
            if j - i < n // 2:
                ops.append([path, [i, b[i:j]], 2])
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


def full(ops):
    """Do these ops replace the whole state (a full snapshot, no base needed)?"""
    return len(ops) > 0 and len(ops[0]) == 2 and not ops[0][0]


def apply(st, ops, cache=None):
    """Apply decoded or fresh ops to the private state `st`; returns the (possibly new) root.
    Raises (KeyError, IndexError, TypeError, ValueError) if they do not fit `st`. `cache` (a
    dict kept by the caller across calls) holds the sorted keys of dicts met on the way: a boot
    replays hundreds of deltas through the same few dicts."""
    if cache is None:
        cache = {}
    for op in ops:
        path = op[0]
        n = len(path)
        node = None
        k = None
        cur = st
        for i in range(n):
            node = cur
            k = _key(node, path[i], cache)
            if i < n - 1 or len(op) == 3:
                cur = node[k]
        if len(op) == 1:
            if not n:
                raise ValueError("delta")
            del node[k]
            cache.pop(id(node), None)  # its key set changed
            continue
        if len(op) == 2:
            v = op[1]
        elif op[2] == 2:  # splice [at, part] into a str/bytes of the same length
            at, part = op[1]
            v = cur[:at] + part + cur[at + len(part):]
        elif type(cur) is list:
            cur.extend(op[1])
            v = cur
        else:
            v = cur + op[1]
        if n:
            if type(node) is dict:
                if k not in node:
                    cache.pop(id(node), None)  # a new key
                elif len(op) == 2 and type(node[k]) is dict:
                    cache.pop(id(node[k]), None)  # replaced: let it go
            node[k] = v
        else:
            st = v
            cache.clear()
    return st
