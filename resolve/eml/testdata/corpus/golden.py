#!/usr/bin/env python3
"""Extract every attachment of the corpus with Python's email package and
write golden.json, which TestCorpus (corpus_test.go) compares the Go reader
against. Run by hand from this directory, with Python 3.11:

    python3 golden.py > golden.json

It is not run by `go test`, which needs nothing but Go. Each message is
also read cut short at a third and at two thirds of its length (keys
"name@length").

"Attachment" is this project's definition (resolve/eml/doc.go),
applied to the tree Python's parser builds: the leaf parts, depth-first,
whose disposition is "attachment", or that are an attached message
(message/rfc822 or message/global below the top), or that have a filename
and are not a text body part (text/plain or text/html where the message
body goes: the message itself, any part of a multipart/alternative there,
the first part of any other multipart there). An attached message is one
attachment and is not descended into.

The bytes are part.get_payload(decode=True). Python cannot give the bytes
of an attached message as they were written (it parses it and would
re-serialize it), so for those, and for any other part Python parses into
sub-messages, "sha256" and "size" are null and only the attachment's
presence, position and type are compared.
"""

import email
import email.policy
import hashlib
import json
import os
import re
import sys

TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
MEDIA_TYPE = re.compile(TOKEN + "/" + TOKEN)


def declared_type(part, in_digest):
    """The declared media type as the Go reader sees it: "" when absent or
    not a type/subtype of tokens; message/rfc822 by default in a digest."""
    value = part.get("content-type")
    if value is None:
        return "message/rfc822" if in_digest else ""
    value = str(value).split(";", 1)[0].strip().lower()
    return value if MEDIA_TYPE.fullmatch(value) else ""


def leaves(msg):
    def walk(part, body_pos, root, in_digest):
        if part.get_content_maintype() == "multipart" and isinstance(part.get_payload(), list):
            sub = part.get_content_subtype()
            for n, child in enumerate(part.get_payload(), 1):
                yield from walk(child, body_pos and (sub == "alternative" or n == 1), False, sub == "digest")
        else:
            yield part, body_pos, root, in_digest

    yield from walk(msg, True, True, False)


def attachments(msg):
    out = []
    for part, body_pos, root, in_digest in leaves(msg):
        declared = declared_type(part, in_digest)
        multipart = part.get_content_maintype() == "multipart"
        disposition = part.get_content_disposition()
        filename = part.get_filename()
        rfc822 = not root and not multipart and declared in ("message/rfc822", "message/global")
        text_type = declared or ("text/plain" if part.get("content-type") is None else "")
        body_text = body_pos and not multipart and text_type in ("text/plain", "text/html")
        if not (disposition == "attachment" or rfc822 or (filename and not body_text)):
            continue
        entry = {
            "index": len(out),
            "filename": filename,
            "content_type": declared,
            "size": None,
            "sha256": None,
        }
        if not rfc822 and not isinstance(part.get_payload(), list):
            data = part.get_payload(decode=True)
            entry["size"] = len(data)
            entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["python_defects"] = sorted({type(d).__name__ for d in part.defects})
        out.append(entry)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    golden = {}
    for source in sorted(os.listdir(here)):
        folder = os.path.join(here, source)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name == "LICENSE":
                continue
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            # message_from_bytes, not message_from_binary_file: the latter
            # reads through a TextIOWrapper that turns CRLF into LF, changing
            # the bytes of every text attachment.
            key = source + "/" + name
            golden[key] = attachments(email.message_from_bytes(data, policy=email.policy.default))
            # The same message cut short, the commonest damage in a real
            # mailbox: at a third and at two thirds of its length.
            for cut in (len(data) // 3, 2 * len(data) // 3):
                msg = email.message_from_bytes(data[:cut], policy=email.policy.default)
                golden["%s@%d" % (key, cut)] = attachments(msg)
    json.dump(golden, sys.stdout, indent=1, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
