#!/usr/bin/env python3
"""check-json.py FILE...: fail unless every FILE is strict JSON (RFC 8259).

Python's json module accepts NaN, Infinity and -Infinity by default and keeps the
last of duplicate keys; both are rejected here, as a strict parser in another language
would reject them."""
import json
import sys


def reject_constant(name):
    raise ValueError("non-standard constant %s" % name)


def no_duplicates(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError("duplicate key %r" % key)
        seen.add(key)
    return dict(pairs)


status = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            json.load(f, parse_constant=reject_constant, object_pairs_hook=no_duplicates)
    except (ValueError, UnicodeDecodeError) as e:
        print("%s: not strict JSON: %s" % (path, e))
        status = 1
sys.exit(status)
