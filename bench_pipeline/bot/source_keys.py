"""Which keys a game's own code mentions: the order in which control probes are tried.

Probing a key the game does not handle costs a piece and, for keys that might pause a
game, a wait of a few gravity rows to see that it did not. Most of the calibration time
of a game without a hard drop went into such probes. The page's scripts (inline and
same-origin files, as the browser loaded them) are read once: a key whose name, `code`
(`KeyW`) or key code (`87`) appears nowhere in them cannot be what the game reacts to,
so it is tried last, and it needs no pause check.

The scan is only a prior. It is trusted to *skip* keys only once it has explained what
was seen: both horizontal controls found by pressing keys are among the keys it found
mentioned (a game whose key map is built at run time, from a settings form or
`String.fromCharCode`, is read differently and gets every probe). A key it wrongly calls
mentioned costs only the probe it always cost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_SOURCE_CHARS = 3_000_000

# Key values of older browsers and key codes, for the keys the bot probes.
_NAMED: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "ArrowLeft": (("ArrowLeft", "Left"), (37,)),
    "ArrowRight": (("ArrowRight", "Right"), (39,)),
    "ArrowUp": (("ArrowUp", "Up"), (38,)),
    "ArrowDown": (("ArrowDown", "Down"), (40,)),
    " ": (("Space", "Spacebar", " "), (32,)),
    "Enter": (("Enter", "Return", "NumpadEnter"), (13,)),
    "Shift": (("Shift", "ShiftLeft", "ShiftRight"), (16,)),
    "Escape": (("Escape", "Esc"), (27,)),
    "Control": (("Control", "ControlLeft", "ControlRight"), (17,)),
    ".": ((".", "Period"), (190,)),
    ",": ((",", "Comma"), (188,)),
}
# Names that are distinctive enough to count unquoted (`case ArrowLeft:` never occurs, but
# `{ArrowLeft: moveLeft}` and `KEYS.ArrowLeft` do).
_BARE_OK = re.compile(
    r"^(Arrow\w+|Key[A-Z]|Numpad\w+|Space|Spacebar|Enter|Shift\w*|Control\w*|Escape|Period|Comma)$"
)


def _aliases(key: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    if key in _NAMED:
        return _NAMED[key]
    if len(key) == 1 and key.isalpha():
        upper = key.upper()
        return ((key.lower(), upper, f"Key{upper}"), (ord(upper), ord(key.lower())))
    if len(key) == 1 and key.isdigit():
        return ((key, f"Digit{key}"), (ord(key),))
    if key.startswith("Numpad") and key[6:].isdigit():
        return ((key,), (96 + int(key[6:]),))
    return ((key,), ())


def _mentioned(text: str, key: str) -> bool:
    names, codes = _aliases(key)
    for name in names:
        quoted = rf"(['\"`]){re.escape(name)}\1"
        if re.search(quoted, text):
            return True
        # A key map written as an object literal: `{ArrowLeft: left, q: rotate}`.
        if re.fullmatch(r"\w+", name) and re.search(rf"[{{,]\s*{re.escape(name)}\s*:", text):
            return True
        if _BARE_OK.match(name) and re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text):
            return True
    # A key code stands alone: not part of a longer number, a name or a decimal.
    return any(re.search(rf"(?<![\w.$#-]){code}(?![\w.%])", text) for code in codes)


@dataclass
class KeyPrior:
    """The keys a page's code handles, among those asked about (nothing known: every key
    may be handled).

    Two sources, best first: the keys read from the game's own keyboard handlers
    (`handled`, with a role hint per key where the handler's branch shows what it does:
    readers/page_code.py), and the keys its scripts mention anywhere (`text`)."""

    text: str | None = None
    handled: frozenset[str] = frozenset()
    roles: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role -> keys hinted
    _cache: dict[str, bool] = field(default_factory=dict)
    trusted: bool = False  # the found controls were all mentioned: unmentioned keys skipped

    @property
    def known(self) -> bool:
        return bool(self.text) or bool(self.handled)

    def mentions(self, key: str) -> bool:
        """True when the code handles or mentions `key`, or nothing is known of the code."""
        if key in self.handled:
            return True
        if not self.text:
            return not self.handled
        if key not in self._cache:
            self._cache[key] = _mentioned(self.text, key)
        return self._cache[key]

    def order(self, keys: Iterable[str], role: str | None = None) -> list[str]:
        """The keys to probe for `role`: the keys the game's handlers use for that role
        first (even where they are not among `keys`), then `keys` with the handled and
        mentioned ones first (each group in its original order)."""
        hinted = [k for k in self.roles.get(role or "", ()) if k]
        keys = [k for k in keys if k not in hinted]
        first = [k for k in keys if k in self.handled]
        rest = [k for k in keys if k not in self.handled]
        return (
            hinted
            + first
            + [k for k in rest if self.mentions(k)]
            + [k for k in rest if not self.mentions(k)]
        )

    def to_try(self, keys: Iterable[str], role: str | None = None) -> list[str]:
        """The keys worth a probe: all of them in that order, or only the handled and
        mentioned ones once the prior is trusted (blind probing is the fallback)."""
        ordered = self.order(keys, role)
        return [k for k in ordered if self.mentions(k)] if self.trusted else ordered

    def confirm(self, found: Iterable[str | None]) -> bool:
        """Trust the prior when every control found by pressing keys is mentioned."""
        found = [k for k in found if k]
        self.trusted = self.known and len(found) >= 2 and all(self.mentions(k) for k in found)
        return self.trusted

    def unmentioned(self, keys: Iterable[str]) -> list[str]:
        return [k for k in keys if not self.mentions(k)]

    def with_handlers(self, keys: dict[str, str | None]) -> KeyPrior:
        """This prior with the keys read from the game's handlers (key -> role hint)."""
        roles: dict[str, list[str]] = {}
        for key, role in keys.items():
            if role:
                roles.setdefault(role, []).append(key)
        return KeyPrior(
            self.text,
            frozenset(keys),
            {role: tuple(found) for role, found in roles.items()},
        )


def prior_from(text: object) -> KeyPrior:
    """A prior from what the probe collected (anything else: no prior)."""
    if not isinstance(text, str) or not text.strip():
        return KeyPrior()
    return KeyPrior(text[:MAX_SOURCE_CHARS])
