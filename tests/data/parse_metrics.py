#!/usr/bin/python3
"""Strict check of a Prometheus text exposition (read on stdin).

Parses it with prometheus_client's parser, which raises on a malformed
line, then insists on what that parser lets through: every family has
HELP text and a counter or gauge TYPE, no sample is repeated, every
value is finite and counters are not negative. Prints one line per
sample, `name{label="value",...} value` with labels sorted, so that a C
test can look values up; exits 1 with the reason on stderr otherwise.
"""
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    if not text.endswith("\n"):
        sys.exit("exposition does not end with a newline")
    seen = set()
    lines = []
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser's own word on what is malformed
        sys.exit("malformed exposition: %s" % e)
    for family in families:
        if not family.documentation:
            sys.exit("%s: no HELP" % family.name)
        if family.type not in ("counter", "gauge"):
            sys.exit("%s: TYPE %s, not counter or gauge"
                     % (family.name, family.type))
        for sample in family.samples:
            labels = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\")
                                           .replace('"', '\\"')
                                           .replace("\n", "\\n"))
                              for k, v in sorted(sample.labels.items()))
            key = "%s{%s}" % (sample.name, labels)
            if key in seen:
                sys.exit("%s: repeated" % key)
            seen.add(key)
            if not math.isfinite(sample.value):
                sys.exit("%s: value %s" % (key, sample.value))
            if family.type == "counter" and sample.value < 0:
                sys.exit("%s: negative counter" % key)
            lines.append("%s %r" % (key, sample.value))
    if not lines:
        sys.exit("no samples")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
