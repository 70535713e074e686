"""Text that came from someone else (a sender's subject, a service's reason, a file name) shown
to a person: a control character there is an instruction, not text, so it is written as an
escape a reader can see. The rules of src/base/shown-text.ts's plainText, for the extensions.
"""


def plain_text(text: str) -> str:
    """`text` with control characters written as visible escapes (the rules of src/base/shown-text.ts plainText)."""
    out = []
    for ch in text:
        cp = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif cp < 0x20 or 0x7F <= cp <= 0x9F:
            out.append("\\x%02x" % cp)
        elif cp in (0x2028, 0x2029) or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069:
            out.append("\\u{%x}" % cp)
        else:
            out.append(ch)
    return "".join(out)
