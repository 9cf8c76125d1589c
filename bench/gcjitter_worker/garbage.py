"""The seeded cyclic garbage each step makes, and the long-lived heap."""

import random

from .common import UsageError

# --------------------------------------------------------------------------
# Cyclic garbage. Plain Python objects only: the autograd graph's own cycles
# live in C++ and are invisible to the collector.


class Node(object):
    """One garbage object; instances and their __dict__ are tracked."""

    def __init__(self, payload=None):
        self.next = None
        self.payload = payload


def _pairs(rng, n, size, tensors, keep):
    for _ in range(n):
        a, b = Node(), Node()
        a.next, b.next = b, a
        if keep is not None:
            keep.append(a)


def _ring(rng, n, size, tensors, keep):
    for _ in range(n):
        first = prev = Node()
        for _ in range(size - 1):
            node = Node()
            prev.next = node
            prev = node
        prev.next = first
        if keep is not None:
            keep.append(first)


def _graph(rng, n, size, tensors, keep):
    # A random digraph with out-degree 2: almost surely cyclic, and the ring
    # edge makes sure every node is on a cycle.
    randrange = rng.randrange
    for _ in range(n):
        nodes = [Node() for _ in range(size)]
        for k in range(size):
            nodes[k].next = nodes[(k + 1) % size]
            nodes[k].payload = nodes[randrange(size)]
        if keep is not None:
            keep.append(nodes[0])
        del nodes


def _tensor_holders(rng, n, size, tensors, keep):
    # Cycles that keep this step's tensors alive until a collection frees
    # them, as a model that stores activations in a self-referencing
    # structure does: device memory then rises and falls with the GC.
    for _ in range(n):
        first = prev = Node(tensors)
        for _ in range(size - 1):
            node = Node(tensors)
            prev.next = node
            prev = node
        prev.next = first
        if keep is not None:
            keep.append(first)


def _raise_and_keep(depth):
    if depth > 0:
        return _raise_and_keep(depth - 1)
    try:
        raise ValueError("gcjitter synthetic error")
    except ValueError as e:
        err = e  # e -> traceback -> this frame -> err: a cycle
        return err


def _traceback(rng, n, size, tensors, keep):
    for _ in range(n):
        holder = Node(_raise_and_keep(max(size - 1, 0)))
        holder.next = holder
        if keep is not None:
            keep.append(holder)


def _logdict(rng, n, size, tensors, keep):
    # Logging/metrics dicts with back references to their parent.
    for _ in range(n):
        root = {"step": n, "children": []}
        for k in range(size - 1):
            root["children"].append({"parent": root, "k": k})
        if keep is not None:
            keep.append(root)


PATTERNS = {
    "pairs": _pairs,
    "ring": _ring,
    "graph": _graph,
    "tensor-holders": _tensor_holders,
    "traceback": _traceback,
    "logdict": _logdict,
}


def parse_garbage(text):
    if text in ("", "none"):
        return []
    out = []
    for name in text.split("+"):
        if name not in PATTERNS:
            raise UsageError("unknown garbage pattern %r (want %s, or none; join with +)"
                             % (name, ", ".join(sorted(PATTERNS))))
        out.append(PATTERNS[name])
    return out


def build_long_lived(k, refs=0, seed=0):
    """K tracked objects that live for the whole run: the heap a full
    collection has to traverse, and the base of the 25% rule that decides
    when CPython runs one. With refs, each is a list of that many
    references to other long-lived objects, chosen at random (seeded): a
    full collection then chases pointers across the heap, as it does in a
    real one of modules, dicts and tensors, and pauses longer per object
    while the 25% rule still counts K."""
    if refs <= 0:
        return [Node(i) for i in range(k)]
    heap = [[] for _ in range(k)]
    randrange = random.Random(seed).randrange
    for obj in heap:
        obj.extend([heap[randrange(k)] for _ in range(refs)])
    return heap
