"""GC policies: parsing (strict, so a typo never silently measures the
default) and what each sets up before the loop and does at a step's end."""

from .common import UsageError

class Policy(object):
    """A parsed GC policy: what to set up before the loop and what to do at
    each step boundary. Parsing is strict so a typo never silently measures
    the default collector."""

    __slots__ = ("text", "disabled", "threshold", "freeze", "manual_every",
                 "manual_gen", "collect_every_step", "empty_cache_every_step")

    def __init__(self, text):
        self.text = text
        self.disabled = False
        self.threshold = None
        self.freeze = False
        self.manual_every = 0
        self.manual_gen = 2
        self.collect_every_step = False
        self.empty_cache_every_step = False

    @property
    def has_step_action(self):
        return (self.manual_every > 0 or self.collect_every_step
                or self.empty_cache_every_step)


def _int_field(text, what, lo, hi):
    try:
        v = int(text, 10)
    except ValueError:
        raise UsageError("%s must be an integer, got %r" % (what, text))
    if v < lo or (hi is not None and v > hi):
        rng = ">= %d" % lo if hi is None else "in %d..%d" % (lo, hi)
        raise UsageError("%s must be %s, got %d" % (what, rng, v))
    return v


def parse_policy(text):
    """Parse a policy such as "default", "threshold:700,10,1000" or
    "freeze+manual:100:1". Raises UsageError naming the bad part."""
    try:
        return _parse_policy(text)
    except UsageError as e:
        msg = str(e)
        if not msg.startswith("policy ") and not msg.startswith("empty"):
            msg = "policy %r: %s" % (text, msg)
        raise UsageError(msg)


def _parse_policy(text):
    p = Policy(text)
    if not text:
        raise UsageError("empty GC policy")
    parts = text.split("+")
    seen = set()
    for part in parts:
        name, _, arg = part.partition(":")
        if name in seen:
            raise UsageError("policy %r: %r given twice" % (text, name))
        seen.add(name)
        if name in ("default", "disabled", "freeze", "collect-every-step",
                    "empty-cache-every-step") and arg:
            raise UsageError("policy %r: %r takes no argument" % (text, name))
        if name == "default":
            if len(parts) > 1:
                raise UsageError("policy %r: 'default' cannot be combined" % text)
        elif name == "disabled":
            p.disabled = True
        elif name == "threshold":
            fields = arg.split(",")
            if not arg or len(fields) > 3:
                raise UsageError("policy %r: threshold needs 1 to 3 integers: threshold:T0[,T1[,T2]]" % text)
            p.threshold = tuple(_int_field(f, "threshold value", 0, None) for f in fields)
        elif name == "freeze":
            p.freeze = True
        elif name == "manual":
            fields = arg.split(":")
            if not arg or len(fields) > 2:
                raise UsageError("policy %r: manual needs an interval: manual:N[:gen]" % text)
            p.manual_every = _int_field(fields[0], "manual interval N", 1, None)
            if len(fields) == 2:
                p.manual_gen = _int_field(fields[1], "manual generation", 0, 2)
        elif name == "collect-every-step":
            p.collect_every_step = True
        elif name == "empty-cache-every-step":
            p.empty_cache_every_step = True
        else:
            raise UsageError(
                "policy %r: unknown part %r (want default, disabled, threshold:T0,T1,T2, "
                "freeze, manual:N[:gen], collect-every-step, empty-cache-every-step, joined by +)"
                % (text, part))
    if p.disabled and (p.threshold is not None or p.manual_every):
        raise UsageError("policy %r: 'disabled' conflicts with threshold/manual (manual already disables automatic GC)" % text)
    if p.manual_every and (p.threshold is not None or p.collect_every_step):
        raise UsageError("policy %r: manual disables automatic GC; it cannot be combined with threshold or collect-every-step" % text)
    return p
