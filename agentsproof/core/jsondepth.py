"""How deep JSON nests, measured without parsing it: the guard in front of every JSON
parser (input files and provider replies alike)."""

from __future__ import annotations

import re
from array import array
from itertools import accumulate

# A string runs to its closing quote or, unterminated, to the end: possessive loops and the
# \Z branch make every match succeed in one pass, so a hostile body cannot make it quadratic.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
# '[' and '{' open (+1), ']' and '}' close (-1 as a signed byte)
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays/objects in JSON ``data``, without recursion.

    Strings are removed first (brackets inside them do not count). The running sum is taken
    over a signed byte array in C, so a multi-MB body of brackets costs milliseconds.
    """
    skeleton = _NOT_BRACKET.sub(b"", _STRING.sub(b"", data))
    if not skeleton:
        return 0
    steps = array("b", skeleton.translate(_DEPTH_STEP))
    return max(0, max(accumulate(steps)))
